"""Normalise what callers pass to ``add()`` into turns, rejecting bad input with typed errors.

Real chat logs hold stray control characters and empty turns; a chatbot backend cannot refuse a
user's turn for that. So control characters other than tab, newline and carriage return are
replaced by a space (``Turns.replaced``), an empty turn inside a list is skipped
(``Turns.skipped``), and only an input with nothing left is an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput

ROLES = ("user", "assistant", "system", "tool", "other")
MAX_METADATA_DEPTH = 32  # nesting levels of dicts/lists in metadata
MAX_NAME_BYTES = 200  # a speaker name, an agent or run id
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    speaker: str | None = None
    replaced: int = 0  # control characters replaced by a space


@dataclass(frozen=True)
class Turns:
    """The turns kept, in input order, and what normalising did to the input."""

    turns: list[Turn]
    skipped: tuple[int, ...] = ()  # input positions of empty turns left out


def clean_text(value: object, *, max_bytes: int, field: str = "content") -> str:
    """Text for a stored field: controls rejected (edits and review decisions are typed by a person)."""
    text = _text(value, field)
    if not text.strip():
        raise InvalidInput(f"{field} is empty", field=field)
    if _CONTROL.search(text):
        raise InvalidInput(f"{field} contains control characters", field=field)
    return _checked(text, max_bytes, field)


def _text(value: object, field: str) -> str:
    if value is None:
        raise InvalidInput(f"{field} is required, got None", field=field)
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput(f"{field} is not valid UTF-8 (binary input is not accepted)", field=field) from None
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text, got {type(value).__name__}", field=field)
    return value


def _checked(text: str, max_bytes: int, field: str) -> str:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise InvalidInput(f"{field} is {size} bytes, over the limit of {max_bytes}", field=field)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{field} contains unpaired surrogates", field=field) from None
    return text


def _content(value: object, max_bytes: int, field: str) -> tuple[str, int]:
    """(text with control characters replaced, how many); empty text is returned as ''."""
    text, n = _CONTROL.subn(" ", _text(value, field))
    return ("" if not text.strip() else _checked(text, max_bytes, field)), n


def to_turns(messages: object, *, max_bytes: int) -> Turns:
    """A string is one user turn; a list holds ``{role, content[, name]}`` mappings or strings."""
    if isinstance(messages, (str, bytes, bytearray)) or messages is None:
        text, n = _content(messages, max_bytes, "content")
        if not text:
            raise InvalidInput("content is empty", field="content")
        return Turns([Turn("user", text, None, n)])
    if isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, (list, tuple)) or not messages:
        raise InvalidInput("messages must be a string or a non-empty list of {role, content}", field="messages")
    turns: list[Turn] = []
    skipped: list[int] = []
    for i, m in enumerate(messages):
        turn = _one(m, i, max_bytes)
        if turn.content:
            turns.append(turn)
        else:
            skipped.append(i)
    if not turns:
        raise InvalidInput("every turn of messages is empty", field="messages")
    total = sum(len(t.content.encode("utf-8")) for t in turns)
    if total > max_bytes:
        raise InvalidInput(f"messages total {total} bytes, over the limit of {max_bytes}", field="messages")
    return Turns(turns, tuple(skipped))


def _one(m: Any, i: int, max_bytes: int) -> Turn:
    if isinstance(m, (str, bytes)):
        text, n = _content_of(m, i, max_bytes, f"messages[{i}]")
        return Turn("user", text, None, n)
    if not isinstance(m, Mapping):
        raise InvalidInput(f"messages[{i}] must be a mapping with role and content", field="messages")
    role = str(m.get("role", "user")).lower()
    if role not in ROLES:
        raise InvalidInput(f"messages[{i}].role must be one of {ROLES}", field="messages")
    text, n = _content_of(m.get("content"), i, max_bytes, f"messages[{i}].content")
    speaker = m.get("name") or m.get("speaker")
    if speaker is not None:
        speaker, k = _content(speaker, 200, f"messages[{i}].name")
        speaker, n = speaker.strip() or None, n + k
    return Turn(role, text, speaker, n)


def _content_of(value: object, i: int, max_bytes: int, field: str) -> tuple[str, int]:
    return ("", 0) if value is None else _content(value, max_bytes, field)


def clean_name(value: object, *, field: str) -> str | None:
    """A speaker name or an agent/run id: short single-line text, or None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text, got {type(value).__name__}", field=field)
    text = clean_text(value, max_bytes=MAX_NAME_BYTES, field=field).strip()
    if "\n" in text or "\r" in text:
        raise InvalidInput(f"{field} must be one line", field=field)
    return text


def clean_metadata(metadata: object, *, max_bytes: int) -> tuple[dict[str, Any], int]:
    """Metadata as plain JSON values (str keys), and its size in bytes as stored.

    Nesting deeper than :data:`MAX_METADATA_DEPTH`, more than ``max_bytes`` of JSON, values JSON
    cannot hold (objects, NaN) and unpaired surrogates are InvalidInput: nothing written.
    """
    if metadata is None:
        return {}, 0
    if not isinstance(metadata, Mapping):
        raise InvalidInput("metadata must be a mapping", field="metadata")
    _check_shape(metadata, max_bytes)
    try:
        text = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        raise InvalidInput("metadata must be JSON-serialisable", field="metadata") from None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise InvalidInput(f"metadata is {size} bytes, over the limit of {max_bytes}", field="metadata")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("metadata contains unpaired surrogates", field="metadata") from None
    return json.loads(text), size


def _check_shape(metadata: Mapping[Any, Any], max_bytes: int) -> None:
    """Depth and node count, iteratively: a 5,000-deep or self-referencing value never recurses."""
    stack: list[tuple[Any, int]] = [(metadata, 1)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if depth > MAX_METADATA_DEPTH:
            raise InvalidInput(f"metadata is nested deeper than {MAX_METADATA_DEPTH} levels", field="metadata")
        if nodes > max_bytes:  # every node is at least one byte of JSON
            raise InvalidInput(f"metadata is over the limit of {max_bytes} bytes", field="metadata")
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend((v, depth + 1) for v in value)
