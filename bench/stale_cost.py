"""What this branch's read-side steps cost a search, measured inside one process (no cross-process noise).

Opens a repo that ``bench/search_latency.py --root DIR`` built (``DIR/n10000``), warms it, then times the
same query mix with the steps on and off in alternating rounds (cpu p50 per search), and the CPU time spent
inside the steps themselves (``ended.marks``, ``whose.about_another``, ``kinds.suggestion``,
``facts._unmarked_first``) per search.

    PYTHONPATH=. python bench/stale_cost.py --repo DIR/n10000 [--queries 300] [--rounds 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search_latency as sl  # noqa: E402

from markmem import Memory  # noqa: E402
from markmem.index import lexicon  # noqa: E402
from markmem.read import ended, facts  # noqa: E402

STEPS = ((ended, "marks"), (facts, "_about_another"), (facts, "_suggestion"), (facts, "_unmarked_first"))
OFF = {"marks": lambda *a, **k: {}, "_about_another": lambda *a, **k: False, "_suggestion": lambda *a, **k: False,
       "_unmarked_first": lambda out, within=None: out}
spent = [0.0]


def _timed(fn: Any) -> Any:
    def run(*a: Any, **k: Any) -> Any:
        c0 = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            spent[0] += time.process_time() - c0
    return run


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--only", help="time inside this one step only (the wrapper's own clock reads cost ~1 us a call)")
    args = ap.parse_args()
    real = {name: getattr(mod, name) for mod, name in STEPS}
    mem = Memory(args.repo, pii_engine="regex", vector_model="builtin", background=False)
    texts = sl.corpus(10000)
    mix = [q for pair in zip(sl.queries(texts, args.queries), sl.common_queries(args.queries), strict=False)
           for q in pair]
    mem.search(mix[0], user_id="bench")
    lexicon.wait_built()
    for q in mix[:100]:
        mem.search(q, user_id="bench")
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    inside: list[float] = []
    for r in range(args.rounds):
        for side in (("off", "on") if r % 2 == 0 else ("on", "off")):
            for mod, name in STEPS:
                wrap = _timed if args.only in (None, name) else (lambda f: f)
                setattr(mod, name, wrap(real[name]) if side == "on" else OFF[name])
            spent[0] = 0.0
            for q in mix:
                c0 = time.process_time()
                mem.search(q, user_id="bench", top_k=5)
                cpu[side].append((time.process_time() - c0) * 1000)
            if side == "on":
                inside.append(spent[0] * 1000 / len(mix))
    mem.close()
    for side in ("off", "on"):
        p50, mean = statistics.median(cpu[side]), statistics.fmean(cpu[side])
        print(f"steps {side:3}: cpu p50 {p50:.3f} ms, mean {mean:.3f} ms ({len(cpu[side])} searches)")
    print(f"inside the steps: {statistics.fmean(inside):.3f} ms cpu per search (rounds: "
          f"{', '.join(f'{x:.3f}' for x in inside)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
