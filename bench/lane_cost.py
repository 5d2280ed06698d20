"""What one search setting costs: the same queries with the default recipe and with a variant, in
alternating rounds on one repo, wall and CPU time per search (p50/p95), and how many top-5 lists differ.

    python bench/lane_cost.py --repo /tmp/mm-latency/n10000 --user bench --variant graph_depth=0
    python bench/lane_cost.py --repo /tmp/locomo-repo --locomo --variant graph_depth=0

Queries: ``--locomo`` takes the LoCoMo questions of the repo's users (bench/locomo.py's ingest);
otherwise bench/search_latency.py's mix (a stored turn's words, and the common-term questions).
Alternating rounds share the machine's load between the two settings; on 2 shared cores the wall
clock is noisy, the CPU time less so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import DEFAULT_DATA, parse_recipe  # noqa: E402

from markmem import Memory  # noqa: E402
from markmem.read import search as searching  # noqa: E402
from markmem.read.fuse import DEFAULT, Recipe  # noqa: E402


def locomo_queries(data: Path) -> list[tuple[str, str]]:
    out = []
    for f in sorted(data.glob("*.json")):
        conv = json.loads(f.read_text())
        out += [(f"locomo-{f.stem}", qa["question"]) for qa in conv["qa"] if qa.get("evidence")]
    return out


def synthetic_queries(mem: Memory, user: str, n: int) -> list[tuple[str, str]]:
    from search_latency import common_queries, queries

    rows = mem.context.cache.user(user).rows("SELECT content FROM raw WHERE user_id = ? LIMIT 5000", (user,))
    texts = [r["content"] for r in rows]
    return [(user, q) for q in queries(texts, n // 2) + common_queries(n // 2)]


def one_round(mem: Memory, qs: list[tuple[str, str]],
              recipe: Recipe) -> tuple[list[float], list[float], list[list[str]]]:
    wall, cpu, tops = [], [], []
    for user, q in qs:
        t0, c0 = time.perf_counter(), time.process_time()
        hits = searching.search(mem.context, q, user, 5, recipe=recipe)
        wall.append(1000 * (time.perf_counter() - t0))
        cpu.append(1000 * (time.process_time() - c0))
        tops.append([h.id for h in hits])
    return wall, cpu, tops


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else 0.0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--user", default="bench")
    ap.add_argument("--locomo", action="store_true", help="LoCoMo questions of the repo's locomo-* users")
    ap.add_argument("--variant", required=True, help='recipe changes, e.g. "graph_depth=0"')
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    mem = Memory(Path(args.repo), background=False)
    qs = locomo_queries(Path(DEFAULT_DATA)) if args.locomo else synthetic_queries(mem, args.user, args.queries)
    variant = parse_recipe(args.variant) or DEFAULT
    for user in dict.fromkeys(u for u, _ in qs):  # warm every user's caches and the lane's graph
        searching.search(mem.context, "warm up", user, 5)
    one_round(mem, qs[:50], DEFAULT)
    res: dict[str, tuple[list[float], list[float]]] = {"default": ([], []), args.variant: ([], [])}
    tops: dict[str, list[list[str]]] = {}
    for _ in range(args.rounds):
        for name, recipe in (("default", DEFAULT), (args.variant, variant)):
            wall, cpu, top = one_round(mem, qs, recipe)
            res[name][0].extend(wall)
            res[name][1].extend(cpu)
            tops[name] = top
    mem.close()
    differ = sum(a != b for a, b in zip(tops["default"], tops[args.variant], strict=True))
    print(f"{len(qs)} queries x {args.rounds} alternating rounds; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    for name, (wall, cpu) in res.items():
        print(f"{name:<24} wall p50 {pct(wall, 50):6.2f} ms  p95 {pct(wall, 95):6.2f} ms   "
              f"cpu p50 {pct(cpu, 50):6.2f} ms  mean {statistics.fmean(cpu):6.2f} ms")
    print(f"top-5 lists that differ: {differ}/{len(qs)}")


if __name__ == "__main__":
    main()
