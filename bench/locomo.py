"""LoCoMo retrieval benchmark (no LLM): any@5, all@5, recall@5, search latency, ingest time.

Protocol (../shared/data/locomo/README.md): each conversation is one Memory user; every turn goes
through ``Memory.add()`` as ``"<speaker>: <text>"`` (plus ``" [shares a photo: <caption>]"``), with
``{"dia_id": ...}`` as metadata and the session date as ``occurred_at``. Each question with
evidence is searched within its user; the top-5 hits map back to dia_ids through
``hit.sources[].metadata``. The data is read in place and never copied.

    python bench/locomo.py                       # default offline config (built-in vectors)
    python bench/locomo.py --vector-model none   # BM25 only
    python bench/locomo.py --data PATH --repo DIR --reuse

Beside markmem it prints two plain baselines over the same turn texts (bench/baselines.py): FTS5 BM25
with markmem's tokenizer, and BM25 + the shipped model2vec cosine fused by RRF (k=60).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from baselines import Baselines, load_builtin_embedder  # noqa: E402

from markmem import Memory  # noqa: E402
from markmem.read import search as searching  # noqa: E402
from markmem.read.fuse import DEFAULT, Recipe  # noqa: E402

_DATA = Path("shared") / "data" / "locomo"
# ../shared beside the checkout (/work/main), or two levels up from a worktree (/work/wt/NAME)
DEFAULT_DATA = next((p / _DATA for p in Path(__file__).resolve().parents[2:4] if (p / _DATA).exists()),
                    Path(__file__).resolve().parents[2] / _DATA)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


# the halves every recall round has tuned on and held out (bench/results/recall.md): --split
SPLITS = {"tune": "26,30,41", "held": "42,43"}


def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> an aware UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def sessions(conv: dict[str, Any]) -> list[tuple[datetime, list[dict[str, Any]]]]:
    out = []
    n = 1
    while f"session_{n}" in conv:
        out.append((parse_session_date(conv[f"session_{n}_date_time"]), conv[f"session_{n}"]))
        n += 1
    return out


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def ingest(mem: Memory, conv: dict[str, Any], user_id: str) -> int:
    n = 0
    for when, turns in sessions(conv):
        for turn in turns:
            mem.add(turn_text(turn), user_id=user_id, metadata={"dia_id": turn["dia_id"]}, occurred_at=when)
            n += 1
    return n


def hit_dia_ids(hits: list[Any]) -> list[str]:
    out: list[str] = []
    for hit in hits:
        for src in hit.sources:
            dia = src.metadata.get("dia_id")
            if dia and dia not in out:
                out.append(dia)
    return out


def evaluate(mem: Memory, conv: dict[str, Any], user_id: str, k: int, recipe: Recipe | None = None
             ) -> tuple[list[dict[str, Any]], list[float]]:
    rows, lat = [], []
    for qa in conv["qa"]:
        evidence = set(qa.get("evidence") or ())
        if not evidence:
            continue
        t0 = time.perf_counter()
        if recipe is None:
            hits = mem.search(qa["question"], user_id=user_id, top_k=k)
        else:  # an ablation: the same search with other fusion settings
            hits = searching.search(mem.context, qa["question"], user_id, k, recipe=recipe)
        lat.append((time.perf_counter() - t0) * 1000)
        found = evidence & set(hit_dia_ids(hits))  # type: ignore[arg-type]
        rows.append({"conv": user_id, "cat": qa["category"], "any": bool(found), "all": found == evidence,
                     "recall": len(found) / len(evidence), "q": qa["question"], "evidence": sorted(evidence),
                     "got": hit_dia_ids(hits)})  # type: ignore[arg-type]
    return rows, lat


def baseline_rows(conv: dict[str, Any], k: int, embedder: object | None) -> dict[str, list[dict[str, Any]]]:
    """The rows ``evaluate`` gives, for plain BM25 and the BM25 + model2vec hybrid over the same turn texts."""
    turns = [turn for _, ts in sessions(conv) for turn in ts]
    base = Baselines([turn_text(t) for t in turns], embedder)
    out: dict[str, list[dict[str, Any]]] = {"bm25": [], "hybrid": []}
    for qa in conv["qa"]:
        evidence = set(qa.get("evidence") or ())
        if not evidence:
            continue
        for name, rows in out.items():
            got = [turns[i]["dia_id"] for i in getattr(base, name)(qa["question"])[:k]]
            found = evidence & set(got)
            rows.append({"cat": qa["category"], "any": bool(found), "all": found == evidence,
                         "recall": len(found) / len(evidence)})
    base.close()
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, tuple[int, float, float, float]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups["overall"].append(r)
        groups[f"{r['cat']} {CATEGORIES.get(r['cat'], '?')}"].append(r)
    out = {}
    for name in sorted(groups, key=lambda g: (g != "overall", g)):
        g = groups[name]
        out[name] = (len(g), 100 * _mean([r["any"] for r in g]), 100 * _mean([r["all"] for r in g]),
                     100 * _mean([r["recall"] for r in g]))
    return out


def _mean(xs: list[Any]) -> float:
    return sum(float(x) for x in xs) / len(xs) if xs else 0.0


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else 0.0


def run(args: argparse.Namespace) -> dict[str, Any]:
    files = sorted(Path(args.data).glob("*.json"))
    chosen = args.conversations or SPLITS.get(args.split or "")
    if chosen:
        files = [f for f in files if f.stem in chosen.split(",")]
    if not files:
        sys.exit(f"no LoCoMo conversations under {args.data}")
    repo = Path(args.repo or tempfile.mkdtemp(prefix="markmem-locomo-"))
    reuse = args.reuse and (repo / ".markmem").exists()
    model = None if args.vector_model.lower() in ("none", "off", "") else args.vector_model
    mem = Memory(repo, pii_engine=args.pii_engine, pii_policy=args.pii_policy, vector_model=model, background=False)
    convs = {f"locomo-{f.stem}": json.loads(f.read_text()) for f in files}
    ingest_s = flush_s = 0.0
    turns = 0
    if not reuse:
        t0 = time.perf_counter()
        for uid, conv in convs.items():
            turns += ingest(mem, conv, uid)
        ingest_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        mem.flush()
        flush_s = time.perf_counter() - t0
    rows: list[dict[str, Any]] = []
    lat: list[float] = []
    for _ in range(args.warmup):
        mem.search("warm up the caches", user_id=next(iter(convs)))
    recipe = parse_recipe(args.recipe)
    embedder = load_builtin_embedder()
    baseline: dict[str, list[dict[str, Any]]] = {"bm25": [], "hybrid": []}
    for uid, conv in convs.items():
        r, ms = evaluate(mem, conv, uid, args.k, recipe)
        rows += r
        lat += ms
        for name, b_rows in baseline_rows(conv, args.k, embedder).items():
            baseline[name] += b_rows
    mem.close()
    return {"repo": str(repo), "turns": turns, "ingest_s": ingest_s, "flush_s": flush_s, "rows": rows,
            "lat": lat, "model": model, "baselines": baseline}


def parse_recipe(text: str | None) -> Recipe | None:
    """``"fusion=rrf,dense_depth=0"`` -> a Recipe differing from the default in those fields."""
    if not text:
        return None
    changes: dict[str, Any] = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        current = getattr(DEFAULT, key.strip())
        kind = type(current)
        changes[key.strip()] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
    return replace(DEFAULT, **changes)


def report(res: dict[str, Any], k: int) -> None:
    print(f"repo {res['repo']}  vector model: {res['model'] or 'none (BM25 only)'}")
    if res["turns"]:
        print(f"ingest: {res['turns']} turns through add() in {res['ingest_s']:.2f} s "
              f"({1000 * res['ingest_s'] / res['turns']:.2f} ms/turn), compile (flush) {res['flush_s']:.2f} s")
    systems = {"markmem": summarise(res["rows"])}
    systems.update((name, summarise(rows)) for name, rows in res.get("baselines", {}).items())
    print(f"{'':<22}" + "".join(f"{name:^27}" for name in systems))
    print(f"{'group':<16}{'n':>6}" + f"{f'any@{k}':>9}{f'all@{k}':>9}{f'recall@{k}':>9}" * len(systems))
    for group, (n, *_) in systems["markmem"].items():
        cells = "".join(f"{a:>9.1f}{al:>9.1f}{rc:>9.1f}" for _, a, al, rc in (s[group] for s in systems.values()))
        print(f"{group:<16}{n:>6}{cells}")
    print("bm25: FTS5 bm25() with markmem's tokenizer over the same turn texts; "
          "hybrid: bm25 + shipped model2vec cosine, RRF k=60")
    lat = res["lat"]
    print(f"search latency: p50 {percentile(lat, 50):.2f} ms, p95 {percentile(lat, 95):.2f} ms "
          f"({len(lat)} queries, mean {statistics.fmean(lat):.2f} ms)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="folder with the LoCoMo conversation files")
    ap.add_argument("--repo", help="memory repo folder (default: a new temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="skip ingest when --repo already holds the data")
    ap.add_argument("--vector-model", default="builtin", help='"builtin" (default), a model2vec path/id, or "none"')
    ap.add_argument("--pii-engine", default="regex", help="PII gate (regex keeps ingest fast and offline)")
    ap.add_argument("--pii-policy", default="default", help='"default" keeps names and places; "mask" masks them')
    ap.add_argument("--conversations", help="comma-separated file stems, e.g. 26,30")
    ap.add_argument("--split", choices=sorted(SPLITS), help="the recall rounds' halves: tune = 26,30,41, held = 42,43")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--recipe", help='fusion settings for an ablation, e.g. "fusion=rrf" or "speaker_boost=0"')
    ap.add_argument("--dump", help="write per-question results (JSON lines) to this file")
    args = ap.parse_args(argv)
    res = run(args)
    report(res, args.k)
    if args.dump:
        with open(args.dump, "w") as fh:
            for r in res["rows"]:
                fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
