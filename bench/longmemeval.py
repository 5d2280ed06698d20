"""LongMemEval retrieval benchmark (no LLM): markmem vs plain BM25 vs a BM25 + model2vec hybrid.

Protocol (../shared/data/longmemeval/README.md): per question, a fresh memory user; every turn of every
haystack session goes through ``Memory.add()`` with its real role, one ``add()`` per session (a list of
``{role, content}``), the session date as ``occurred_at`` and ``{"session_id": ...}`` as metadata, in the
record's haystack order. One search with the question, ``as_of`` = question_date. Hits map back to turns
through ``hit.sources[].raw_id`` (the ids ``add()`` returned, in input order); a claim hit counts as the
turns it came from, and a ranked list is cut at k *turns*, so every system gets the same k-turn budget.

Metrics: turn level, a turn is evidence when ``has_answer`` is true: any@5, all@10, NDCG@10 (binary gains).
Session level: the ranked turns mapped to their sessions (first occurrence), gold = answer_session_ids: any@5.
markmem's turn@5 figures come from ``search(top_k=5)``; its deeper list (for @10 and sessions) from
``search(top_k=50)``. Baselines rank every turn of the haystack (bench/baselines.py says how).

Text: stray control characters (\\x02, \\x0b, ...) become spaces, since ``add()`` rejects them; the same
cleaned text goes to the baselines. Empty turns (none in dev60) would be skipped by every system.

    python bench/longmemeval.py                         # 60 questions, default PII gate
    python bench/longmemeval.py --limit 2 --pii-engine regex
    python bench/longmemeval.py --types temporal-reasoning,multi-session --json
    python bench/longmemeval.py --work DIR --reuse --split tune   # search again over DIR's ingest, in seconds
    python bench/longmemeval.py --work DIR --reuse --as-of-day   # as_of = the end of the question's day

Split (fixed before any time-lane tuning, 2026-12-01): within each question type, the questions sorted by
``sha1(question_id)``; the first half is ``tune`` (tuned on), the second ``held`` (only measured).
``--reuse`` keeps each question's ``{raw_id: turn}`` map and the baselines' scores in ``DIR/lme-ingest.json``,
so a second run over the same folder skips ingest, compile and the baselines.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from baselines import Baselines, load_builtin_embedder  # noqa: E402
from locomo import parse_recipe  # noqa: E402

from markmem import Memory  # noqa: E402
from markmem.index import lexicon  # noqa: E402
from markmem.read import search as searching  # noqa: E402
from markmem.read.fuse import Recipe  # noqa: E402

_SLICE = Path("shared") / "data" / "longmemeval" / "dev60.json.gz"
# ../shared beside the checkout (/work/main), or two levels up from a worktree (/work/wt/NAME)
DEFAULT_DATA = next((p / _SLICE for p in Path(__file__).resolve().parents[2:4] if (p / _SLICE).exists()),
                    Path(__file__).resolve().parents[2] / _SLICE)
SYSTEMS = ("markmem", "bm25", "hybrid")
METRICS = ("turn any@5", "turn all@10", "turn ndcg@10", "session any@5")
DEEP = 50  # markmem's deeper search, for @10 and for session ranks
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

Key = tuple[int, int]  # (session index in the haystack, turn index in the session)


@dataclass
class Question:
    qid: str
    qtype: str
    question: str
    date: datetime
    gold_sessions: set[str]
    session_ids: list[str]
    session_dates: list[datetime]
    sessions: list[list[dict[str, Any]]]  # cleaned turns: {role, content, evidence}
    keys: list[Key] = field(default_factory=list)  # every non-empty turn, in haystack order
    user: str = ""  # its memory user (user_of, unless a --reuse run had to start its ingest again)

    @property
    def evidence(self) -> set[Key]:
        return {k for k in self.keys if self.sessions[k[0]][k[1]]["evidence"]}

    @property
    def late_evidence(self) -> bool:
        """Some evidence turn's session is dated after the question (the data has such records):
        ``as_of`` = question date hides it from markmem, while the baselines ignore time."""
        return any(self.session_dates[k[0]] > self.date for k in self.evidence)

    def text(self, key: Key) -> str:
        return str(self.sessions[key[0]][key[1]]["content"])


def parse_date(text: str) -> datetime:
    """``"2023/05/20 (Sat) 02:21"`` -> an aware UTC datetime."""
    return datetime.strptime(text.strip(), "%Y/%m/%d (%a) %H:%M").replace(tzinfo=timezone.utc)


def clean(text: str) -> str:
    return _CONTROL.sub(" ", text)


def question_of(rec: dict[str, Any]) -> Question:
    sessions = [[{"role": t["role"], "content": clean(t["content"]), "evidence": bool(t.get("has_answer"))}
                 for t in sess] for sess in rec["haystack_sessions"]]
    q = Question(rec["question_id"], rec["question_type"], rec["question"], parse_date(rec["question_date"]),
                 set(rec["answer_session_ids"]), list(rec["haystack_session_ids"]),
                 [parse_date(d) for d in rec["haystack_dates"]], sessions)
    q.keys = [(s, t) for s, sess in enumerate(sessions) for t, turn in enumerate(sess) if turn["content"].strip()]
    return q


def split_of(records: list[dict[str, Any]]) -> dict[str, str]:
    """``{question_id: "tune" | "held"}``: per type, the first half by ``sha1(question_id)`` is tuned on."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for rec in records:
        by_type[rec["question_type"]].append(rec["question_id"])
    out = {}
    for ids in by_type.values():
        ordered = sorted(ids, key=lambda i: hashlib.sha1(i.encode()).hexdigest())
        out.update((qid, "tune" if n < (len(ordered) + 1) // 2 else "held") for n, qid in enumerate(ordered))
    return out


def load(path: str | Path, types: list[str] | None = None, limit: int | None = None,
         split: str | None = None, ids: list[str] | None = None) -> list[Question]:
    """Records of the slice, optionally only some types, one half of the split, some ids, and at most
    ``limit`` questions per type."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        records = json.load(fh)
    halves = split_of(records)
    out, per_type = [], defaultdict(int)
    for rec in records:
        if types and rec["question_type"] not in types:
            continue
        if split and split != "all" and halves[rec["question_id"]] != split:
            continue
        if ids and rec["question_id"] not in ids:
            continue
        if limit is not None and per_type[rec["question_type"]] >= limit:
            continue
        per_type[rec["question_type"]] += 1
        out.append(question_of(rec))
    return out


# -- scoring --------------------------------------------------------------------------------------
def score(ranked: list[Key], q: Question, head5: list[Key] | None = None) -> dict[str, float]:
    """The four metrics for one ranked list of turns (``head5``: a separate top-5 list, if any)."""
    evidence = q.evidence
    top5 = (ranked if head5 is None else head5)[:5]
    top10 = ranked[:10]
    dcg = sum(1 / math.log2(i + 2) for i, k in enumerate(top10) if k in evidence)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(evidence))))
    sessions = list(dict.fromkeys(q.session_ids[k[0]] for k in ranked))
    return {"turn any@5": float(bool(evidence & set(top5))), "turn all@10": float(evidence <= set(top10)),
            "turn ndcg@10": dcg / ideal if ideal else 0.0,
            "session any@5": float(bool(q.gold_sessions & set(sessions[:5])))}


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{group: {"n": ..., system: {metric: percent}}}``, group = "overall" and each question type."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups["overall"].append(r)
        groups[r["type"]].append(r)
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(groups, key=lambda g: (g != "overall", g)):
        g = groups[name]
        out[name] = {"n": len(g)}
        for system in SYSTEMS:
            if all(system in r for r in g):
                out[name][system] = {m: 100 * statistics.fmean(r[system][m] for r in g) for m in METRICS}
    return out


# -- markmem --------------------------------------------------------------------------------------
def user_of(q: Question) -> str:
    return "lme-" + re.sub(r"[^a-z0-9_-]", "-", q.qid.lower())[:59]


def ingest(mem: Memory, q: Question) -> tuple[dict[str, Key], list[Key]]:
    """Every non-empty turn, one ``add()`` per session: ``({raw_id: key}, turns the injection guard held)``."""
    by_raw: dict[str, Key] = {}
    quarantined: list[Key] = []
    for s, sess in enumerate(q.sessions):
        keys = [(s, t) for t, turn in enumerate(sess) if turn["content"].strip()]
        if not keys:
            continue
        msgs = [{"role": sess[t]["role"], "content": sess[t]["content"]} for _, t in keys]
        res = mem.add(msgs, user_id=q.user or user_of(q), metadata={"session_id": q.session_ids[s]},
                      occurred_at=q.session_dates[s])
        by_raw.update(zip(res.ids, keys, strict=True))
        quarantined += [by_raw[r] for r in res.quarantined]
    return by_raw, quarantined


def hit_keys(hits: list[Any], by_raw: dict[str, Key]) -> list[Key]:
    """Ranked hits -> ranked turns (a hit's sources in order, first occurrence)."""
    out: dict[Key, None] = {}
    for hit in hits:
        for src in hit.sources:
            key = by_raw.get(src.raw_id)
            if key is not None:
                out.setdefault(key)
    return list(out)


def markmem_ranks(mem: Memory, q: Question, by_raw: dict[str, Key], as_of: bool | str = True,
                  recipe: Recipe | None = None) -> tuple[list[Key], list[Key], tuple[float, float]]:
    """``(top-5 turns, deep ranked turns, (ms of the first top_k=5 search, ms of the same search again))``.

    The first search is the user's first ever (cold: per-user caches are built then); the repeat is warm.
    ``as_of=False`` searches without a date (off protocol: shows what ``as_of`` hides); ``as_of="day"``
    searches as of the end of the question's day (see ``as_of_of``)."""
    when = as_of_of(q, as_of)

    def find(k: int) -> list[Any]:
        if recipe is None:
            return mem.search(q.question, user_id=q.user or user_of(q), top_k=k, as_of=when)  # type: ignore[return-value]
        stamp = None if when is None else when.isoformat()  # an ablation: other fusion settings
        return searching.search(mem.context, q.question, q.user or user_of(q), k, as_of=stamp, recipe=recipe)

    ms = []
    for _ in range(2):
        t0 = time.perf_counter()
        hits5 = find(5)
        ms.append((time.perf_counter() - t0) * 1000)
        lexicon.wait_built()  # the user's in-memory index, which its first search starts: same lane every run
    deep = find(DEEP)
    return hit_keys(hits5, by_raw)[:5], hit_keys(deep, by_raw), (ms[0], ms[1])  # type: ignore[arg-type]


def as_of_of(q: Question, mode: bool | str) -> datetime | None:
    """The ``as_of`` markmem searches with: the question's date and time (the protocol), ``None``
    (``--no-as-of``), or the last second of the question's day (``--as-of-day``): the data dates some
    evidence sessions a few hours after a question asked the same day, at random hours."""
    if mode == "day":
        return q.date.replace(hour=23, minute=59, second=59)
    return q.date if mode else None


# -- baselines ------------------------------------------------------------------------------------
def baseline_ranks(q: Question, embedder: object | None) -> dict[str, tuple[list[Key], float]]:
    """``{"bm25": (ranked turns, ms), "hybrid": (...)}`` over the question's haystack."""
    base = Baselines([q.text(k) for k in q.keys], embedder)
    out = {}
    for name in ("bm25", "hybrid"):
        t0 = time.perf_counter()
        ranked = getattr(base, name)(q.question)
        out[name] = ([q.keys[i] for i in ranked], (time.perf_counter() - t0) * 1000)
    base.close()
    return out


# -- run ------------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    questions = load(args.data, args.types.split(",") if args.types else None, args.limit, args.split,
                     args.ids.split(",") if args.ids else None)
    if not questions:
        sys.exit(f"no questions in {args.data} for types {args.types!r}")
    work = Path(args.work or tempfile.mkdtemp(prefix="markmem-lme-"))
    overrides = {"pii_engine": args.pii_engine} if args.pii_engine else {}
    t0 = time.perf_counter()
    mem = Memory(work, background=False, **overrides)
    gate = f"{mem.context.scanner.name}, {mem.settings.pii_policy}"
    res: dict[str, Any] = {"work": str(work), "open_s": time.perf_counter() - t0, "gate": gate,
                           "rows": [], "add_s": 0.0, "flush_s": 0.0, "turns": 0, "quarantined": 0,
                           "quarantined_evidence": 0, "ms": defaultdict(list), "head_differs": 0,
                           "as_of": "day" if args.as_of_day else not args.no_as_of,
                           "vectors": getattr(mem.context.embedder, "name", None),
                           "recipe": parse_recipe(args.recipe), "reused": 0}
    cache_file = res["cache_file"] = work / "lme-ingest.json"
    cache = json.loads(cache_file.read_text()) if args.reuse and cache_file.exists() else {}
    embedder = load_builtin_embedder()
    for i, q in enumerate(questions, 1):
        res["rows"].append(one_question(mem, q, embedder, res, cache))
        cache_file.write_text(json.dumps(cache))
        print(f"[{i}/{len(questions)}] {q.qtype:<26} " + "  ".join(
            f"{s} {int(res['rows'][-1][s]['turn any@5'])}" for s in SYSTEMS), file=sys.stderr, flush=True)
    mem.close()
    return res


def one_question(mem: Memory, q: Question, embedder: object | None, res: dict[str, Any],
                 cache: dict[str, Any]) -> dict[str, Any]:
    """Ingest (or reuse ``cache[qid]``'s ingest), search, score; the baselines too (or their cached scores)."""
    if "by_raw" in cache.get(q.qid, {}):
        q.user = cache[q.qid].get("user", user_of(q))
        by_raw = {raw: (k[0], k[1]) for raw, k in cache[q.qid]["by_raw"].items()}
        quarantined = [(k[0], k[1]) for k in cache[q.qid]["quarantined"]]
        res["reused"] += 1
    else:  # an ingest a killed run left half done stays where it is: this one goes to a fresh user
        q.user = user_of(q) + ("-again" if q.qid in cache else "")
        cache[q.qid] = {"user": q.user}
        res["cache_file"].write_text(json.dumps(cache))
        t0 = time.perf_counter()
        by_raw, quarantined = ingest(mem, q)
        t1 = time.perf_counter()
        mem.flush()
        res["add_s"] += t1 - t0
        res["flush_s"] += time.perf_counter() - t1
        cache[q.qid].update(by_raw=by_raw, quarantined=quarantined)
    res["turns"] += len(by_raw)
    res["quarantined"] += len(quarantined)
    res["quarantined_evidence"] += len(q.evidence & set(quarantined))
    head5, deep, (cold, warm) = markmem_ranks(mem, q, by_raw, as_of=res["as_of"], recipe=res["recipe"])
    res["ms"]["markmem"].append(cold)
    res["ms"]["markmem warm"].append(warm)
    res["head_differs"] += head5 != deep[:5]
    row: dict[str, Any] = {"id": q.qid, "type": q.qtype, "late_evidence": q.late_evidence,
                           "markmem": score(deep, q, head5)}
    if "baselines" not in cache[q.qid]:
        cache[q.qid]["baselines"] = {name: [score(ranked, q), ms_b]
                                     for name, (ranked, ms_b) in baseline_ranks(q, embedder).items()}
    for name, (scores, ms_b) in cache[q.qid]["baselines"].items():
        res["ms"][name].append(ms_b)
        row[name] = scores
    return row


def report(res: dict[str, Any]) -> None:
    n = len(res["rows"])
    print(f"LongMemEval dev slice: {n} questions, {res['turns']} turns; memory repo {res['work']}"
          + (f" ({res['reused']} questions' ingest reused)" if res["reused"] else ""))
    if res["recipe"] is not None:
        print(f"markmem recipe: {res['recipe']}")
    print(f"PII gate that ran: {res['gate']}; markmem: default search, vector lane {res['vectors'] or 'OFF'}; "
          f"bm25: FTS5 bm25, markmem's tokenizer; hybrid: bm25 + model2vec cosine, RRF k=60")
    print(f"ingest: add() {res['add_s']:.1f} s ({1000 * res['add_s'] / max(1, res['turns']):.2f} ms/turn), "
          f"compile (flush) {res['flush_s']:.1f} s, Memory() open {res['open_s']:.1f} s; "
          f"{res['quarantined']} turns quarantined by the injection guard "
          f"({res['quarantined_evidence']} of them evidence)")
    print("search median per query: " + ", ".join(
        f"{s} {statistics.median(res['ms'][s]):.1f} ms" for s in ("markmem", "markmem warm", "bm25", "hybrid")) +
        "  (markmem: the user's first search, then the same search again; baselines: their index built;"
        " 2 shared cores, ~6 other jobs: indicative only)")
    print(f"markmem top_k=5 head differs from its top_k={DEEP} head in {res['head_differs']}/{n} questions")
    late = [r["id"] for r in res["rows"] if r["late_evidence"]]
    said = {True: "question date", False: "none (--no-as-of, off protocol)",
            "day": "the end of the question's day (--as-of-day)"}[res["as_of"]]
    print(f"markmem searched with as_of = {said}; "
          f"{len(late)} questions have evidence dated after the question: {', '.join(late) or '-'}")
    summary = summarise(res["rows"])
    for metric in METRICS:
        print(f"\n{metric:<28}{'n':>4}" + "".join(f"{s:>9}" for s in SYSTEMS))
        for name, g in summary.items():
            print(f"{name:<28}{g['n']:>4}" + "".join(f"{g[s][metric]:>9.1f}" for s in SYSTEMS))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="the slice (json.gz), read in place")
    ap.add_argument("--limit", type=int, help="at most N questions per type")
    ap.add_argument("--types", help="comma-separated question types, e.g. temporal-reasoning,multi-session")
    ap.add_argument("--work", help="memory repo folder (default: a new temporary folder)")
    ap.add_argument("--pii-engine", help="PII gate: auto, presidio or regex (default: markmem's default)")
    ap.add_argument("--no-as-of", action="store_true", help="search markmem without as_of (off protocol)")
    ap.add_argument("--as-of-day", action="store_true",
                    help="search markmem as of the end of the question's day (same-day sessions count)")
    ap.add_argument("--json", action="store_true", help="print the summary and per-question rows as JSON")
    ap.add_argument("--dump", help="also write per-question results (JSON lines) to this file")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the ingest (and baseline scores) recorded in --work's lme-ingest.json")
    ap.add_argument("--split", choices=("tune", "held", "all"), default="all",
                    help="half of the fixed split by sha1(question_id) within each type (see above)")
    ap.add_argument("--ids", help="comma-separated question ids")
    ap.add_argument("--recipe", help='fusion settings for an ablation, e.g. "answer_weight=0"')
    args = ap.parse_args(argv)
    res = run(args)
    if args.dump:
        with open(args.dump, "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in res["rows"])
    if args.json:
        print(json.dumps({"summary": summarise(res["rows"]), "rows": res["rows"], "gate": res["gate"],
                          "turns": res["turns"], "add_s": res["add_s"], "flush_s": res["flush_s"],
                          "median_ms": {s: statistics.median(ms) for s, ms in res["ms"].items()}}, indent=1))
    else:
        report(res)


if __name__ == "__main__":
    main()
