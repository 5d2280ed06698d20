"""bench/facts.py can't rot silently: its scoring rules on hand-made inputs, and one tiny run on a
real memory repo (real git, regex PII gate so it stays fast; the bench itself uses the defaults)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from markmem import Memory
from markmem.errors import InvalidInput
from markmem.model import Claim, Page

BENCH = Path(__file__).resolve().parent.parent / "bench"
_spec = importlib.util.spec_from_file_location("bench_facts", BENCH / "facts.py")
facts = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(facts)  # type: ignore[union-attr]
fs = facts.fs

NOW = "2026-12-01T00:00:00.000000Z"


def claim(value: str, text: str, subject: str = "u1", start: str = "2026-01-01T00:00:00.000000Z",
          until: str | None = None, by: str | None = None) -> Claim:
    return Claim(id=f"c-{abs(hash(text)) % 10**10:010d}", subject=subject, predicate="lives_in", value=value,
                 text=text, valid_from=start, valid_until=until, superseded_by=by)


def page(*claims: Claim, pid: str = "u/u1/profile/lives-in") -> list[tuple[Page, Claim]]:
    p = Page(id=pid, type="profile", user_id="u1", title=pid.rsplit("/", 1)[-1], created=NOW, updated=NOW,
             claims=claims)
    return [(p, c) for c in claims]


def check(**kw: Any) -> dict[str, Any]:
    base = {"user_id": "u1", "subject": "user", "query": "q", "expect": ["Porto"], "stale": ["Lisbon"],
            "at": None, "kind": "current"}
    return {**base, **kw}


def test_mentions_is_case_insensitive_on_word_boundaries() -> None:
    assert fs.mentions("We moved to PORTO", ["porto"])
    assert not fs.mentions("Romeo called", ["Rome"])
    assert fs.mentions("it's tree nuts", ["tree nuts"])
    assert not fs.mentions(None, ["x"])


def test_ledger_current_passes_only_with_the_new_value_and_no_old_one() -> None:
    old = claim("Lisbon", "I live in Lisbon", until="2026-03-01T00:00:00.000000Z", by="c-new")
    new = claim("Porto", "we moved to Porto", start="2026-03-01T00:00:00.000000Z")
    assert fs.ledger_current(page(old, new), check(), NOW)
    still_open = claim("Lisbon", "I live in Lisbon")
    assert not fs.ledger_current(page(still_open, new), check(), NOW)
    assert not fs.ledger_current(page(old), check(), NOW)  # the new value never made a claim


def test_ledger_current_as_of_and_future_dated_claims() -> None:
    old = claim("Lisbon", "I live in Lisbon", until="2026-03-01T00:00:00.000000Z", by="c-new")
    new = claim("Porto", "we moved to Porto", start="2026-03-01T00:00:00.000000Z")
    feb = check(expect=["Lisbon"], stale=["Porto"], at="2026-02-01T00:00:00Z", kind="as_of")
    assert fs.ledger_current(page(old, new), feb, "2026-02-01T00:00:00.000000Z")
    assert not fs.ledger_current(page(old, new), feb, NOW)


def test_ledger_current_keeps_subjects_apart() -> None:
    mum = claim("Malaga", "my mum lives in Malaga", subject="mum")
    mine = claim("London", "I live in London")
    pairs = page(mine) + page(mum, pid="u/u1/relationship/mum")
    assert fs.ledger_current(pairs, check(expect=["London"], stale=["Malaga"]), NOW)
    assert fs.ledger_current(pairs, check(subject="mum", expect=["Malaga"], stale=[]), NOW)
    assert not fs.ledger_current(pairs, check(subject="mum", expect=["London"], stale=[]), NOW)


def test_negation_with_no_new_value_passes_when_nothing_stale_is_active() -> None:
    dog = claim("Rex", "my dog rex is a golden retriever", until="2026-08-19T00:00:00.000000Z")
    neg = check(expect=[], stale=["golden retriever"])
    assert fs.ledger_current(page(dog), neg, NOW)
    assert not fs.ledger_current(page(claim("Rex", "my dog rex is a golden retriever")), neg, NOW)


def test_lines_and_hits_marked_old_do_not_count_as_stale_shown() -> None:
    assert fs.line_pass("- we moved from Lisbon to Porto [c-1]", ["Porto"], ["Lisbon"], fs.pack_marked(
        "- we moved from Lisbon to Porto [c-1]"))
    assert not fs.line_pass("- I live in Lisbon [c-1]", ["Porto"], ["Lisbon"], False)
    assert fs.pack_marked("- I live in Lisbon (superseded 2026-03-01) [c-1]")
    assert not fs.pack_marked("- I live in Lisbon [c-1]")
    hit = {"text": "I live in Lisbon", "valid_until": "2026-03-01T00:00:00.000000Z"}
    assert fs.hit_marked(hit, NOW) and not fs.hit_marked(hit, "2026-02-01T00:00:00.000000Z")
    assert fs.content_lines("## What I remember\n- a [c-1]\n\n## Relevant\n- b [r-2]\n") == ["- a [c-1]", "- b [r-2]"]


SCENARIOS = [
    {"id": "s1", "category": "move", "turns": [
        {"user_id": "s1-u1", "role": "user", "content": "i live in bremen", "occurred_at": "2026-01-05T10:00:00Z"},
        {"user_id": "s1-u1", "role": "assistant", "content": "Nice, Hamburg is close.",
         "occurred_at": "2026-01-05T10:00:00Z"},
        {"user_id": "s1-u1", "role": "user", "content": "i live in kiel now", "occurred_at": "2026-04-05T10:00:00Z"}],
     "checks": [{"user_id": "s1-u1", "subject": "user", "query": "where does the user live", "expect": ["kiel"],
                 "stale": ["bremen"], "at": None, "kind": "current"},
                {"user_id": "s1-u1", "subject": "user", "query": "where did the user live", "expect": ["bremen"],
                 "stale": [], "at": "2026-02-01T00:00:00Z", "kind": "as_of"}]},
    {"id": "s2", "category": "cross_user", "turns": [
        {"user_id": "s2-u1", "role": "user", "content": "i live in graz", "occurred_at": "2026-01-05T10:00:00Z"},
        {"user_id": "s2-u2", "role": "user", "content": "i live in linz", "occurred_at": "2026-01-06T10:00:00Z"}],
     "checks": [{"user_id": "s2-u1", "subject": "user", "query": "where does the user live", "expect": ["graz"],
                 "stale": ["linz"], "at": None, "kind": "current"}]},
]


@pytest.fixture()
def mem(tmp_path: Path):
    with Memory(tmp_path / "repo", pii_engine="regex", vector_model=None, background=False) as m:
        yield m


def test_a_tiny_run_computes_every_metric(mem: Memory, tmp_path: Path) -> None:
    timings = facts.ingest(mem, SCENARIOS)
    assert len(timings) == 4  # one add() per (user, time) run of turns
    mem.flush()
    base = facts.LatestMention([t for sc in SCENARIOS for t in sc["turns"]])
    assert base.latest("s1-u1", "where does the user live", NOW) == "i live in kiel now"
    assert base.latest("s1-u1", "where does the user live", "2026-02-01T00:00:00.000000Z") == "i live in bremen"
    res = facts.run_set(mem, "tune", SCENARIOS, base)
    overall = res["metrics"]["ALL"]
    assert overall["ledger"][1] == 3 and overall["asof5"][1] == 1 and overall["stale5"][1] == 2
    assert res["faults"] == {"cross_user": 0, "cross_speaker": 0, "assistant_claims": 0}
    assert overall["latest1"][0] == 3  # the baseline answers all three
    table = facts.render(res)
    assert "ALL" in table and "cross-user supersessions 0" in table
    json.dumps(res, default=str)


@pytest.mark.parametrize("name", ["blind", "blind2", "blind3", "all"])
def test_show_failures_refuses_the_blind_sets(name: str) -> None:
    with pytest.raises(SystemExit):
        facts.main(["--set", name, "--show-failures"])


@pytest.mark.parametrize("name", ["blind", "blind2", "blind3", "tune", "tune5", "tune7", "check7", "tune9", "check9",
                                  "tune10", "check10", "tune11", "check11", "tune12", "check12", "tune13",
                                  "check13", "tune14", "check14", "tune15", "check15", "tune16",
                                  "check16", "tune17", "check17", "tune18", "check18", "tune19", "check19",
                                  "tune20", "check20", "tune21", "check21", "tune22", "check22"])
def test_the_sets_are_well_formed(name: str) -> None:
    """Unique ids, users private to their scenario, and every expected value said by that user somewhere
    (a check that can never pass measures nothing)."""
    scenarios = facts.load(facts.SETS[name])
    least = {"blind": 130, "blind2": 150, "blind3": 150, "tune5": 150, "tune7": 60, "check7": 40, "tune9": 50,
             "check9": 40, "tune10": 50, "check10": 40, "tune11": 50, "check11": 40, "tune12": 50,
             "check12": 40, "tune13": 50, "check13": 40, "tune14": 50, "check14": 40, "tune15": 50,
             "check15": 40, "tune16": 50, "check16": 40, "tune17": 50, "check17": 40, "tune18": 50,
             "check18": 40, "tune19": 50, "check19": 40, "tune20": 50, "check20": 40, "tune21": 50,
             "check21": 40, "tune22": 50, "check22": 40}
    assert len(scenarios) >= least.get(name, 70)
    assert len({sc["id"] for sc in scenarios}) == len(scenarios)
    for sc in scenarios:
        assert all(t["user_id"].startswith(sc["id"] + "-") for t in sc["turns"])
        assert {t["role"] for t in sc["turns"]} <= {"user", "assistant"}
        for c in sc["checks"]:
            assert c["kind"] in ("current", "as_of") and c["subject"]
            said = [t["content"] for t in sc["turns"] if t["user_id"] == c["user_id"] and t["role"] == "user"]
            assert not c["expect"] or any(fs.mentions(t, c["expect"]) for t in said), (sc["id"], c["expect"])
            assert c["kind"] != "as_of" or c["at"], sc["id"]



BAD_ROWS = ['{"id": "x"', "[1, 2]", '{"id": "x", "category": "move", "turns": []}',
            '{"id": "x", "category": "move", "turns": [{"user_id": "x-u1", "role": "bot", "content": "hi", '
            '"occurred_at": "2026-01-01T00:00:00Z"}]}',
            '{"id": "x", "category": "move", "turns": [{"user_id": "x-u1", "role": "user", "content": "hi", '
            '"occurred_at": "yesterday"}]}',
            '{"id": "x", "category": "move", "turns": [{"user_id": "x-u1", "role": "user", "content": "hi", '
            '"occurred_at": "2026-01-01T00:00:00Z"}], "checks": [{"user_id": "x-u1", "subject": "user", '
            '"query": "q", "expect": ["a"], "stale": [], "kind": "as_of"}]}']


@pytest.mark.parametrize("row", BAD_ROWS)
def test_a_bad_row_is_a_clear_error_naming_its_line(tmp_path: Path, row: str) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(f"{json.dumps(SCENARIOS[0])}\n\n{row}\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"set\.jsonl:3: bad scenario row"):
        facts.load(path)
    path.write_text(f"{json.dumps(SCENARIOS[0])}\n", encoding="utf-8")
    assert [sc["id"] for sc in facts.load(path)] == [SCENARIOS[0]["id"]]
