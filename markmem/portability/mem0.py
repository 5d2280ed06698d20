"""``mem0``: mem0's export shape, both ways.

Export: a JSON array of ``{id, memory, hash, user_id, metadata, created_at, updated_at}``, one
record per active claim (mem0 keeps no history). ``metadata`` carries the caller's metadata plus
a ``markmem`` block (page, predicate, value, provenance, confidence, sources) so a re-import into
markmem restores the predicate. Import accepts that array, or ``{"results": [...]}`` as mem0's
``get_all`` returns it.

Import turns each memory into a raw entry (role ``tool``, speaker ``mem0``; ``occurred_at`` from
``created_at``) and one ``tool_derived`` claim, resolved like any compiled fact (a single-valued
predicate supersedes, notes add). Memories already imported (same mem0 id) are skipped.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..errors import InvalidInput
from ..ids import parse_time, validate_user_id
from .memos import Memo
from .snapshot import Snapshot

_INTERNAL = ("closed_by", "deleted", "mem0_id")


def dump(snap: Snapshot) -> str:
    records = []
    for page in snap.pages:
        if page.user_id is None or page.archived or page.type == "entity":  # relations restate the facts
            continue
        for c in page.active_claims():
            meta = {k: v for k, v in c.metadata.items() if k not in _INTERNAL}
            meta["markmem"] = {"page_id": page.id, "predicate": c.predicate, "value": c.value,
                               "provenance": c.provenance, "confidence": c.confidence, "sources": list(c.sources)}
            if "mem0_id" in c.metadata:
                meta["markmem"]["mem0_id"] = c.metadata["mem0_id"]
            records.append({
                "id": c.id, "memory": c.text, "hash": hashlib.md5(c.text.encode("utf-8")).hexdigest(),
                "user_id": page.user_id, "metadata": meta,
                "created_at": c.valid_from or c.recorded_at, "updated_at": c.recorded_at,
            })
    records.sort(key=lambda r: (r["user_id"], r["created_at"] or "", r["id"]))
    return json.dumps(records, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def load(text: str, user_id: str | None) -> tuple[list[Memo], int]:
    """The memories to import, and how many belonged to another user (left out)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"not a mem0 export: {exc}", field="path") from None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    if not isinstance(data, list):
        raise InvalidInput("a mem0 export is a JSON list of memories (or {\"results\": [...]})", field="path")
    memos, others = [], 0
    for n, rec in enumerate(data):
        if not isinstance(rec, dict) or not isinstance(rec.get("memory"), str) or not rec["memory"].strip():
            raise InvalidInput(f"mem0 record {n}: needs a non-empty 'memory' string", field="path")
        owner = rec.get("user_id") or user_id
        if owner is None:
            raise InvalidInput(f"mem0 record {n} has no user_id: pass user_id to import it", field="user_id")
        owner = validate_user_id(owner)
        if user_id is not None and owner != user_id:
            others += 1  # another user's memory: never merged into this one
            continue
        memos.append(_memo(rec, owner))
    return memos, others


def _memo(rec: dict[str, Any], owner: str) -> Memo:
    raw_meta = rec.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    raw_hint = meta.get("markmem")
    hint: dict[str, Any] = raw_hint if isinstance(raw_hint, dict) else {}
    caller = {k: v for k, v in meta.items() if k != "markmem"}
    source_id = hint.get("mem0_id") or rec.get("id")
    if source_id is not None:
        caller["mem0_id"] = str(source_id)
    when = None
    if rec.get("created_at"):
        try:
            when = parse_time(rec["created_at"], field="created_at")
        except InvalidInput:
            when = None  # an odd timestamp only loses the valid time, not the memory
    return Memo(user_id=owner, text=rec["memory"], occurred_at=when, metadata=caller,
                predicate=hint.get("predicate"), value=hint.get("value"), source="mem0",
                key=None if source_id is None else str(source_id),
                multi=("--v" in hint["page_id"]) if isinstance(hint.get("page_id"), str) else None)
