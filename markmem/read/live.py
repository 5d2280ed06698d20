"""The claims of a user's ledger valid at one time, indexed once for the fact-first steps.

``read.facts`` asks, per search, which claims valid now are about someone else, which valid claims
cite each candidate turn, and which terms the user's own valid claims hold. Each is a pass over the
whole ledger (two ``echo.active`` checks per claim: ~1 ms a search at 1k claims, a third of a
search). The answers only change when a claim's ``valid_from`` or ``valid_until`` is crossed or the
ledger changes, so they are computed once and kept on the claim book (``index.claimbook``: a new
book, with new rows, whenever a claim changes) for as long as the time stays between the same two
boundaries (``echo.state``'s window). Without a book (the SQL path) they are computed each time.

The answers are the passes' own: the same rows, in ledger order (``tests/test_search_live.py``
checks them against the passes they replace).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..index import claimbook
from . import echo

Row = dict[str, Any]
ENABLED = True  # False: never kept, computed for each search (tests compare the two)


@dataclass
class View:
    """Valid claims at a time inside ``[lo, hi)``, as ``user_id`` sees them."""

    user_id: str
    lo: str
    hi: str | None
    mine: list[Row]  # valid, about someone other than the user (ledger order)
    mine_terms: dict[str, Row]  # each term of those claims' values -> the last such claim holding it
    cites: dict[str, list[str]]  # raw id -> ids of the valid claims citing it (ledger order)
    mine_at: dict[str, list[int]]  # raw id -> positions in ``mine`` of the claims citing it
    own: set[str]  # the terms of the user's own valid claims


def view(ledger: list[Row], at: str, user_id: str, book: claimbook.Book | None) -> View:
    """The ledger's valid claims at ``at`` (see the module doc), kept on ``book`` while ``at`` stays
    inside the same window."""
    if not ENABLED:
        book = None
    kept: View | None = getattr(book, "_live_view", None)
    if kept is not None and kept.user_id == user_id and kept.lo <= at and (kept.hi is None or at < kept.hi):
        return kept
    if book is not None:
        state = echo.state(ledger, at, book)  # its window: kept on the book too
        lo, hi = state.lo, state.hi
    else:
        lo, hi = at, at  # never reused
    got = _build(ledger, at, user_id, lo, hi)
    if book is not None:
        book._live_view = got  # type: ignore[attr-defined]  # dropped with the book when its stamp changes
    return got


def _build(ledger: list[Row], at: str, user_id: str, lo: str, hi: str | None) -> View:
    mine: list[Row] = []
    cites: dict[str, list[str]] = {}
    own: set[str] = set()
    for r in ledger:
        if not echo.active(r, at):
            continue
        for ref in r["_refs"]:
            cites.setdefault(ref, []).append(r["id"])
        if str(r.get("subject") or user_id) != user_id:
            mine.append(r)
        else:
            own.update(r["_terms"])
    mine_terms = {t: r for r in mine for t in r["_terms"]}
    mine_at: dict[str, list[int]] = {}
    for i, r in enumerate(mine):
        for ref in dict.fromkeys(r["_refs"]):
            mine_at.setdefault(ref, []).append(i)
    return View(user_id, lo, hi, mine, mine_terms, cites, mine_at, own)
