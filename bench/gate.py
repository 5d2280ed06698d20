"""Benchmark ``Memory.add()`` with the PII gate: the chatbot's hot path, end to end.

add() = validate -> PII gate (scan + mask) -> injection guard -> raw append + fsync -> queue row
-> cache row. No extraction runs on this path (the compile worker is off here).

Reports, per gate (Presidio with the real spaCy model, and the regex fallback):
  * single add() of a 30-word message: p50 / p95 over 300 calls after a warm-up (ms), and the
    scanner's share of it (``analyze_batch([message])`` alone);
  * batch throughput: ONE add() call with 1,000 messages (the batch analyzer scans them
    together, one fsync), in messages/s, against 1,000 single add() calls.

    python bench/gate.py            (markmem importable: installed, or PYTHONPATH=.)
"""

from __future__ import annotations

import statistics
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


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench(engine: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp) / "repo", pii_engine=engine, vector_model=None, background=False)
        try:
            scanner = mem.context.scanner
            for _ in range(WARM_UP):
                mem.add(MESSAGE, user_id="alice")
            single = [timed(lambda: mem.add(MESSAGE, user_id="alice")) * 1000 for _ in range(CALLS)]
            scan = [timed(lambda: scanner.analyze_batch([MESSAGE])) * 1000 for _ in range(CALLS)]
            texts = [VARIANTS[i % len(VARIANTS)].format(n=i) for i in range(BATCH)]
            one_call = timed(lambda: mem.add(texts, user_id="bob"))
            one_by_one = timed(lambda: [mem.add(t, user_id="carol") for t in texts])
        finally:
            mem.close()
    return {
        "add_p50": statistics.median(single), "add_p95": pct(single, 95),
        "scan_p50": statistics.median(scan),
        "batch_msgs_s": BATCH / one_call, "single_msgs_s": BATCH / one_by_one,
    }


def main() -> int:
    words = len(MESSAGE.split())
    print(f"add() benchmark: {words}-word message, {CALLS} calls; batch of {BATCH} messages")
    print(f"{'gate':<10} {'add p50':>9} {'add p95':>9} {'scan p50':>9} {'1 add(list)':>14} {'single adds':>14}")
    for engine in ("presidio", "regex"):
        try:
            r = bench(engine)
        except Exception as exc:  # e.g. Presidio or its model not installed
            print(f"{engine:<10} unavailable: {exc}")
            continue
        print(f"{engine:<10} {r['add_p50']:>7.2f}ms {r['add_p95']:>7.2f}ms {r['scan_p50']:>7.2f}ms "
              f"{r['batch_msgs_s']:>8.0f} msg/s {r['single_msgs_s']:>8.0f} msg/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
