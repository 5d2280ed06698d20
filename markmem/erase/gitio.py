"""Byte-level git plumbing for erasure: blobs under a user's paths, in any ref or reflog.

``markmem.store.git.Git.run`` decodes output as text; erasure reads object bytes, so it uses these.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import RepoError

ENV = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


def git_cmd(*args: str) -> list[str]:
    return ["git", "-c", "core.quotepath=off", *args]


def run_bytes(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    proc = subprocess.run(git_cmd(*args), cwd=root, input=input, capture_output=True, env=ENV)
    if check and proc.returncode != 0:
        raise RepoError(f"git {args[0]} failed: {proc.stderr.decode('utf-8', 'replace').strip()[:500]}")
    return proc.stdout


def prefixes(user_id: str) -> tuple[str, str]:
    return (f"wiki/u/{user_id}/", f"raw/u/{user_id}/")


def in_footprint(path: str, user_id: str) -> bool:
    return any(path.startswith(p) or path == p[:-1] for p in prefixes(user_id))


def reachable_paths(root: Path, user_id: str) -> list[tuple[str, str]]:
    """(object id, path) of every object under the user's folders reachable from any ref or reflog."""
    out = run_bytes(root, "rev-list", "--all", "--reflog", "--objects", "--",
                    *(p.rstrip("/") for p in prefixes(user_id)), check=False)
    found = []
    for line in out.decode("utf-8", "replace").splitlines():
        sha, _, path = line.partition(" ")
        if path and in_footprint(path, user_id):
            found.append((sha, path))
    return found


def paths_of(root: Path, shas: set[str]) -> dict[str, str]:
    """Where reachable objects live (first path seen), for reporting hits."""
    if not shas:
        return {}
    out = run_bytes(root, "rev-list", "--all", "--reflog", "--objects", check=False)
    found: dict[str, str] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        sha, _, path = line.partition(" ")
        if sha in shas and sha not in found:
            found[sha] = path
    return found


def cat_blobs(root: Path, shas: Iterable[str]) -> Iterator[tuple[str, bytes]]:
    """(object id, content) for each blob among ``shas`` (other object types are skipped)."""
    request = "".join(f"{s}\n" for s in dict.fromkeys(shas)).encode("ascii")
    if not request:
        return
    proc = subprocess.Popen(git_cmd("cat-file", "--batch"), cwd=root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(request)
        finally:
            proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        while header := proc.stdout.readline():
            parts = header.split()
            if len(parts) != 3:  # "<sha> missing"
                continue
            data = proc.stdout.read(int(parts[2]) + 1)[:-1]
            if parts[1] == b"blob":
                yield parts[0].decode("ascii"), data
    finally:
        writer.join()
        proc.stdout.close()
        proc.wait()


def object_format(root: Path) -> str:
    """``sha1`` or ``sha256``: how this repository names objects."""
    out = run_bytes(root, "rev-parse", "--show-object-format", check=False).decode().strip()
    return out if out in ("sha1", "sha256") else "sha1"


def present(root: Path, oids: Iterable[str]) -> list[str]:
    """The object ids among ``oids`` that exist in the repository (loose or packed)."""
    request = "".join(f"{o}\n" for o in oids).encode("ascii")
    if not request:
        return []
    out = run_bytes(root, "cat-file", "--batch-check=%(objectname) %(objecttype)", input=request, check=False)
    return [line.split()[0] for line in out.decode("ascii", "replace").splitlines()
            if line and not line.endswith(" missing")]


def remotes(root: Path) -> list[str]:
    out = run_bytes(root, "remote", check=False).decode("utf-8", "replace")
    return [r for r in out.split() if r]


def stash_count(root: Path) -> int:
    out = run_bytes(root, "reflog", "show", "--format=%H", "refs/stash", check=False)
    return len(out.split())
