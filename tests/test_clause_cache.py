"""The extractor's per-clause cache (issue #12 pt 6, compile speed): the rules' reading of a clause is
cached by its text alone, so it never carries a user, a speaker or a turn's time from one turn to
another, and an edit's new text is read afresh. Real spaCy and real repos, no mocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from markmem import Memory
from markmem.model import RawEntry
from markmem.write import extract
from markmem.write.clauses import load_splitter

CLAUSES = ["I live in Lisbon", "I work as a pilot", "I'm not vegan anymore", "I quit my job",
           "left saltbox, i'm sous chef at Ember & Rye now", "ok sounds good", "my favourite colour is teal",
           "I love hiking and jazz", "", "I don't live in Cologne anymore"]


@pytest.mark.parametrize("clause", CLAUSES)
def test_the_cache_reads_what_the_rules_read(clause: str) -> None:
    assert extract._clause_facts(clause) == extract._read_facts(clause)
    assert extract._clause_facts(clause) == extract._read_facts(clause)  # the cached path too


def test_a_caller_extending_the_list_does_not_change_the_cache() -> None:
    first = extract._clause_facts("I live in Lisbon")
    assert first
    first += [("job", "pilot", "profile", False, 0.9, False)]
    first[0] = ("lives_in", "Porto", "profile", False, 0.9, False)
    again = extract._clause_facts("I live in Lisbon")
    assert [f[:2] for f in again] == [("lives_in", "Lisbon")]


def _entry(i: int, user: str, text: str, speaker: str | None = None) -> RawEntry:
    when = f"2026-01-0{i + 1}T10:00:00Z"
    return RawEntry(id=f"r{i}", user_id=user, role="user", content=text, recorded_at=when, occurred_at=when,
                    speaker=speaker)


def test_one_clause_said_by_two_users_and_a_named_speaker_is_each_ones_own() -> None:
    splitter, _ = load_splitter("auto", "en_core_web_sm")
    ex = extract.HeuristicExtractor(splitter)
    out = ex.extract([_entry(0, "alice", "I live in Lisbon"), _entry(1, "bob", "I live in Lisbon"),
                      _entry(2, "bob", "I live in Lisbon", speaker="Carol")]).candidates
    assert [(c.raw_id, c.subject, c.predicate, c.value) for c in out] == [
        ("r0", "alice", "lives_in", "Lisbon"), ("r1", "bob", "lives_in", "Lisbon"),
        ("r2", "Carol", "lives_in", "Lisbon")]


def test_an_edit_is_read_afresh(tmp_path: Path) -> None:
    """The same clause said by two users, one claim edited: the edit holds for that user alone, and
    the clause said again by the other is still read from its text."""
    with Memory(tmp_path / "r", pii_engine="regex", pii_policy="tag", vector_model=None, background=False) as mem:
        mem.add("I live in Lisbon", user_id="alice", occurred_at="2026-01-01T10:00:00Z")
        mem.add("I live in Lisbon", user_id="bob", occurred_at="2026-01-01T10:00:00Z")
        mem.flush()
        claim = next(c for p in mem.get_all("alice") for c in p.claims if c.predicate == "lives_in")
        mem.update(claim.id, "Porto")
        mem.flush()
        alice = {c.value for p in mem.get_all("alice") for c in p.claims if c.predicate == "lives_in" and c.active}
        mem.add("I live in Lisbon", user_id="carol", occurred_at="2026-01-02T10:00:00Z")
        mem.flush()
        bob = {c.value for p in mem.get_all("bob") for c in p.claims if c.predicate == "lives_in" and c.active}
        carol = {c.value for p in mem.get_all("carol") for c in p.claims if c.predicate == "lives_in" and c.active}
    assert alice == {"Porto"}
    assert bob == carol == {"Lisbon"}


def _tuning_clauses() -> list[str]:
    import json

    data = Path(__file__).resolve().parent.parent / "bench" / "data"
    out: list[str] = []
    for name in ("tune", "tune2", "tune7"):
        for line in (data / f"facts_{name}.jsonl").read_text("utf-8").splitlines():
            if line.strip():
                for t in json.loads(line)["turns"]:
                    out += [extract.strip_lead(extract.normalise(s)) for s in extract.sentences(t["content"])]
    return out


def test_the_cached_product_finders_and_the_date_gate_agree_with_the_uncached() -> None:
    """``_owned_in``/``_stated_in`` give what ``owned``/``stated`` give; the date gate is closed only
    where ``scheduled`` finds nothing, whatever the turn's time (so the gate changes no claim)."""
    from markmem.write.extract_product import owned, stated
    from markmem.write.extract_time import scheduled

    clauses = _tuning_clauses() + ["from next month I'll work at Ostara", "my new Pixel 9 is great",
                                   "swapped my iPhone 12 for a Pixel 8"]
    gated = 0
    for text in clauses:
        assert list(extract._owned_in(text)) == owned(text)
        assert list(extract._stated_in(text)) == stated(text)
        if not extract._may_date(text):
            gated += 1
            for when in ("2026-01-01T10:00:00Z", "2026-06-30T23:00:00Z"):
                assert scheduled(text, when) is None, text
    assert 100 < gated < len(clauses)
    assert extract._may_date("from next month I'll work at Ostara")
