"""Make a shard visit's commit durable before its intake rows are deleted.

The embedded commit writes its pack with ``core.fsync=none`` and pages without fsync (``add()``
fsyncs the raw log, the truth). In cluster mode the raw lines are fsynced too (``pipeline.store``)
before the commit, so a power loss after the intake rows are gone loses no turn; but the repo
could come back with a branch naming a pack that never reached the disk, or an index or page
older than HEAD (which ``recover`` would commit back over the batch). So a worker flushes what
the visit wrote (the new packs, the branch ref, git's index and the batch users' changed files,
with their folders: one ``syncfs`` on Linux, else an fsync of each) and only then deletes the
intake rows (``worker.compile_shard``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..context import Context
from ..store import raw


class Mark:
    """What a shard repo held when a visit began: its packs, and the time."""

    def __init__(self, ctx: Context) -> None:
        self.root = ctx.root
        self.pack_dir = ctx.root / ".git" / "objects" / "pack"
        self.packs = _names(self.pack_dir)
        self.started = time.time_ns() - 1_000_000_000  # a second of slack for the clock's grain


def written(mark: Mark, users: Iterable[str] | None) -> list[Path]:
    """The files (and their folders) the visit wrote: new packs, the ref, git's index, and the
    users' pages, review items and checkpoints changed since ``mark`` (``users`` None: every
    user's, after a recovery that may have compiled anyone's turns)."""
    git = mark.root / ".git"
    out = [mark.pack_dir / n for n in sorted(_names(mark.pack_dir) - mark.packs)]
    out.append(mark.pack_dir)
    head = _head_ref(git)
    for extra in (git / "index", git / "packed-refs", *([git / head] if head else [])):
        if extra.exists():
            out += [extra, extra.parent]
    if users is None:
        users = [p.name for base in ("wiki", "raw") for p in _dirs(mark.root / base / "u")]
    for uid in sorted(set(users)):
        out += _changed(mark.root / "wiki" / "u" / uid, mark.started)
        cp = mark.root / raw.checkpoint_path(uid)
        if _newer(cp, mark.started):
            out += [cp, cp.parent]
    return list(dict.fromkeys(out))


def settle(mark: Mark, users: Iterable[str] | None) -> int:
    """Flush what the visit wrote: one ``syncfs`` of the shard repo's filesystem where the OS has
    it (Linux: every dirty file and folder of that filesystem and one journal commit; measured
    here at a tenth of the wall time of fsyncing a 30-user visit's ~200 paths from threads), else
    an fsync of each path ``written`` lists. Returns the paths fsynced one by one (0: syncfs)."""
    if _syncfs(mark.root):
        return 0
    paths = written(mark, users)
    raw.sync_all(paths)
    return len(paths)


_LIBC: list[Any] = []


def _syncfs(root: Path) -> bool:
    """``syncfs(2)`` on ``root``'s filesystem; False where there is none (or it failed)."""
    if not _LIBC:
        import ctypes
        import ctypes.util

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
            _LIBC.append(libc.syncfs)
        except (OSError, AttributeError):
            _LIBC.append(None)
    call = _LIBC[0]
    if call is None:
        return False
    fd = os.open(root, os.O_RDONLY)
    try:
        return bool(call(fd) == 0)
    finally:
        os.close(fd)


def _names(folder: Path) -> set[str]:
    try:
        return set(os.listdir(folder))
    except FileNotFoundError:
        return set()


def _dirs(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    except FileNotFoundError:
        return []


def _newer(path: Path, since: int) -> bool:
    try:
        return os.lstat(path).st_mtime_ns >= since
    except FileNotFoundError:
        return False


def _changed(folder: Path, since: int) -> list[Path]:
    out: list[Path] = []
    for base, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(base, d))]
        hit = [Path(base, f) for f in files if _newer(Path(base, f), since)]
        if hit:
            out += [*hit, Path(base)]
    return out


def _head_ref(git: Path) -> str | None:
    try:
        text = (git / "HEAD").read_text("ascii").strip()
    except OSError:
        return None
    return text[5:] if text.startswith("ref: refs/") else None
