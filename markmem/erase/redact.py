"""Pure rewriting of the places outside a user's folders that name the user.

* ops records (``.markmem/ops/*.jsonl``): ``user_id`` / ``user`` / ``users`` / ``user_ids`` values
  equal to the id become the user's token (the record stays: the audit trail keeps its shape);
* commit messages: ``Markmem-*`` trailer values and ``u/<id>`` page references become the token.

Used by ``scrub`` on the working tree and, through git-filter-repo, on every historical version.
"""

from __future__ import annotations

import json
import re
from typing import Any

USER_KEYS = ("user_id", "user", "users", "user_ids")
_TRAILER = re.compile(rb"^(Markmem-[A-Za-z-]+:[ \t]*)(.*)$", re.M)


def redact_ops(data: bytes, user_id: str, token: str) -> bytes:
    """Ops log lines with the user's id replaced by the token; other bytes unchanged."""
    needle = user_id.encode("utf-8")
    if needle not in data:
        return data
    out = []
    for line in data.split(b"\n"):
        if needle in line:
            line = _redact_line(line, user_id, token)
        out.append(line)
    return b"\n".join(out)


def _redact_line(line: bytes, user_id: str, token: str) -> bytes:
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict):
        return line
    changed = False
    for key in USER_KEYS:
        value = record.get(key)
        if value == user_id:
            record[key] = token
            changed = True
        elif isinstance(value, list) and user_id in value:
            record[key] = [token if v == user_id else v for v in value]
            changed = True
    return json.dumps(record, sort_keys=True).encode("utf-8") if changed else line


def mentions(record: dict[str, Any], user_id: str) -> bool:
    for key in USER_KEYS:
        value = record.get(key)
        if value == user_id or (isinstance(value, list) and user_id in value):
            return True
    return False


def message_patterns(user_id: str) -> re.Pattern[bytes]:
    uid = re.escape(user_id.encode("utf-8"))
    return re.compile(rb"(?<![A-Za-z0-9._-])u/" + uid + rb"(?![A-Za-z0-9._-])")


def redact_message(message: bytes, user_id: str, token: str) -> bytes:
    """A commit message with the user's id removed from trailers and page references."""
    uid = user_id.encode("utf-8")
    tok = token.encode("ascii")
    if uid not in message:
        return message

    def trailer(m: re.Match[bytes]) -> bytes:
        items = [v.strip() for v in m.group(2).split(b",")]
        if uid not in items:
            return m.group(0)
        return m.group(1) + b",".join(tok if v == uid else v for v in items)

    message = _TRAILER.sub(trailer, message)
    return message_patterns(user_id).sub(b"u/" + tok, message)


def message_mentions(message: str, user_id: str) -> bool:
    data = message.encode("utf-8")
    return redact_message(data, user_id, "x" * 8) != data
