"""Search latency at scale: one user with N synthetic memories, hybrid search with query encoding.

Builds (or reuses) a repo per size through ``Memory.add()`` (100 turns per call) and ``flush()``,
with the regex PII gate and the default (built-in) vector model, then times:

* ``search(q, top_k=5)`` p50/p95 (json hits; BM25 + vectors + fusion, query encoding included);
* ``search(q, format="context")`` p50/p95 (a token-budgeted pack).

Turns are "Alex: ..." or "Sam: ..." lines of 6-18 content words (a Zipf-like vocabulary of ~20k
words, the commonest ~0.7% of content words) with filler words between. Queries name a speaker
and 2-4 content words of a random stored turn, like a LoCoMo question ("What did Sam say about
pottery glaze?"): the speaker's name matches half the rows, so pruning matters. Timings are
wall-clock per call after a warm-up, with CPU time beside them (a busy machine inflates the wall
clock, not the CPU time); the first search of a user loads the vector matrix and starts building its in-memory
index in the background (SQLite ranks until it is ready): both reported apart.

    python bench/search_latency.py                     # 10k and 100k
    python bench/search_latency.py --sizes 10000 --queries 500 --root /tmp/mm-latency
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from markmem import Memory  # noqa: E402
from markmem.index import lexicon  # noqa: E402

SPEAKERS = ("Alex", "Sam")
FILLER = "i you the a to and of it that in my was is for on with so but we just".split()
TOPICS = (
    "hiking trip mountains trail weekend camping tent lake sunrise photos backpack boots "
    "pottery class bowl clay glaze kiln vase studio teacher painting canvas brush colors sunset "
    "adoption agency interview family kids school homework soccer practice piano lessons violin "
    "recipe cooking dinner pasta garlic tomato sauce bakery bread sourdough coffee espresso "
    "marathon running training shoes injury knee doctor physio recovery gym yoga stretching "
    "guitar concert band festival tickets music album vinyl record playlist singer "
    "garden tomatoes roses soil compost seeds greenhouse flowers tulips "
    "job interview manager promotion project deadline meeting office startup investors pitch "
    "dog puppy walk park leash vet cat kitten turtle aquarium fish parrot "
    "book novel fantasy series author library reading chapter poetry writing journal "
    "travel flight airport hotel beach island museum castle city paris tokyo london visa passport "
    "car engine repair mechanic bike helmet commute train ticket station "
    "birthday party cake gift surprise wedding anniversary dinner restaurant reservation "
    "volunteer shelter charity donation community center youth mentor workshop conference"
).split()


def vocabulary(n: int = 20000, seed: int = 7) -> list[str]:
    """Topic words first (frequent), then made-up rarer words: a Zipf-like vocabulary."""
    rng = random.Random(seed)
    rare = {"".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))
            for _ in range(n)}
    return list(TOPICS) + sorted(rare)


def sentence(rng: random.Random, vocab: list[str], weights: list[float]) -> str:
    words = rng.choices(vocab, weights=weights, k=rng.randint(6, 18))
    out = []
    for w in words:
        out.append(w)
        if rng.random() < 0.6:
            out.append(rng.choice(FILLER))
    end = "?" if rng.random() < 0.25 else "."
    return f"{rng.choice(SPEAKERS)}: {' '.join(out).capitalize()}{end}"


def build(root: Path, n: int, model: str | None, seed: int = 1) -> tuple[Memory, float, list[str]]:
    rng = random.Random(seed)
    vocab = vocabulary()
    weights = [1.0 / (i + 20) for i in range(len(vocab))]  # the top content word is ~0.7% of words
    texts = [sentence(rng, vocab, weights) for _ in range(n)]
    fresh = not (root / ".markmem").exists()
    t0 = time.perf_counter()
    mem = Memory(root, pii_engine="regex", vector_model=model, background=False, batch_size=5000)
    if fresh:
        for i in range(0, n, 100):
            day = f"2025-{1 + (i // 100) % 12:02d}-{1 + (i // 1200) % 28:02d}T10:00:00Z"
            mem.add([{"role": "user", "content": t} for t in texts[i:i + 100]], user_id="bench", occurred_at=day)
        mem.flush()
    return mem, time.perf_counter() - t0, texts


def queries(texts: list[str], k: int, seed: int = 2) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(k):
        words = [w.strip(".?") for w in rng.choice(texts).split()[1:] if w.strip(".?").lower() not in FILLER]
        pick = rng.sample(words, min(len(words), rng.randint(2, 4)))
        out.append(f"What did {rng.choice(SPEAKERS)} say about {' '.join(pick)}?")
    return out


def timed(fn, qs: list[str]) -> tuple[list[float], list[float]]:  # type: ignore[no-untyped-def]
    """Wall-clock and CPU milliseconds per call (CPU time is what a busy machine cannot inflate)."""
    wall, cpu = [], []
    for q in qs:
        c0, t0 = time.process_time(), time.perf_counter()
        fn(q)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return wall, cpu


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def run(n: int, args: argparse.Namespace) -> None:
    root = Path(args.root) / f"n{n}" if args.root else Path(tempfile.mkdtemp(prefix=f"markmem-lat{n}-"))
    model = None if args.vector_model.lower() in ("none", "off") else args.vector_model
    mem, build_s, texts = build(root, n, model)
    qs = queries(texts, args.queries)
    t0 = time.perf_counter()
    mem.search(qs[0], user_id="bench")
    first = (time.perf_counter() - t0) * 1000
    lexicon.wait_built()  # a big user's in-memory index is built in the background after that search
    ready = time.perf_counter() - t0
    for q in qs[: args.warmup]:
        mem.search(q, user_id="bench")
    hybrid, hybrid_cpu = timed(lambda q: mem.search(q, user_id="bench", top_k=5), qs)
    packs, packs_cpu = timed(lambda q: mem.search(q, user_id="bench", format="context"), qs[: max(50, len(qs) // 2)])
    turns, claims = mem.context.cache.count("raw", "bench"), mem.context.cache.count("claims", "bench")
    mem.close()
    print(f"n={n:>7} memories ({turns} turns, {claims} claims) build {build_s:.1f} s, first search {first:.1f} ms "
          f"(in-memory index ready in the background after {ready:.1f} s)")
    print(f"  search json    p50 {pct(hybrid, 50):.2f} ms  p95 {pct(hybrid, 95):.2f} ms  mean "
          f"{statistics.fmean(hybrid):.2f} ms  (cpu p50 {pct(hybrid_cpu, 50):.2f} ms; {len(hybrid)} queries, "
          f"vectors: {model or 'off'})")
    print(f"  search context p50 {pct(packs, 50):.2f} ms  p95 {pct(packs, 95):.2f} ms  "
          f"(cpu p50 {pct(packs_cpu, 50):.2f} ms)")
    print(f"  machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts")
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--vector-model", default="builtin")
    ap.add_argument("--root", help="keep the repos here (n<size>/) and reuse them on the next run")
    args = ap.parse_args(argv)
    for n in (int(s) for s in args.sizes.split(",")):
        run(n, args)


if __name__ == "__main__":
    main()
