"""What the views share: the open Memory, and time fields as typed in a form."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar
from urllib.parse import urlencode

from fastapi import Request

from ...errors import InvalidInput
from ...ids import parse_moment
from ...memory import Memory

T = TypeVar("T")


def memory(request: Request) -> Memory:
    return request.app.state.memory  # type: ignore[no-any-return]


def when(value: str | None, field: str) -> datetime | None:
    """A date (``2026-03-01``) or ISO time from a form field; blank is None."""
    text = (value or "").strip()
    if not text:
        return None
    try:  # a date alone is the end of that day, as in a search (ids.parse_moment)
        return datetime.fromisoformat(parse_moment(text, field=field).replace("Z", "+00:00"))
    except InvalidInput:
        raise InvalidInput(f"{field} must be a date (YYYY-MM-DD) or an ISO-8601 time", field=field) from None


# rows per page of each listing (default): a page's history shows each commit's claim changes and diff
SIZES = {"users": 50, "pages": 20, "commits": 10, "history": 25, "review": 20}
MAX_SIZE = 200  # ?size= may ask for up to this many


@dataclass
class Pager:
    """One page of a listing: ``?page=N`` (from 1), ``size`` rows; a view asks for ``size + 1`` rows
    (``window``) and hands them to :meth:`take`, so whether a next page exists costs one row."""

    page: int
    size: int
    query: str  # the request's other query parameters, kept in the links
    more: bool = False
    shown: int = 0
    total: int | None = None

    @property
    def window(self) -> tuple[int, int]:
        """(limit, offset) for the Memory call: one row more than a page."""
        return self.size + 1, (self.page - 1) * self.size

    @property
    def first(self) -> int:
        return (self.page - 1) * self.size + (1 if self.shown else 0)

    @property
    def last(self) -> int:
        return (self.page - 1) * self.size + self.shown

    def take(self, rows: list[T]) -> list[T]:
        self.more = len(rows) > self.size
        rows = rows[: self.size]
        self.shown = len(rows)
        return rows

    def slice(self, rows: list[T]) -> list[T]:
        """A page of a list already in memory (its length is the total)."""
        self.total = len(rows)
        limit, offset = self.window
        return self.take(rows[offset:offset + limit])

    def href(self, page: int) -> str:
        return "?" + "&".join(([self.query] if self.query else []) + [f"page={page}"])


def pager(request: Request, kind: str) -> Pager:
    """``?page=N`` (from 1) and ``?size=N`` (1 to 200; default per listing) of the request."""
    page = _number(request, "page", 1, 1, 10**9)
    size = _number(request, "size", SIZES[kind], 1, MAX_SIZE)
    rest = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "page"])
    return Pager(page, size, rest)


def _number(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name) or str(default)
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise InvalidInput(f"{name} must be a whole number from {low} to {high}", field=name)
    return int(raw)
