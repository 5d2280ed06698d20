"""Search latency at scale: one user with N synthetic memories, hybrid search with query encoding.

Builds (or reuses) a repo per size through ``Memory.add()`` (100 turns per call) and ``flush()``,
with the regex PII gate and the default (built-in) vector model, then times:

* ``search(q, top_k=5)`` p50/p95 (json hits; BM25 + vectors + fusion, query encoding included);
* ``search(q, format="context")`` p50/p95 (a token-budgeted pack);
* the same over a common-term mix (``common_queries``: "Where does the user live?", "What does the
  user think about sushi?", "Which company does the user work at?" and their like), whose words
  match thousands of turns (a third of the turns hold such a clause);
* cold: fresh processes that import markmem, open the repo and search once, then again (import,
  ``Memory()`` open, first search after open, second search; median of ``--cold-runs``), apart from
  the warm figures of a process that has searched: once reading the lexicon, graph and vector
  matrix an earlier process saved beside the cache (the usual case), once rebuilding them, once
  after ``Memory.warm(user)`` at open (a server or handler that warms at start; the open figure
  then includes it, printed apart).

Turns are "Alex: ..." or "Sam: ..." lines of 6-18 content words (a Zipf-like vocabulary of ~20k
words, the commonest ~0.7% of content words) with filler words between. Queries name a speaker
and 2-4 content words of a random stored turn, like a LoCoMo question ("What did Sam say about
pottery glaze?"): the speaker's name matches half the rows, so pruning matters. Timings are
wall-clock per call after a warm-up, with CPU time beside them (a busy machine inflates the wall
clock more than the CPU time).

    python bench/search_latency.py                     # 500, 10k and 100k
    python bench/search_latency.py --sizes 10000 --queries 500 --root /tmp/mm-latency
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
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


# Chat-style statements with common words ("live", "work", "think", "user"): a third of the turns get
# one, so a question such as "Where does the user live?" matches thousands of rows at 10k.
PLACES = "Lisbon Porto Berlin Madrid Oslo Paris Tokyo London Denver Austin Dublin Prague".split()
COMPANIES = "Acme Globex Initech Umbrella Hooli Stark Wayne Wonka Tyrell Cyberdyne".split()
FOODS = "sushi ramen pizza tacos curry pasta falafel dumplings paella pho".split()
COMMON = (
    "I live in {place} now.", "We used to live near {place}.", "The user said they live close to {place}.",
    "I work at {company} as an engineer.", "My friend works at {company}.", "The user started work at {company}.",
    "I think {food} is great.", "What do you think about {food}?", "The user thinks {food} is overrated.",
    "Which company makes the best {food}?", "The user asked where to eat {food} in {place}.",
)
COMMON_QUERIES = ("Where does the user live?", "What does the user think about sushi?",
                  "Which company does the user work at?")


def common_clause(rng: random.Random) -> str:
    return rng.choice(COMMON).format(place=rng.choice(PLACES), company=rng.choice(COMPANIES), food=rng.choice(FOODS))


def corpus(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    vocab = vocabulary()
    weights = [1.0 / (i + 20) for i in range(len(vocab))]  # the top content word is ~0.7% of words
    texts = [sentence(rng, vocab, weights) for _ in range(n)]
    extra = random.Random(seed + 100)  # its own generator: the sentences above stay as they were
    return [f"{t} {common_clause(extra)}" if extra.random() < 1 / 3 else t for t in texts]


def build(root: Path, n: int, model: str | None, seed: int = 1) -> tuple[Memory, float, list[str]]:
    texts = corpus(n, seed)
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
    """LoCoMo-like questions about a random stored turn ("What did Sam say about pottery glaze?")."""
    rng = random.Random(seed)
    out = []
    for _ in range(k):
        words = [w.strip(".?") for w in rng.choice(texts).split()[1:] if w.strip(".?").lower() not in FILLER]
        pick = rng.sample(words, min(len(words), rng.randint(2, 4)))
        out.append(f"What did {rng.choice(SPEAKERS)} say about {' '.join(pick)}?")
    return out


def common_queries(k: int, seed: int = 3) -> list[str]:
    """The common-term mix: a chatbot's questions about its user (the three of issue #17, and the
    same shapes about other places, firms and foods), whose words match thousands of turns."""
    rng = random.Random(seed)
    shapes = ("Where does the user live?", "What does the user think about {food}?",
              "Which company does the user work at?", "Does the user live in {place}?",
              "Did the user work at {company}?", "What does the user think of {place}?")
    return [rng.choice(shapes).format(place=rng.choice(PLACES), company=rng.choice(COMPANIES),
                                      food=rng.choice(FOODS)) for _ in range(k)]


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


COLD = """
import sys, time
c0, t0 = time.process_time(), time.perf_counter()
from markmem import Memory
c1, t1 = time.process_time(), time.perf_counter()
mem = Memory(sys.argv[1], pii_engine="regex", vector_model=sys.argv[2] if sys.argv[2] != "-" else None,
             background=False)
c2, t2 = time.process_time(), time.perf_counter()
if sys.argv[5] == "rebuild":  # as the first process after a reindex: no saved lexicon, graph or matrix
    from markmem.index import lexstore, vectors  # numpy: counted with the first search, which loads it
    from markmem.read import graphstore
    lexstore.SAVE = graphstore.SAVE = vectors.SAVE = False
cw, tw = c2, t2
if sys.argv[5] == "warm":  # a server or handler that warms at start (Memory.warm): timed on its own
    mem.warm("bench")
    c2, t2 = time.process_time(), time.perf_counter()
mem.search(sys.argv[3], user_id="bench")
c3, t3 = time.process_time(), time.perf_counter()
mem.search(sys.argv[4], user_id="bench")
c4, t4 = time.process_time(), time.perf_counter()
print(*((b - a) * 1000 for a, b in ((t0, t1), (t1, t2), (t2, t3), (t3, t4), (c0, c1), (c1, c2), (c2, c3), (c3, c4),
                                    (tw, t2), (cw, c2))))
mem.close()
"""


def cold(root: Path, model: str | None, qs: list[str], runs: int, mode: str = "saved") -> list[list[float]]:
    """Fresh processes: (import, Memory() open, first search, second search) in ms, wall clock then
    CPU time, one row per run. ``mode``: "saved" (what an earlier process saved beside the cache is
    read back: the usual case), "rebuild" (nothing saved is read, as after a reindex) or "warm"
    (as "saved", with ``Memory.warm`` between open and the first search).

    One untimed process runs first (it writes what later ones read, and Python's bytecode cache),
    and the processes may write bytecode even when this one was started with
    PYTHONDONTWRITEBYTECODE: an installed package has its .pyc files, a source tree that is never
    allowed to write them compiles every module on every start (~0.5 s more to import)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = []
    for i in range(runs + 1):
        got = subprocess.run([sys.executable, "-c", COLD, str(root), model or "-", qs[2 * i], qs[2 * i + 1], mode],
                             capture_output=True, text=True, check=True, env=env)
        if i:
            out.append([float(x) for x in got.stdout.split()])
    return out


def report_cold(rows: list[list[float]], what: str) -> None:
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print(f"  cold, {what} (a fresh process, median of {len(rows)}; wall / cpu ms):")
    warm = f" (of which warm() {med[8]:.1f} / {med[9]:.1f})" if med[8] else ""
    print(f"       import {med[0]:.0f} / {med[4]:.0f}, Memory() open {med[1]:.1f} / {med[5]:.1f}{warm}, "
          f"first search {med[2]:.1f} / {med[6]:.1f}, second search {med[3]:.1f} / {med[7]:.1f}")
    # open and first search together (each run's sum, then the median): moving work from the first
    # search into open (or into warm(), which the open figure includes) does not lower this
    both = (statistics.median(r[1] + r[2] for r in rows), statistics.median(r[5] + r[6] for r in rows))
    print(f"       open + first search {both[0]:.1f} / {both[1]:.1f}")


def report(name: str, wall: list[float], cpu: list[float]) -> None:
    print(f"  {name:<22} p50 {pct(wall, 50):5.2f} ms  p95 {pct(wall, 95):5.2f} ms  "
          f"mean {statistics.fmean(wall):5.2f} ms  (cpu p50 {pct(cpu, 50):.2f} ms; {len(wall)} queries)")


def run(n: int, args: argparse.Namespace) -> None:
    root = Path(args.root) / f"n{n}" if args.root else Path(tempfile.mkdtemp(prefix=f"markmem-lat{n}-"))
    model = None if args.vector_model.lower() in ("none", "off") else args.vector_model
    mem, build_s, texts = build(root, n, model)
    qs = queries(texts, args.queries)
    common = common_queries(args.queries)
    mem.search(qs[0], user_id="bench")
    lexicon.wait_built()  # a repo built by this run: its in-memory indexes, as a long-running process has them
    for q in qs[: args.warmup] + common[: args.warmup // 5]:
        mem.search(q, user_id="bench")
    turns, claims = mem.context.cache.count("raw", "bench"), mem.context.cache.count("claims", "bench")
    print(f"n={n:>7} memories ({turns} turns, {claims} claims) built in {build_s:.1f} s; vectors: {model or 'off'}")
    print("  warm (the process has searched this user before):")
    report("search json", *timed(lambda q: mem.search(q, user_id="bench", top_k=5), qs))
    report("search context", *timed(lambda q: mem.search(q, user_id="bench", format="context"),
                                      qs[: max(50, len(qs) // 2)]))
    report("common-term json", *timed(lambda q: mem.search(q, user_id="bench", top_k=5), common))
    report("common-term context", *timed(lambda q: mem.search(q, user_id="bench", format="context"),
                                          common[: max(50, len(common) // 2)]))
    mix = [q for pair in zip(qs, common, strict=False) for q in pair]
    report("both mixes json", *timed(lambda q: mem.search(q, user_id="bench", top_k=5), mix))
    mem.close()
    report_cold(cold(root, model, qs, args.cold_runs), "reading what an earlier process saved")
    report_cold(cold(root, model, qs[2 * args.cold_runs + 2:], args.cold_runs, "rebuild"),
                "rebuilding it (as after a reindex)")
    report_cold(cold(root, model, qs[4 * args.cold_runs + 4:], args.cold_runs, "warm"),
                "after Memory.warm(user) at open (a server's or handler's start)")
    print(f"  machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="500,10000,100000", help="comma-separated memory counts")
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--cold-runs", type=int, default=5, help="fresh processes timed for the cold figures")
    ap.add_argument("--vector-model", default="builtin")
    ap.add_argument("--root", help="keep the repos here (n<size>/) and reuse them on the next run")
    args = ap.parse_args(argv)
    for n in (int(s) for s in args.sizes.split(",")):
        run(n, args)


if __name__ == "__main__":
    main()
