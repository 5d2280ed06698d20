"""A/B the add() path of two checkouts in alternated CPU-time rounds (issue 17, point 3).

On a shared machine the cores' speed swings 1.5x from minute to minute, so one checkout measured
after the other compares the machine, not the code. This runs both in turns, ``--rounds`` times
(A, B, B, A, A, B, ...), each round a fresh process that times, per call, the CPU time of this
process (what add() costs: gate, JSON, SQLite; the fsync's wait for the disk is wall time only):

  * ``single``: add() of one 30-word message (bench/gate.py's MESSAGE), ``--calls`` calls;
  * ``list20``: add() of a 20-message list (bench/gate.py's VARIANTS), ``--calls // 3`` calls;

with the regex gate, and ``single`` with Presidio when ``--presidio`` is given. It prints each
round's p50 and p95 and, per figure, the median over rounds of each checkout and their ratio.

    python bench/write_ab.py --a /work/main --b . --rounds 6
    python bench/write_ab.py --a /work/main --b . --rounds 4 --presidio

Machine caveat: 2 shared cores under other jobs' load: compare the ratio, not absolute figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHILD = r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from markmem import Memory
import importlib.util
spec = importlib.util.spec_from_file_location("gate_bench", sys.argv[1] + "/bench/gate.py")
g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)
engine, calls = sys.argv[2], int(sys.argv[3])

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]

def timed(fn, n):
    cpu, wall = [], []
    for _ in range(n):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    return {"cpu50": statistics.median(cpu), "cpu95": pct(cpu, 95),
            "wall50": statistics.median(wall), "wall95": pct(wall, 95)}

out = {}
with tempfile.TemporaryDirectory() as tmp:
    mem = Memory(Path(tmp) / "repo", pii_engine=engine, vector_model=None, background=False)
    try:
        for _ in range(30):
            mem.add(g.MESSAGE, user_id="alice")
        out["single"] = timed(lambda: mem.add(g.MESSAGE, user_id="alice"), calls)
        if engine == "regex":
            chat = [g.VARIANTS[i % len(g.VARIANTS)].format(n=i) for i in range(20)]
            for _ in range(5):
                mem.add(chat, user_id="dave")
            out["list20"] = timed(lambda: mem.add(chat, user_id="dave"), max(10, calls // 3))
    finally:
        mem.close()
print(json.dumps(out))
"""


def run_child(checkout: Path, child: str, *args: object) -> Any:
    """Run ``child`` (a script) in a fresh process with ``checkout`` first on the path: its last line's JSON."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", child, str(checkout), *map(str, args)],
                          capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def alternated(a: Path, b: Path, rounds: int) -> Iterator[tuple[int, list[tuple[str, Path]]]]:
    """Each round and its order of the two checkouts: A, B, then B, A, ... (the machine's drift cancels)."""
    for r in range(rounds):
        pair = [("A", a.resolve()), ("B", b.resolve())]
        yield r, pair if r % 2 == 0 else pair[::-1]


def run(checkout: Path, engine: str, calls: int) -> dict[str, dict[str, float]]:
    return run_child(checkout, CHILD, engine, calls)  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description="A/B add() CPU time of two checkouts, alternated")
    ap.add_argument("--a", type=Path, required=True, help="checkout A (e.g. main)")
    ap.add_argument("--b", type=Path, required=True, help="checkout B (e.g. this branch)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--presidio", action="store_true", help="also single add() with Presidio")
    args = ap.parse_args()
    engines = ["regex", "presidio"] if args.presidio else ["regex"]
    got: dict[tuple[str, str, str], list[float]] = {}
    for r, order in alternated(args.a, args.b, args.rounds):
        for engine in engines:
            for name, checkout in order:
                res = run(checkout, engine, args.calls if engine == "regex" else args.calls // 3)
                for part, figs in res.items():
                    label = f"{engine} {part}"
                    for k, v in figs.items():
                        got.setdefault((label, name, k), []).append(v)
                    print(f"round {r} {name} {label:<15} cpu p50 {figs['cpu50']:6.3f} p95 {figs['cpu95']:6.3f}  "
                          f"wall p50 {figs['wall50']:6.3f} p95 {figs['wall95']:6.3f} ms", flush=True)
    print("\nmedian over rounds (ms)          A (cpu p50 / p95)     B (cpu p50 / p95)   B/A p50")
    for label in dict.fromkeys(k[0] for k in got):
        a50, a95 = (statistics.median(got[(label, "A", k)]) for k in ("cpu50", "cpu95"))
        b50, b95 = (statistics.median(got[(label, "B", k)]) for k in ("cpu50", "cpu95"))
        print(f"{label:<30} {a50:8.3f} / {a95:8.3f}   {b50:8.3f} / {b95:8.3f}   {b50 / a50:6.2f}")
        wa, wb = (statistics.median(got[(label, n, "wall50")]) for n in ("A", "B"))
        print(f"{'  wall p50 (incl. fsync)':<30} {wa:8.3f}              {wb:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
