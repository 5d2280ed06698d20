"""h-ledger9: ordinary chat corrections, declined offers, third parties' things, subject-less changes
(real spaCy clauses, the default extractor; no mocks)."""

from __future__ import annotations

import pytest

from markmem.model import Candidate, RawEntry
from markmem.write.clauses import load_splitter
from markmem.write.extract import HeuristicExtractor
from markmem.write.extract_subject import correction
from tests.ledger_fixtures import extract_turns


def _chat(turns: list[tuple[str, str]]) -> list[list[Candidate]]:
    """(role, text) turns of user "u", a minute apart, through one extractor: each turn's candidates."""
    splitter, name = load_splitter("spacy", "en_core_web_sm")
    assert name == "spacy"
    ex = HeuristicExtractor(splitter)
    out = []
    for i, (role, text) in enumerate(turns):
        when = f"2026-03-02T09:{i:02d}:00Z"
        entry = RawEntry(id=f"r{i}", user_id="u", role=role, content=text, recorded_at=when, occurred_at=when)
        out.append(ex.extract([entry]).candidates)
    return out


def _pairs(cands: list[Candidate]) -> set[tuple[str, str]]:
    return {(c.predicate, c.value) for c in cands if not c.negated}


def test_no_with_a_name_answers_the_assistants_restatement() -> None:
    turns = _chat([("user", "I've just moved up north for work"),
                   ("assistant", "Exciting! So you're in Newcastle now?"),
                   ("user", "no, Sunderland. close though")])
    assert _pairs(turns[2]) == {("lives_in", "Sunderland")}
    assert all(c.subject == "u" for c in turns[2])


def test_the_assistant_alone_makes_no_claim_and_a_yes_changes_nothing() -> None:
    turns = _chat([("user", "I went to the cinema"), ("assistant", "So you're in Leeds now?"),
                   ("user", "yep, right by the station")])
    assert turns[1] == [] and _pairs(turns[2]) == set()
    turns = _chat([("user", "I went to the cinema"), ("assistant", "Did you enjoy it?"),
                   ("user", "no, Barbie was awful")])
    assert _pairs(turns[2]) == set()


def test_saying_ones_value_again_to_the_assistant_is_no_correction() -> None:
    turns = _chat([("user", "I've started at Aldi as an area manager"),
                   ("assistant", "So you work at Lidl now?"), ("user", "no no, Aldi! easy mistake")])
    assert _pairs(turns[2]) <= {("employer", "Aldi")}


@pytest.mark.parametrize("first,fix,slot,new", [
    ("my dentist is Dr Kaur", "typo earlier, my dentist is Dr Kapur", "dentist", "Dr Kapur"),
    ("I teach maths at a secondary school", "mostly year 9. oh wait I told you maths, it's chemistry", "job",
     "chemistry"),
])
def test_the_new_value_is_the_one_after_the_cue(first: str, fix: str, slot: str, new: str) -> None:
    turns = extract_turns([("2026-03-02T09:00:00Z", first), ("2026-03-02T09:05:00Z", fix)])
    assert (slot, new) in _pairs(turns[1])
    assert {v for p, v in _pairs(turns[1]) if p == slot} == {new}


def test_a_clause_or_a_time_word_is_no_corrected_value() -> None:
    assert correction("actually, I was wondering if you know any good pubs here") is None
    assert correction("typo earlier") is None
    assert correction("sorry, I meant this Friday") == ("this Friday", None)
    turns = extract_turns([("2026-03-02T09:00:00Z", "I'm in Glasgow"),
                           ("2026-03-02T09:05:00Z", "actually, I was wondering if you know any good pubs here")])
    assert _pairs(turns[1]) == set()


@pytest.mark.parametrize("text", [
    "they offered me a job at Superdrug but I turned it down",
    "my friend keeps saying I should move to Hastings, not a chance",
    "mum wants me to move to Cardiff",
])
def test_someone_elses_idea_is_no_fact_of_the_user(text: str) -> None:
    turns = extract_turns([("2026-03-02T09:00:00Z", "I work at Boots and I live in Brighton"),
                           ("2026-03-09T09:00:00Z", text)])
    assert not {p for p, _v in _pairs(turns[1])} & {"employer", "lives_in"}


def test_an_accepted_offer_is_still_read() -> None:
    turns = extract_turns([("2026-03-09T09:00:00Z", "I was offered a job at Superdrug and took it")])
    assert ("employer", "Superdrug") in _pairs(turns[0])


@pytest.mark.parametrize("text", [
    "my neighbour's dog is a huge Great Dane called Tank",
    "my aunt's cat is a Siamese called Mango",
])
def test_a_third_partys_thing_is_not_the_users(text: str) -> None:
    turns = extract_turns([("2026-03-02T09:00:00Z", text)])
    assert all(c.subject != "u" for c in turns[0])


def test_the_households_things_stay_the_users_family_facts() -> None:
    turns = extract_turns([("2026-03-02T09:00:00Z", "I live in Leicester"),
                           ("2026-03-09T09:00:00Z", "my son's teacher just moved to Coventry")])
    assert not any(c.predicate == "lives_in" for c in turns[1])
    from markmem.write.extract_subject import third_party
    assert third_party("my son's school is St Mary's", None) is None


def test_a_third_partys_own_fact_still_is_theirs() -> None:
    turns = extract_turns([("2026-03-02T09:00:00Z", "my dad's car is a Volvo")])
    assert all(c.subject != "u" for c in turns[0])


@pytest.mark.parametrize("text,slot,value", [
    ("gone fully vegan since January", "diet", "vegan"),
    ("back to being veggie, it didn't feel right", "diet", "veggie"),
    ("I've also got into pottery lately", "hobby", "pottery"),
    ("I'd say Ursula Le Guin is my favourite author these days", "favorite_author", "Ursula Le Guin"),
])
def test_a_change_said_without_i(text: str, slot: str, value: str) -> None:
    assert (slot, value) in _pairs(extract_turns([("2026-03-02T09:00:00Z", text)])[0])


@pytest.mark.parametrize("text", ["got into trouble again", "I got into Oxford", "got into an argument with Sam",
                                  "she's gone vegan", "getting into bed now"])
def test_no_hobby_or_diet_from_look_alikes(text: str) -> None:
    assert not {p for p, _v in _pairs(extract_turns([("2026-03-02T09:00:00Z", text)])[0])} & {"hobby", "diet"}


def test_an_ending_with_no_object_ends_the_habit_the_turn_names() -> None:
    turns = extract_turns([("2026-03-02T09:00:00Z", "I smoke about ten a day"),
                           ("2026-03-20T09:00:00Z", "three months without a cigarette! I've quit for good")])
    assert [(c.predicate, c.negated) for c in turns[1]] == [("smokes", True)]
    turns = extract_turns([("2026-03-02T09:00:00Z", "I smoke about ten a day"),
                           ("2026-03-20T09:00:00Z", "the gym was too expensive so I've quit")])
    assert not any(c.predicate == "smokes" for c in turns[1])


def test_a_restarted_clause_drops_the_misspoken_one() -> None:
    for text, kept in [("I'm from Dundee, er, I live in Perth I mean", ("lives_in", "Perth")),
                       ("I'm from Swansea, uh, well I live in Cardiff I should say", ("lives_in", "Cardiff"))]:
        assert _pairs(extract_turns([("2026-03-02T09:00:00Z", text)])[0]) == {kept}
    said = _pairs(extract_turns([("2026-03-02T09:00:00Z", "I'm from Leeds, um, I love it")])[0])
    assert ("hometown", "Leeds") in said


def test_a_friends_advice_moves_nothing_by_any_path() -> None:
    turns = extract_turns([("2026-03-02T09:00:00Z", "I live in Norwich"),
                           ("2026-03-09T09:00:00Z", "my mate keeps telling me to move to Ipswich, no chance")])
    assert not any(c.predicate == "lives_in" for c in turns[1])
