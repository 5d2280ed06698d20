"""Git plumbing for the memory repo: init, commit with trailers, log. Runs the git CLI."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..errors import RepoError

_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}


class Git:
    def __init__(self, root: Path, author: tuple[str, str] = ("markmem", "markmem@localhost")) -> None:
        self.root = root
        self.author = author
        self._env = {**os.environ, **_ENV}

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> str:
        name, email = self.author
        cmd = ["git", "-c", f"user.name={name}", "-c", f"user.email={email}",
               "-c", "commit.gpgsign=false", "-c", "core.quotepath=off", *args]
        proc = subprocess.run(cmd, cwd=self.root, input=input, capture_output=True, env=self._env)
        if check and proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise RepoError(f"git {args[0]} failed: {err[:500]}")
        return proc.stdout.decode("utf-8", "replace")

    def is_repo(self) -> bool:
        return (self.root / ".git").exists()

    def init(self) -> None:
        self.run("init", "-q", "-b", "main")

    def head(self) -> str | None:
        out = self.run("rev-parse", "--verify", "-q", "HEAD", check=False).strip()
        return out or None

    def commit(self, paths: Iterable[str], message: str, *, allow_empty: bool = False) -> str | None:
        """Stage exactly ``paths`` (added, changed or deleted) and commit. None if nothing changed."""
        spec = "\0".join(sorted(set(paths)))
        if spec:  # update-index is ~500x faster than `git add --pathspec-from-file` for many paths
            self.run("update-index", "--add", "--remove", "-z", "--stdin", input=(spec + "\0").encode())
        args = ["commit", "-q", "--no-verify", "--no-status", "-F", "-"]
        if allow_empty:
            args.append("--allow-empty")
        name, email = self.author
        proc = subprocess.run(
            ["git", "-c", f"user.name={name}", "-c", f"user.email={email}", "-c", "commit.gpgsign=false", *args],
            cwd=self.root, input=message.encode("utf-8"), capture_output=True, env=self._env,
        )
        if proc.returncode != 0:
            if b"nothing to commit" in proc.stdout + proc.stderr or b"nothing added" in proc.stdout + proc.stderr:
                return None
            raise RepoError(f"git commit failed: {proc.stderr.decode('utf-8', 'replace').strip()[:500]}")
        return self.head()

    def clear_stale_locks(self) -> list[str]:
        """Remove lock files a killed markmem process left behind. Call only under the writer lock."""
        gitdir = self.root / ".git"
        stale = [gitdir / "index.lock", gitdir / "HEAD.lock", *gitdir.joinpath("refs", "heads").glob("*.lock")]
        removed = []
        for path in stale:
            if path.exists():
                path.unlink(missing_ok=True)
                removed.append(path.name)
        return removed

    def dirty_paths(self, prefixes: Sequence[str]) -> list[str]:
        out = self.run("status", "--porcelain", "-z", "--untracked-files=all", "--", *prefixes)
        paths = []
        for item in out.split("\0"):
            if len(item) > 3:
                paths.append(item[3:])
        return paths

    def changed_since(self, rev: str) -> list[str] | None:
        out = self.run("diff", "--name-only", "-z", rev, "HEAD", check=False)
        if not out and self.run("cat-file", "-t", rev, check=False).strip() != "commit":
            return None
        return [p for p in out.split("\0") if p]


def message(subject: str, trailers: Mapping[str, str], body: str = "") -> str:
    """A commit message with git trailers, e.g. ``Markmem-Op: compile``. Never put user text here."""
    lines = [subject, ""]
    if body:
        lines += [body, ""]
    lines += [f"{k}: {v}" for k, v in trailers.items()]
    return "\n".join(lines) + "\n"
