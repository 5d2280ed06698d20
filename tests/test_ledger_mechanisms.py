"""General ledger mechanisms (issue #12), with real spaCy (no mocked parser):

* named products give their slot whatever the verb ("my Pixel 9", "I'm on a Fairphone 5 now",
  "swapped my Pixel 8 for an iPhone 16"), and "my <product>" counts inside a question;
* facts said in one clause with a fact that ends, and naming its value, end with it ("I'm married
  to Tom" -> marital status; "I'm a copywriter at Inkwell" -> the job);
* endings by shape ("football's done for me", "smoke-free", "took me off sertraline");
* a change done to the user by someone else ("they made me head chef", "work relocated me to X");
* negatives: questions, hypotheticals, other people's things, assistant turns make no user claim.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from markmem import Memory
from markmem.model import Candidate
from markmem.write.extract_product import find, owned, stated
from tests.ledger_fixtures import extract_turns

pytest.importorskip("spacy")


def _run(*turns: str, role: str = "user") -> list[Candidate]:
    timed = [(f"2026-0{i + 1}-01T10:00:00Z", turn) for i, turn in enumerate(turns)]
    return [c for cands in extract_turns(timed, role) for c in cands]


def _facts(cands: list[Candidate]) -> list[tuple[str, str, str, bool]]:
    return [(c.subject, c.predicate, c.value, c.negated) for c in cands]


# -- named products ----------------------------------------------------------------------------
def test_product_classes() -> None:
    assert [(s, v) for s, v, *_ in find("my Pixel 6 and a Kindle Paperwhite")] == [
        ("phone_model", "Pixel 6"), ("e_reader", "Kindle Paperwhite")]
    assert [s for s, *_ in find("the Ford Fiesta and my Civic")] == ["car", "car"]
    assert find("I play golf and focus on my leaf collection") == []  # plain words, not car models


def test_my_product_in_a_question_is_owned() -> None:
    assert _facts(_run("how do I back up my Pixel 9 to my laptop?")) == [("u", "phone_model", "Pixel 9", False)]


def test_hypothetical_product_is_not_owned() -> None:
    facts = _facts(_run("what would it cost to lease a Tesla Model Y vs keeping my Octavia?"))
    assert facts == [("u", "car", "Octavia", False)]


def test_questions_plans_and_old_things_make_no_product_claim() -> None:
    # a hedged plan goes to review at most (under the resolver's review threshold), never to the ledger
    assert [c for c in _run("should I get a Pixel 9?", "maybe I'll buy a MacBook Air next year")
            if c.confidence >= 0.5] == []
    assert owned("my old iPhone 8 is in a drawer") == []
    assert owned("my dad's Golf is older than me") == []


def test_product_said_by_the_assistant_is_no_claim() -> None:
    assert _run("You could get a Kindle Paperwhite, it's the best ereader.", role="assistant") == []


def test_swap_supersedes_or_ends_the_old_and_adds_the_new() -> None:
    new = ("phone_model", "iPhone 16", "profile", False, 0.85, False)
    assert stated("swapped my Pixel 8 for an iPhone 16") == [new]
    assert stated("traded my iPad for a Kindle") == [("tablet", "iPad", "profile", False, 0.85, True),
                                                    ("e_reader", "Kindle", "profile", False, 0.85, False)]


def test_using_a_new_product_and_a_dead_one() -> None:
    facts = _facts(_run("my Pixel 6 overheats all the time", "the Pixel finally died, I'm on a Fairphone 5 now"))
    assert ("u", "phone_model", "Pixel 6", False) in facts
    assert ("u", "phone_model", "Fairphone 5", False) in facts
    assert ("u", "phone_model", "Pixel 6", True) in facts  # "the Pixel" names the Pixel 6 said before


def test_two_products_in_one_clause_and_an_addition_to_a_many_valued_slot() -> None:
    facts = _facts(_run("I have an iPad and a Kindle for reading", "added a Steam Deck to the collection"))
    assert facts == [("u", "tablet", "iPad", False), ("u", "e_reader", "Kindle", False),
                     ("u", "games_console", "Steam Deck", False)]


def test_naming_a_product_again_reinforces_it() -> None:
    facts = _facts(_run("I drive a Ford Fiesta", "my Fiesta is making a weird noise again"))
    assert [f for f in facts if f[1] == "car"] == [("u", "car", "Ford Fiesta", False)] * 2


# -- companions end with the fact they were said with ------------------------------------------
def test_marital_status_ends_with_the_partner() -> None:
    facts = _facts(_run("I'm married to Tom.", "Tom and I split up in the spring."))
    assert ("u", "partner", "", True) in facts and ("u", "marital_status", "", True) in facts


def test_job_ends_with_the_employer_it_was_said_with() -> None:
    facts = _facts(_run("I'm a copywriter at Inkwell Agency.", "I went freelance in September, no more Inkwell."))
    assert ("u", "employer", "freelance", False) in facts
    assert any(p == "job" and neg for _s, p, _v, neg in facts)


def test_companion_restated_in_the_same_turn_stays() -> None:
    facts = _facts(_run("I'm a nurse at Mercy Hospital", "I'm a nurse at Acme Health now"))
    assert ("u", "job", "", True) not in facts


def test_someone_elses_change_never_ends_the_users_facts() -> None:
    facts = _facts(_run("I'm a software developer at Nimbus.", "Ahmed from my team just left Nimbus for Stratus."))
    assert not any(neg for _s, _p, _v, neg in facts)


def test_employer_after_a_job_title() -> None:
    facts = _facts(_run("I'm a backend dev at Klarna, mostly Kotlin", "I work as a nurse at Mercy Hospital"))
    assert ("u", "employer", "Klarna", False) in facts and ("u", "employer", "Mercy Hospital", False) in facts


def test_with_an_organisation_is_an_employer_with_a_name_a_partner() -> None:
    assert ("u", "employer", "Acme Health", False) in _facts(_run("I'm with Acme Health now, day shifts only"))
    assert _facts(_run("I'm with Sam now")) == [("u", "partner", "Sam", False)]


# -- endings by shape, and changes done to the user ---------------------------------------------
def test_done_for_me_ends_the_habit() -> None:
    facts = _facts(_run("I play five-a-side football on Wednesdays with work mates",
                        "tore my ACL, so football's done for me. no more wednesdays :("))
    assert facts[-1][1:] == ("routine_five_a_side_football", "on Wednesdays with work mates", True)


def test_free_of_ends_the_habit() -> None:
    facts = _facts(_run("I smoke about ten a day, trying to cut down", "Six months smoke-free today!!"))
    assert facts[-1] == ("u", "smokes", "about ten a day", True)


def test_taken_off_a_medication_by_the_doctor() -> None:
    facts = _facts(_run("I take sertraline every morning", "my doctor took me off sertraline last month"))
    assert ("u", "medication", "sertraline", True) in facts
    assert ("u", "routine_sertraline", "", True) in facts  # said in the same clause, naming it


def test_no_more_of_something_never_said_makes_nothing() -> None:
    assert _run("no more sister drama") == []


def test_changes_done_to_the_user() -> None:
    assert ("u", "job", "head chef", False) in _facts(_run("They made me head chef at Luma!!!"))
    assert ("u", "lives_in", "Singapore", False) in _facts(_run("Work relocated me to Singapore in May"))


def test_change_done_to_someone_else_stays_theirs() -> None:
    facts = _facts(_run("I live in Leeds", "my sister got relocated to Oslo"))
    assert ("u", "lives_in", "Oslo", False) not in facts


def test_an_activity_is_not_a_person() -> None:
    facts = _facts(_run("I go swimming on Monday mornings.", "Swimming is on Wednesday mornings now"))
    assert facts[-1] == ("u", "routine_swimming", "on Wednesday mornings", False)


# -- end to end: the ledger --------------------------------------------------------------------
@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    m = Memory(tmp_path_factory.mktemp("ledger") / "memory", pii_engine="regex", vector_model=None,
               background=False, clause_parser="spacy")
    turns = [("2025-09-15T10:00:00Z", "my Civic needs new brakes again"),
             ("2026-04-11T10:00:00Z", "traded my Civic for a Model 3 last weekend. one pedal driving is weird"),
             ("2026-05-01T10:00:00Z", "what would it cost to lease a Tesla Model Y vs keeping my Model 3?")]
    for when, text in turns:
        m.add(text, user_id="car", occurred_at=when)
    m.add([{"role": "assistant", "content": "You drive a Golf, right?"}], user_id="car",
          occurred_at="2026-05-02T10:00:00Z")
    m.flush()
    yield m
    m.close()


def test_ledger_holds_the_new_car_only(mem: Memory) -> None:
    active = [c.value for p in mem.get_all("car") for c in p.claims
              if c.predicate == "car" and not c.valid_until and not c.superseded_by]
    assert active == ["Model 3"]


# -- future-dated changes: a leading start date, "the 3rd", "I'm going <state>" --------------------
def _dated(*turns: str) -> list[tuple[str, str, str | None]]:
    return [(c.predicate, c.value, c.valid_from) for c in _run(*turns) if not c.negated]


def test_a_leading_start_date_dates_a_present_statement() -> None:
    found = _dated("I'm pescatarian", "From the 1st I'm going vegan, full stop. no more fish")
    assert ("diet", "vegan", "2026-03-01T00:00:00.000000Z") in found  # the turn is 2026-02-01


def test_as_of_a_month_going_part_time() -> None:
    found = _dated("as of january I'm going part-time, 3 days a week")
    assert found == [("work_pattern", "part-time", "2027-01-01T00:00:00.000000Z")]


def test_the_nth_is_the_next_such_day() -> None:
    found = _dated("then I start at Greyhawk Studios on the 3rd")
    assert found == [("employer", "Greyhawk Studios", "2026-01-03T00:00:00.000000Z")]


def test_next_week_switch_of_shift() -> None:
    found = _dated("I'm on the day shift at the warehouse", "next week I switch to the night shift, permanently")
    assert found[0][:2] == ("work_pattern", "day shift")
    assert found[1][:2] == ("work_pattern", "night shift") and found[1][2] is not None


def test_a_degree_at_a_named_place_is_the_school() -> None:
    assert _dated("I'm doing my master's at TU Delft, aerospace") == [("school", "TU Delft", None)]


def test_a_last_day_is_no_open_slot_and_a_date_without_a_lead_is_no_plan() -> None:
    assert not any(p.startswith("last_day") for p, _v, _f in _dated("My last day at Fenwick is the 30th"))
    assert _dated("in June I went to Spain") == []  # a past event with a month: no fact, no start date


# -- where the user lives: by duration, rent or belonging ------------------------------------------
@pytest.mark.parametrize("text, place", [
    ("we've been in Belfast about a year now, so much cheaper", "Belfast"),
    ("Since March I've been renting a place in Halifax, closer to the ocean", "Halifax"),
    ("I'm a Montreal resident, what are good winter boots?", "Montreal"),
    ("finally escaped the heat, we're denver people now", "denver"),
    ("we packed up and headed north to Tromsø.", "Tromsø"),
])
def test_residence_said_other_ways(text: str, place: str) -> None:
    assert ("u", "lives_in", place, False) in _facts(_run(text))


@pytest.mark.parametrize("text", ["I'm a permanent resident now", "I've been in Paris twice",
                                  "my sister has been in Rome for a year", "are you a Berlin local?"])
def test_not_a_residence_of_the_user(text: str) -> None:
    assert not any(s == "u" and p == "lives_in" for s, p, _v, _n in _facts(_run(text)))  # the sister's is hers
