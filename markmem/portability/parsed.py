"""An import parsed once, before any repo is touched: a markmem snapshot (``jsonl``) or memos
(``mem0``, ``memory-md``), and how many records belonged to another user.

``split`` cuts it by user, so a cluster imports each shard's users into that shard's repo (one
commit per shard); ``apply`` gates and writes one part into one repo.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..context import Context
from . import jsonl, mem0, memory_md, memos, restore
from .memos import Memo
from .restore import Written
from .snapshot import Snapshot


@dataclass
class Parsed:
    snapshot: Snapshot | None = None  # jsonl
    memos: list[Memo] = field(default_factory=list)  # mem0, memory-md
    others: int = 0  # records of users left out by the caller's user_id

    def users(self) -> list[str]:
        if self.snapshot is None:
            return sorted({m.user_id for m in self.memos})
        s = self.snapshot
        return sorted({e.user_id for e, _ in s.raw} | {p.user_id for p in s.pages if p.user_id}
                      | {str(i["user_id"]) for i in s.review} | {str(d["user_id"]) for d in s.decisions
                                                                if d.get("user_id")})

    def split(self, part_of: Callable[[str | None], int]) -> dict[int, Parsed]:
        """The records of each part's users (``part_of(user_id)``; None: a page shared by no user)."""
        parts: dict[int, Parsed] = {}

        def part(user_id: str | None) -> Parsed:
            n = part_of(user_id)
            if n not in parts:
                parts[n] = Parsed(None if self.snapshot is None else Snapshot())
            return parts[n]

        for m in self.memos:
            part(m.user_id).memos.append(m)
        if self.snapshot is not None:
            s = self.snapshot
            for entry in s.raw:
                _snap(part(entry[0].user_id)).raw.append(entry)
            for page in s.pages:
                _snap(part(page.user_id)).pages.append(page)
            for item in s.review:
                _snap(part(str(item["user_id"]))).review.append(item)
            for op in s.decisions:
                _snap(part(op.get("user_id"))).decisions.append(op)
            for p in parts.values():
                _snap(p).users = p.users()
        if parts:  # the left-out records are counted once, in the first part
            parts[min(parts)].others = self.others
        return parts


def _snap(p: Parsed) -> Snapshot:
    assert p.snapshot is not None
    return p.snapshot


def parse(text: str, from_: str, user_id: str | None) -> Parsed:
    if from_ == "jsonl":
        snap, others = jsonl.load(text.split("\n"), user_id)
        return Parsed(snap, [], others)
    loaded, others = mem0.load(text, user_id) if from_ == "mem0" else memory_md.load(text, user_id)
    return Parsed(None, loaded, others)


def apply(ctx: Context, parsed: Parsed, from_: str, progress: Callable[[str, int, int], None] | None = None
          ) -> tuple[Written, int]:
    """Gate and write into ``ctx``'s repo (ONE commit); returns what was written and the records
    skipped before writing (memos already imported, other users' records)."""
    with ctx.write_lock.held():
        if parsed.snapshot is not None:
            snap, known = restore.gate(ctx, parsed.snapshot), 0
        else:
            snap, known = memos.to_snapshot(ctx, parsed.memos)
        if progress:
            progress("gate", 2, 3)
        return restore.write(ctx, snap, from_), known + parsed.others
