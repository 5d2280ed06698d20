"""Property: for any memory a user can build, jsonl export -> import into an empty repo -> export
gives identical bytes, and the imported repo holds the same pages, claims and raw entries."""

from __future__ import annotations

import tempfile
from datetime import date
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markmem import Memory

USERS = ("ann", "ben")
FACTS = ("I live in {}", "I work as a {}", "I like {}", "My sister is called {}", "I moved to {}",
         "I no longer like {}", "I'm allergic to {}", "My email is {}@example.com")
VALUES = ("Lisbon", "Oslo", "nurse", "pilot", "tea", "jazz", "Maria", "peanuts")
free_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(str.strip)
metadata = st.none() | st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4) | st.booleans(),
                                       max_size=2)
when = st.none() | st.dates(min_value=date(1990, 1, 1), max_value=date(2100, 1, 1)).map(lambda d: d.isoformat())
adds = st.tuples(st.just("add"), st.sampled_from(USERS), st.sampled_from(FACTS).flatmap(
    lambda f: st.sampled_from(VALUES).map(f.format)) | free_text, metadata, when)
ops = st.lists(adds | st.tuples(st.just("flush")) | st.tuples(st.just("update"), st.sampled_from(USERS), free_text),
               min_size=1, max_size=8)


def _open(path: Path) -> Memory:
    return Memory(path, pii_engine="regex", vector_model=None, background=False)


def _apply(mem: Memory, op: tuple) -> None:  # type: ignore[type-arg]
    if op[0] == "add":
        mem.add(op[2], user_id=op[1], metadata=op[3], occurred_at=op[4])
    elif op[0] == "flush":
        mem.flush()
    else:
        claims = [c for p in mem.get_all(op[1]) for c in p.active_claims()]
        if claims:
            mem.update(claims[0].id, op[2])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_jsonl_round_trip_property(steps: list[tuple]) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with _open(root / "a") as a:
            for op in steps:
                _apply(a, op)
            first = a.export(to="jsonl").text
            with _open(root / "b") as b:
                b.import_(_write(root / "a.jsonl", first or ""))
                assert b.export(to="jsonl").text == first
                for uid in USERS:
                    assert b.get_all(uid, include_archived=True) == a.get_all(uid, include_archived=True)
                assert b.stats()["raw_entries"] == a.stats()["raw_entries"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
