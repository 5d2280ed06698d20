"""Why three packages of the original design are not dependencies: each measured against what markmem does.

* GitPython vs ``store.git.Git.commit`` (fast-import): N commits of a compile-sized batch (3 pages
  and a raw file changed), in two fresh repos.
* python-frontmatter vs ``store.pages.split_frontmatter``: parse the same page text N times.
* sqlite-utils: its import time (markmem talks to sqlite3 directly).

Needs the optional packages (``pip install gitpython python-frontmatter sqlite-utils``); they are
not markmem dependencies.

    python bench/deps.py [--commits 50] [--pages 2000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from markmem.model import Claim, Page
from markmem.store.git import Git
from markmem.store.pages import dump_page, split_frontmatter


def _repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for k, v in (("user.name", "b"), ("user.email", "b@example.com")):
        subprocess.run(["git", "-C", str(root), "config", k, v], check=True)
    return root


def _change(root: Path, i: int) -> list[str]:
    paths = [f"wiki/u/bob/profile/p{j}.md" for j in range(3)] + ["raw/u/bob/2026/01/01.jsonl"]
    for rel in paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(root / rel, "a") as fh:
            fh.write(f"line {i}\n")
    return paths


def commits(n: int) -> tuple[float, float]:
    import git as gitpython

    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = _repo(Path(tmp) / "ours"), _repo(Path(tmp) / "theirs")
        g = Git(ours)
        start = time.perf_counter()
        for i in range(n):
            g.commit(_change(ours, i), f"compile {i}")
        t_ours = (time.perf_counter() - start) / n
        repo = gitpython.Repo(theirs)
        start = time.perf_counter()
        for i in range(n):
            repo.index.add(_change(theirs, i))
            repo.index.commit(f"compile {i}")
        t_theirs = (time.perf_counter() - start) / n
    return t_ours, t_theirs


def parse(n: int) -> tuple[float, float]:
    import frontmatter

    stamp = "2026-01-01T00:00:00Z"
    claims = tuple(Claim(f"c-{i:04x}", "bob", "likes", f"v{i}", f"I like v{i}", recorded_at=stamp, valid_from=stamp)
                   for i in range(8))
    text = dump_page(Page("u/bob/preference/likes", "preference", "bob", "likes", stamp, stamp, claims,
                          body="- I like v1\n"))
    start = time.perf_counter()
    for _ in range(n):
        split_frontmatter(text, "x.md")
    t_ours = (time.perf_counter() - start) / n
    start = time.perf_counter()
    for _ in range(n):
        frontmatter.loads(text)
    return t_ours, (time.perf_counter() - start) / n


def import_time(module: str) -> float:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                         text=True, check=True).stderr
    return int(out.strip().splitlines()[-1].split("|")[1]) / 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--commits", type=int, default=50)
    p.add_argument("--pages", type=int, default=2000)
    a = p.parse_args()
    ours, theirs = commits(a.commits)
    print(f"commit (4 files):  markmem fast-import {ours * 1e3:.1f} ms   "
          f"GitPython index.add+commit {theirs * 1e3:.1f} ms")
    ours, theirs = parse(a.pages)
    print(f"parse a page:      markmem {ours * 1e6:.0f} us   python-frontmatter {theirs * 1e6:.0f} us")
    print(f"import sqlite_utils: {import_time('sqlite_utils') * 1e3:.0f} ms (markmem uses sqlite3 directly)")


if __name__ == "__main__":
    main()
