"""Export and import: ``jsonl`` (lossless), ``mem0`` (both ways), ``memory-md`` (Claude Code); import
of ChatGPT / Claude chat histories (``chats``: through ``add()``'s gate, then compiled).

    snapshot.read  -> jsonl.dump | mem0.dump | memory_md.dump            (export)
    jsonl.load -> restore.gate           \\
    mem0.load | memory_md.load -> memos   }-> restore.write: ONE commit  (import)

Exports read the canonical store only (raw logs, pages, review items), never the cache. Imports
write through it: raw entries (fsync), pages, review items, then one ``Markmem-Op: import`` commit,
then the cache. ``Memory.export`` / ``Memory.import_`` are the entry points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..context import Context
from ..errors import InvalidInput, NotFound
from ..store.pages import atomic_write
from . import chats, jsonl, mem0, memory_md, parsed, snapshot
from .snapshot import Progress

EXPORT_FORMATS = ("jsonl", "mem0", "memory-md")
IMPORT_FORMATS = ("jsonl", "mem0", "memory-md", *chats.FORMATS)


@dataclass(frozen=True)
class ExportResult:
    format: str
    users: tuple[str, ...]
    records: int  # jsonl lines, mem0 memories, memory-md bullets
    path: str | None
    text: str | None = None  # the export itself when no path was given

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ImportResult:
    format: str
    users: tuple[str, ...]
    raw: int
    pages: int
    claims: int
    review: int
    skipped: int  # already present (re-import) or another user's records
    commit: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def export(ctx: Context, user_id: str | None, to: str, path: str | Path | None,
           progress: Progress | None = None) -> ExportResult:
    return export_all([ctx], user_id, to, path, progress)


def export_all(ctxs: Sequence[Context], user_id: str | None, to: str, path: str | Path | None,
               progress: Progress | None = None) -> ExportResult:
    """One export of several repos (a cluster's shard repos): their snapshots merged, read one
    repo at a time."""
    if to not in EXPORT_FORMATS:
        raise InvalidInput(f"export format must be one of {(*EXPORT_FORMATS, 'access')}, not {to!r}", field="to")
    if user_id is not None and not any(user_id in snapshot.list_users(c) for c in ctxs):
        raise NotFound("user", user_id)
    snap = snapshot.merge([snapshot.read(c, user_id, progress) for c in ctxs
                           if user_id is None or user_id in snapshot.list_users(c)])
    if to == "jsonl":
        lines = list(jsonl.dump(snap))
        text, records = "".join(lines), len(lines)
    elif to == "mem0":
        text = mem0.dump(snap)
        records = sum(len(p.active_claims()) for p in snap.pages if p.user_id and not p.archived)
    else:
        text, records = memory_md.dump(snap, one_user=user_id is not None)
    if path is None:
        return ExportResult(to, tuple(snap.users), records, None, text)
    try:
        atomic_write(Path(path), text)
    except OSError as exc:
        raise InvalidInput(f"cannot write the export to {path}: {exc}", field="path") from None
    return ExportResult(to, tuple(snap.users), records, str(path))


def import_(ctx: Context, path: str | Path, from_: str, user_id: str | None,
            progress: Progress | None = None) -> ImportResult:
    if from_ not in IMPORT_FORMATS:
        raise InvalidInput(f"import format must be one of {IMPORT_FORMATS}, not {from_!r}", field="from_")
    text = read_text(path)
    if from_ in chats.FORMATS:  # conversations: turn by turn through add()'s gate, then compiled
        c = chats.import_chats(ctx, text, from_, user_id, progress)
        return ImportResult(from_, c.users, c.raw, c.pages, c.claims, c.review, c.skipped, c.commit)
    if progress:
        progress("parse", 1, 3)
    done, skipped = parsed.apply(ctx, parsed.parse(text, from_, user_id), from_, progress)
    if progress:
        progress("write", 3, 3)
    return ImportResult(from_, done.users, done.raw, done.pages, done.claims, done.review,
                        done.skipped + skipped, done.commit)


def read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}", field="path") from None


__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS", "ExportResult", "ImportResult", "export", "import_"]
