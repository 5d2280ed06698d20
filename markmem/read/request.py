"""A search's arguments, checked once: the SQLite facade and the PostgreSQL index raise the same errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput
from ..ids import parse_moment, validate_user_id


@dataclass(frozen=True)
class SearchArgs:
    query: str
    user_id: str
    top_k: int
    as_of: str | None  # normalised times
    known_at: str | None
    format: str
    explain: bool
    budget: int | None


def check(query: Any, user_id: Any, top_k: Any = 5, as_of: Any = None, known_at: Any = None,
          format: Any = "json", explain: bool = False, budget: Any = None) -> SearchArgs:
    """``Memory.search``'s arguments, validated (``InvalidUserId``, ``InvalidInput``) and normalised."""
    validate_user_id(user_id)
    if not isinstance(query, str):
        raise InvalidInput("query must be text")
    if format not in ("json", "context"):
        raise InvalidInput('format must be "json" or "context"')
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 1000:
        raise InvalidInput("top_k must be an integer between 1 and 1000")
    if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool)
                               or not 1 <= budget <= 100_000):
        raise InvalidInput("budget must be an integer between 1 and 100000 tokens")
    query = query.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate becomes '?'
    t_valid = None if as_of is None else parse_moment(as_of, field="as_of")
    t_known = None if known_at is None else parse_moment(known_at, field="known_at")
    return SearchArgs(query, user_id, top_k, t_valid, t_known, format, bool(explain), budget)
