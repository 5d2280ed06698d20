"""Benchmark lint and maintenance on a repo of N memories (default 100,000) built through Memory.add + flush.

    python bench/lifecycle.py [--memories 100000] [--users 1000] [--repo PATH] [--vectors]

Steps, each timed: build (add, then flush with one large batch), lint on the clean repo,
maintenance dry-run today (steady state: nothing to do), lint and lint --fix after 100 pages
got hand-edited prose, maintenance dry-run and apply 400 days later (decay everywhere, raw
retention of 365 days drops every raw file), the re-run (a no-op), lint afterwards.
With ``--vectors`` the near-duplicate pass runs too (the built-in model2vec model).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

from markmem import Memory
from markmem.lifecycle import lint, maintenance

CITIES = ["Paris", "Berlin", "Lisbon", "Oslo", "Lima", "Quito", "Austin", "Osaka", "Porto", "Riga"]
JOBS = ["teacher", "nurse", "designer", "chef", "pilot", "lawyer", "baker", "writer"]
THINGS = ["sushi", "jazz", "hiking", "chess", "tea", "coffee", "opera", "tennis", "kayaking", "poetry",
          "ramen", "salsa", "cycling", "yoga", "pottery", "sci-fi novels", "board games", "gardening",
          "science fiction novels", "hiking trips", "green tea", "board gaming"]  # near-duplicates
LANGS = ["French", "Spanish", "German", "Japanese", "Italian", "Portuguese"]
NAMES = ["Anna", "Ben", "Carla", "Dev", "Eli", "Fay", "Gus", "Hana"]
TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: f"I live in {r.choice(CITIES)}.",
    lambda r: f"I work as a {r.choice(JOBS)}.",
    lambda r: f"I love {r.choice(THINGS)}.",
    lambda r: f"I really like {r.choice(THINGS)}.",
    lambda r: f"I don't like {r.choice(THINGS)}.",
    lambda r: f"I speak {r.choice(LANGS)}.",
    lambda r: f"My sister is {r.choice(NAMES)}.",
    lambda r: f"I have a dog named {r.choice(NAMES)}.",
    lambda r: "Can you recommend a good book for the weekend?",
    lambda r: f"Remind me to call the dentist on day {r.randint(1, 28)}.",
]


def messages(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(TEMPLATES)(rng) for _ in range(n)]


@contextmanager
def timed(label: str, out: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    yield
    out[label] = time.perf_counter() - start
    print(f"{label:<44} {out[label]:9.2f} s", flush=True)


def build(mem: Memory, memories: int, users: int, times: dict[str, float]) -> None:
    rng = random.Random(7)
    per_user = memories // users
    with timed(f"build: add {memories:,} memories ({users} users)", times):
        for u in range(users):
            texts = messages(rng, per_user)
            for i in range(0, per_user, 25):
                mem.add(texts[i:i + 25], user_id=f"user{u:05d}")
    with timed("build: flush (compile, one commit per batch)", times):
        reports = mem.flush()
    print(f"    {len(reports)} batch(es), {sum(r.claims_added for r in reports):,} claims added, "
          f"{sum(r.claims_closed for r in reports):,} closed, {sum(r.reinforced for r in reports):,} reinforced")


def configure(root: Path) -> None:
    path = root / ".markmem/config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg.update({"half_life_days": {"preference": 180, "fact": 365}, "retention_days": {"raw": 365}})
    path.write_text(yaml.safe_dump(cfg))
    git(root, "commit", "-qam", "bench: lifecycle config")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def edit_prose(root: Path, n: int) -> None:
    pages = sorted((root / "wiki/u").rglob("*.md"))[:n]
    for p in pages:
        p.write_text(p.read_text() + "- a line a human added\n")
    git(root, "add", "-A", "wiki")
    git(root, "commit", "-qm", "bench: human edits")


def later(days: int) -> str:
    return (datetime.now(timezone.utc) + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run_lifecycle(mem: Memory, times: dict[str, float]) -> None:
    ctx = mem.context
    with timed("lint (clean repo)", times):
        report = lint(ctx)
    print(f"    {report.files:,} wiki files, {report.pages:,} pages, {len(report.issues)} issue(s) {report.counts()}")
    with timed("maintenance dry-run today (nothing to do)", times):
        plan: Any = maintenance(ctx, dry_run=True)
    print(f"    {plan.counts() or 'empty plan'}")
    edit_prose(mem.root, 100)
    with timed("lint (100 pages with drifted prose)", times):
        report = lint(ctx)
    print(f"    {report.counts()}")
    with timed("lint --fix (one commit)", times):
        report = lint(ctx, fix=True)
    print(f"    fixed {len(report.fixed)}, left {len(report.issues)}, commit {str(report.commit)[:12]}")
    when = later(400)
    with timed("maintenance dry-run at +400 days", times):
        plan = maintenance(ctx, dry_run=True, now=when)
    print(f"    {plan.counts()} on {len(plan.pages):,} pages, {len(plan.raw):,} raw files")
    with timed("maintenance at +400 days (one commit)", times):
        done: Any = maintenance(ctx, now=when)
    print(f"    commit {str(done.commit)[:12]}")
    with timed("maintenance re-run, same day (no-op)", times):
        again: Any = maintenance(ctx, now=when)
    print(f"    commit {again.commit}, plan empty: {again.plan.empty}")
    with timed("lint after maintenance", times):
        report = lint(ctx)
    print(f"    {len(report.issues)} issue(s) {report.counts()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--repo", type=Path, default=None, help="where to build (default: a temp dir)")
    parser.add_argument("--vectors", action="store_true", help="near-duplicate pass with the built-in model")
    args = parser.parse_args()
    root = args.repo or Path(tempfile.mkdtemp(prefix="markmem-bench-")) / "memory"
    print(f"repo: {root}")
    times: dict[str, float] = {}
    vector_model = "builtin" if args.vectors else None
    mem = Memory(root, pii_engine="regex", vector_model=vector_model, background=False, batch_size=args.memories)
    try:
        build(mem, args.memories, args.users, times)
        stats = mem.stats()
        print(f"    {stats['pages']:,} pages, {stats['claims']:,} claims ({stats['active_claims']:,} active), "
              f"{stats['raw_entries']:,} raw entries, .git {stats['git_bytes'] / 1e6:.0f} MB")
        configure(root)
        run_lifecycle(mem, times)
    finally:
        mem.close()


if __name__ == "__main__":
    main()
