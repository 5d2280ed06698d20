"""Normalise what callers pass to ``add()`` into turns, rejecting bad input with typed errors."""

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


def clean_text(value: object, *, max_bytes: int, field: str = "content") -> str:
    if value is None:
        raise InvalidInput(f"{field} is required, got None", field=field)
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput(f"{field} is not valid UTF-8 (binary input is not accepted)", field=field) from None
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text, got {type(value).__name__}", field=field)
    if not value.strip():
        raise InvalidInput(f"{field} is empty", field=field)
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise InvalidInput(f"{field} is {size} bytes, over the limit of {max_bytes}", field=field)
    if _CONTROL.search(value):
        raise InvalidInput(f"{field} contains control characters", field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{field} contains unpaired surrogates", field=field) from None
    return value


def to_turns(messages: object, *, max_bytes: int) -> list[Turn]:
    """A string is one user turn; a list holds ``{role, content[, name]}`` mappings or strings."""
    if isinstance(messages, (str, bytes, bytearray)) or messages is None:
        return [Turn("user", clean_text(messages, max_bytes=max_bytes))]
    if isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, (list, tuple)) or not messages:
        raise InvalidInput("messages must be a string or a non-empty list of {role, content}", field="messages")
    turns: list[Turn] = []
    total = 0
    for i, m in enumerate(messages):
        turns.append(_one(m, i, max_bytes))
        total += len(turns[-1].content.encode("utf-8"))
    if total > max_bytes:
        raise InvalidInput(f"messages total {total} bytes, over the limit of {max_bytes}", field="messages")
    return turns


def _one(m: Any, i: int, max_bytes: int) -> Turn:
    if isinstance(m, (str, bytes)):
        return Turn("user", clean_text(m, max_bytes=max_bytes, field=f"messages[{i}]"))
    if not isinstance(m, Mapping):
        raise InvalidInput(f"messages[{i}] must be a mapping with role and content", field="messages")
    role = str(m.get("role", "user")).lower()
    if role not in ROLES:
        raise InvalidInput(f"messages[{i}].role must be one of {ROLES}", field="messages")
    content = clean_text(m.get("content"), max_bytes=max_bytes, field=f"messages[{i}].content")
    speaker = m.get("name") or m.get("speaker")
    if speaker is not None:
        speaker = clean_name(speaker, field=f"messages[{i}].name")
    return Turn(role, content, speaker)


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
