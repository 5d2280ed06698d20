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
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import ErasureError
from .gitio import ENV
from .redact import redact_message, redact_ops

Counted = Callable[[int], None]  # commits parsed so far
_PARSED = re.compile(rb"Parsed (\d+) commits")


def run(root: Path, user_id: str, token: str, timeout: float = 3600, progress: Counted | None = None) -> str:
    """Rewrite history in ``root``; returns filter-repo's output. Safe to re-run after a crash.
    ``progress`` is called with the number of commits filter-repo has parsed (its own counter)."""
    _clear_state(root)  # a stale already_ran file makes filter-repo ask questions on stdin
    wait_for_gc(root)  # a detached auto-gc (started by a commit) would make filter-repo's gc fail
    cmd = [sys.executable, "-m", "markmem.erase.rewrite", user_id, token, *(["--progress"] if progress else [])]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV,
                            stdin=subprocess.DEVNULL)
    try:
        out = _read(proc, time.monotonic() + timeout, progress)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise ErasureError(f"git-filter-repo did not finish within {timeout:.0f}s; re-run forget") from None
    if proc.returncode != 0:
        raise ErasureError(f"git-filter-repo failed (exit {proc.returncode}); re-run forget: {out.strip()[-800:]}")
    _clear_state(root)
    return out


def _read(proc: subprocess.Popen[bytes], deadline: float, progress: Counted | None) -> str:
    """The child's output, read as it comes; each ``Parsed N commits`` it prints goes to ``progress``."""
    import selectors

    assert proc.stdout is not None
    chunks: list[bytes] = []
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, 0)
            if not sel.select(timeout=min(left, 1.0)):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            chunks.append(chunk)
            counts = _PARSED.findall(chunk)
            if progress and counts:
                progress(int(counts[-1]))
    proc.wait(timeout=max(deadline - time.monotonic(), 1))
    return b"".join(chunks).decode("utf-8", "replace")


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

    user_id, token = argv[:2]
    quiet = [] if "--progress" in argv[2:] else ["--quiet"]  # not quiet: it prints "Parsed N commits"
    args = fr.FilteringOptions.parse_args([
        "--invert-paths", "--path", f"wiki/u/{user_id}/", "--path", f"raw/u/{user_id}/",
        "--force", *quiet, "--sensitive-data-removal", "--no-fetch",
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
