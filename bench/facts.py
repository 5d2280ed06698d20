"""Changing facts: does memory hold, and show first, the CURRENT value of a fact that changed?

Sets of multi-session chat scenarios (issue #12):

* ``bench/data/facts_blind.jsonl``: written before any tuning of the extractor, never tuned on.
  Its failures are not printed (``--show-failures`` refuses it).
* ``bench/data/facts_blind2.jsonl``: a second blind set (ids ``b2-``), written later by someone who
  had not read the extractor (``markmem/write``, ``markmem/read``); never tuned on, failures never
  printed either. Its first run is in ``bench/results/facts-blind2-first-run.md``.
* ``bench/data/facts_blind3.jsonl``: a third blind set (ids ``b3-``), written the same way beside the tuning
  set ``tune5`` (other people, values and phrasings); first run in ``bench/results/facts-blind3-first-run.md``.
* ``bench/data/facts_tune.jsonl``: different people, places and wording, to tune on
  (``tune2`` ... ``tune6``: later tuning sets; ``tune5`` was written by the outsider who wrote ``blind3``;
  ``tune6``: first run in ``bench/results/facts-tune6-first-run.md``).
* ``bench/data/facts_tune7.jsonl`` / ``facts_check7.jsonl``: a tuning set and a check set written together
  (moves, jobs, providers, family, pets, open slots); check7 is run only before and after tuning
  (first runs in ``bench/results/h-ledger5.md``).

Scenario format (one JSON object per line)::

    {"id": "b-move-01", "category": "move",
     "turns": [{"user_id": "b-move-01-u1", "role": "user" | "assistant", "content": "...",
                "occurred_at": "2026-03-02T09:15:00Z"}, ...],
     "checks": [{"user_id": "b-move-01-u1", "subject": "user" | "<third party as named: 'mum', 'Tom'>",
                 "query": "Which city does the user live in?", "expect": ["Porto"], "stale": ["Lisbon"],
                 "at": null | "ISO time", "kind": "current" | "as_of"}]}

``category``: move, job, correction, negation, temporary, future, third_party, hypothetical, repeat,
paraphrase, long_gap, multi_value, two_facts, change_back, cross_user, assistant, open_slot, routine, provider, family
(the blind sets' kinds); tuning sets add their own (passing, best_turn, no_correction: a turn that looks like a
correction and must change nothing, ...).
User ids carry the scenario id, so scenarios never see each other. ``expect``: acceptable values (any
one); empty means "nothing about this should be current" (a negation with no new value). ``stale``:
values that must not be shown as current. ``at``: evaluate as of that time (temporary, future-dated
and as_of checks), else now. For hypotheticals ``expect`` is the value that still holds.

Matching: case-insensitive, whole words (``facts_score.mentions``). A stale value counts as MARKED
(not shown as current) when the line itself says it is past: markmem's marks in a pack line
("superseded", "replaced", "ended", "was true until", "(until", "no longer true"), a JSON hit with a
``valid_until`` at or before the check time, a ``superseded_by`` or a stale flag, a ``starts`` after the
check time (a planned change, not yet true then: "not yet true" in the pack line), or the text's own
change words ("used to", "no longer", "moved from", "anymore", "passed away", "instead of", "not ", ...:
``facts_score.CHANGE_CUES``). "moved from Lisbon to Porto" shows Porto and does not show Lisbon as current.

Metrics, per category and overall, per set:

* ledger-current: the user's claims active at the check time (valid_from <= t < valid_until, page and
  claim not archived, and for a "now" check not superseded), about the check's subject (the user: the
  claim's subject is the user id or "user"; a third party: the name is in the claim's subject or page);
  PASS iff one holds an expected value (value or text) and none holds a stale value.
* pack@1 / json@1 / current@1: the first content line of ``search(query, format="context", as_of=at)``
  (headers skipped: so a pinned page's standing claim, which the pack puts first, is its first line)
  and the first JSON hit hold an expected value and no unmarked stale value; current@1 = both.
* stale-shown@5: a stale value unmarked in any of the top-5 JSON hits or the first 5 pack lines. Lower
  is better.
* as_of@5: checks of kind "as_of": an expected value in one of the top-5 JSON hits with ``as_of=at``.
* latest-wins@1: baseline; BM25 (SQLite FTS5, porter) over the user's own turns up to the check time,
  the latest by occurred_at among the top 10; PASS as for current@1.
* cross-user / cross-speaker supersessions: closed claims whose closing claim belongs to another user,
  or was drawn from a non-user (assistant) turn; assistant claims: claims drawn only from non-user
  turns. All must stay 0.
* no-claim scenarios: scenarios for which memory holds no claim at all.

Default settings (``markmem.Memory(path)``: default PII gate, extractor, background compile). Each
run of turns with one user and one occurred_at is one ``add()``. Timings are of a machine with 2 cores
shared with other jobs: compare runs on the same machine only.

    PYTHONPATH=. python bench/facts.py [--set blind|blind2|blind3|tune..tune22|check7..check22|both|all]
                                       [--show-failures]
                                       [--json] [--limit N] [--work DIR]
                                       [--override pii_policy=tag]   (not for the targets)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import facts_score as fs  # noqa: E402
from facts_base import LatestMention  # noqa: E402

from markmem import Memory  # noqa: E402
from markmem.errors import InvalidInput, NotFound  # noqa: E402
from markmem.ids import now, parse_time  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
SETS = {"blind": DATA / "facts_blind.jsonl", "blind2": DATA / "facts_blind2.jsonl",
        "blind3": DATA / "facts_blind3.jsonl",  # blind3: a third outsider-written blind set (ids b3-)
        "tune": DATA / "facts_tune.jsonl",
        "tune2": DATA / "facts_tune2.jsonl",  # tune2: a second tuning set, written after the first round
        "tune3": DATA / "facts_tune3.jsonl",  # tune3: written before the open-vocabulary path (issue #12)
        "tune4": DATA / "facts_tune4.jsonl",  # tune4: longer chats (assistant echoes, chit-chat), written first
        "tune5": DATA / "facts_tune5.jsonl",  # tune5: written by an outsider beside blind3, for tuning
        "tune6": DATA / "facts_tune6.jsonl",  # tune6: new wording (h-ledger4), first run before its tuning
        "tune7": DATA / "facts_tune7.jsonl",  # tune7: moves, jobs, providers, family (h-ledger5), for tuning
        "check7": DATA / "facts_check7.jsonl",  # check7: written beside tune7, run only first and last
        "tune8": DATA / "facts_tune8.jsonl",  # tune8: how a claim changes the ledger (h-revise), for tuning
        "check8": DATA / "facts_check8.jsonl",  # check8: tune8's held-out twin, run at the start and the end
        "tune9": DATA / "facts_tune9.jsonl",  # tune9: corrections, paraphrased changes, time (h-fix), for tuning
        "check9": DATA / "facts_check9.jsonl",  # check9: tune9's held-out twin
        "tune10": DATA / "facts_tune10.jsonl",  # tune10: slot detection on unseen wording (h-slots), for tuning
        "check10": DATA / "facts_check10.jsonl",  # check10: tune10's held-out twin
        "tune11": DATA / "facts_tune11.jsonl",  # tune11: what the context pack shows (h-stale2), for tuning
        "check11": DATA / "facts_check11.jsonl",  # check11: tune11's held-out twin
        "tune12": DATA / "facts_tune12.jsonl",  # tune12: old values shown in the pack (h-stale3), for tuning
        "check12": DATA / "facts_check12.jsonl",  # check12: tune12's held-out twin
        "tune13": DATA / "facts_tune13.jsonl",  # tune13: ledger-current on everyday wording (h-ledger6), for tuning
        "check13": DATA / "facts_check13.jsonl",  # check13: tune13's held-out twin
        "tune14": DATA / "facts_tune14.jsonl",  # tune14: changes the ledger misses, passing mentions (h-ledger7)
        "check14": DATA / "facts_check14.jsonl",  # check14: tune14's held-out twin
        "tune15": DATA / "facts_tune15.jsonl",  # tune15: stale lines and the first line of the pack (h-stale4)
        "check15": DATA / "facts_check15.jsonl",  # check15: tune15's held-out twin
        "tune16": DATA / "facts_tune16.jsonl",  # tune16: corrections, negations, paraphrased changes (h-ledger8)
        "check16": DATA / "facts_check16.jsonl",  # check16: tune16's held-out twin
        "tune17": DATA / "facts_tune17.jsonl",  # tune17: future, temporary, routine, long gaps (h-time2)
        "check17": DATA / "facts_check17.jsonl",  # check17: tune17's held-out twin
        "tune18": DATA / "facts_tune18.jsonl",  # tune18: the pack's first line, stale and multi-value lines (h-stale5)
        "check18": DATA / "facts_check18.jsonl",  # check18: tune18's held-out twin
        "tune19": DATA / "facts_tune19.jsonl",  # tune19: corrections of every wording (h-correct2), for tuning
        "check19": DATA / "facts_check19.jsonl",  # check19: tune19's held-out twin
        "tune20": DATA / "facts_tune20.jsonl",  # tune20: future, temporary, routine and hedged changes (h-time3)
        "check20": DATA / "facts_check20.jsonl",  # check20: tune20's held-out twin
        "tune21": DATA / "facts_tune21.jsonl",  # tune21: stale lines in the top 5 and the current first line (h-stale6)
        "check21": DATA / "facts_check21.jsonl",  # check21: tune21's held-out twin
        "tune22": DATA / "facts_tune22.jsonl",  # tune22: old values kept, passing mentions, corrections (h-ledger9)
        "check22": DATA / "facts_check22.jsonl"}  # check22: tune22's held-out twin
# never tuned on: their failures are never printed
BLIND = frozenset({"blind", "blind2", "blind3", "check7", "check8", "check9", "check10", "check11", "check12",
                   "check13", "check14", "check15", "check16", "check17", "check18",
                   "check19", "check20", "check21", "check22"})
METRICS = ("ledger", "pack1", "json1", "current1", "stale5", "asof5", "latest1")
# the blind set's first run, before any tuning (bench/results/facts-first-run.md): every run prints it
FIRST_RUN = ("blind set, first run before any tuning (a88e42d, 2026-12-01, default settings): ledger-current 35.5%, "
             "current@1 51.1% (pack@1 54.3%, json@1 56.5%), stale-shown@5 73.3%, as_of@5 55.6%, "
             "latest-wins@1 54.3%, no claim in 60 of 140 scenarios")
# blind2's first run, before anyone looked at it (bench/results/facts-blind2-first-run.md): every run prints it
FIRST_RUN_BLIND2 = ("blind2 set, first run (ea85856, markmem as main b55e39a, 2026-12-01, default settings): "
                    "ledger-current 57.0%, current@1 64.7% (pack@1 69.1%, json@1 67.1%), stale-shown@5 56.6%, "
                    "as_of@5 100.0%, latest-wins@1 55.1%, no claim in 26 of 150 scenarios")
# blind3's first run, before anyone looked at it (bench/results/facts-blind3-first-run.md): every run prints it
FIRST_RUN_BLIND3 = ("blind3 set, first run (b707593, markmem as main 2540ec6, 2026-12-01, default settings): "
                    "ledger-current 47.0%, current@1 54.5% (pack@1 59.4%, json@1 57.9%), stale-shown@5 66.9%, "
                    "as_of@5 100.0%, latest-wins@1 32.2%, no claim in 36 of 150 scenarios")
FIRST_RUNS = {"blind": FIRST_RUN, "blind2": FIRST_RUN_BLIND2, "blind3": FIRST_RUN_BLIND3}
LABELS = {"ledger": "ledger-current", "pack1": "pack@1", "json1": "json@1", "current1": "current@1",
          "stale5": "stale-shown@5", "asof5": "as_of@5", "latest1": "latest-wins@1"}


def load(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The scenarios of one set; a malformed row raises InvalidInput naming the file and line."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(_checked(json.loads(line)))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise InvalidInput(f"{path.name}:{n}: bad scenario row: {exc}") from exc
    return rows[:limit] if limit else rows


def _checked(sc: dict[str, Any]) -> dict[str, Any]:
    """The row itself when it has the fields the runner reads, else ValueError saying which is wrong."""
    if not (isinstance(sc.get("id"), str) and isinstance(sc.get("category"), str) and sc.get("turns")):
        raise ValueError("needs a string id, a category and a non-empty turns list")
    for t in sc["turns"]:
        if t.get("role") not in ("user", "assistant") or not t.get("content") or not t.get("user_id"):
            raise ValueError(f"{sc['id']}: a turn needs user_id, role user|assistant and content")
        parse_time(t["occurred_at"])
    for c in sc.get("checks") or []:
        if c.get("kind") not in ("current", "as_of") or not c.get("subject") or not c.get("query"):
            raise ValueError(f"{sc['id']}: a check needs kind current|as_of, a subject and a query")
        if not (isinstance(c["expect"], list) and isinstance(c["stale"], list)) or not c.get("user_id"):
            raise ValueError(f"{sc['id']}: a check needs a user_id and expect/stale lists")
        if c["kind"] == "as_of" and not c.get("at"):
            raise ValueError(f"{sc['id']}: an as_of check needs `at`")
        if c.get("at"):
            parse_time(c["at"])
    return sc


def ingest(mem: Memory, scenarios: list[dict[str, Any]]) -> list[float]:
    """Add every scenario's turns; one add() per run of turns with one user and one time. Returns ms."""
    timings: list[float] = []
    for sc in scenarios:
        for user, when, msgs in _runs(sc["turns"]):
            start = time.perf_counter()
            mem.add(msgs, user_id=user, occurred_at=when)
            timings.append((time.perf_counter() - start) * 1000)
    return timings


def _runs(turns: list[dict[str, Any]]) -> list[tuple[str, str, list[dict[str, str]]]]:
    runs: list[tuple[str, str, list[dict[str, str]]]] = []
    for t in turns:
        msg = {"role": t["role"], "content": t["content"]}
        if runs and runs[-1][0] == t["user_id"] and runs[-1][1] == t["occurred_at"]:
            runs[-1][2].append(msg)
        else:
            runs.append((t["user_id"], t["occurred_at"], [msg]))
    return runs


def claims_of(mem: Memory, user_id: str) -> list[tuple[Any, Any]]:
    return [(p, c) for p in mem.get_all(user_id, include_archived=True) for c in p.claims]


def evaluate(mem: Memory, check: dict[str, Any], pairs: list[tuple[Any, Any]], base: LatestMention) -> dict[str, Any]:
    """Every metric of one check (None: not applicable)."""
    at = check.get("at")
    t = parse_time(at) if at else now()
    expect, stale = check["expect"], check["stale"]
    user = check["user_id"]
    hits = [h.to_json() for h in mem.search(check["query"], user_id=user, top_k=5, as_of=at)]
    pack = mem.search(check["query"], user_id=user, top_k=5, as_of=at, format="context")
    lines = fs.content_lines(str(pack))[:5]
    first = lines[0] if lines else None
    pack1 = fs.line_pass(first, expect, stale, first is not None and fs.pack_marked(first))
    json1 = fs.line_pass(hits[0]["text"] if hits else None, expect, stale, bool(hits) and fs.hit_marked(hits[0], t))
    shown = any(fs.stale_unmarked(h["text"], stale, fs.hit_marked(h, t)) for h in hits) or any(
        fs.stale_unmarked(ln, stale, fs.pack_marked(ln)) for ln in lines)
    latest = base.latest(user, check["query"], t)
    shown_at = next((f"hit {i + 1}: {h['text'][:100]}" for i, h in enumerate(hits)
                     if fs.stale_unmarked(h["text"], stale, fs.hit_marked(h, t))), None) or next(
        (f"line {i + 1}: {ln[:100]}" for i, ln in enumerate(lines) if fs.stale_unmarked(ln, stale, fs.pack_marked(ln))),
        None)
    return {
        "ledger": fs.ledger_current(pairs, check, t),
        "pack1": pack1, "json1": json1, "current1": pack1 and json1,
        "stale5": shown if stale else None,
        "asof5": any(fs.mentions(h["text"], expect) for h in hits) if check.get("kind") == "as_of" else None,
        "latest1": fs.line_pass(latest, expect, stale, latest is not None and fs.says_past(latest)),
        "first_line": first, "first_hit": hits[0]["text"] if hits else None, "latest_turn": latest,
        "stale_at": shown_at,
    }


def speaker_faults(mem: Memory, users: list[str]) -> dict[str, int]:
    """Closings across users or by a non-user turn, and claims drawn only from non-user turns."""
    out = {"cross_user": 0, "cross_speaker": 0, "assistant_claims": 0}
    roles: dict[str, str] = {}
    for user in users:
        for _page, claim in claims_of(mem, user):
            if _sources_roles(mem, claim, roles) and "user" not in _sources_roles(mem, claim, roles):
                out["assistant_claims"] += 1
            if not claim.superseded_by:
                continue
            try:
                closer = mem.get(claim.superseded_by, user_id=user)
            except NotFound:
                out["cross_user"] += 1
                continue
            if "user" not in _sources_roles(mem, closer, roles):
                out["cross_speaker"] += 1
    return out


def _sources_roles(mem: Memory, claim: Any, roles: dict[str, str]) -> set[str]:
    found = set()
    for ref in getattr(claim, "sources", ()) or ():
        raw_id = ref.rsplit("#", 1)[-1]
        if raw_id not in roles:
            try:
                roles[raw_id] = mem.get(raw_id).role
            except NotFound:
                roles[raw_id] = "?"
        found.add(roles[raw_id])
    return found


def run_set(mem: Memory, name: str, scenarios: list[dict[str, Any]], base: LatestMention) -> dict[str, Any]:
    per_cat: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    failures: list[dict[str, Any]] = []
    empty = 0
    users: list[str] = []
    for sc in scenarios:
        sc_users = sorted({t["user_id"] for t in sc["turns"]} | {c["user_id"] for c in sc["checks"]})
        users += sc_users
        pairs_by_user = {u: claims_of(mem, u) for u in sc_users}
        empty += not any(pairs_by_user.values())
        for check in sc["checks"]:
            res = evaluate(mem, check, pairs_by_user[check["user_id"]], base)
            for m in METRICS:
                if res[m] is not None:
                    per_cat[sc["category"]][m].append(res[m])
                    per_cat["ALL"][m].append(res[m])
            if not all(res[m] in (None, True) for m in ("ledger", "current1", "asof5")) or res["stale5"]:
                failures.append({"scenario": sc["id"], "check": check, **res})
    counts = {cat: {m: [sum(v), len(v)] for m, v in ms.items()} for cat, ms in per_cat.items()}
    return {"set": name, "scenarios": len(scenarios), "no_claim": empty, "metrics": counts,
            "faults": speaker_faults(mem, users), "failures": failures}


def render(res: dict[str, Any]) -> str:
    out = [f"\n== {res['set']} set: {res['scenarios']} scenarios, "
           f"{res['metrics']['ALL']['ledger'][1]} checks, no claim at all in {res['no_claim']} scenarios"]
    out.append(f"{'category':<13}" + "".join(f"{LABELS[m]:>20}" for m in METRICS))
    cats = sorted(c for c in res["metrics"] if c != "ALL") + ["ALL"]
    for cat in cats:
        row = res["metrics"][cat]
        out.append(f"{cat:<13}" + "".join(f"{fs.pct(*row.get(m, [0, 0])):>20}" for m in METRICS))
    f = res["faults"]
    out.append(f"cross-user supersessions {f['cross_user']}, cross-speaker supersessions {f['cross_speaker']}, "
               f"claims from assistant turns only {f['assistant_claims']}  (all must be 0)")
    return "\n".join(out)


def show_failures(res: dict[str, Any]) -> str:
    out = [f"\n-- failing checks ({len(res['failures'])}) of the tune set"]
    for f in res["failures"]:
        c = f["check"]
        flags = " ".join(f"{LABELS[m]}={'ok' if f[m] != (m == 'stale5') else 'FAIL'}"
                         for m in ("ledger", "pack1", "json1", "stale5", "asof5", "latest1") if f[m] is not None)
        out.append(f"[{f['scenario']}] {c['query']!r} expect={c['expect']} stale={c['stale']} at={c.get('at')}\n"
                   f"    {flags}\n    pack@1: {f['first_line']}\n    json@1: {f['first_hit']}"
                   + (f"\n    stale shown: {f['stale_at']}" if f.get("stale_at") else ""))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=(*SETS, "both", "all"), default="both",
                    help="both: blind and tune; all: both blind sets and every tune set")
    ap.add_argument("--show-failures", action="store_true", help="print failing checks (tune set only)")
    ap.add_argument("--work", type=Path, help="directory for the memory repo (default: a temp dir)")
    ap.add_argument("--limit", type=int, help="only the first N scenarios of each set")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                    help="a Memory setting to change from the default, e.g. pii_engine=off (not for the targets)")
    args = ap.parse_args(argv)
    names = {"both": ["blind", "tune"], "all": [n for n, p in SETS.items() if p.exists()]}.get(args.set, [args.set])
    if args.show_failures and BLIND & set(names):
        ap.error("--show-failures is for the tune sets only (--set tune): the blind sets are never tuned on")
    sets = {n: load(SETS[n], args.limit) for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        return _run(Path(args.work or tmp) / "facts-repo", sets, args)


def _run(repo: Path, sets: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> int:
    overrides = dict(kv.split("=", 1) for kv in args.override)
    if overrides:
        print(f"NOT the default settings: {overrides}")
    t0 = time.perf_counter()
    mem = Memory(repo, **overrides)
    load_s = time.perf_counter() - t0
    try:
        every = [sc for scs in sets.values() for sc in scs]
        start = time.perf_counter()
        adds = ingest(mem, every)
        mem.flush()
        compile_s = time.perf_counter() - start
        entries = sum(len(sc["turns"]) for sc in every)
        base = LatestMention([t for sc in every for t in sc["turns"]])
        results = [run_set(mem, n, scs, base) for n, scs in sets.items()]
    finally:
        mem.close()
    adds.sort()
    timing = {"entries": entries, "add_calls": len(adds), "add_p50_ms": round(adds[len(adds) // 2], 2),
              "entries_per_s": round(entries / compile_s, 1), "open_s": round(load_s, 1),
              "total_s": round(time.perf_counter() - t0, 1)}
    if args.json:
        print(json.dumps({"results": results if args.show_failures else [_no_fail(r) for r in results],
                          "timing": timing, "first_run": FIRST_RUN, "first_runs": FIRST_RUNS}, indent=1, default=str))
        return 0
    for res in results:
        print(render(res))
        if res["set"] in FIRST_RUNS:
            print(FIRST_RUNS[res["set"]])
        if args.show_failures and res["set"] not in BLIND:
            print(show_failures(res))
    print(f"\n{timing['entries']} entries in {timing['add_calls']} add() calls: add() p50 {timing['add_p50_ms']} ms; "
          f"add+compile {timing['entries_per_s']} entries/s (background compile, then flush); Memory() open "
          f"{timing['open_s']} s; total {timing['total_s']} s. Machine: 2 cores shared with other jobs.")
    return 0


def _no_fail(res: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in res.items() if k != "failures"}


if __name__ == "__main__":
    raise SystemExit(main())
