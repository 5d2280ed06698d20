"""New turns are linked before they are inserted (``index.text.link_new_turns``), so each is indexed
once. The rows must end exactly as the slow path leaves them: insert, then relink (every column,
rowids included, the FTS index's terms and counts, the per-user generation counters, BM25 scores)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from markmem.index import cache as cache_mod
from markmem.index.cache import Cache
from markmem.index.text import link_neighbours
from markmem.model import RawEntry

WORDS = ["tea", "trip", "Porto", "jazz", "what", "where", "dog", "seats", "Kai:", "lunch"]


class SlowCache(Cache):
    """Insert, then relink: the path every batch took before."""

    def upsert_raw(self, entries, compiled=False):  # type: ignore[no-untyped-def]
        rows = [cache_mod._raw_row(e, compiled) for e in entries]
        with cache_mod._Tx(self.db):
            self.db.executemany(cache_mod._RAW_SQL, rows)
            link_neighbours(self.db, [r[0] for r in rows])


def _state(cache: Cache) -> tuple[list, list, list, list]:
    db = cache.db
    raw = db.execute("SELECT * FROM raw ORDER BY rowid").fetchall()
    vocab = db.execute("SELECT term, doc, cnt FROM raw_vocab ORDER BY term").fetchall()
    gen = db.execute("SELECT * FROM user_gen ORDER BY user_id").fetchall()
    ranked = db.execute("SELECT rowid, bm25(raw_fts, 1.0, 0.3) FROM raw_fts WHERE raw_fts MATCH 'tea OR trip OR jazz' "
                        "ORDER BY rowid").fetchall()
    return raw, vocab, gen, ranked


turn = st.tuples(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
    st.booleans(),  # a question
    st.sampled_from(["user", "assistant"]),
    st.sampled_from([None, None, "Kai"]),  # speaker
    st.sampled_from([None, None, "r1"]),  # run id
    st.sampled_from([None, None, None, "override-instructions"]),  # quarantined
    st.sampled_from([None, None, "2023-05-08T13:56:00Z", "2023-05-08T19:00:00Z"]),  # occurred_at
)
batch = st.tuples(
    st.sampled_from(["alice", "alice", "bob"]),
    st.integers(0, 5),  # recording minute: equal, earlier and later than the previous batches
    st.lists(turn, min_size=1, max_size=6),
)


def _entries(batches: list, tag: str) -> list[list[RawEntry]]:
    out = []
    for b, (user, minute, turns) in enumerate(batches):
        stamp = f"2026-08-02T10:0{minute}:00Z"
        out.append([RawEntry(id=f"r-{tag}{b:03d}{i:02d}", user_id=user, role=role,
                             content=text + ("?" if question else "."), recorded_at=stamp, occurred_at=occurred,
                             speaker=speaker, run_id=run, quarantined=held, path=f"raw/u/{user}/x.jsonl")
                    for i, (text, question, role, speaker, run, held, occurred) in enumerate(turns)])
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(batch, min_size=1, max_size=6))
def test_linking_first_leaves_the_rows_inserting_then_relinking_leaves(tmp_path_factory, batches) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("links")
    fast, slow = Cache(folder / "fast.db"), SlowCache(folder / "slow.db")
    for c in (fast, slow):
        c.create()
    for group in _entries(batches, "a"):
        fast.upsert_raw(group)
        slow.upsert_raw(group)
        assert _state(fast) == _state(slow)
    fast.close()
    slow.close()


def test_a_batch_of_several_times_or_a_known_id_takes_the_slow_path(tmp_path: Path) -> None:
    fast, slow = Cache(tmp_path / "fast.db"), SlowCache(tmp_path / "slow.db")
    for c in (fast, slow):
        c.create()
    first = _entries([("alice", 1, [("where is the tea", True, "user", None, None, None, None)] * 3)], "b")[0]
    mixed = [*first[:2], RawEntry(id="r-c", user_id="alice", role="assistant", content="in Porto.",
                                  recorded_at="2026-08-02T10:00:00Z", path="raw/u/alice/x.jsonl")]
    for group in (first[:2], mixed, first):  # an id already present: its row is kept, compiled raised
        fast.upsert_raw(group)
        slow.upsert_raw(group)
        assert _state(fast) == _state(slow)
    fast.upsert_raw(first, compiled=True)
    slow.upsert_raw(first, compiled=True)
    assert _state(fast) == _state(slow)


def test_a_caller_transaction_is_joined(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c.db")
    cache.create()
    group = _entries([("alice", 0, [("what about jazz", True, "user", None, None, None, None),
                                    ("lunch with Kai", False, "assistant", None, None, None, None)])], "d")[0]
    with cache.tx():
        cache.upsert_raw(group)
        assert cache.db.in_transaction
    rows = cache.db.execute("SELECT question, answer, context FROM raw ORDER BY rowid").fetchall()
    assert rows[0][0] == 1 and rows[0][1] is not None and rows[1][2].startswith("what about jazz")
