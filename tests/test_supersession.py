"""The temporal benchmark's cases as tests: every case replayed through the extractor and resolver
(fast, pages in a dict), and a sample end to end through Memory (real git, real SQLite).

bench/supersession.py prints the full table; these tests keep its 100% from regressing.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from markmem.ids import parse_time
from markmem.model import Claim, Page, RawEntry
from markmem.write.extract import HeuristicExtractor, norm_value
from markmem.write.resolve import resolve

BENCH = Path(__file__).resolve().parents[1] / "bench" / "supersession.py"
_spec = importlib.util.spec_from_file_location("bench_supersession", BENCH)
bench = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules[_spec.name] = bench  # dataclasses look their module up  # type: ignore[union-attr]
_spec.loader.exec_module(bench)  # type: ignore[union-attr]
CASES = bench.load_cases()
SAMPLE = ["city-moved", "city-out-of-order-middle", "city-transcript-labels", "conv-named-vs-owner",
          "pet-no-longer", "partner-broke-up-dating", "job-no-longer-then-new", "ho-cross-apple",
          "city-used-to-but", "phone-new-number"]


def replay(case: dict[str, Any]) -> dict[str, Page]:
    """Each turn compiled as its own batch, like Memory with a flush after every add()."""
    pages: dict[str, Page] = {}
    for i, turn in enumerate(case["turns"]):
        entries = [
            RawEntry(id=f"r-{i:04d}{j:08d}", user_id=turn["u"], role=m["role"], content=m["content"],
                     recorded_at=f"2030-01-01T00:00:{i:02d}.000000Z", occurred_at=parse_time(str(turn["at"])),
                     speaker=m.get("name"), path=f"raw/u/{turn['u']}/2030/01/01.jsonl")
            for j, m in enumerate(bench.messages(turn))
        ]
        cands = HeuristicExtractor().extract(entries).candidates
        res = resolve(cands, {e.id: e for e in entries}, pages.get, f"2030-01-01T00:01:{i:02d}.000000Z", 0.5,
                      siblings=lambda prefix: [p for p in pages if p.startswith(prefix)])
        pages.update(res.pages)
    return pages


def failures(case: dict[str, Any], pages: dict[str, Page]) -> list[str]:
    out = []
    for exp in case["expect"]:
        user, subject = exp["u"], str(exp.get("s", exp["u"])).casefold()
        mine: list[Claim] = [c for p in pages.values() if p.user_id == user for c in p.claims
                             if c.subject.casefold() == subject and c.predicate == exp["p"]]
        if "closed" in exp:
            ends = [c.valid_until for c in mine if norm_value(c.value) == norm_value(str(exp["closed"]))]
            if parse_time(str(exp["at"])) not in ends:
                out.append(f"{exp}: valid_until {ends}")
            continue
        when = parse_time(str(exp["as_of"])) if "as_of" in exp else None
        got = {norm_value(c.value) for c in mine if (c.valid_at(when) if when else c.active)}
        if got != bench.values(exp["is"] if when else exp["now"]):
            out.append(f"{exp}: got {sorted(got)}")
    for page in pages.values():
        by_id = {c.id: c for c in page.claims}
        for c in page.claims:
            nxt = by_id.get(c.superseded_by or "")
            if c.superseded_by and (nxt is None or nxt.subject.casefold() != c.subject.casefold()):
                out.append(f"{c.id} closed across pages or speakers")
    return out


def test_there_are_at_least_150_hand_written_cases() -> None:
    assert len(CASES) >= 150
    tags = {t for c in CASES for t in c["tags"]}
    assert {"explicit", "other_speaker", "cross_user", "out_of_order", "negation", "multi"} <= tags
    assert sum(1 for c in CASES for e in c["expect"] if "as_of" in e) >= 50


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    assert failures(case, replay(case)) == []


def test_sample_end_to_end_through_memory() -> None:
    cases = [c for c in CASES if c["id"] in SAMPLE]
    assert len(cases) == len(SAMPLE)
    for mode in ("each", "end"):
        result = bench.run(cases, mode)
        assert [ch.detail for ch in result.checks if not ch.ok] == []
        assert result.cross == [] and result.non_user == []
