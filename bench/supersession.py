"""Temporal-correctness benchmark: does memory track a user's facts as they change?

Hand-written cases (bench/data/supersession_cases.yaml, format described there): a user's facts
changing over time, mixed with assistant turns, named speakers, transcript labels and other users
holding similar facts. Each case gets its own memory repo; every turn is one ``Memory.add`` with
``occurred_at``; the heuristic extractor compiles them. Then, per expectation:

  now      the active values for (user, subject, predicate) in the ledger are exactly these
  as_of    the values valid at that time are exactly these
  closed   that claim's ``valid_until`` is exactly that time
  search   ``Memory.search`` (with and without ``as_of``) returns exactly those values' claims

and over the whole repo: supersessions across users or speakers (a claim closed by a claim of
another subject or page) and claims extracted from non-user turns; both must be zero.

Two ingest modes: ``each`` (flush after every turn: one compile per turn) and ``end`` (one
compile for the whole case). Values are compared after ``norm_value`` (case, articles, punctuation).
The PII gate is the regex one with policy ``tag``, so names, cities and numbers stay comparable
(with the default ``mask``, Presidio turns "Paris" into "<LOCATION>" and masked values never
compare equal: supersession still happens, but a value cannot be checked).

    python bench/supersession.py [--mode each|end|both] [--failures] [--tag explicit]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from markmem import Memory  # noqa: E402
from markmem.ids import parse_time  # noqa: E402
from markmem.model import Claim  # noqa: E402
from markmem.write.extract import norm_value  # noqa: E402

CASES = Path(__file__).resolve().parent / "data" / "supersession_cases.yaml"
KINDS = ("now", "as_of", "closed", "search")


@dataclass
class Check:
    case: str
    tags: tuple[str, ...]
    kind: str
    ok: bool
    detail: str = ""


@dataclass
class Result:
    checks: list[Check] = field(default_factory=list)
    cross: list[str] = field(default_factory=list)  # supersessions across users/speakers
    non_user: list[str] = field(default_factory=list)  # claims taken from non-user turns
    seconds: float = 0.0


def load_cases(path: Path = CASES) -> list[dict[str, Any]]:
    cases = yaml.safe_load(path.read_text("utf-8"))["cases"]
    ids = [c["id"] for c in cases]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate case ids")
    return cases


def when(value: Any) -> str:
    return parse_time(str(value))


def messages(turn: dict[str, Any]) -> list[dict[str, Any]]:
    if "msgs" in turn:
        return [{k: str(v) for k, v in m.items()} for m in turn["msgs"]]
    msg = {"role": turn.get("role", "user"), "content": str(turn["say"])}
    if turn.get("name"):
        msg["name"] = turn["name"]
    return [msg]


def ingest(mem: Memory, case: dict[str, Any], mode: str) -> None:
    for turn in case["turns"]:
        mem.add(messages(turn), user_id=turn["u"], occurred_at=when(turn["at"]))
        if mode == "each":
            mem.flush()
    mem.flush()


def values(expected: Any) -> set[str]:
    if expected is None:
        return set()
    items = expected if isinstance(expected, list) else [expected]
    return {norm_value(str(v)) for v in items}


def ledger(mem: Memory, user: str) -> list[Claim]:
    return [c for page in mem.get_all(user) for c in page.claims]


def keyed(claims: list[Claim], subject: str, predicate: str) -> list[Claim]:
    return [c for c in claims if c.subject.casefold() == subject.casefold() and c.predicate == predicate]


def check_one(mem: Memory, case: dict[str, Any], exp: dict[str, Any]) -> list[Check]:
    user, pred = exp["u"], exp["p"]
    mine = keyed(ledger(mem, user), str(exp.get("s", user)), pred)
    tags = tuple(case["tags"])
    out: list[Check] = []

    def add(kind: str, ok: bool, got: Any, want: Any) -> None:
        detail = "" if ok else f"{user}/{exp.get('s', user)}/{pred} {kind}: got {got!r}, want {want!r}"
        out.append(Check(case["id"], tags, kind, ok, detail))

    if "closed" in exp:
        target = norm_value(str(exp["closed"]))
        found = [c.valid_until for c in mine if norm_value(c.value) == target]
        add("closed", when(exp["at"]) in found, found, when(exp["at"]))
        return out
    as_of = when(exp["as_of"]) if "as_of" in exp else None
    want = values(exp["is"] if as_of else exp["now"])
    got = {norm_value(c.value) for c in mine if (c.valid_at(as_of) if as_of else c.active)}
    add("as_of" if as_of else "now", got == want, sorted(got), sorted(want))
    add("search", search_values(mem, user, pred, mine, as_of) == want, "search", sorted(want))
    return out


def search_values(mem: Memory, user: str, pred: str, mine: list[Claim], as_of: str | None) -> set[str]:
    by_id = {c.id: c for c in mine}
    hits = mem.search(pred.replace("_", " "), user_id=user, top_k=100, as_of=as_of)
    return {norm_value(by_id[h.id].value) for h in hits if h.kind == "claim" and h.id in by_id}


def audit(mem: Memory, case: dict[str, Any], result: Result) -> None:
    users = {t["u"] for t in case["turns"]}
    for user in users:
        pages = mem.get_all(user)
        where = {c.id: (p.id, c) for p in pages for c in p.claims}
        for page in pages:
            for c in page.claims:
                if c.superseded_by and c.superseded_by in where:
                    other_page, other = where[c.superseded_by]
                    if other_page != page.id or other.subject.casefold() != c.subject.casefold():
                        result.cross.append(f"{case['id']}: {c.id} closed by {other.id}")
                for src in c.sources:
                    raw = mem.get(src.rpartition("#")[2])
                    if raw.role != "user":  # type: ignore[union-attr]
                        result.non_user.append(f"{case['id']}: {c.id} from a {raw.role} turn")  # type: ignore[union-attr]


def run(cases: list[dict[str, Any]], mode: str) -> Result:
    result = Result()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            repo = Path(tmp) / f"case-{i:03d}"
            with Memory(repo, pii_engine="regex", pii_policy="tag", vector_model=None, background=False) as mem:
                ingest(mem, case, mode)
                for exp in case["expect"]:
                    result.checks.extend(check_one(mem, case, exp))
                audit(mem, case, result)
    result.seconds = time.perf_counter() - start
    return result


def table(result: Result, cases: list[dict[str, Any]]) -> str:
    rows = [f"{'category':<14} {'cases':>5} {'cases ok':>8} {'checks':>9} {'accuracy':>8}"]
    tags = sorted({t for c in cases for t in c["tags"]}, key=lambda t: (t != "explicit", t))
    for tag in [*tags, "ALL"]:
        mine = [ch for ch in result.checks if tag == "ALL" or tag in ch.tags]
        names = {c["id"] for c in cases if tag == "ALL" or tag in c["tags"]}
        bad = {ch.case for ch in mine if not ch.ok}
        ok = sum(ch.ok for ch in mine)
        rows.append(f"{tag:<14} {len(names):>5} {len(names - bad):>8} {ok:>4}/{len(mine):<4} "
                    f"{100 * ok / max(1, len(mine)):>7.1f}%")
    rows.append("")
    rows.append(f"{'check kind':<14} {'checks':>9} {'accuracy':>8}")
    for kind in KINDS:
        mine = [ch for ch in result.checks if ch.kind == kind]
        ok = sum(ch.ok for ch in mine)
        rows.append(f"{kind:<14} {ok:>4}/{len(mine):<4} {100 * ok / max(1, len(mine)):>7.1f}%")
    rows.append("")
    rows.append(f"supersessions across users or speakers: {len(result.cross)}")
    rows.append(f"claims taken from non-user turns:      {len(result.non_user)}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=Path, default=CASES)
    ap.add_argument("--mode", choices=("each", "end", "both"), default="both")
    ap.add_argument("--tag", help="only cases with this tag")
    ap.add_argument("--failures", action="store_true", help="list every failed check")
    args = ap.parse_args(argv)
    cases = load_cases(args.cases)
    if args.tag:
        cases = [c for c in cases if args.tag in c["tags"]]
    n_checks = sum(len(c["expect"]) for c in cases)
    print(f"{len(cases)} cases, {n_checks} expectations, heuristic extractor, regex PII gate (tag)")
    failed = False
    for mode in ("each", "end") if args.mode == "both" else (args.mode,):
        result = run(cases, mode)
        print(f"\n== mode: {mode} ({'flush after every turn' if mode == 'each' else 'one compile per case'}, "
              f"{result.seconds:.1f}s)")
        print(table(result, cases))
        misses: dict[str, list[str]] = defaultdict(list)
        for ch in result.checks:
            if not ch.ok:
                misses[ch.case].append(ch.detail)
        if args.failures:
            for case_id, details in misses.items():
                print(f"  FAIL {case_id}: " + "; ".join(details))
            for line in result.cross + result.non_user:
                print(f"  VIOLATION {line}")
        explicit = [ch for ch in result.checks if "explicit" in ch.tags]
        failed = failed or bool(result.cross or result.non_user) or not all(ch.ok for ch in explicit)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
