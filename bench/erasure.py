"""Benchmark erasure: scrub, rewrite (git-filter-repo) and crypto-shred, then verify-erasure.

One base repo is built twice (plain, and encrypted for shred): 100 users, 99 with 1,000
memories and one ("heavy") with 10,000, added over 10 rounds (every compiled batch, i.e. every
commit, touches every user: the worst case for a history rewrite), then ``git gc``. Each erasure
runs on a fresh copy of the base:

    A  forget a 1k-memory user in the ~110k-memory repo
    B  forget the 10k-memory user

Reported per run: forget() wall time (and its steps), .git size before/after, the verify result
(objects scanned, hits) and its time; a shred runs five times (median and max of the whole call,
and of the time until the key is gone). The erasure modules are imported before timing, as in a
long-running process. Targets: scrub <= 1 s, rewrite <= 30 s, shred <= 100 ms, zero hits.

    python bench/erasure.py [--scale 0.1] [--out bench/out/erasure.json] [--work DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from markmem import Memory
from markmem.erase import api as _erase  # noqa: F401  (imported up front: a server pays it once, not per call)
from markmem.erase import scrub as _scrub
from markmem.erase.rewrite import wait_for_gc

USERS = 100
PER_USER = 1_000
HEAVY = 10_000
ROUNDS = 10
PER_CALL = 50  # messages per add() call: one fsync each
BATCH = 5_000
SHRED_RUNS = 5  # a shred takes ~0.1 s: the median of a few runs, each on a fresh copy
WORDS = ("amber basil cedar dune ember fjord grove harbor iris juniper kelp lagoon meadow nectar orchid pebble "
         "quartz river saffron tundra umber violet willow yarrow zephyr anchor beacon canyon delta estuary falcon "
         "glacier heron island jetty kestrel lantern marble nomad oasis prairie quill raven summit thistle").split()
CITIES = "Lisbon Oslo Quito Hanoi Perth Tunis Riga Cusco Dakar Lima Porto Turku".split()


def memories(rng: random.Random, user: str, start: int, n: int) -> list[dict[str, str]]:
    """Varied turns: chat that yields no fact, multi-valued likes, and facts that supersede."""
    out = []
    for i in range(start, start + n):
        w = rng.sample(WORDS, 6)
        tag = f"{user}-{i}-{rng.getrandbits(32):08x}"
        roll = rng.random()
        if roll < 0.6:
            text = f"Yesterday we walked past the {w[0]} {w[1]} and the {w[2]} {w[3]} ({tag}), what a day."
        elif roll < 0.9:
            text = f"I like {w[0]} {w[1]} {tag}."
        else:
            text = f"I live in {rng.choice(CITIES)} near the {w[4]} {w[5]} {tag}."
        out.append({"role": "user", "content": text})
    return out


def build(path: Path, encrypted: bool, scale: float, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    users = {f"user{u:03d}": round(PER_USER * scale) for u in range(1, USERS)}
    users["heavy"] = round(HEAVY * scale)
    mem = Memory(path, pii_engine="regex", vector_model=None, background=False, batch_size=BATCH,
                 encryption=encrypted)
    t_add = t_flush = 0.0
    done = dict.fromkeys(users, 0)
    try:
        for r in range(ROUNDS):
            t0 = time.perf_counter()
            for user, total in users.items():
                want = total * (r + 1) // ROUNDS - done[user]
                for k in range(0, want, PER_CALL):
                    mem.add(memories(rng, user, done[user] + k, min(PER_CALL, want - k)), user_id=user)
                done[user] += want
            t1 = time.perf_counter()
            mem.flush()
            t2 = time.perf_counter()
            t_add += t1 - t0
            t_flush += t2 - t1
            print(f"  round {r + 1}/{ROUNDS}: {sum(done.values()):,} memories, add {t1 - t0:.1f}s, "
                  f"flush {t2 - t1:.1f}s", flush=True)
    finally:
        mem.close()
    t0 = time.perf_counter()
    wait_for_gc(path)  # commits may have started a detached auto-gc
    subprocess.run(["git", "-C", str(path), "gc", "-q"], check=True)
    return {"memories": sum(done.values()), "users": len(users), "add_s": round(t_add, 1),
            "flush_s": round(t_flush, 1), "gc_s": round(time.perf_counter() - t0, 1),
            "commits": int(_git(path, "rev-list", "--count", "HEAD")), "git_bytes": du(path / ".git"),
            "files": sum(1 for p in path.rglob("*") if p.is_file() and ".git" not in p.parts)}


def erase(base: Path, work: Path, user: str, mode: str) -> dict[str, Any]:
    repo = work / f"{mode}-{user}"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(base, repo, symlinks=True)
    mem = Memory(repo, pii_engine="regex", vector_model=None, background=False)
    try:
        before = du(repo / ".git")
        entries = mem.context.cache.count("raw", user)
        t0 = time.perf_counter()
        report = mem.forget(user, mode)
        wall = time.perf_counter() - t0
        after = du(repo / ".git")
        t1 = time.perf_counter()
        check = report.verify if report.verify is not None else mem.verify_erasure(user)
        verify_s = report.timings_ms.get("verified", 0) / 1000 - report.timings_ms.get("rewritten", 0) / 1000 \
            if report.verify is not None else time.perf_counter() - t1
        others = mem.search("Lisbon", user_id="user050" if user != "user050" else "user051")
    finally:
        mem.close()
        _scrub.wait_deleted()
    return {
        "user": user, "mode": mode, "memories": entries, "forget_s": round(wall, 3),
        "steps_ms": report.timings_ms, "git_bytes_before": before, "git_bytes_after": after,
        "verify": {"ok": check.ok, "hits": check.hits, "objects": check.objects_scanned,
                   "bytes": check.bytes_scanned, "fingerprints": check.fingerprints,
                   "blobs_checked": check.blobs_checked, "retained": check.retained,
                   "seconds": round(verify_s, 2)},
        "other_user_search_hits": len(others),
    }


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the memories per user (default 1.0)")
    ap.add_argument("--out", type=Path, default=Path("bench/out/erasure.json"))
    ap.add_argument("--work", type=Path, default=None, help="where repos are built (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the repos")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="markmem-erasure-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"scale": args.scale, "builds": {}, "runs": []}
    try:
        for name, encrypted in (("plain", False), ("encrypted", True)):
            base = work / f"base-{name}"
            if not (base / ".git").exists():
                print(f"building {name} base repo in {base}", flush=True)
                results["builds"][name] = build(base, encrypted, args.scale)
                print(f"  {results['builds'][name]}", flush=True)
            modes = ("scrub", "rewrite") if not encrypted else ("shred",)
            for user in ("user001", "heavy"):
                for mode in modes:
                    runs = [erase(base, work, user, mode) for _ in range(SHRED_RUNS if mode == "shred" else 1)]
                    results["runs"] += runs
                    for run in runs:
                        print(_line(run), flush=True)
                    if len(runs) > 1:
                        summary = _summary(runs)
                        results.setdefault("summary", []).append(summary)
                        print(f"  {mode} {user}: whole call median {summary['median_ms']} ms, max "
                              f"{summary['max_ms']} ms; key gone median {summary['key_median_ms']} ms "
                              f"({len(runs)} runs)", flush=True)
    finally:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"results: {args.out}")
    return 0 if all(r["verify"]["hits"] == 0 or r["mode"] == "scrub" for r in results["runs"]) else 1


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    calls = [r["forget_s"] * 1000 for r in runs]
    keys = [r["steps_ms"].get("key", 0.0) for r in runs]
    return {"mode": runs[0]["mode"], "user": runs[0]["user"], "runs": len(runs),
            "median_ms": round(statistics.median(calls), 1), "max_ms": round(max(calls), 1),
            "key_median_ms": round(statistics.median(keys), 1)}


def _line(r: dict[str, Any]) -> str:
    v = r["verify"]
    key = f", key gone after {r['steps_ms'].get('key', 0):.0f} ms" if r["mode"] == "shred" else ""
    return (f"  {r['mode']:>7} {r['user']:>7} ({r['memories']:,} memories): {r['forget_s']:.3f} s{key}; "
            f".git {r['git_bytes_before'] / 1e6:.1f} -> {r['git_bytes_after'] / 1e6:.1f} MB; verify "
            f"{'OK' if v['ok'] else 'FOUND'} {v['hits']} hits in {v['objects']:,} objects ({v['seconds']} s)")


if __name__ == "__main__":
    sys.exit(main())
