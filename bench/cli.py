"""Cold-start time of each ``markmem`` command: a fresh process per run, default settings.

Builds a small repo (one user, a few turns, through the CLI itself), then runs each command
``--runs`` times in a new Python process and prints the median and max wall-clock seconds.
Read-only commands must not load the Presidio gate (it loads on the first write), so they start
in about a second; ``add`` pays for the gate (spaCy) once per process.

    python bench/cli.py                 # 3 runs per command
    python bench/cli.py --runs 5 --root /tmp/mm-cli
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TURNS = ("I live in Lisbon and work as a nurse", "I prefer aisle seats on long flights",
         "My sister Ana has two cats", "I'm allergic to peanuts")


def markmem(repo: Path | None, *args: str) -> float:
    """Seconds for one ``markmem ARGS [--repo REPO]`` in a new process (raises if it fails)."""
    start = time.perf_counter()
    where = ("--repo", str(repo)) if repo else ()
    subprocess.run([sys.executable, "-m", "markmem.cli", *args, *where], check=True,
                   stdout=subprocess.DEVNULL, env=_env())
    return time.perf_counter() - start


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    here = str(Path(__file__).resolve().parents[1])  # this checkout's markmem, not an installed one
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    return env


COMMANDS: list[tuple[str, ...]] = [
    ("--help",),
    ("search", "Lisbon", "--user", "bob"),
    ("search", "where does bob live", "--user", "bob", "--context"),
    ("list", "--user", "bob"),
    ("stats",),
    ("doctor",),
    ("history", "--user", "bob"),
    ("review", "list"),
    ("export", "--to", "jsonl"),
    ("add", "I moved to Porto", "--user", "bob", "--no-flush"),
    ("flush",),
]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--root", type=Path, default=None, help="where to build the repo (default: a temp dir)")
    a = p.parse_args()
    root = a.root or Path(tempfile.mkdtemp(prefix="mm-cli-"))
    repo = root / "memory"
    markmem(None, "init", str(repo))
    for turn in TURNS:
        markmem(repo, "add", turn, "--user", "bob")
    print(f"{'command':<48} {'median s':>9} {'max s':>7}   ({a.runs} runs, repo {repo})")
    for args in COMMANDS:
        times = [markmem(None if args[0] == "--help" else repo, *args) for _ in range(a.runs)]
        print(f"{' '.join(args):<48} {statistics.median(times):>9.2f} {max(times):>7.2f}")


if __name__ == "__main__":
    main()
