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
import socket
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
    guard = _rewrite_guard(root, timeout)  # a child a killed forget left running finishes first
    try:
        _clear_state(root)  # a stale already_ran file makes filter-repo ask questions on stdin
        wait_for_gc(root)  # a detached auto-gc (started by a commit) would make filter-repo's gc fail
        clear_stale_git_locks(root)  # what a killed filter-repo or gc left would make this run's fail
        cmd = [sys.executable, "-m", "markmem.erase.rewrite", user_id, token, *(["--progress"] if progress else [])]
        proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV,
                                stdin=subprocess.DEVNULL, pass_fds=(guard,))
    finally:
        os.close(guard)  # the child holds the guard now (the same open file): until it exits
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


# A lock file git writes "<pid> <host>" into is stale once that process is gone; one it has not
# written yet (created, killed before the write) is stale after this long: git writes it at once.
UNWRITTEN_GRACE = 10.0
GC_PID_MAX_AGE = 12 * 3600  # git's own bound: an older gc.pid is ignored by ``git gc`` too
# Lock files a killed ``git gc`` (pack-refs, reflog expire, repack, commit-graph) or filter-repo
# (fast-import's ref updates, reset --hard) leaves; each makes the next gc or filter-repo fail.
GIT_LOCKS = ("index.lock", "HEAD.lock", "packed-refs.lock", "shallow.lock", "config.lock",
             "objects/info/commit-graph.lock", "objects/info/commit-graphs/commit-graph-chain.lock",
             "objects/pack/multi-pack-index.lock")


def wait_for_gc(root: Path, timeout: float = 300) -> None:
    """Wait while a live ``git gc`` (e.g. a detached ``gc --auto``) holds ``.git/gc.pid`` or is
    taking it (``gc.pid.lock``). Either file left by a gc that no longer runs (killed: a dead pid
    on this host, a pid reused since, or past git's own age bound) is removed, never a live one's."""
    git = root / ".git"
    deadline = time.monotonic() + timeout
    while True:
        live = False
        for name in ("gc.pid.lock", "gc.pid"):  # the lock first: while it is live, gc.pid may change
            state, ino = _gc_file(git / name)
            if state == "live":
                live = True
            elif state == "stale" and not live:
                _unlink_if(git / name, ino)
        if not live:
            return
        if time.monotonic() >= deadline:
            raise ErasureError("a git gc has been running for too long; re-run forget when it is done")
        time.sleep(0.1)


def _gc_file(path: Path) -> tuple[str, int]:
    """(``"absent"``, ``"live"`` (a gc that may still run holds it) or ``"stale"``; its inode)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            text = f.read(200).decode("utf-8", "replace")
    except FileNotFoundError:
        return "absent", 0
    age = time.time() - st.st_mtime
    parts = text.split()
    if len(parts) < 2 or not parts[0].isdigit():
        return ("live" if age < UNWRITTEN_GRACE else "stale"), st.st_ino
    if age > GC_PID_MAX_AGE:
        return "stale", st.st_ino
    if parts[1] != socket.gethostname():
        return "live", st.st_ino  # a gc on another machine (a shared filesystem): git waits for it too
    return ("live" if _alive(int(parts[0]), st.st_mtime) else "stale"), st.st_ino


def _unlink_if(path: Path, ino: int) -> None:
    """Remove ``path`` unless another file took its place since it was read (a new gc's)."""
    try:
        if os.stat(path).st_ino == ino:
            path.unlink()
    except FileNotFoundError:
        pass


def _alive(pid: int, written: float) -> bool:
    """Whether the process that wrote a file at ``written`` (its mtime) still runs: ``pid`` exists,
    is no zombie and (where /proc says when it started) did not start after the file was written
    (a pid reused since)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    proc = _proc_stat(pid)
    if proc is None:
        return True  # no /proc: the pid exists, that is all we know
    state, started = proc
    return state not in "ZX" and started <= written + 2.0


def _proc_stat(pid: int) -> tuple[str, float] | None:
    """(state letter, start time in epoch seconds) of ``pid`` from /proc; None without /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()  # from field 3 (state), after "pid (comm) "
        with open("/proc/stat") as f:
            boot = next(int(ln.split()[1]) for ln in f if ln.startswith("btime "))
        return fields[0], boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def clear_stale_git_locks(root: Path) -> list[str]:
    """Remove the lock files a killed filter-repo or ``git gc`` left. Call only with the writer
    and append locks held (no markmem process writes the repo), no live gc (``wait_for_gc``) and
    the rewrite guard held (no earlier filter-repo child still runs): then nothing live owns them."""
    git = root / ".git"
    found = [git / name for name in GIT_LOCKS]
    for base in (git / "refs", git / "logs"):
        if base.is_dir():
            found += sorted(base.rglob("*.lock"))
    removed = []
    for path in found:
        if path.is_file():
            path.unlink(missing_ok=True)
            removed.append(path.relative_to(git).as_posix())
    return removed


def _rewrite_guard(root: Path, timeout: float) -> int:
    """An fd holding ``.markmem/rewrite.lock`` (flock). It is passed to the filter-repo child, so
    the lock lasts while that child runs, even when this process is killed; the next run waits for
    it here (filter-repo's own git children die with their pipes; a gc is seen by ``wait_for_gc``)."""
    import fcntl

    fd = os.open(root / ".markmem" / "rewrite.lock", os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise ErasureError("an earlier git-filter-repo run is still going; re-run forget later") from None
            time.sleep(0.1)


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
