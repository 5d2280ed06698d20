"""Where add()'s CPU goes: each part switched off in turn, in ONE process (issue 17, point 3).

Variants alternate in blocks (A B C ... then ... C B A), so the machine's swings under other jobs'
load fall on every variant alike; each prints its CPU p50 per add() and the difference to the full
add(), which is that part's share. Parts: the gate (PII scan + injection guard), the FTS writes
(the new turn and its neighbours' re-indexed context), the whole cache transaction, the queue row,
the raw fdatasync (its kernel CPU counts in this process's CPU time). A variant is a measurement
only: it writes a repo no reader should trust.

    python bench/write_parts.py                 (one 30-word message per add())
    python bench/write_parts.py --list          (a 20-message list per add())

Machine caveat: 2 shared cores under load: CPU time is inflated by contention too; read the shares
against each other, not as absolute figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from markmem import Memory
from markmem.index import cache, split, text
from markmem.write import pipeline, queue

_spec = importlib.util.spec_from_file_location("gate_bench", Path(__file__).with_name("gate.py"))
assert _spec is not None and _spec.loader is not None
gate_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gate_bench)

NOOP = "INSERT INTO meta(key, value) SELECT 'x', 'y' WHERE ? IS NULL AND ? IS NULL AND ? IS NULL AND 0"
ORIG: dict[str, Any] = {"ti": text.FTS_INSERT, "td": text.FTS_DELETE, "ci": cache.FTS_INSERT, "gate": pipeline.gate,
                        "up": split.SplitCache.upsert_raw, "enq": queue.Queue.enqueue, "sync": os.fdatasync}
PARTS = [(text, "FTS_INSERT", "ti"), (text, "FTS_DELETE", "td"), (cache, "FTS_INSERT", "ci"),
         (pipeline, "gate", "gate"), (split.SplitCache, "upsert_raw", "up"), (queue.Queue, "enqueue", "enq"),
         (os, "fdatasync", "sync")]
VARIANTS = ["full add()", "no gate", "no FTS writes", "no cache transaction", "no queue row", "no fdatasync"]


class _Passed:
    """What the gate returns for a record it let through untouched."""

    def __init__(self, rec: Any) -> None:
        self.text, self.fields, self.entities, self.masked, self.quarantined = rec.text, rec, (), (), None


def _no_cache(self: Any, entries: Any, compiled: bool = False, ready: Any = None, fresh: bool = False) -> None:
    if ready is not None:
        ready()


def _gate_passed(ctx: Any, recs: Any) -> list[_Passed]:
    return [_Passed(r) for r in recs]


def _nothing(*_args: Any) -> None:
    return None


OFF: dict[str, list[tuple[Any, str, Any]]] = {  # variant -> (owner, attribute, stand-in)
    "full add()": [],
    "no gate": [(pipeline, "gate", _gate_passed)],
    "no FTS writes": [(text, "FTS_INSERT", NOOP), (text, "FTS_DELETE", NOOP), (cache, "FTS_INSERT", NOOP)],
    "no cache transaction": [(split.SplitCache, "upsert_raw", _no_cache)],
    "no queue row": [(queue.Queue, "enqueue", _nothing)],
    "no fdatasync": [(os, "fdatasync", _nothing)],
}


def switch(variant: str) -> None:
    """Put every part back, then switch ``variant``'s part off (a bench's monkeypatch)."""
    for owner, name, key in PARTS:
        setattr(owner, name, ORIG[key])
    for owner, name, stand_in in OFF[variant]:
        setattr(owner, name, stand_in)


def main() -> int:
    ap = argparse.ArgumentParser(description="add() CPU per part, parts switched off in alternated blocks")
    ap.add_argument("--list", action="store_true", help="a 20-message list per add() (else one message)")
    ap.add_argument("--rounds", type=int, default=0, help="blocks per variant (default 25, 20 with --list)")
    args = ap.parse_args()
    block, rounds = (8, args.rounds or 20) if args.list else (40, args.rounds or 25)
    chat = [gate_bench.VARIANTS[i % len(gate_bench.VARIANTS)].format(n=i) for i in range(20)]
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp) / "repo", pii_engine="regex", vector_model=None, background=False)
        try:
            call: Callable[[], object] = ((lambda: mem.add(chat, user_id="dave")) if args.list
                                          else (lambda: mem.add(gate_bench.MESSAGE, user_id="alice")))
            for _ in range(30):
                call()
            got: dict[str, list[float]] = {v: [] for v in VARIANTS}
            for r in range(rounds):
                for variant in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
                    switch(variant)
                    for _ in range(block):
                        start = time.process_time()
                        call()
                        got[variant].append((time.process_time() - start) * 1000)
        finally:
            switch("full add()")
            mem.close()
    full = statistics.median(got["full add()"])
    print(f"add() of {'a 20-message list' if args.list else 'one message'}, regex gate: CPU p50, "
          f"{rounds} alternated blocks of {block} calls per variant")
    for variant in VARIANTS:
        p50 = statistics.median(got[variant])
        print(f"  {variant:<22} {p50:7.3f} ms   part's share {full - p50:+.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
