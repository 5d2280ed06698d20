"""Read the canonical store (raw logs, pages, review items) into a :class:`Snapshot`.

Every exporter starts here, so each format sees the same data in the same deterministic order:
users sorted; raw entries in file order; pages and review items sorted by id. The SQLite cache
is never consulted: an export is as good as the markdown and raw logs it came from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context import Context
from ..model import Page, RawEntry
from ..store import raw
from ..store.pages import read_page
from ..store.repo import iter_ops
from ..write import review

Progress = Callable[[str, int, int], None]


@dataclass
class Snapshot:
    users: list[str] = field(default_factory=list)
    raw: list[tuple[RawEntry, bool]] = field(default_factory=list)  # (entry, compiled)
    pages: list[Page] = field(default_factory=list)
    review: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)  # ops-log review records (ids only)

    def pages_of(self, user_id: str | None) -> list[Page]:
        return [p for p in self.pages if p.user_id == user_id]


def merge(snaps: Sequence[Snapshot]) -> Snapshot:
    """Snapshots of repos holding different users (a cluster's shards) as one."""
    if len(snaps) == 1:
        return snaps[0]
    out = Snapshot(users=sorted(u for s in snaps for u in s.users))
    for s in snaps:
        out.raw += s.raw
        out.pages += s.pages
        out.review += s.review
        out.decisions += s.decisions
    return out


def list_users(ctx: Context) -> list[str]:
    found: set[str] = set()
    for base in (ctx.root / "raw" / "u", ctx.root / "wiki" / "u"):
        if base.is_dir():
            found.update(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    return sorted(found)


def read(ctx: Context, user_id: str | None, progress: Progress | None = None) -> Snapshot:
    """Everything for one user, or for every user plus shared pages (``user_id=None``)."""
    with ctx.write_lock.held():  # a consistent view: no batch is half-written while we read
        users = [user_id] if user_id else list_users(ctx)
        snap = Snapshot(users=users)
        ops = [op for op in iter_ops(ctx.root) if op.get("op") == "review"]
        for i, uid in enumerate(users):
            _read_user(ctx, uid, snap)
            snap.decisions += [op for op in ops if op.get("user_id") == uid]
            if progress:
                progress("users", i + 1, len(users))
        if user_id is None:
            snap.pages += [read_page(ctx.root, rel, ctx.codec) for rel in _page_files(ctx, "wiki/shared")]
    return snap


def _read_user(ctx: Context, uid: str, snap: Snapshot) -> None:
    checkpoint = raw.read_checkpoint(ctx.root, uid)
    for _uid, rel in raw.iter_files(ctx.root, uid):
        upto = checkpoint.get(rel, 0)
        for entry, _start, end in raw.read_range(ctx.root, rel, 0, None, ctx.codec, uid):
            snap.raw.append((entry, end <= upto))
    snap.pages += [read_page(ctx.root, rel, ctx.codec) for rel in _page_files(ctx, f"wiki/u/{uid}")]
    snap.review += review.list_items(ctx.root, ctx.codec, uid)


def _page_files(ctx: Context, prefix: str) -> list[str]:
    base = ctx.root / prefix
    if not base.is_dir():
        return []
    return sorted(p.relative_to(ctx.root).as_posix() for p in base.rglob("*.md") if not p.name.startswith("."))
