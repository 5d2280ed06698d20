"""Retention sweeps over ``raw/``, planned (pure) here and applied by :mod:`.maintenance`.

Raw day files are append-only logs, and claims cite their lines (``sources``). A sweep with
``retention_days: {raw: N}`` works file by file, on day files older than N days only:

* a file is swept only when fully compiled (its size equals the user's compile checkpoint), so
  no queued, uncompiled input is ever dropped and no queue offset ever points into a rewritten file;
* lines a pending review item refers to are kept; the rest are dropped: the file is rewritten
  with the kept lines, or deleted when none is left, and the checkpoint follows the new size;
* claims keep their facts: each dropped source moves from ``sources`` to
  ``metadata.expired_sources`` (so lint does not call the claim unsourced, and provenance stays
  readable);
* the ops log records counts only (entries dropped, files rewritten/deleted), never ids or text.

The dropped lines remain in git history, as with ``forget(mode="scrub")``; purging history is
``forget(mode="rewrite")``'s job, not retention's.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

_DAY_FILE = re.compile(r"raw/u/[^/]+/(\d{4})/(\d{2})/(\d{2})\.jsonl")


@dataclass(frozen=True)
class RawFile:
    """A raw day file as the planner sees it: its lines' ids and byte ranges, size, compile offset."""

    user: str
    path: str
    lines: tuple[tuple[str, int, int], ...]
    size: int
    compiled: int


@dataclass(frozen=True)
class RawRewrite:
    """Keep the byte ranges ``keep`` of ``path`` (in order); an empty ``keep`` deletes the file."""

    user: str
    path: str
    size: int  # the size the plan was made against: the executor re-checks it
    keep: tuple[tuple[int, int], ...]
    dropped: tuple[str, ...]
    kept: tuple[str, ...] = ()  # ids of the kept lines (pending review items refer to them)

    @property
    def new_size(self) -> int:
        return sum(end - start for start, end in self.keep)


def file_day(path: str) -> str | None:
    m = _DAY_FILE.fullmatch(path)
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else None


def plan_raw(
    files: Sequence[RawFile], cutoff_day: str, keep_ids: Collection[str], blocked_users: Collection[str]
) -> tuple[list[RawRewrite], list[tuple[str, str]]]:
    """Rewrites for day files recorded before ``cutoff_day``, and (path, reason) for files skipped."""
    rewrites: list[RawRewrite] = []
    skipped: list[tuple[str, str]] = []
    for f in files:
        day = file_day(f.path)
        if day is None or day >= cutoff_day:
            continue
        if f.user in blocked_users:
            skipped.append((f.path, "the user has pages maintenance must not rewrite (run lint)"))
            continue
        if f.size > f.compiled:
            skipped.append((f.path, "not fully compiled yet"))
            continue
        keep = tuple((s, e) for rid, s, e in f.lines if rid in keep_ids)
        kept = tuple(rid for rid, _s, _e in f.lines if rid in keep_ids)
        dropped = tuple(rid for rid, _s, _e in f.lines if rid not in keep_ids)
        if dropped:
            rewrites.append(RawRewrite(f.user, f.path, f.size, keep, dropped, kept))
    return rewrites, skipped
