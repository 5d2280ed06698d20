"""Bad input gets a clear, typed error and changes nothing."""

from __future__ import annotations

import pytest

from markmem import InvalidInput, InvalidUserId, Memory
from tests.conftest import git

BAD_IDS = ["", "   ", None, 42, "../alice", "a/b", "a\\b", ".hidden", "ali\nce", "al\x00ice", "ALICE", "Alice",
           "a" * 65, "..", "alice/../bob", "-x", "ali ce", "é"]


def snapshot(mem: Memory) -> tuple[str, str, int]:
    return git(mem.root, "rev-parse", "HEAD"), git(mem.root, "status", "--porcelain"), mem.stats()["raw_entries"]


@pytest.mark.parametrize("user_id", BAD_IDS)
def test_bad_user_ids_are_rejected_everywhere(mem: Memory, user_id: object) -> None:
    before = snapshot(mem)
    with pytest.raises(InvalidUserId):
        mem.add("I live in Lisbon", user_id=user_id)  # type: ignore[arg-type]
    with pytest.raises(InvalidUserId):
        mem.search("Lisbon", user_id=user_id)  # type: ignore[arg-type]
    with pytest.raises(InvalidUserId):
        mem.get_all(user_id)  # type: ignore[arg-type]
    assert snapshot(mem) == before
    assert not (mem.root / "raw" / "u").exists() or sorted(p.name for p in (mem.root / "raw" / "u").iterdir()) == []


def test_distinct_ids_stay_distinct(mem: Memory) -> None:
    for uid in ("alice", "alice.b", "alice-b", "alice_b"):
        mem.add(f"I live in city-{uid}", user_id=uid)
    mem.flush()
    for uid in ("alice", "alice.b", "alice-b", "alice_b"):
        hits = mem.search("live city", user_id=uid, top_k=10)
        assert {h.user_id for h in hits} == {uid}
        assert any(f"city-{uid}" in h.text for h in hits)


@pytest.mark.parametrize("bad", [None, "", "   \n\t", b"\xff\xfe\x00binary", "nul\x00byte", "bell\x07", [],
                                 [{"role": "user"}], [{"role": "wizard", "content": "hi"}], [42], {"content": None}])
def test_bad_messages_are_rejected_and_nothing_changes(mem: Memory, bad: object) -> None:
    before = snapshot(mem)
    with pytest.raises(InvalidInput):
        mem.add(bad, user_id="alice")
    assert snapshot(mem) == before


def test_size_limit_is_configurable(tmp_repo) -> None:
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False, max_input_bytes=100) as mem:
        with pytest.raises(InvalidInput, match="over the limit"):
            mem.add("x" * 101, user_id="alice")
        with pytest.raises(InvalidInput, match="over the limit"):
            mem.add(["x" * 60, "y" * 60], user_id="alice")
        mem.add("x" * 100, user_id="alice")


def test_default_limit_is_one_megabyte(mem: Memory) -> None:
    with pytest.raises(InvalidInput):
        mem.add("a" * 1_000_001, user_id="alice")
    r = mem.add("a " * 400_000, user_id="alice")  # big but allowed
    assert len(r.ids) == 1


@pytest.mark.parametrize("kwargs", [{"metadata": "nope"}, {"metadata": {"x": object()}}, {"occurred_at": "yesterday"},
                                    {"occurred_at": 12}])
def test_bad_options(mem: Memory, kwargs: dict) -> None:
    before = snapshot(mem)
    with pytest.raises(InvalidInput):
        mem.add("I live in Lisbon", user_id="alice", **kwargs)
    assert snapshot(mem) == before


@pytest.mark.parametrize("kwargs", [{"top_k": 0}, {"top_k": "5"}, {"format": "xml"}, {"as_of": "soon"}])
def test_bad_search_options(mem: Memory, kwargs: dict) -> None:
    with pytest.raises(InvalidInput):
        mem.search("x", user_id="alice", **kwargs)


def test_bytes_utf8_accepted(mem: Memory) -> None:
    r = mem.add("I live in Zürich".encode(), user_id="alice")
    assert mem.get(r.ids[0]).content == "I live in Zürich"  # type: ignore[union-attr]


def test_empty_query_returns_nothing(mem: Memory) -> None:
    mem.add("I live in Lisbon", user_id="alice")
    assert mem.search("", user_id="alice") == [] and mem.search("the a of", user_id="alice") == []
