"""Foreign memories (mem0 records, memory-md bullets) -> raw entries + resolved claims.

Each memory passes the one gate ``add()`` uses (PII in its text and metadata, injection quarantine), becomes
a raw entry and one candidate claim, and goes through the resolver, so supersession and page
placement follow the same rules as compiled facts. The result is a :class:`Snapshot` that
:mod:`.restore` writes in one commit. Caller holds the writer lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..context import Context
from ..errors import InvalidInput
from ..ids import new_raw_id, now
from ..model import Candidate, RawEntry
from ..store import raw
from ..store.pages import page_loader
from ..write import review
from ..write.extract import RULES
from ..write.gate import Fields, gate
from ..write.messages import clean_metadata, clean_text
from ..write.resolve import VOCAB, normalise_predicate, resolve
from .snapshot import Snapshot

ID_FIELD = {"mem0": "mem0_id", "memory-md": "memory_md_id"}
_MULTI = {predicate for _rx, predicate, _type, multi, _conf in RULES if multi} | {"note"}
CONFIDENCE = 0.8


@dataclass(frozen=True)
class Memo:
    user_id: str
    text: str
    source: str  # "mem0" | "memory-md"
    occurred_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    predicate: str | None = None
    value: str | None = None
    key: str | None = None  # the source's own id, for idempotent re-imports
    multi: bool | None = None  # multi-valued predicate (known when re-importing markmem's own export)


def to_snapshot(ctx: Context, memos: list[Memo]) -> tuple[Snapshot, int]:
    """Returns the snapshot to write and how many memos were skipped as already imported."""
    fresh = _unseen(ctx, memos)
    stamp = now()
    gated = gate(ctx, [_fields(ctx, m) for m in fresh])
    entries: dict[str, RawEntry] = {}
    cands: list[Candidate] = []
    for memo, g in zip(fresh, gated, strict=True):
        entry = RawEntry(id=new_raw_id(), user_id=memo.user_id, role="tool", content=g.text, recorded_at=stamp,
                         occurred_at=memo.occurred_at, speaker=memo.source, metadata=g.fields.metadata, pii=g.entities,
                         quarantined=g.quarantined, path=raw.raw_path(memo.user_id, stamp))
        entries[entry.id] = entry
        if not entry.quarantined:
            cands.append(_candidate(entry, memo, g.text))
    res = resolve(cands, entries, page_loader(ctx.root, ctx.codec), stamp, ctx.settings.review_below)
    items = [review.quarantine_item(e, stamp) for e in entries.values() if e.quarantined]
    items += [review.low_confidence_item(c, e, stamp) for c, e in res.review]
    snap = Snapshot(users=sorted({e.user_id for e in entries.values()}),
                    raw=[(e, True) for e in entries.values()], pages=list(res.pages.values()), review=items)
    return snap, len(memos) - len(fresh)


def _fields(ctx: Context, memo: Memo) -> Fields:
    """The memory's text and metadata (with the source's id), sized like ``add()`` input."""
    limit = ctx.settings.max_input_bytes
    text = clean_text(memo.text, max_bytes=limit, field="memory")
    meta = dict(memo.metadata)
    if memo.key is not None:
        meta[ID_FIELD[memo.source]] = memo.key
    meta, size = clean_metadata(meta, max_bytes=limit)
    if len(text.encode("utf-8")) + size > limit:
        raise InvalidInput(f"a memory and its metadata are over the limit of {limit} bytes", field="memory")
    return Fields(text, metadata=meta)


def _candidate(entry: RawEntry, memo: Memo, text: str) -> Candidate:
    predicate = normalise_predicate(memo.predicate or "note")
    value = text
    if memo.value is not None and predicate != "note" and memo.value in text:  # never an ungated value
        value = memo.value
    kind = VOCAB.get(predicate, "note" if predicate == "note" else "fact")
    return Candidate(entry.id, memo.user_id, predicate, value, text, CONFIDENCE, "tool_derived", kind,
                     multi=memo.multi if memo.multi is not None else predicate in _MULTI)


def _unseen(ctx: Context, memos: list[Memo]) -> list[Memo]:
    seen: set[tuple[str, str, str]] = set()
    for uid in sorted({m.user_id for m in memos}):
        for e in raw.iter_entries(ctx.root, ctx.codec, uid):
            for source, fld in ID_FIELD.items():
                if fld in e.metadata:
                    seen.add((uid, source, str(e.metadata[fld])))
    out = []
    for m in memos:
        mark = (m.user_id, m.source, m.key or "")
        if m.key is None or mark not in seen:
            seen.add(mark)
            out.append(m)
    return out

