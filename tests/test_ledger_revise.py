"""How a claim changes the ledger (issue #12, h-revise), with real spaCy (no mocked parser):

* a negation only closes (a present "I don't drink" as a value of its own was dropped: it did not
  generalise); an ending verb on a one-valued habit ("I quit smoking") leaves its end as the value;
* ending one member of a coordination ("I play piano and violin" -> "I quit violin") restates the
  other without it; members a coordination added are remembered, so a later ending finds them;
* "X, not Y" corrects the user's earlier fact holding Y, even days later;
* a leading "no" and "got that wrong" are correction cues;
* future-dated changes: "after christmas", "I'll be X"; "my sessions" finds "my gym sessions".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from markmem import Memory
from markmem.model import Candidate, Claim, RawEntry
from markmem.write.clauses import load_splitter
from markmem.write.extract import HeuristicExtractor
from markmem.write.extract_fix import CUE
from markmem.write.extract_time import scheduled
from markmem.write.revise import without
from tests.facts_fixtures import scripted_memory

pytest.importorskip("spacy")


def _splitter():  # type: ignore[no-untyped-def]
    splitter, name = load_splitter("spacy", "en_core_web_sm")
    assert name == "spacy"
    return splitter


def _run(*turns: tuple[str, str]) -> list[Candidate]:
    ex = HeuristicExtractor(_splitter())
    out: list[Candidate] = []
    for i, (when, text) in enumerate(turns):
        entry = RawEntry(id=f"r{i}", user_id="u", role="user", content=text, recorded_at=when, occurred_at=when)
        out += ex.extract([entry]).candidates
    return out


# -- negations --------------------------------------------------------------------------------
def test_a_present_negation_only_closes() -> None:
    cands = _run(("2026-01-01T10:00:00Z", "I don't drink alcohol, never have"))
    facts = {(c.predicate, c.value, c.negated) for c in cands}
    assert ("drinks", "alcohol", True) in facts
    assert not [f for f in facts if f[0] == "drinks" and not f[2]]  # no value "don't drink alcohol"


# -- coordinations --------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "value", "left"), [
    ("I play piano and violin", "violin", "I play piano"),
    ("I play piano and violin", "piano", "I play violin"),
    ("I own a PS5 and a Switch", "Switch", "I own a PS5"),
    ("I speak Polish, English and German", "English", "I speak Polish and German"),
    ("I play piano", "violin", None),
])
def test_without_takes_one_member_out_of_a_coordination(text: str, value: str, left: str | None) -> None:
    assert without(text, value) == left


def test_coordinated_members_of_another_part_of_speech_are_members_too() -> None:
    values = {c.value for c in _run(("2026-01-01T10:00:00Z", "I speak Polish and English")) if c.predicate == "speaks"}
    assert values == {"Polish", "English"}


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root: Path = tmp_path_factory.mktemp("revise") / "memory"
    turns = {
        "piano": [("2025-03-03T10:00:00Z", "I play piano and violin"),
                  ("2025-10-03T10:00:00Z", "I quit violin, just piano these days")],
        "kpmg": [("2026-03-10T10:00:00Z", "I work at Deloitte in the audit team"),
                 ("2026-03-15T10:00:00Z", "I got that wrong earlier - I'm at KPMG, not Deloitte.")],
        "bday": [("2025-07-07T10:00:00Z", "my birthday is the 12th of August"),
                 ("2025-07-07T10:04:00Z", "hmm no, the 21st of August. always swap the digits haha")],
        "gym": [("2026-02-01T10:00:00Z", "my gym sessions are on Mondays"),
                ("2026-02-20T10:00:00Z", "from March my sessions switch to Thursdays")],
        "drink": [("2025-01-20T10:00:00Z", "I don't drink alcohol, never have")],
        "smoke": [("2025-06-06T10:00:00Z", "I smoke about ten a day"),
                  ("2026-01-01T10:00:00Z", "I don't smoke at all now")],
    }
    m = scripted_memory(root, {user: [("user", when, text) for when, text in said] for user, said in turns.items()})
    yield m
    m.close()


def _claims(mem: Memory, user: str) -> list[Claim]:
    return [c for p in mem.get_all(user, include_archived=True) for c in p.claims]


def _now(mem: Memory, user: str, at: str = "2026-12-31T00:00:00Z") -> list[Claim]:
    return [c for c in _claims(mem, user) if c.valid_at(at) and not c.superseded_by]


def test_ending_one_member_restates_the_other_without_it(mem: Memory) -> None:
    now = {c.value: c.text for c in _now(mem, "piano") if c.predicate == "plays"}
    assert now == {"piano": "I play piano"}
    old = [c for c in _claims(mem, "piano") if c.value == "piano" and c.superseded_by]
    assert len(old) == 1 and old[0].text == "I play piano and violin"  # kept, closed, never overwritten


def test_x_not_y_corrects_the_earlier_fact_days_later(mem: Memory) -> None:
    employers = {c.value for c in _now(mem, "kpmg") if c.predicate == "employer"}
    assert employers == {"KPMG"}
    fixed = next(c for c in _claims(mem, "kpmg") if c.value == "KPMG")
    assert fixed.valid_from.startswith("2026-03-10")  # a correction: true from when the wrong value was said


def test_a_leading_no_corrects_a_value_of_the_same_shape(mem: Memory) -> None:
    assert {c.value for c in _now(mem, "bday") if c.predicate == "birthday"} == {"the 21st of August"}
    assert CUE.search("hmm no, the 21st") and not CUE.search("no more coffee for me")


def test_a_slot_named_by_its_own_noun_changes_from_the_date(mem: Memory) -> None:
    gym = [c for c in _claims(mem, "gym") if c.predicate == "routine_gym"]
    assert {c.value for c in gym if c.valid_at("2026-02-25T00:00:00Z")} == {"on Mondays"}
    assert {c.value for c in gym if c.valid_at("2026-03-05T00:00:00Z")} == {"Thursdays"}


def test_a_negation_closes_and_adds_no_value(mem: Memory) -> None:
    assert not _now(mem, "drink")
    assert not any("ten a day" in c.value for c in _now(mem, "smoke"))


@pytest.mark.parametrize(("clause", "when", "plain", "start"), [
    ("I'll be store manager after christmas", "2025-12-01T10:00:00Z", "I am store manager", "2025-12-25"),
    ("from the new year we'll be in Leeds", "2025-11-01T10:00:00Z", "we are in Leeds", "2026-01-01"),
])
def test_future_dates_and_the_future_tense(clause: str, when: str, plain: str, start: str) -> None:
    got = scheduled(clause, when)
    assert got is not None and got[0] == plain and got[1].startswith(start)
