"""``jsonl``: markmem's lossless export format, one JSON object a line.

    {"kind": "header", "format": "markmem-jsonl", "version": 1, "schema": 1, "users": [...]}
    {"kind": "raw", "compiled": true, "entry": {...raw entry, exactly as in raw/...}}
    {"kind": "page", "page": {...frontmatter fields, "claims": [...full ledger...], "body": "..."}}
    {"kind": "review", "item": {...pending review item...}}
    {"kind": "decision", "op": {...ops-log review record: ids and decisions, no text...}}

Per user (sorted): raw entries in log order, pages by id, review items, decisions; shared pages
last. Keys are sorted and there is no export timestamp, so export -> import into an empty repo ->
export gives identical bytes. Claims keep their full bi-temporal ledger (valid_from/valid_until,
recorded_at/closed_at, supersedes/superseded_by, sources).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import InvalidInput
from ..ids import parse_time, validate_page_id, validate_user_id
from ..model import Page, RawEntry
from ..store.pages import claim_from_dict, claim_to_dict
from ..store.raw import entry_from_json, raw_path
from ..store.repo import schema_version
from ..write.messages import ROLES
from .snapshot import Snapshot

FORMAT = "markmem-jsonl"
VERSION = 1
_RAW_ID = re.compile(r"r-[0-9a-f]{12}")
_CLAIM_ID = re.compile(r"c-[0-9a-f]{10}")
_ITEM_ID = re.compile(r"v-[0-9a-f]{10}")


def dump(snap: Snapshot) -> Iterator[str]:
    yield _line({"kind": "header", "format": FORMAT, "version": VERSION, "schema": schema_version(),
                 "users": snap.users})
    for uid in snap.users:
        for entry, compiled in snap.raw:
            if entry.user_id == uid:
                yield _line({"kind": "raw", "compiled": compiled, "entry": entry.to_json()})
        for page in snap.pages_of(uid):
            yield _line({"kind": "page", "page": page_to_json(page)})
        for item in snap.review:
            if item.get("user_id") == uid:
                yield _line({"kind": "review", "item": item})
        for op in snap.decisions:
            if op.get("user_id") == uid:
                yield _line({"kind": "decision", "op": op})
    for page in snap.pages_of(None):
        yield _line({"kind": "page", "page": page_to_json(page)})


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"


def page_to_json(page: Page) -> dict[str, Any]:
    return {"id": page.id, "type": page.type, "user_id": page.user_id, "title": page.title,
            "created": page.created, "updated": page.updated, "pinned": page.pinned, "archived": page.archived,
            "extra": page.extra, "claims": [claim_to_dict(c) for c in page.claims], "body": page.body}


def load(lines: Iterable[str], user_id: str | None = None) -> tuple[Snapshot, int]:
    """Parse and validate an export; keep only ``user_id``'s records when given (and count the rest)."""
    snap = Snapshot()
    header = False
    records = 0
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            header = _take(snap, record, header, user_id)
            records += record.get("kind") != "header"
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"jsonl line {n}: {exc}", field="path") from None
    if not header:
        raise InvalidInput("not a markmem jsonl export (no header line)", field="path")
    snap.users = sorted({e.user_id for e, _ in snap.raw} | {p.user_id for p in snap.pages if p.user_id})
    kept = len(snap.raw) + len(snap.pages) + len(snap.review) + len(snap.decisions)
    return snap, records - kept


def _take(snap: Snapshot, record: dict[str, Any], header: bool, only: str | None) -> bool:
    kind = record.get("kind")
    if kind == "header":
        if record.get("format") != FORMAT or not isinstance(record.get("version"), int) or record["version"] > VERSION:
            raise ValueError(f"unsupported export format {record.get('format')!r} v{record.get('version')}")
        return True
    if not header:
        raise ValueError("the header line must come first")
    if kind == "raw":
        entry = _entry(record["entry"])
        if only is None or entry.user_id == only:
            snap.raw.append((entry, bool(record.get("compiled", False))))
    elif kind == "page":
        page = page_from_json(record["page"])
        if only is None or page.user_id == only:
            snap.pages.append(page)
    elif kind == "review":
        item = _item(record["item"])
        if only is None or item["user_id"] == only:
            snap.review.append(item)
    elif kind == "decision":
        op = dict(record["op"])
        if op.get("op") != "review":
            raise ValueError("a decision record must be an ops-log review record")
        if only is None or validate_user_id(op.get("user_id")) == only:
            snap.decisions.append(op)
    else:
        raise ValueError(f"unknown record kind {kind!r}")
    return header


def _entry(data: dict[str, Any]) -> RawEntry:
    uid = validate_user_id(data.get("user_id"))
    if not _RAW_ID.fullmatch(str(data.get("id"))):
        raise ValueError(f"bad raw entry id {data.get('id')!r}")
    if data.get("role", "user") not in ROLES or not isinstance(data.get("content"), str):
        raise ValueError("raw entry needs a known role and text content")
    recorded = parse_time(data["recorded_at"], field="recorded_at")
    occurred = None if data.get("occurred_at") is None else parse_time(data["occurred_at"], field="occurred_at")
    data = {**data, "recorded_at": recorded, "occurred_at": occurred}
    return entry_from_json(data, raw_path(uid, recorded))


def page_from_json(data: dict[str, Any]) -> Page:
    pid = validate_page_id(data["id"])
    uid = data.get("user_id")
    owner = pid.split("/")[1] if pid.startswith("u/") else None
    if uid != owner:
        raise ValueError(f"page {pid} has user_id {uid!r}: a page belongs to the user in its id")
    claims = tuple(claim_from_dict(c) for c in data.get("claims") or ())
    for c in claims:
        if not _CLAIM_ID.fullmatch(c.id):
            raise ValueError(f"bad claim id {c.id!r}")
        if owner and any(not s.startswith(f"raw/u/{owner}/") for s in c.sources):
            raise ValueError(f"claim {c.id} cites another user's raw log")
    return Page(id=pid, type=str(data.get("type", pid.split("/")[-2])), user_id=owner, title=str(data["title"]),
                created=str(data["created"]), updated=str(data["updated"]), claims=claims,
                body=str(data.get("body") or ""), pinned=bool(data.get("pinned")), archived=bool(data.get("archived")),
                extra=dict(data.get("extra") or {}))


def _item(data: dict[str, Any]) -> dict[str, Any]:
    item = dict(data)
    validate_user_id(item.get("user_id"))
    if not _ITEM_ID.fullmatch(str(item.get("id"))) or item.get("kind") not in ("quarantine", "low_confidence"):
        raise ValueError(f"bad review item {item.get('id')!r}")
    return item
