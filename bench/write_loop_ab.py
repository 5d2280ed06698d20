"""A/B a chatbot's loop, add() then search(), of two checkouts in alternated CPU-time rounds.

``bench/write_ab.py`` times add() alone. Since add() leaves the indexing of its turns to the next
read of the user's cache (schema 10, ``index.split``), part of what it saved is paid by the search
that follows it; this bench shows how much. Each round is a fresh process per checkout (A, B, B,
A, ...): a user with ``--fill`` turns, then ``--calls`` times: add() of one 30-word message
(bench/gate.py's MESSAGE, a number changed each time), then a search; and ``--calls`` searches
with no add() between (the search's own cost, with the check for deferred turns). CPU time of
this process (``time.process_time``), p50 per part; the medians over rounds and B/A.

    python bench/write_loop_ab.py --a /work/main --b . --rounds 4

Machine caveat: 2 shared cores under other jobs' load: compare the ratio, not absolute figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from write_ab import alternated, run_child  # noqa: E402

CHILD = r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from markmem import Memory
import importlib.util
spec = importlib.util.spec_from_file_location("gate_bench", sys.argv[1] + "/bench/gate.py")
g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)
calls, fill = int(sys.argv[2]), int(sys.argv[3])
QUERIES = ["where did Maria move", "vegetarian restaurant near the office", "aisle seats on flights",
           "what does the user prefer", "quiet place to eat"]
out = {"add": [], "search_after_add": [], "loop": [], "search_alone": []}
with tempfile.TemporaryDirectory() as tmp:
    mem = Memory(Path(tmp) / "repo", pii_engine="regex", vector_model=None, background=False)
    try:
        for i in range(fill):
            mem.add(g.VARIANTS[i % len(g.VARIANTS)].format(n=i), user_id="alice")
        for q in QUERIES:
            mem.search(q, user_id="alice")
        for i in range(calls):
            msg = g.MESSAGE.replace("last month", f"{i + 2} months ago")
            c0 = time.process_time()
            mem.add(msg, user_id="alice")
            c1 = time.process_time()
            mem.search(QUERIES[i % len(QUERIES)], user_id="alice")
            c2 = time.process_time()
            out["add"].append((c1 - c0) * 1000)
            out["search_after_add"].append((c2 - c1) * 1000)
            out["loop"].append((c2 - c0) * 1000)
        for i in range(calls):
            c0 = time.process_time()
            mem.search(QUERIES[i % len(QUERIES)], user_id="alice")
            out["search_alone"].append((time.process_time() - c0) * 1000)
    finally:
        mem.close()
print(json.dumps({k: statistics.median(v) for k, v in out.items()}))
"""


def run(checkout: Path, calls: int, fill: int) -> dict[str, float]:
    return run_child(checkout, CHILD, calls, fill)  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description="A/B add() + search() CPU time of two checkouts, alternated")
    ap.add_argument("--a", type=Path, required=True, help="checkout A (e.g. main)")
    ap.add_argument("--b", type=Path, required=True, help="checkout B (e.g. this branch)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--fill", type=int, default=300, help="turns the user has before the loop")
    args = ap.parse_args()
    got: dict[tuple[str, str], list[float]] = {}
    for r, order in alternated(args.a, args.b, args.rounds):
        for name, checkout in order:
            res = run(checkout, args.calls, args.fill)
            for part, v in res.items():
                got.setdefault((part, name), []).append(v)
            print(f"round {r} {name} " + "  ".join(f"{k} {v:6.3f}" for k, v in res.items()) + " ms", flush=True)
    print("\nCPU p50, median over rounds (ms)     A          B      B/A")
    for part in dict.fromkeys(k[0] for k in got):
        a, b = (statistics.median(got[(part, n)]) for n in ("A", "B"))
        print(f"{part:<30} {a:8.3f}   {b:8.3f}   {b / a:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
