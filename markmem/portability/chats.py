"""Import a person's chat history: ChatGPT's and Claude's ``conversations.json`` exports.

Each conversation's turns enter as ``add()`` does (``pipeline.accept``: the PII gate and the
injection guard, an fsynced raw line, a queue row), one turn at a time with its own timestamp as
``occurred_at``, then compile through the extractor (one commit per batch), so "I live in Lisbon"
said in 2023 becomes a ``lives_in`` claim valid from 2023, superseded by what was said later.

* ChatGPT: a list of conversations, each a ``mapping`` of message nodes; the branch shown to the
  user is followed back from ``current_node``. Text parts only; hidden and system turns skipped.
* Claude: a list of conversations with ``chat_messages`` (``sender`` human | assistant).

The export is one account's: every turn goes to ``user_id``. Each raw entry keeps the source's
conversation and message ids (nothing else of its metadata), so importing the same file again adds
nothing. A turn the gate blocks, or one too large, is skipped and counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..context import Context
from ..errors import InvalidInput, PiiBlocked
from ..store import raw
from ..store.pages import iter_page_files
from ..write import pipeline
from .snapshot import Progress

FORMATS = ("chatgpt", "claude")
ROLES = {"user": "user", "human": "user", "assistant": "assistant"}


@dataclass(frozen=True)
class Turn:
    conversation: str
    message: str
    role: str  # user | assistant
    text: str
    when: str | None  # ISO-8601


@dataclass(frozen=True)
class Counts:
    users: tuple[str, ...]
    raw: int
    pages: int
    claims: int
    review: int
    skipped: int
    commit: str | None


def parse(text: str, fmt: str) -> list[Turn]:
    """The turns of every conversation in an export, in conversation order."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"not a {fmt} export (invalid JSON: {exc})", field="path") from None
    if isinstance(data, dict):  # a single conversation
        data = [data]
    if not isinstance(data, list):
        raise InvalidInput(f"not a {fmt} export: expected a list of conversations", field="path")
    turns = _chatgpt if fmt == "chatgpt" else _claude
    return [t for conv in data if isinstance(conv, dict) for t in turns(conv) if t.text.strip()]


def _chatgpt(conv: dict[str, Any]) -> Iterator[Turn]:
    mapping = conv.get("mapping") or {}
    cid = str(conv.get("conversation_id") or conv.get("id") or "")
    branch: list[dict[str, Any]] = []
    node = conv.get("current_node")
    while node in mapping and len(branch) <= len(mapping):
        branch.append(mapping[node])
        node = mapping[node].get("parent")
    for item in reversed(branch):
        msg = item.get("message") or {}
        role = ROLES.get(((msg.get("author") or {}).get("role")) or "")
        content = msg.get("content") or {}
        if role is None or (msg.get("metadata") or {}).get("is_visually_hidden_from_conversation"):
            continue
        parts = [p for p in content.get("parts") or [] if isinstance(p, str)]
        yield Turn(cid, str(msg.get("id") or item.get("id")), role, "\n".join(parts), _epoch(msg.get("create_time")))


def _claude(conv: dict[str, Any]) -> Iterator[Turn]:
    cid = str(conv.get("uuid") or "")
    for msg in conv.get("chat_messages") or []:
        role = ROLES.get(str(msg.get("sender") or ""))
        if role is None:
            continue
        parts = [c for c in msg.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"]
        text = msg.get("text") or "\n".join(str(c.get("text") or "") for c in parts)
        yield Turn(cid, str(msg.get("uuid") or ""), role, text, msg.get("created_at") or None)


def _epoch(value: Any) -> str | None:
    if not isinstance(value, (int, float)):
        return None
    return datetime.fromtimestamp(value, timezone.utc).isoformat().replace("+00:00", "Z")


def import_chats(ctx: Context, text: str, fmt: str, user_id: str | None, progress: Progress | None = None) -> Counts:
    if user_id is None:
        raise InvalidInput(f"a {fmt} export is one person's: name them with user_id (--user)", field="user_id")
    turns = parse(text, fmt)
    seen = _imported(ctx, user_id, fmt)
    pages_before = len(iter_page_files(ctx.root, user_id))
    added = 0
    for i, t in enumerate(turns, 1):
        if (t.conversation, t.message) not in seen:
            added += _accept(ctx, t, user_id, fmt)
        if progress:
            progress("turns", i, len(turns))
    reports = []
    while (report := pipeline.compile_batch(ctx)) is not None:
        reports.append(report)
        if progress:
            progress("compile", min(sum(r.entries for r in reports), added), max(added, 1))
    return Counts((user_id,) if added else (), added, len(iter_page_files(ctx.root, user_id)) - pages_before,
                  sum(r.claims_added for r in reports), sum(r.to_review for r in reports), len(turns) - added,
                  next((r.commit for r in reversed(reports) if r.commit), None))


def _accept(ctx: Context, t: Turn, user_id: str, fmt: str) -> int:
    meta = {"source": fmt, "conversation_id": t.conversation, "message_id": t.message}
    try:
        pipeline.accept(ctx, [{"role": t.role, "content": t.text}], user_id, metadata=meta, occurred_at=t.when)
    except (InvalidInput, PiiBlocked):
        return 0
    return 1


def _imported(ctx: Context, user_id: str, fmt: str) -> set[tuple[str, str]]:
    return {(str(e.metadata.get("conversation_id")), str(e.metadata.get("message_id")))
            for e in raw.iter_entries(ctx.root, ctx.codec, user_id) if e.metadata.get("source") == fmt}
