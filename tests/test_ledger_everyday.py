"""The ledger's write side on everyday wording (issue #12 pts 2-4, h-ledger7), with real spaCy (no
mocked parser): changes the rules never read, a correction sent long after the fact it corrects, a
comma-joined piece that names the replaced value, members named in passing, and what must stay no claim.

* working for oneself is a job change: "I'm self-employed now", "I run my own food truck now";
* a terse correction ("typo, Odense*", "*Bosch", "I mean a Polo") refers to the previous turn, whatever the gap;
* "got a Corsa last week, the Fiesta failed its MOT": the new car's claim does not carry the old car;
* "my daughter Isla starts school", "a second cat! she's called Olive": members by name, the first kept;
* "first week at Revolut done", "our Aberdeen place": a change said by what is new.
"""

from __future__ import annotations

import pytest

from markmem.model import Candidate
from tests.ledger_fixtures import extract_turns

pytest.importorskip("spacy")

JAN, MAR = "2025-01-06T10:00:00Z", "2025-03-02T10:00:00Z"  # weeks apart: two sessions


def _run(*turns: tuple[str, str]) -> list[Candidate]:
    return [c for cands in extract_turns(turns) for c in cands]


def _later(cands: list[Candidate]) -> list[Candidate]:
    return [c for c in cands if c.raw_id != "r0"]


def _values(cands: list[Candidate], predicate: str) -> list[str]:
    return [c.value for c in cands if c.predicate == predicate and not c.negated]


@pytest.mark.parametrize(("said", "value"), [
    ("I'm self-employed now, my own van and everything", "self-employed"),
    ("went freelance in January, doing bookkeeping for small businesses", "freelance"),
    ("set up on my own as a designer, first client is a brewery", "self-employed"),
    ("I run my own food truck now", "own food truck"),
    ("I started my own cleaning company, three staff already", "own cleaning company"),
    ("I work for myself these days", "self-employed"),
])
def test_working_for_oneself_replaces_the_employer(said: str, value: str) -> None:
    cands = _run((JAN, "I'm a plumber working for British Gas"), (MAR, said))
    assert _values(_later(cands), "employer") == [value]


@pytest.mark.parametrize("said", ["my sister has her own business", "I cook on my own most nights",
                                  "I own my own home"])
def test_someone_elses_business_or_being_alone_is_no_job(said: str) -> None:
    cands = _run((JAN, "I work at Starbucks"), (MAR, said))
    assert not [c for c in _later(cands) if c.predicate in ("employer", "job") and c.subject == "u"]


@pytest.mark.parametrize(("first", "fix", "predicate", "value"), [
    ("I live in Aarhus", "typo, Odense*", "lives_in", "Odense"),
    ("I work for Siemens", "*Bosch, long day sorry", "employer", "Bosch"),
    ("my car is a Golf", "I mean a Polo, I always mix those up", "car", "Polo"),
    ("my partner is called Dan", "*Dean, autocorrect hates me", "partner", "Dean"),
])
def test_a_terse_correction_corrects_the_previous_turn_after_a_gap(first: str, fix: str, predicate: str,
                                                                   value: str) -> None:
    cands = _run((JAN, first), (MAR, fix))
    assert _values(_later(cands), predicate) == [value]


def test_a_third_partys_fact_is_corrected_by_a_bare_name() -> None:
    cands = _run((JAN, "my sister lives in Leeds"), (MAR, "sorry, Bradford, she moved ages ago"))
    assert [(c.subject, c.value) for c in _later(cands) if c.predicate == "lives_in" and not c.negated] == \
        [("sister", "Bradford")]


@pytest.mark.parametrize("later", ["my new GP, Dr Okafor, actually listens", "I'm *so* tired today",
                                   "sorry for the late reply, crazy week at work with the audit and all"])
def test_no_correction_without_one(later: str) -> None:
    cands = _run((JAN, "my doctor is Dr Shah"), (MAR, later))
    # a new GP is a change of the one doctor slot (h-ledger8), a claim of its own turn, not a correction of Dr Shah
    assert [c.value for c in _later(cands) if c.predicate == "doctor"] == (["Dr Okafor"] if "GP" in later else [])


@pytest.mark.parametrize(("first", "then", "predicate", "new", "old"), [
    ("I drive a Fiesta", "got a Corsa last week, the Fiesta failed its MOT", "car", "Corsa", "Fiesta"),
    ("our broadband is BT", "switched us to Community Fibre, BT kept dropping out", "internet_provider",
     "Community Fibre", "BT"),
    ("I live in Manchester", "back in Manchester now, London wasn't for me", "lives_in", "Manchester", "London"),
])
def test_a_comma_piece_naming_the_old_value_leaves_the_new_claims_text(first: str, then: str, predicate: str,
                                                                        new: str, old: str) -> None:
    turns = [(JAN, first), (MAR, then)]
    if old == "London":
        turns.insert(1, ("2025-02-01T10:00:00Z", "moved to London for the job"))
    cands = [c for c in _run(*turns) if c.raw_id == f"r{len(turns) - 1}"]
    claim = [c for c in cands if c.predicate == predicate and not c.negated and c.value == new]
    assert claim and all(old not in c.text for c in claim)


def test_a_claims_text_keeps_its_commas_when_no_old_value_is_named() -> None:
    cands = _run((JAN, "I drive a Fiesta"), (MAR, "got a Corsa last week, so happy"))
    assert [c.text for c in _later(cands) if c.predicate == "car"] == ["got a Corsa last week, so happy"]


@pytest.mark.parametrize(("said", "predicate", "name"), [
    ("my daughter Isla starts school in September", "relationship_daughter", "Isla"),
    ("our son Finn was born on Tuesday!!", "relationship_son", "Finn"),
])
def test_a_member_named_in_a_sentence_about_them_is_a_member(said: str, predicate: str, name: str) -> None:
    cands = _run((JAN, said))
    assert [c.value for c in cands if c.predicate == predicate] == [name]


def test_a_member_not_named_stays_the_third_partys_turn() -> None:
    cands = _run((JAN, "my boyfriend went vegan last week"))
    assert not [c for c in cands if c.predicate == "partner"]


def test_a_second_pet_named_in_the_next_sentence_adds_and_keeps_the_first() -> None:
    cands = _run((JAN, "we have a cat, Pepper"), (MAR, "we got a second cat! she's called Olive"))
    later = _later(cands)
    assert any("Olive" in v for v in _values(later, "pet"))
    assert not [c for c in later if c.predicate == "pet" and c.negated]


@pytest.mark.parametrize(("first", "then", "predicate", "value"), [
    ("I work at Monzo", "first week at Revolut done, the onboarding was intense", "employer", "Revolut"),
    ("I work at Boots", "my new colleagues at Superdrug are so friendly", "employer", "Superdrug"),
    ("I'm based in Glasgow", "still unpacking boxes in our Aberdeen place", "lives_in", "Aberdeen"),
    ("I speak Spanish", "finally fluent in Portuguese", "speaks", "Portuguese"),
])
def test_a_change_said_by_what_is_new(first: str, then: str, predicate: str, value: str) -> None:
    cands = _run((JAN, first), (MAR, then))
    assert _values(_later(cands), predicate) == [value]


@pytest.mark.parametrize(("first", "then", "predicate"), [
    ("I work at DHL", "my old boss at Siemens called about a job but I said no", "employer"),
    ("I live in Leith", "my Airbnb place in Rome was tiny", "lives_in"),
    ("I live in Leith", "our Christmas house party was chaos", "lives_in"),
])
def test_a_passing_mention_changes_nothing(first: str, then: str, predicate: str) -> None:
    cands = _run((JAN, first), (MAR, then))
    assert not [c for c in _later(cands) if c.predicate == predicate]


@pytest.mark.parametrize(("said", "predicate", "value"), [
    ("I'm with Octopus for energy", "energy_supplier", "Octopus"),
    ("I go to PureGym near the station", "gym", "PureGym"),
])
def test_a_service_named_beside_its_own_word(said: str, predicate: str, value: str) -> None:
    assert _values(_run((JAN, said)), predicate) == [value]


def test_a_place_visited_for_a_reason_is_no_service() -> None:
    assert not [c for c in _run((JAN, "I go to Spain for the sun")) if c.predicate in (
        "energy_supplier", "gym", "internet_provider", "bank", "phone_network", "insurer")]


def test_a_terse_turn_that_states_the_fact_anew_is_no_correction_of_its_words() -> None:
    """ "Actually, call me Robert." a month later: the rules' preferred name, not "call me Robert"."""
    cands = _run((JAN, "Call me Bobby."), (MAR, "Actually, call me Robert."))
    assert _values(_later(cands), "preferred_name") == ["Robert"]
