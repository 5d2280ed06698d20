"""The write path's speed changes keep its results: the same rule literals, the same cache rows
(neighbour context, question flags, answer links, FTS) as a rebuild, the same queue rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markmem import Memory
from markmem.index import split
from markmem.write.extract_rules import ALL_NEEDS, present_needs

SAMPLES = [
    "", "i", "i love hiking and jazz", "my favourite colour is teal", "i no longer eat meat",
    "from next month i'll work at ostara", "lol that movie was wild (12)", "i'm based in porto now",
    "my mum lives in malaga", "sorry, i meant tuesday", "we moved to lisbon!", "i quit", "ok",
]


def brute(low: str) -> set[str]:
    return {n for n in ALL_NEEDS if n in low}


@pytest.mark.parametrize("text", SAMPLES)
def test_present_needs_is_the_plain_lookup(text: str) -> None:
    assert present_needs(text) == brute(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*ALL_NEEDS[:200], " ", "x", "'", "my ", " is "]), max_size=8).map("".join))
def test_present_needs_on_glued_literals(text: str) -> None:
    """Literals glued together overlap in every way a clause could make them."""
    assert present_needs(text) == brute(text)


def _turn_rows(mem: Memory, user: str) -> list[tuple]:
    db = mem.context.cache.user(user).db
    sql = "SELECT id, context, question, answer IS NOT NULL FROM raw ORDER BY recorded_at, rowid"
    return db.execute(sql).fetchall()


def _fts_hits(mem: Memory, user: str, term: str) -> list[str]:
    db = mem.context.cache.user(user).db
    sql = "SELECT raw.id FROM raw_fts JOIN raw ON raw.rowid = raw_fts.rowid WHERE raw_fts MATCH ? ORDER BY raw.id"
    return [r[0] for r in db.execute(sql, (term,))]


def test_a_list_and_single_adds_give_the_rows_a_rebuild_gives(tmp_repo: Path) -> None:
    chat = [{"role": "user" if i % 2 == 0 else "assistant",
             "content": f"question {i} about the trip?" if i % 4 == 0 else f"answer {i} with tea"} for i in range(20)]
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        mem.add("I live in Porto", user_id="alice")
        result = mem.add(chat, user_id="alice")
        mem.add("and I love jazz", user_id="alice")
        assert len(result.ids) == 20
        assert mem.context.queue.pending("alice") == 22
        live = _turn_rows(mem, "alice"), _fts_hits(mem, "alice", "tea"), _fts_hits(mem, "alice", "trip")
        assert any(ctx for _id, ctx, _q, _a in live[0]), "neighbour context was written"
        mem.reindex()
        rebuilt = _turn_rows(mem, "alice"), _fts_hits(mem, "alice", "tea"), _fts_hits(mem, "alice", "trip")
        assert live == rebuilt
        mem.flush()
        assert mem.context.queue.pending() == 0


def test_an_open_transaction_is_joined_not_nested(tmp_repo: Path) -> None:
    """upsert_raw inside the cache's own transaction (an import, a rebuild) writes through it."""
    from dataclasses import replace

    from markmem.write import pipeline

    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        mem.add("first", user_id="bob")
        entries, _result = pipeline.prepare(mem.context, ["second", "third"], "bob")
        cache = mem.context.cache
        with cache.tx():
            cache.upsert_raw([replace(e, path="raw/u/bob/extra.jsonl") for e in entries])
        rows = cache.user("bob").rows("SELECT content, context FROM raw ORDER BY rowid")
        assert [r["content"] for r in rows] == ["first", "second", "third"]
        assert rows[1]["context"] == "first\nthird"


@pytest.mark.parametrize(("soft", "files"), [(100, 32), (1024, 42), (20_000, 833), (10**9, 1024)])
def test_user_files_kept_open_follow_the_descriptor_limit(monkeypatch: pytest.MonkeyPatch, soft: int,
                                                          files: int) -> None:
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _which: (soft, soft))
    assert split._max_open() == files


def test_unlimited_descriptors_keep_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert split._max_open() == 1024
