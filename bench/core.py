"""Core write-path benchmarks (issue 2). Prints figures; asserts nothing.

    python bench/core.py                 # add latency, compile 1k/10k, 100 users x 1k, git size, reindex
    python bench/core.py --big           # also compile at 100k for one user (several minutes)
    python bench/core.py --only users    # one part only (add, compile, users, pages; repeatable)

Machine caveat: 2 shared cores; compare ratios within one run rather than absolute times. The users
part also prints the CPU time of this process and of its children (git) while compiling, which other
jobs on the machine do not inflate the way they do the wall clock.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from markmem import Memory

CITIES = ["Lisbon", "Porto", "Berlin", "Paris", "Tokyo", "Oslo", "Lima", "Quito", "Accra", "Hanoi"] * 5
JOBS = ["pilot", "nurse", "teacher", "chef", "designer", "lawyer", "farmer", "baker", "editor", "coach"]
THINGS = ["hiking", "jazz", "chess", "sushi", "gardening", "cycling", "poetry", "tennis", "yoga", "opera"]
CHAT = ["lol that movie was wild", "what do you think about the weather today?", "thanks, that helps a lot",
        "can you remind me what we said about the trip?", "ok sounds good", "haha yes exactly",
        "I had a long day at work honestly", "let's talk about something else"]


def message(rng: random.Random, i: int) -> str:
    kind = rng.random()
    if kind < 0.5:
        return rng.choice(CHAT) + f" ({i})"
    if kind < 0.6:
        return f"I live in {rng.choice(CITIES)}"
    if kind < 0.7:
        return f"I work as a {rng.choice(JOBS)}"
    if kind < 0.85:
        return f"I love {rng.choice(THINGS)} and {rng.choice(THINGS)}"
    return f"My favorite number is {rng.randint(1, 10_000)}"


def open_mem(path: Path, **kw: object) -> Memory:
    return Memory(path, pii_engine="regex", vector_model=None, background=False, batch_size=1000, **kw)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def bench_add(tmp: Path, n: int = 2000) -> None:
    mem = open_mem(tmp / "add")
    rng = random.Random(1)
    times = []
    for i in range(n):
        text = message(rng, i)
        t = time.perf_counter()
        mem.add(text, user_id="alice")
        times.append((time.perf_counter() - t) * 1000)
    mem.close()
    print(f"add() regex gate + fsync, n={n}: p50 {statistics.median(times):.3f} ms  p95 {pct(times, 95):.3f} ms")


def fill(mem: Memory, users: list[str], per_user: int, rng: random.Random, cpu: list[float] | None = None) -> float:
    """Add then flush; returns compile seconds (flush only). ``cpu`` gets [own, children] CPU seconds added."""
    for i in range(per_user):
        for u in users:
            mem.add(message(rng, i), user_id=u)
    t, before = time.perf_counter(), os.times()
    mem.flush()
    took, after = time.perf_counter() - t, os.times()
    if cpu is not None:
        cpu[0] += after.user + after.system - before.user - before.system
        cpu[1] += after.children_user + after.children_system - before.children_user - before.children_system
    return took


def bench_compile(tmp: Path, sizes: list[int]) -> None:
    """The rate of a 1k-memory batch at each size: the median of the last three batches up to N
    (at N=1k, of three fresh repos), so one noisy batch does not decide the flatness figure."""
    rates = {}
    for n in sizes:
        path = tmp / f"c{n}"
        step, reps = 1000, 3
        times = []
        if n <= step:
            for r in range(reps):
                with open_mem(tmp / f"c{n}-{r}") as fresh:
                    times.append(fill(fresh, ["alice"], step, random.Random(n + r)))
        mem = open_mem(path)
        rng = random.Random(n)
        done = 0
        while done < n:  # grow to n; time the last three 1k-memory batches
            took = fill(mem, ["alice"], step, rng)
            done += step
            if n > step and done > n - reps * step:
                times.append(took)
        rates[n] = step / statistics.median(times)
        stats = mem.stats()
        mem.close()
        size = sum(p.stat().st_size for p in (path / ".git").rglob("*") if p.is_file()) / 1e6
        print(f"compile one user at N={n:>6}: {rates[n]:8.0f} memories/s (median 1k batch at that size) "
              f"(pages {stats['pages']}, commits {stats['commits']}, .git {size:.1f} MB)")
        if n == 10_000:
            subprocess.run(["git", "-C", str(path), "gc", "-q"], check=True)
            packed = sum(p.stat().st_size for p in (path / ".git").rglob("*") if p.is_file()) / 1e6
            print(f"  .git after 10k memories: {size:.1f} MB loose, {packed:.1f} MB after git gc; "
                  f"{stats['commits']} commits")
    if len(rates) > 1:
        first, last_n = min(rates), max(rates)
        print(f"  flatness: rate at {last_n} / rate at {first} = {rates[last_n] / rates[first]:.2f}")


def bench_users(tmp: Path, users: int = 100, per_user: int = 1000) -> None:
    mem = open_mem(tmp / "users")
    rng = random.Random(7)
    ids = [f"user{i:03d}" for i in range(users)]
    total, cpu = 0.0, [0.0, 0.0]
    for _chunk in range(0, per_user, 100):
        total += fill(mem, ids, 100, rng, cpu)
    mem.close()
    n = users * per_user
    print(f"compile {users} users x {per_user}: {n / total:8.0f} memories/s "
          f"({n} memories, {total:.1f} s compiling; CPU {cpu[0]:.1f} s + git {cpu[1]:.1f} s = "
          f"{n / (cpu[0] + cpu[1]):,.0f} memories per CPU-second)", flush=True)
    bench_reindex(tmp / "users")


def bench_reindex(path: Path) -> None:
    mem = open_mem(path)
    t = time.perf_counter()
    report = mem.reindex()
    dt = time.perf_counter() - t
    mem.close()
    print(f"reindex: {report.pages} pages + {report.raw} raw entries in {dt:.2f} s = "
          f"{report.pages / dt:,.0f} pages/s ({(report.pages + report.raw) / dt:,.0f} units/s)")


def bench_reindex_pages(tmp: Path, n: int = 10_000) -> None:
    """A page-heavy repo (every memory a distinct multi-valued fact): the pages stage alone."""
    mem = open_mem(tmp / "pages")
    for i in range(n):
        mem.add(f"I love hobby{i} and I live in town{i % 7}", user_id=f"u{i % 20}")
    t = time.perf_counter()
    mem.flush()
    compile_s = time.perf_counter() - t
    marks: dict[str, float] = {}

    def tick(stage: str, done: int, total: int) -> None:
        marks.setdefault(stage, time.perf_counter())
        marks[stage + "_end"] = time.perf_counter()

    t = time.perf_counter()
    report = mem.reindex(progress=tick)
    total = time.perf_counter() - t
    mem.close()
    stage = marks["pages_end"] - marks["pages"]
    print(f"page-heavy repo ({n} memories, 20 users): compile {n / compile_s:,.0f} memories/s; reindex "
          f"{report.pages} pages + {report.raw} raw in {total:.2f} s = {report.pages / total:,.0f} pages/s overall, "
          f"{report.pages / stage:,.0f} pages/s in the pages stage")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="include N=100k for one user")
    ap.add_argument("--only", choices=["add", "compile", "users", "pages"], action="append",
                    help="run only these parts (repeatable)")
    args = ap.parse_args()
    only = set(args.only or ["add", "compile", "users", "pages"])
    tmp = Path(tempfile.mkdtemp(prefix="markmem-bench-"))
    try:
        if "add" in only:
            bench_add(tmp)
        if "compile" in only:
            bench_compile(tmp, [1000, 10_000, 100_000] if args.big else [1000, 10_000])
        if "users" in only:
            bench_users(tmp)
        if "pages" in only:
            bench_reindex_pages(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
