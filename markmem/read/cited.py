"""The ledger's side of ``read.facts``: which closed claims cite a candidate turn, the claim now
current at the end of a supersession chain, the marks (``valid_until``, ``superseded_by``) put on a
turn's row, and the turn rows read for the lexicon's light candidates."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..index import claimbook
from ..index.cache import Cache
from .fts import CLAIM_COLS, hydrate_turns
from .fuse import Cand


def hydrate(cache: Cache, user_id: str, ranked: list[Cand], book: claimbook.Book | None = None) -> None:
    light = [c for c in ranked if c.kind == "turn" and "content" not in c.row and "rowid" in c.row]
    if not light:
        return
    # the lexicon's light rows hold no text; search hydrates them for its hits anyway. The rows read
    # are kept on the claim book (its stamp changes with any change to the user's turns), a few
    # thousand at most: a turn found again is not read again
    kept: dict[int, dict[str, Any]] = {} if book is None or not KEEP_TURNS else \
        book.__dict__.setdefault("_turn_rows", {})
    rows = {c.row["rowid"]: kept[c.row["rowid"]] for c in light if c.row["rowid"] in kept}
    need = [c.row["rowid"] for c in light if c.row["rowid"] not in rows]
    if need:
        full = hydrate_turns(cache, need, user_id)
        read = {c.row["rowid"]: full[c.id] for c in light if c.id in full}
        if len(kept) + len(read) > KEEP_TURNS:  # the older half out
            for rowid in list(kept)[: len(kept) // 2]:
                kept.pop(rowid, None)
        kept.update(read)
        rows.update(read)
    for c in light:
        row = rows.get(c.row["rowid"])
        if row is not None and row["id"] == c.id:  # a rowid that now holds another turn: not this one
            c.row = {**c.row, **row}


KEEP_TURNS = 8192  # turn rows kept per claim book (0: read each search); ~4k distinct turns a long mix finds at 10k


def mark(ranked: list[Cand], stale: dict[str, list[dict[str, Any]]], echoed: dict[str, dict[str, Any]]) -> None:
    for c in ranked:
        if c.id in stale:
            closed = max(stale[c.id], key=lambda r: (r["valid_until"] or "", bool(r["superseded_by"])))
        elif c.id in echoed:
            closed = echoed[c.id]
        else:
            continue
        c.row = {**c.row, "valid_until": closed["valid_until"], "superseded_by": closed["superseded_by"]}


def successor(c: Cand, found: dict[str, dict[str, Any]], claims: dict[str, Cand], have: set[str],
               bring: bool = True) -> list[Cand]:
    """The claim now current in place of what turn ``c`` said, when not already listed: moved up from
    further down, or (``bring``: a stale turn, another's turn naming an old value) brought in. A user's
    own turn marked by its words only moves up a claim the search found (on LoCoMo's transcripts
    bringing one in pushed evidence out of the top five)."""
    row = found.get(str(c.row.get("superseded_by")))
    if row is not None and row["id"] in claims:
        return [claims.pop(row["id"])]
    if row is None or row["id"] in have or not bring:
        return []
    new = Cand("claim", row["id"], row, dict(c.ranks), bm25=c.bm25, cos=c.cos)
    new.score, new.weights = c.score, {**c.weights, "replaces": 1.0}
    have.add(row["id"])
    return [new]


def _current(row: dict[str, Any], present: str) -> bool:
    return (row["valid_until"] is None or row["valid_until"] > present) and \
        (row["valid_from"] is None or row["valid_from"] <= present)


def citing(cache: Cache, user_id: str, turn_ids: Sequence[str], present: str,
            book: claimbook.Book | None = None) -> dict[str, list[dict[str, Any]]]:
    """The closed claims that cite each turn, for the turns no current claim cites, by turn id:
    from the user's claim book (``index.claimbook``), or with SQL."""
    if book is not None:
        stale: dict[str, list[dict[str, Any]]] = {}
        for rid in turn_ids:
            rows = book.cite(rid)
            if rows and not any(r["valid_until"] is None or r["valid_until"] > present for r in rows):
                stale[rid] = [r for r in rows if r["valid_until"] is not None and r["valid_until"] <= present]
        return stale
    closed = _sources(cache, user_id, turn_ids, "c.valid_until IS NOT NULL AND c.valid_until <= ?", [present])
    if not closed:
        return {}
    live = _sources(cache, user_id, sorted(closed), "(c.valid_until IS NULL OR c.valid_until > ?)", [present])
    return {rid: rows for rid, rows in closed.items() if rid not in live}


def _sources(cache: Cache, user_id: str, turn_ids: Sequence[str], when: str,
             params: list[str]) -> dict[str, list[dict[str, Any]]]:
    if not turn_ids:
        return {}
    rows = cache.user(user_id).rows(
        "SELECT c.sources, c.valid_from, c.valid_until, c.superseded_by FROM claims c "
        f"WHERE c.user_id = ? AND {when} AND c.archived = 0 "
        f"AND ({' OR '.join('instr(c.sources, ?) > 0' for _ in turn_ids)})",
        [user_id, *params, *(f"#{i}\"" for i in turn_ids)],
    )
    wanted = set(turn_ids)
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        for ref in json.loads(r["sources"] or "[]"):
            rid = ref.rsplit("#", 1)[-1]
            if rid in wanted:
                out.setdefault(rid, []).append(r)
    return out


def successors(cache: Cache, user_id: str, wanted: dict[str, Cand], present: str,
                book: claimbook.Book | None = None,
                memo: dict[str, dict[str, Any] | None] | None = None) -> dict[str, dict[str, Any]]:
    """The claim now current at the end of each supersession chain (a few hops at most). ``memo``:
    answers kept on the book's ``echo.State`` for ``present``'s window (whether a claim is current
    changes only where ``present`` crosses one of the claims' bounds, and every claim's bounds are
    the window's)."""
    out: dict[str, dict[str, Any]] = {}
    if memo is not None and book is not None:
        for start in wanted:
            if start not in memo:
                memo[start] = successors(cache, user_id, {start: wanted[start]}, present, book).get(start)
            row = memo[start]
            if row is not None:
                out[start] = dict(row)
        return out
    for start in wanted:
        cid: str | None = start
        for _ in range(8):
            if cid is None:
                break
            if book is not None:
                found = book.by_id.get(cid)
                rows = [] if found is None else [dict(found)]
            else:
                rows = cache.user(user_id).rows(
                    f"SELECT {CLAIM_COLS}, c.valid_until AS valid_until, c.superseded_by AS superseded_by "
                    "FROM claims c WHERE c.id = ? AND +c.user_id = ? AND c.archived = 0", [cid, user_id])
            if not rows:
                break
            row = rows[0]
            if _current(row, present):
                out[start] = row
                break
            cid = row["superseded_by"]
    return out
