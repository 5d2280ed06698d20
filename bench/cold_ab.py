"""A fresh process's first search, two source trees in turns: the A/B the shared cores allow.

Runs fresh processes (import markmem, ``Memory()`` open, first search, second search) alternately with
``PYTHONPATH`` set to tree A and tree B, each on its own copy of a repo built by
``bench/search_latency.py --root`` (a saved file carries a tag of the code that wrote it, so each
tree keeps its own copy), and prints the CPU and wall medians of each. One untimed round first
(it writes what later processes read). ``--numpy-first`` imports numpy before the clock starts,
to see the rest of the first search apart from numpy's own import.

    python bench/search_latency.py --sizes 10000 --root /tmp/sl-a   # with tree A on PYTHONPATH
    cp -a /tmp/sl-a /tmp/sl-b
    python bench/cold_ab.py --a /work/main:/tmp/sl-a/n10000 --b .:/tmp/sl-b/n10000 --runs 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

COLD = r"""
import sys, time
if sys.argv[4] == "1":
    import numpy  # noqa: F401
c0, t0 = time.process_time(), time.perf_counter()
from markmem import Memory
c1, t1 = time.process_time(), time.perf_counter()
mem = Memory(sys.argv[1], pii_engine="regex", vector_model="builtin", background=False)
c2, t2 = time.process_time(), time.perf_counter()
mem.search(sys.argv[2], user_id="bench")
c3, t3 = time.process_time(), time.perf_counter()
mem.search(sys.argv[3], user_id="bench")
c4, t4 = time.process_time(), time.perf_counter()
print(*((b - a) * 1000 for a, b in ((c0, c1), (c1, c2), (c2, c3), (c3, c4), (t0, t1), (t1, t2), (t2, t3), (t3, t4))))
"""
QUERIES = ("What did Sam say about pottery glaze?", "Where does the user live?",
           "What did Alex say about hiking trail?", "Which company does the user work at?",
           "What does the user think about sushi?", "What did Sam say about kiln vase?")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="SOURCE_TREE:REPO for A")
    ap.add_argument("--b", required=True, help="SOURCE_TREE:REPO for B")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--numpy-first", action="store_true")
    args = ap.parse_args(argv)
    trees = {name: tuple(str(Path(p).resolve()) for p in spec.split(":", 1)) for name, spec in
             (("A", args.a), ("B", args.b))}
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out: dict[str, list[list[float]]] = {name: [] for name in trees}
    for i in range(args.runs + 1):
        order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
        for name, (src, repo) in order:
            q1, q2 = QUERIES[i % len(QUERIES)], QUERIES[(i + 1) % len(QUERIES)]
            got = subprocess.run([sys.executable, "-c", COLD, repo, q1, q2, "1" if args.numpy_first else "0"],
                                 cwd=os.path.dirname(repo) or "/", capture_output=True, text=True, check=True,
                                 env={**env, "PYTHONPATH": src})
            if i:
                out[name].append([float(x) for x in got.stdout.split()])
    for name, rows in out.items():
        med = [statistics.median(col) for col in zip(*rows, strict=True)]
        print(f"{name} {trees[name][0]}: cpu import {med[0]:.0f}, open {med[1]:.1f}, first search {med[2]:.1f}, "
              f"second {med[3]:.1f} | wall {med[4]:.0f}, {med[5]:.1f}, {med[6]:.1f}, {med[7]:.1f} ms "
              f"(median of {len(rows)})")
    print(f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
