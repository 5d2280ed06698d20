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


@pytest.mark.parametrize("bad", [None, "", "   \n\t", b"\xff\xfe\x00binary", "\x00\x0b\x0c", [], ["", "  "],
                                 [{"role": "user"}], [{"role": "wizard", "content": "hi"}], [42], {"content": None},
                                 [{"role": "user", "content": "\x02"}, {"role": "assistant", "content": ""}]])
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
                                    {"occurred_at": 12}, {"occurred_at": "0001-01-01T00:00:00Z"},
                                    {"occurred_at": "9999-12-31T23:00:00-05:00"}, {"occurred_at": "1899-12-31"},
                                    {"occurred_at": "2200-01-01"}])
def test_bad_options(mem: Memory, kwargs: dict) -> None:
    before = snapshot(mem)
    with pytest.raises(InvalidInput):
        mem.add("I live in Lisbon", user_id="alice", **kwargs)
    assert snapshot(mem) == before


@pytest.mark.parametrize("kwargs", [{"top_k": 0}, {"top_k": "5"}, {"top_k": True}, {"format": "xml"},
                                    {"as_of": "soon"}, {"budget": 0}, {"budget": -5}, {"budget": True},
                                    {"budget": 2.5}, {"format": "context", "budget": 0}])
def test_bad_search_options(mem: Memory, kwargs: dict) -> None:
    with pytest.raises(InvalidInput):
        mem.search("x", user_id="alice", **kwargs)


def test_bytes_utf8_accepted(mem: Memory) -> None:
    r = mem.add("I live in Zürich".encode(), user_id="alice")
    assert mem.get(r.ids[0]).content == "I live in Zürich"  # type: ignore[union-attr]


def test_empty_query_returns_nothing(mem: Memory) -> None:
    mem.add("I live in Lisbon", user_id="alice")
    assert mem.search("", user_id="alice") == [] and mem.search("the a of", user_id="alice") == []


# --- real chat text (issue #13 part 8) ----------------------------------------------------------
def test_control_characters_are_replaced_and_reported(mem: Memory) -> None:
    turns = [{"role": "user", "content": "I live in\x0bOslo\x02 now"},
             {"role": "assistant", "content": "Noted.\tSee\nyou"}]
    r = mem.add(turns, user_id="alice")
    assert len(r.ids) == 2 and r.replaced == (r.ids[0],) and r.skipped == ()
    assert mem.get(r.ids[0]).content == "I live in Oslo  now"  # type: ignore[union-attr]
    assert mem.get(r.ids[1]).content == "Noted.\tSee\nyou"  # tab and newline stay  # type: ignore[union-attr]
    mem.flush()
    assert any("Oslo" in h.text for h in mem.search("Oslo", user_id="alice"))


def test_empty_turns_inside_a_list_are_skipped_and_reported(mem: Memory) -> None:
    turns = [{"role": "user", "content": "I like jazz"}, {"role": "assistant", "content": ""},
             {"role": "user", "content": " \x0c "}, "I play chess", {"role": "assistant", "content": None}]
    r = mem.add(turns, user_id="alice")
    assert r.skipped == (1, 2, 4) and len(r.ids) == 2
    assert [mem.get(i).content for i in r.ids] == ["I like jazz", "I play chess"]  # type: ignore[union-attr]


def test_occurred_at_inside_the_documented_range_is_accepted(mem: Memory) -> None:
    for when in ("1900-01-01", "2199-12-31T23:59:59Z", "1987-06-05T04:03:02+02:00"):
        r = mem.add("I was born in Oslo", user_id="alice", occurred_at=when)
        assert mem.get(r.ids[0]).occurred_at.startswith(when[:4])  # type: ignore[union-attr]


def test_search_budget_is_honoured_and_a_lone_surrogate_is_harmless(mem: Memory) -> None:
    mem.add(["I live in Oslo and work as a nurse at the city hospital"] * 3, user_id="alice")
    mem.flush()
    small = mem.search("Oslo nurse", user_id="alice", format="context", budget=8)
    large = mem.search("Oslo nurse", user_id="alice", format="context", budget=4000)
    assert small.budget == 8 and small.tokens <= 8 < large.tokens  # type: ignore[union-attr]
    assert isinstance(mem.search("Oslo \ud800 nurse", user_id="alice"), list)
