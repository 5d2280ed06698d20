"""Lexical lanes over FTS5 (BM25): claims and raw turns, filtered by user and by time."""

from __future__ import annotations

from typing import Any

from ..index.cache import Cache


def claim_lane(cache: Cache, match: str, user_id: str, limit: int, as_of: str | None, known_at: str | None) -> list[dict[str, Any]]:
    where, params = _claim_time(as_of, known_at)
    sql = (
        "SELECT c.*, bm25(claims_fts) AS bm25 FROM claims_fts JOIN claims c ON c.rowid = claims_fts.rowid "
        f"WHERE claims_fts MATCH ? AND c.user_id = ? AND c.archived = 0 {where} ORDER BY bm25 LIMIT ?"
    )
    return cache.rows(sql, [match, user_id, *params, limit])


def turn_lane(cache: Cache, match: str, user_id: str, limit: int, as_of: str | None, known_at: str | None) -> list[dict[str, Any]]:
    where, params = _turn_time(as_of, known_at)
    sql = (
        "SELECT r.*, bm25(raw_fts) AS bm25 FROM raw_fts JOIN raw r ON r.rowid = raw_fts.rowid "
        f"WHERE raw_fts MATCH ? AND r.user_id = ? AND r.quarantined IS NULL {where} ORDER BY bm25 LIMIT ?"
    )
    return cache.rows(sql, [match, user_id, *params, limit])


def _claim_time(as_of: str | None, known_at: str | None) -> tuple[str, list[str]]:
    clauses, params = [], []
    if as_of is None and known_at is None:
        clauses.append("c.valid_until IS NULL")
    if as_of is not None:
        clauses.append("(c.valid_from IS NULL OR c.valid_from <= ?) AND (c.valid_until IS NULL OR c.valid_until > ?)")
        params += [as_of, as_of]
    if known_at is not None:
        clauses.append("c.recorded_at <= ? AND (c.closed_at IS NULL OR c.closed_at > ?)")
        params += [known_at, known_at]
    return "".join(" AND " + c for c in clauses), params


def _turn_time(as_of: str | None, known_at: str | None) -> tuple[str, list[str]]:
    clauses, params = [], []
    if as_of is not None:
        clauses.append("r.valid_at <= ?")
        params.append(as_of)
    if known_at is not None:
        clauses.append("r.recorded_at <= ?")
        params.append(known_at)
    return "".join(" AND " + c for c in clauses), params
