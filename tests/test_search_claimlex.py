"""The claim lane's in-memory index (``index.claimlex``) gives SQLite's rows bit for bit: the same
claims, in the same order (ties by rowid, as FTS5's scan and the ORDER BY keep them), with the
same ``bm25`` floats, under every time filter; and it answers None (SQLite ranks) whenever it
cannot be sure: a stale stamp, a file shared with another user, a size that disagrees."""

from __future__ import annotations

import random
from pathlib import Path

from markmem import Memory
from markmem.index import claimlex
from markmem.read import fts
from markmem.read.query import parse

PLACES = ("Lisbon", "Porto", "Berlin", "Oslo", "Zürich", "Paris")
SHAPES = ("I live in {p} now.", "I work at {c} as an engineer.", "I think {f} is great.", "My sister lives in {p}.",
          "I moved to {p} last year.", "I prefer {f} to pizza.", "I work at {c} and I live in {p}.",
          "Actually I live in {p} these days.", "I started work at {c} in {p}.")
COMPANIES = ("Acme", "Globex", "Initech", "Café Luna")
FOODS = ("sushi", "ramen", "tacos", "crème brûlée")
QUERIES = ("Where does the user live?", "What does the user think about sushi?", "Which company does the user work at?",
           "live", "lives living lived", "work at Globex", "Zürich", "café", "crème brûlée", "x-ray",
           "Lisbon Porto Oslo", "sister", "engineer engineer", "unknownword", "I", "prefer pizza sushi ramen tacos",
           "moved last year")
FILTERS = ((None, None), ("2025-03-15T00:00:00Z", None), (None, "2025-05-01T00:00:00Z"),
           ("2025-02-01T00:00:00Z", "2025-06-01T00:00:00Z"), ("2024-01-01T00:00:00Z", None))


def _fill(m: Memory, user: str, seed: int, months: int = 6) -> None:
    rng = random.Random(seed)
    for month in range(1, months + 1):
        m.add([{"role": "user", "content": rng.choice(SHAPES).format(p=rng.choice(PLACES), c=rng.choice(COMPANIES),
                                                                     f=rng.choice(FOODS))} for _ in range(12)],
              user_id=user, occurred_at=f"2025-{month:02d}-10T10:00:00Z")
        m.flush()


def _both(cache, user: str, q: str, limit: int, as_of: str | None, known_at: str | None):  # type: ignore[no-untyped-def]
    p = parse(q)
    if p.match is None:
        return None
    snap = fts.snapshot(cache, user)
    claimlex.ENABLED = False
    try:
        want = fts.claim_lane(cache, p.match, user, limit, as_of, known_at, p.terms, snap)
    finally:
        claimlex.ENABLED = True
    for _ in range(claimlex.SQL_FIRST):  # SQLite answers a process's first claim searches
        fts.claim_lane(cache, p.match, user, limit, as_of, known_at, p.terms, snap)
    got = [fts.claim_lane(cache, p.match, user, limit, as_of, known_at, p.terms, snap) for _ in range(2)]
    return want, got


def _compare(m: Memory, user: str) -> int:
    """Every query, filter and limit, SQLite against the index; the number of comparisons."""
    cache = m.context.cache.user(user)
    n = 0
    for q in QUERIES:
        for as_of, known_at in FILTERS:
            for limit in (1, 3, 40, 1000):
                pair = _both(cache, user, q, limit, as_of, known_at)
                if pair is None:
                    continue
                want, got = pair
                assert got[0] == got[1] == want, (q, as_of, known_at, limit)
                n += 1
    return n


def test_the_claim_index_ranks_as_fts5(mem: Memory) -> None:
    _fill(mem, "alice", 3)
    cache = mem.context.cache.user("alice")
    claims = cache.count("claims", "alice")
    assert claims > 20
    closed = cache.db.execute("SELECT count(*) FROM claims WHERE valid_until IS NOT NULL").fetchone()[0]
    assert closed > 0  # superseded claims: the current filter leaves them out
    assert _compare(mem, "alice") > 200
    index = claimlex._INDEXES[(str(cache.path), "alice")]
    assert index.ok and len(index.rows) == claims  # the index answered, it did not hand over to SQLite
    ties = cache.db.execute("SELECT count(*) - count(DISTINCT body) FROM claims").fetchone()[0]
    assert ties > 0  # equal bodies score equal: their order is SQLite's


def test_a_changed_ledger_is_read_again(mem: Memory) -> None:
    _fill(mem, "alice", 4, months=3)
    cache = mem.context.cache.user("alice")
    _compare(mem, "alice")
    before = claimlex._INDEXES[(str(cache.path), "alice")]
    _fill(mem, "alice", 5, months=2)  # new claims, and old ones closed by them
    assert _compare(mem, "alice") > 0
    after = claimlex._INDEXES[(str(cache.path), "alice")]
    assert after is not before and after.stamp != before.stamp
    cache.db.execute("UPDATE claims SET archived = 1 WHERE rowid = (SELECT min(rowid) FROM claims)")  # an update only
    _compare(mem, "alice")
    assert claimlex._INDEXES[(str(cache.path), "alice")] is not after


def test_a_file_shared_by_two_users_is_ranked_by_sqlite(tmp_repo: Path) -> None:
    m = Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False, cache_layout="one")
    try:
        _fill(m, "alice", 6, months=3)
        _fill(m, "bob", 7, months=3)
        assert _compare(m, "alice") > 0 and _compare(m, "bob") > 0  # statistics over both users' claims
        cache = m.context.cache.user("alice")
        assert not claimlex._INDEXES[(str(cache.path), "alice")].ok
    finally:
        m.close()


def test_a_size_that_disagrees_hands_over_to_sqlite(mem: Memory) -> None:
    _fill(mem, "alice", 8, months=2)
    cache = mem.context.cache.user("alice")
    snap = fts.snapshot(cache, "alice")
    assert snap.claims_stamp is not None
    rows = cache.db.execute(f"SELECT {claimlex._COLS} FROM claims WHERE user_id = 'alice' ORDER BY rowid").fetchall()
    sizes = dict(cache.db.execute("SELECT id, sz FROM claims_fts_docsize").fetchall())
    assert claimlex.build(snap.claims_stamp, rows, sizes).ok
    wrong = {**sizes, rows[0][0]: bytes([99])}
    assert not claimlex.build(snap.claims_stamp, rows, wrong).ok
    odd = [(*rows[0][:8], 20250101, *rows[0][9:]), *rows[1:]]  # a date SQL would compare as a number
    assert not claimlex.build(snap.claims_stamp, odd, sizes).ok


def test_the_first_claim_searches_of_a_process_ask_sqlite_and_an_erasure_drops_the_index(mem: Memory) -> None:
    from markmem.erase.scrub import forget_in_memory

    _fill(mem, "alice", 9, months=2)
    claimlex.forget_all()
    cache = mem.context.cache.user("alice")
    key = (str(cache.path), "alice")
    for _ in range(claimlex.SQL_FIRST):
        mem.search("Where do I live?", user_id="alice")
        assert key not in claimlex._INDEXES
    mem.search("Where do I live?", user_id="alice")
    assert key in claimlex._INDEXES
    forget_in_memory("alice")
    assert key not in claimlex._INDEXES


def test_one_valued_facts_are_kept_per_window_between_claim_boundaries() -> None:
    """``echo.one_valued`` keeps its answer for a kept ledger until ``at`` crosses a claim's start or
    end: at every moment it equals the answer computed afresh."""
    from markmem.erase.scrub import forget_in_memory
    from markmem.read import echo

    rng = random.Random(4)
    days = [f"2025-{m:02d}-{d:02d}T10:00:00Z" for m in range(1, 7) for d in (1, 15)]
    ledger, preds = [], {}
    for i in range(60):
        start = rng.choice([None, *days])
        end = rng.choice([None, None, *[d for d in days if start is None or d > start]])
        ledger.append({"id": f"c{i}", "subject": rng.choice(["alice", "user", "bob", None]), "value": f"v{i % 7}",
                       "valid_from": start, "valid_until": end})
        preds[f"c{i}"] = rng.choice(["lives_in", "works_at", "likes", ""])
    moments = sorted({*days, "2024-12-31T00:00:00Z", "2025-03-01T10:00:00Z", "2026-01-01T00:00:00Z"})
    for at in moments + moments[::-1] + [rng.choice(moments) for _ in range(40)]:
        assert echo.one_valued(ledger, preds, "alice", at) == echo._one_valued(ledger, preds, "alice", at), at
    assert echo._ONE_VALUED
    forget_in_memory("alice")
    assert not echo._ONE_VALUED
