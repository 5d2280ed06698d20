"""Benchmark ``Memory.add()`` with the PII gate: the chatbot's hot path, end to end.

add() = validate -> PII gate (scan + mask) -> injection guard -> raw append + fsync -> queue row
-> cache row. No extraction runs on this path (the compile worker is off here).

Reports, per gate (Presidio with the real spaCy model, and the regex fallback):
  * single add() of a 30-word message: p50 / p95 over 300 calls after a warm-up (ms, wall clock),
    its CPU time p50 (this process: what the gate, JSON and SQLite cost; the wall time adds the
    fsync's wait for the disk), and the scanner's share of it (``analyze_batch([message])`` alone);
  * add() of a 20-message list (a chat turn's history): p50 wall and CPU over 100 calls;
  * batch throughput: ONE add() call with 1,000 messages (the batch analyzer scans them
    together, one fsync), in messages/s, against 1,000 single add() calls;
  * a fresh process that only writes (regex gate): CPU of ``import markmem``, of opening an
    existing repo and of its first add() (median of 5 processes; the extractor and the read path
    are not imported by it).

    python bench/gate.py                       (markmem importable: installed, or PYTHONPATH=.)
    python bench/gate.py --engine regex        (one gate only; repeatable)

Machine caveat: on a shared machine the wall clock includes other jobs' CPU and disk traffic (the
fsync waits behind their writes); the CPU column is what add() itself costs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from markmem import Memory

MESSAGE = (  # 30 words, one name and one place: the gate has work to do
    "Hi, this is Maria from Madrid; I moved here last month and I am looking for a quiet "
    "vegetarian restaurant near the office, and I prefer aisle seats on flights."
)
VARIANTS = [
    MESSAGE,
    "Please email me at ops{n}@example.org or call 415-555-{n:04d} about the booking next week, "
    "and remember that I prefer aisle seats when I fly to Boston with the kids.",
    "I have {n} cats and two dogs, the meeting is at half past ten and I really like jazz, "
    "long walks by the river and cooking dinner for friends on Sundays.",
]
CALLS = 300
WARM_UP = 30
BATCH = 1000
LIST_LEN, LIST_CALLS = 20, 100


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed_both(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU of this process) in ms."""
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000


def bench(engine: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp) / "repo", pii_engine=engine, vector_model=None, background=False)
        try:
            scanner = mem.context.scanner
            for _ in range(WARM_UP):
                mem.add(MESSAGE, user_id="alice")
            single = [timed_both(lambda: mem.add(MESSAGE, user_id="alice")) for _ in range(CALLS)]
            scan = [timed(lambda: scanner.analyze_batch([MESSAGE])) * 1000 for _ in range(CALLS)]
            chat = [VARIANTS[i % len(VARIANTS)].format(n=i) for i in range(LIST_LEN)]
            lists = [timed_both(lambda: mem.add(chat, user_id="dave")) for _ in range(LIST_CALLS)]
            texts = [VARIANTS[i % len(VARIANTS)].format(n=i) for i in range(BATCH)]
            one_call = timed(lambda: mem.add(texts, user_id="bob"))
            one_by_one = timed(lambda: [mem.add(t, user_id="carol") for t in texts])
        finally:
            mem.close()
    return {
        "add_p50": statistics.median(w for w, _c in single), "add_p95": pct([w for w, _c in single], 95),
        "add_cpu": statistics.median(c for _w, c in single), "scan_p50": statistics.median(scan),
        "list_p50": statistics.median(w for w, _c in lists), "list_cpu": statistics.median(c for _w, c in lists),
        "batch_msgs_s": BATCH / one_call, "single_msgs_s": BATCH / one_by_one,
    }


FRESH = """
import json, sys, time
c0 = time.process_time()
import markmem
c1 = time.process_time()
mem = markmem.Memory(sys.argv[1], pii_engine="regex", vector_model=None, background=False)
c2 = time.process_time()
mem.add("I moved to Lisbon last month and I prefer aisle seats.", user_id="alice")
c3 = time.process_time()
mem.close()
print(json.dumps([1000 * (c1 - c0), 1000 * (c2 - c1), 1000 * (c3 - c2)]))
"""


def fresh_process(runs: int = 5) -> list[float]:
    """(import, open, first add) CPU ms of a process that only writes: medians over ``runs``."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = str(Path(tmp) / "repo")
        rows = []
        for i in range(runs + 1):  # the first creates the repo and the bytecode cache: untimed
            out = subprocess.run([sys.executable, "-c", FRESH, repo], capture_output=True, text=True, check=True)
            if i:
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return [statistics.median(col) for col in zip(*rows, strict=True)]


def main() -> int:
    ap = argparse.ArgumentParser(description="add() with each PII gate: latency, CPU, throughput")
    ap.add_argument("--engine", choices=["presidio", "regex"], action="append",
                    help="gate to measure (repeatable; default both)")
    engines = ap.parse_args().engine or ["presidio", "regex"]
    words = len(MESSAGE.split())
    print(f"add() benchmark: {words}-word message, {CALLS} calls; a {LIST_LEN}-message list, {LIST_CALLS} calls; "
          f"batch of {BATCH} messages (ms: p50 unless said; cpu = this process's CPU time)")
    print(f"{'gate':<10} {'add p50':>9} {'add p95':>9} {'add cpu':>9} {'scan p50':>9} {'list20':>9} "
          f"{'list cpu':>9} {'1 add(list)':>14} {'single adds':>14}")
    for engine in engines:
        try:
            r = bench(engine)
        except Exception as exc:  # e.g. Presidio or its model not installed
            print(f"{engine:<10} unavailable: {exc}")
            continue
        print(f"{engine:<10} {r['add_p50']:>7.2f}ms {r['add_p95']:>7.2f}ms {r['add_cpu']:>7.2f}ms "
              f"{r['scan_p50']:>7.2f}ms {r['list_p50']:>7.2f}ms {r['list_cpu']:>7.2f}ms "
              f"{r['batch_msgs_s']:>8.0f} msg/s {r['single_msgs_s']:>8.0f} msg/s", flush=True)
    imp, opened, first = fresh_process()
    print(f"a fresh process that only writes (CPU, median of 5): import markmem {imp:.0f} ms, open {opened:.0f} ms, "
          f"first add() {first:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
