"""Purge a user from all history with git-filter-repo (a declared dependency).

filter-repo works on its current directory, so it runs in a child process
(``python -m markmem.erase.rewrite USER TOKEN`` in the repo) with:

* ``--invert-paths --path wiki/u/<id>/ --path raw/u/<id>/``: the user's folders leave every commit
  of every ref (branches, tags, remote-tracking refs, stashes); commits left empty are pruned;
* a message callback: the id leaves ``Markmem-*`` trailers and ``u/<id>`` references;
* a file-info callback: ops records naming the user get the token instead, in every version;
* ``--sensitive-data-removal --no-fetch``: keep the ``origin`` remote configured (no network);
* then filter-repo's own cleanup: ``reset --hard``, ``reflog expire --expire=now --all``,
  ``gc --prune=now``: unreachable objects are deleted.

``reset --hard`` would revert uncommitted appends to tracked raw logs, so the caller commits every
pending raw line first and holds the append lock throughout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..errors import ErasureError
from .gitio import ENV
from .redact import redact_message, redact_ops


def run(root: Path, user_id: str, token: str, timeout: float = 3600) -> str:
    """Rewrite history in ``root``; returns filter-repo's output. Safe to re-run after a crash."""
    _clear_state(root)  # a stale already_ran file makes filter-repo ask questions on stdin
    wait_for_gc(root)  # a detached auto-gc (started by a commit) would make filter-repo's gc fail
    cmd = [sys.executable, "-m", "markmem.erase.rewrite", user_id, token]
    try:
        proc = subprocess.run(cmd, cwd=root, capture_output=True, env=ENV, stdin=subprocess.DEVNULL,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ErasureError(f"git-filter-repo did not finish within {timeout:.0f}s; re-run forget") from None
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if proc.returncode != 0:
        raise ErasureError(f"git-filter-repo failed (exit {proc.returncode}); re-run forget: {out.strip()[-800:]}")
    _clear_state(root)
    return out


def wait_for_gc(root: Path, timeout: float = 300) -> None:
    """Wait while a ``git gc`` (e.g. a detached ``gc --auto``) holds ``.git/gc.pid``."""
    pid_file = root / ".git" / "gc.pid"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, 0)
        except (FileNotFoundError, ValueError, IndexError, ProcessLookupError, PermissionError):
            return
        time.sleep(0.1)
    raise ErasureError("a git gc has been running for too long; re-run forget when it is done")


def _clear_state(root: Path) -> None:
    shutil.rmtree(root / ".git" / "filter-repo", ignore_errors=True)


def _main(argv: list[str]) -> None:
    import git_filter_repo as fr

    user_id, token = argv
    args = fr.FilteringOptions.parse_args([
        "--invert-paths", "--path", f"wiki/u/{user_id}/", "--path", f"raw/u/{user_id}/",
        "--force", "--quiet", "--sensitive-data-removal", "--no-fetch",
    ])
    redacted: dict[bytes, bytes] = {}

    def message_callback(message: bytes) -> bytes:
        return redact_message(message, user_id, token)

    def file_info_callback(filename: bytes, mode: bytes, blob_id: bytes, value):  # type: ignore[no-untyped-def]
        if not filename.startswith(b".markmem/ops/"):
            return filename, mode, blob_id
        if blob_id not in redacted:
            data = value.get_contents_by_identifier(blob_id)
            new = redact_ops(data, user_id, token)
            redacted[blob_id] = blob_id if new == data else value.insert_file_with_contents(new)
        return filename, mode, redacted[blob_id]

    fr.RepoFilter(args, message_callback=message_callback, file_info_callback=file_info_callback).run()


if __name__ == "__main__":
    _main(sys.argv[1:])
