"""Slot detection on unseen wording (issue #12, h-slots), with real spaCy and the shipped model2vec
model (no mocked parser or embedder): an unlisted "I'm a <phrase>" is a job, a habit slot or a trait
(:mod:`markmem.write.extract_kind`); aspiration slots ("my goal is ..."); "I'm with <Name>" replacing
a known employer; "I'm at <Name>" with a lasting marker; names on kinship and pet nouns; an open slot
said shorter; the rest of a sentence naming a service slot."""

from __future__ import annotations

import pytest

from markmem.model import RawEntry
from markmem.write.clauses import load_splitter
from markmem.write.extract import HeuristicExtractor
from markmem.write.extract_kind import agent_slot, bare_clause, kind_of
from tests.ledger_fixtures import extract_turns

pytest.importorskip("spacy")


def _run(*turns: str) -> list[list[tuple[str, str, str, bool]]]:
    """Each turn's (subject, predicate, value, negated); the user is "u"."""
    timed = [(f"2026-03-0{i + 1}T10:00:00Z", turn) for i, turn in enumerate(turns)]
    return [[(c.subject, c.predicate, c.value, c.negated) for c in cands] for cands in extract_turns(timed)]


@pytest.mark.parametrize("phrase, slot", [("social smoker", "smokes"), ("heavy drinker", "drinks")])
def test_an_agent_noun_takes_its_verbs_slot(phrase: str, slot: str) -> None:
    assert agent_slot(phrase) is not None and agent_slot(phrase)[0] == slot  # type: ignore[index]


@pytest.mark.parametrize("phrase, kind", [
    ("solicitor", "job"), ("receptionist", "job"), ("introvert", "trait"), ("cat person", "trait"),
    ("bit tired", None), ("huge mess", None),
])
def test_an_unlisted_phrase_is_a_job_a_trait_or_nothing(phrase: str, kind: str | None) -> None:
    assert kind_of(phrase) == kind


@pytest.mark.parametrize("clause, fact", [
    ("I'm a solicitor now, same firm", ("job", "solicitor")),
    ("I'm an occasional smoker, mostly at parties", ("smokes", "occasional smoker")),
    ("I'm a morning person", ("trait", "morning person")),
    ("i do the books for a bakery, accountant by trade", ("job", "accountant")),
])
def test_a_bare_clause_is_read(clause: str, fact: tuple[str, str]) -> None:
    assert [f[:2] for f in bare_clause(clause)] == [fact]


def test_an_ended_habit_closes_the_agent_noun_slot() -> None:
    said, quit_ = _run("I'm a social smoker", "I quit smoking")
    assert ("u", "smokes", "social smoker", False) in said
    assert ("u", "smokes", "social smoker", True) in quit_


@pytest.mark.parametrize("text, value", [
    ("my goal is a full marathon", "a full marathon"), ("my dream is a house by the sea", "a house by the sea"),
])
def test_an_aspiration_is_an_open_slot(text: str, value: str) -> None:
    assert [(p, v) for _s, p, v, _n in _run(text)[0]] == [(text.split()[1], value)]


def test_an_aspiration_said_as_a_that_clause_is_no_slot() -> None:
    assert _run("my fear is that he leaves")[0] == []


def test_with_a_name_replaces_the_known_employer_when_no_partner_is_known() -> None:
    _first, then = _run("I work at Monzo on the payments team", "I'm with Starling now")
    assert then == [("u", "employer", "Starling", False)]
    _first, then = _run("my girlfriend is called Hana", "I'm with Lucy now")
    assert ("u", "partner", "Lucy", False) in then


def test_at_a_name_with_a_lasting_marker_is_an_employer_a_visit_is_not() -> None:
    assert _run("these days I'm at Capgemini doing cloud stuff")[0] == [("u", "employer", "Capgemini", False)]
    assert _run("I've been at Aldi since the spring")[0] == [("u", "employer", "Aldi", False)]
    assert _run("I'm at Heathrow")[0] == []


def test_a_dropped_subject_before_an_auxiliary_still_ties() -> None:
    assert _run("been driving for Uber for like 3 years")[0] == [("u", "employer", "Uber", False)]


def test_a_home_the_user_has_is_where_they_live_moving_someone_else_is_not() -> None:
    assert _run("we've got a little flat in Bologna, top floor")[0] == [("u", "lives_in", "Bologna", False)]
    assert not any(p == "lives_in" for _s, p, _v, _n in _run("we moved him to Oakfield primary")[0])


def test_being_up_at_a_time_is_waking_then() -> None:
    assert _run("these days I'm up at 5 because of the baby")[0] == [("u", "routine_wake", "at 5", False)]


def test_a_name_on_a_kinship_or_pet_noun_is_the_users_member() -> None:
    assert ("u", "partner", "Clare", False) in _run("my wife Clare works at the hospital")[0]
    assert _run("we adopted a kitten, Tofu!")[0] == [("u", "pet", "kitten named Tofu", False)]


def test_an_open_slot_said_shorter_is_the_same_slot() -> None:
    _first, then = _run("my go-to drink is a flat white", "my go-to is an oat latte now")
    assert [p for _s, p, _v, _n in then] == ["go_to_drink"]


def test_the_rest_of_the_sentence_names_the_service() -> None:
    first, then = _run("I go to the Nuffield gym", "btw I switched gyms, I go to PureGym now")
    assert first == [("u", "gym", "Nuffield gym", False)]
    assert then == [("u", "gym", "PureGym", False)]


@pytest.mark.parametrize("value, is_time", [("March", True), ("Monday nights", True), ("at 7pm", True),
                                             ("Madrid", False), ("Mr Brightside", False)])
def test_a_time_is_never_a_place_employer_or_service(value: str, is_time: bool) -> None:
    from markmem.write.extract_service import is_time_value

    assert is_time_value(value) is is_time


def test_a_month_after_left_closes_no_place() -> None:
    assert _run("I freelance now, left the agency in March")[0] == []


def test_a_named_place_after_the_job_is_the_employer() -> None:
    said = _run("my job is accountant at Deloitte, don't judge")[0]
    assert ("u", "job", "accountant", False) in said and ("u", "employer", "Deloitte", False) in said


def test_a_routine_said_one_word_longer_is_the_same_slot() -> None:
    first, then = _run("I meal prep on Sunday nights", "switched meal prep to Monday nights, Sundays are for football")
    assert [p for _s, p, _v, _n in then] == [p for _s, p, _v, _n in first] == ["routine_meal"]


def test_shifted_to_a_place_is_a_move_and_a_reason_is_cut_from_a_value() -> None:
    assert _run("shifted to Bangalore for the new role")[0] == [("u", "lives_in", "Bangalore", False)]
    assert _run("my shoe size is 42 if you're suggesting trainers")[0] == [("u", "shoe_size", "42", False)]


def test_a_hedge_holds_its_own_clause_and_those_after_it() -> None:
    ex = HeuristicExtractor(load_splitter("spacy", "en_core_web_sm")[0])
    when = "2026-03-01T10:00:00Z"

    def confs(text: str) -> dict[str, float]:
        entry = RawEntry(id="r", user_id="u", role="user", content=text, recorded_at=when, occurred_at=when)
        return {c.predicate: c.confidence for c in ex.extract([entry]).candidates}

    assert confs("my star sign is Leo, not that I believe in it")["star_sign"] > 0.5
    assert confs("I think I live in Leeds now")["lives_in"] <= 0.4


def test_an_open_slot_the_user_has_is_not_taken_by_a_service() -> None:
    _first, then = _run("my dentist is Dr Okafor", "Dr Okafor retired so my dentist is now Dr Lind")
    assert ("u", "dentist", "Dr Lind", False) in then


def test_a_leading_reason_phrase_before_the_subject_is_skipped() -> None:
    assert _run("Since the new job I get up at 7:30 instead.")[0] == [("u", "routine_wake", "at 7:30", False)]


def test_a_judging_word_first_is_no_occupation() -> None:
    """ "He's been a great partner in helping me ..." (a LongMemEval turn) became Rachel's job "great partner"
    and outranked the user's own job turn: a praise says how someone is at it, not what they are."""
    from markmem.write.extract_kind import kind_of

    assert kind_of("great partner") is None and kind_of("terrible cook") is None
