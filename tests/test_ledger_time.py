"""Time in the ledger (#12 pt 4): future-dated changes, temporary states, routines moved to a new day or
time, with the real spaCy parser (tests/ledger_fixtures.extract_turns)."""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")

from ledger_fixtures import extract_turns  # noqa: E402

from markmem.write.extract_time import scheduled, temporary  # noqa: E402


def _one(cands, predicate_start: str):
    found = [c for c in cands if c.predicate.startswith(predicate_start) and not c.negated]
    assert len(found) == 1, [(c.predicate, c.value) for c in cands]
    return found[0]


def test_a_dated_plan_with_ill_be_reads_as_the_plain_statement() -> None:
    # "I'll be" after another opener used to become "Iis"
    got = scheduled("switching courses, from october I'll be doing midwifery", "2025-07-22T09:30:00Z")
    assert got is not None
    text, start = got
    assert "Iis" not in text and "I am doing midwifery" in text
    assert start.startswith("2025-10-01")


def test_picking_up_a_new_car_on_a_date_starts_then() -> None:
    turns = extract_turns([("2026-02-02T09:30:00Z", "I drive a Ford Focus"),
                           ("2026-03-10T09:30:00Z",
                            "picking up my new Kia Niro on the 3rd of april, trading the Focus in")])
    car = _one(turns[1], "car")
    assert "Niro" in car.value and car.valid_from and car.valid_from.startswith("2026-04-03")


def test_a_split_keeps_the_leading_phrase_that_bounds_a_stay() -> None:
    # the gerund split once dropped the leading "for": "the summer I'm staying ..." lost its bound
    turns = extract_turns([("2026-01-20T19:40:00Z", "I live in Athens, work in tourism"),
                           ("2026-06-25T12:05:00Z",
                            "for the summer I'm staying at my aunt's in Crete, working remotely")])
    stay = _one(turns[1], "staying_in")
    assert "Crete" in stay.value and stay.text.startswith("for the summer")
    assert stay.valid_until and stay.valid_until.startswith("2026-09-01")


@pytest.mark.parametrize("text,end", [
    ("spending october at my parents' place in Dublin", "2025-11-01"),
    ("we're spending the summer in Cork", "2025-09-01"),
    ("I'm in Faro for august", "2025-09-01"),
])
def test_a_stay_for_a_named_month_or_season_is_bounded(text: str, end: str) -> None:
    got = temporary(text, "2025-06-20T09:30:00Z" if "october" not in text else "2025-10-02T09:30:00Z")
    assert got is not None and got[1].startswith(end)


def test_a_month_long_stay_does_not_move_home() -> None:
    turns = extract_turns([("2025-09-09T09:30:00Z", "I live in Madrid"),
                           ("2025-10-02T09:30:00Z", "spending october at my parents' place in Dublin")])
    assert not any(c.predicate == "lives_in" for c in turns[1])
    stay = _one(turns[1], "staying_in")
    assert "Dublin" in stay.value and stay.valid_until and stay.valid_until.startswith("2025-11-01")


def test_a_past_move_in_a_month_is_not_a_stay() -> None:
    assert temporary("I moved to Faro in august", "2025-06-20T09:30:00Z") is None
    assert temporary("I've been in Faro for august", "2025-06-20T09:30:00Z") is None


@pytest.mark.parametrize("first,second,predicate,new,old", [
    ("I do the gym on mondays", "gym on tuesdays now, mondays were too busy", "routine_gym", "tuesdays", "mondays"),
    ("I have piano lessons at 5pm on wednesdays", "piano got pushed to 6pm, same day", "routine", "6pm", "5pm"),
])
def test_a_routine_moved_to_a_new_day_or_time(first: str, second: str, predicate: str, new: str, old: str) -> None:
    turns = extract_turns([("2025-04-01T09:30:00Z", first), ("2025-05-01T09:30:00Z", second)])
    before = _one(turns[0], predicate)
    after = _one(turns[1], before.predicate)
    assert new in after.value and old not in after.value


def test_a_routine_moved_by_someone_else_on_a_date_starts_then() -> None:
    turns = extract_turns([("2026-01-12T09:30:00Z", "I play five-a-side on wednesdays"),
                           ("2026-01-18T09:30:00Z", "from february the league moves us to fridays")])
    after = _one(turns[1], "routine_five_a_side")
    assert "fridays" in after.value and after.valid_from and after.valid_from.startswith("2026-02-01")


def test_a_move_to_a_new_day_with_two_routines_of_that_shape_makes_no_claim() -> None:
    turns = extract_turns([("2026-01-12T09:30:00Z", "I play five-a-side on wednesdays"),
                           ("2026-01-13T09:30:00Z", "I do the gym on mondays"),
                           ("2026-01-18T09:30:00Z", "from february the league moves us to fridays")])
    assert not any(c.predicate.startswith("routine") for c in turns[2])


def test_a_routine_question_or_plan_changes_nothing() -> None:
    turns = extract_turns([("2025-03-03T09:30:00Z", "my gym class is on tuesdays"),
                           ("2025-03-20T09:30:00Z", "should I switch to the thursday class? it's less crowded"),
                           ("2025-03-21T09:30:00Z", "maybe I'll move yoga to fridays, haven't decided")])
    assert not any(c.predicate.startswith("routine") for c in turns[1] + turns[2])


@pytest.mark.parametrize("text", ["we're over in Dublin for a fortnight", "in Madrid for a long weekend"])
def test_a_visit_under_way_is_a_stay_not_a_new_home(text: str) -> None:
    turns = extract_turns([("2025-06-02T09:30:00Z", "I live in Bristol"), ("2025-06-10T09:30:00Z", text)])
    assert not any(c.predicate == "lives_in" for c in turns[1])
    stay = _one(turns[1], "staying_in")
    assert stay.valid_until and "2025-06-10" < stay.valid_until < "2025-07-01"


@pytest.mark.parametrize("text", ["I'm in a band right now", "I'm in therapy at the moment",
                                  "I work at Aldi at the moment"])
def test_now_without_a_place_is_no_stay(text: str) -> None:
    assert temporary(text, "2025-06-10T09:30:00Z") is None


def test_a_change_done_to_the_user_on_a_date_starts_then() -> None:
    turns = extract_turns([("2026-05-05T09:30:00Z", "I'm based in the Manchester office"),
                           ("2026-06-01T09:30:00Z", "they're transferring me to the Birmingham office from 1 july")])
    new = [c for c in turns[1] if "Birmingham" in c.value]
    assert new and new[0].valid_from and new[0].valid_from.startswith("2026-07-01")


def test_come_september_opens_a_dated_change() -> None:
    turns = extract_turns([("2025-06-02T09:30:00Z", "I study at York"),
                           ("2025-06-10T09:30:00Z", "come september I'm at Durham uni")])
    new = [c for c in turns[1] if "Durham" in c.value]
    assert new and new[0].valid_from and new[0].valid_from.startswith("2025-09-01")
    assert scheduled("come on, I live in Bath", "2025-06-10T09:30:00Z") is None


# h-time3: a named successor on a date, hedges, routines of a group and routines said as changed

def test_a_named_successor_on_a_date_starts_then_and_the_old_service_holds_until_then() -> None:
    turns = extract_turns([("2025-04-02T09:30:00Z", "my broadband is with Virgin"),
                           ("2025-04-28T09:30:00Z", "cancelled Virgin, Hyperoptic takes over on the 15th of may")])
    new = _one(turns[1], "internet_provider")
    assert new.value == "Hyperoptic" and new.valid_from and new.valid_from.startswith("2025-05-15")
    assert not any(c.negated for c in turns[1])  # Virgin is not closed at once: the switch closes it then


def test_a_successor_without_a_known_service_or_date_makes_no_claim() -> None:
    turns = extract_turns([("2025-04-02T09:30:00Z", "I live in Hull"),
                           ("2025-04-28T09:30:00Z", "Hyperoptic takes over on the 15th of may")])
    assert not any(c.value == "Hyperoptic" for c in turns[1])
    assert scheduled("Hyperoptic takes over soon", "2025-04-28T09:30:00Z") is None


@pytest.mark.parametrize("text", ["I was looking at the Pixel 9, might get one when it's on offer",
                                  "thinking about getting a Pixel 9"])
def test_a_hedge_never_closes_the_value_held(text: str) -> None:
    turns = extract_turns([("2025-03-03T09:30:00Z", "I have a Samsung A54"), ("2025-04-01T09:30:00Z", text)])
    assert not any(c.predicate.startswith("phone") and "Pixel" in c.value and c.confidence > 0.5 for c in turns[1])
    assert not any(c.negated for c in turns[1])


def test_a_group_meeting_day_is_a_routine_and_its_new_day_replaces_it() -> None:
    turns = extract_turns([("2025-02-01T09:30:00Z", "my book club meets on the last thursday of the month"),
                           ("2025-05-01T09:30:00Z",
                            "book club meets first monday now, Jen can't do thursdays anymore")])
    old, new = _one(turns[0], "routine_book_club"), _one(turns[1], "routine_book_club")
    assert "last thursday" in old.value and new.value == "first monday"


def test_a_routine_said_as_changed_about_the_same_person_is_that_routine() -> None:
    turns = extract_turns([("2025-02-14T09:30:00Z", "I call my nan every sunday afternoon"),
                           ("2025-06-14T09:30:00Z", "I ring nan on saturday mornings now, she's at church on sundays")])
    old = _one(turns[0], "routine")
    new = _one(turns[1], "routine")
    assert new.predicate == old.predicate and "saturday" in new.value


def test_a_second_routine_not_said_as_changed_keeps_its_own_slot() -> None:
    turns = extract_turns([("2025-02-14T09:30:00Z", "I call my nan every sunday afternoon"),
                           ("2025-06-14T09:30:00Z", "I visit nan on saturday mornings")])
    old = _one(turns[0], "routine")
    assert all(c.predicate != old.predicate for c in turns[1])
