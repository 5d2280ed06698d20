"""Plain JSON views of what the facade returns, shared by the shells (CLI, REST, MCP).

Rendering only: no shell logic lives here. ``to_json()`` wins when a result defines it
(``RawEntry`` leaves out its local path), then dataclasses, then containers.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from datetime import date, datetime
from pathlib import PurePath
from typing import Any


def to_jsonable(value: Any) -> Any:
    """Return ``value`` as nested dicts/lists/str/int/float/bool/None."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "to_json") and callable(value.to_json):
        return to_jsonable(value.to_json())
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (PurePath, datetime, date)):
        return str(value)
    return str(value)


__all__ = ["to_jsonable"]
