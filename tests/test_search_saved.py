"""What a fresh process reads back instead of rebuilding (index.vecfile): the same results as a
rebuild from SQLite, and a stale, corrupt or erased user's file is never used."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from markmem import Memory
from markmem.index import vecfile
from markmem.index import vectors as index

QUERIES = ["Where does the user live?", "pottery glaze kiln", "what about the dog", "sushi Berlin"]
TURNS = ["I live in Lisbon with my partner.", "We glazed a pottery bowl in the kiln.", "The dog loves the park.",
         "sushi in Berlin is great", "ok sounds good", "I moved to Porto."]


def open_mem(repo: Path) -> Memory:
    return Memory(repo, pii_engine="regex", vector_model="builtin", background=False)


def results(m: Memory, user: str = "alice") -> list[object]:
    return [[(h.id, h.score) for h in m.search(q, user_id=user, top_k=8)] for q in QUERIES]


def files(repo: Path) -> list[Path]:
    return sorted(p for p in (repo / ".markmem" / "cache").rglob("vec/*") if p.is_file())


@pytest.fixture
def mem(tmp_repo: Path):  # type: ignore[no-untyped-def]
    m = open_mem(tmp_repo)
    for who in ("alice", "bob"):
        m.add([{"role": "user", "content": f"{t} ({who})"} for t in TURNS], user_id=who)
    m.flush()
    yield m
    m.close()


def from_sqlite(m: Memory, monkeypatch: pytest.MonkeyPatch, user: str = "alice") -> list[object]:
    index.forget_all()
    with monkeypatch.context() as patch:
        patch.setattr(index, "SAVE", False)
        out = results(m, user)
    index.forget_all()
    return out


def test_a_fresh_process_reads_the_saved_matrix(mem: Memory, tmp_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    truth = from_sqlite(mem, monkeypatch)
    results(mem)
    assert [p.suffix for p in files(tmp_repo)].count(".f32") == 2  # alice's and bob's (compile refreshed both)
    index.forget_all()  # a new process
    reads = []
    real = vecfile.read
    monkeypatch.setattr(vecfile, "read", lambda *a: reads.append(real(*a)) or reads[-1])
    assert results(mem) == truth
    assert reads and reads[0] is not None and reads[0].kinds.count("turn") == len(TURNS)


def test_turns_added_since_are_appended(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    results(mem)
    mem.add("the kiln cracked my new pottery vase", user_id="alice")
    index.forget_all()
    got = results(mem)  # the saved rows, then the new turn from SQLite
    assert any("kiln" in h.text for h in mem.search("kiln vase", user_id="alice"))
    assert got == from_sqlite(mem, monkeypatch)


@pytest.mark.parametrize("damage", ["flip", "truncate", "meta", "stale", "rows", "deleted", "old-layout", "longer"])
def test_a_damaged_or_stale_file_is_ignored_and_rewritten(mem: Memory, tmp_repo: Path, damage: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    truth = from_sqlite(mem, monkeypatch)
    results(mem)
    data = next(p for p in files(tmp_repo) if p.suffix == ".f32" and p.name.startswith("alice."))
    meta = data.with_suffix(".json")
    if damage == "flip":
        raw = bytearray(data.read_bytes())
        raw[5] ^= 0x40
        data.write_bytes(bytes(raw))
    elif damage == "truncate":
        data.write_bytes(data.read_bytes()[:-4])
    elif damage == "meta":
        meta.write_text("{not json")
    elif damage == "rows":  # a byte of the kinds, rowids and ids after the JSON line
        raw = bytearray(meta.read_bytes())
        raw[-3] ^= 0x01
        meta.write_bytes(bytes(raw))
    elif damage == "deleted":
        data.unlink()
    elif damage == "old-layout":  # the rows as the JSON line of the previous layout: not read
        head = json.loads(meta.read_bytes().partition(b"\n")[0])
        rows = json.dumps([["turn"], ["x"], [1]]).encode()
        head.pop("format")
        meta.write_bytes(json.dumps({**head, "crc_rows": zlib.crc32(rows)}).encode() + b"\n" + rows)
    elif damage == "longer":  # a row more in the data than the metadata vouches for
        data.write_bytes(data.read_bytes() + bytes(4 * 256))
    else:  # a claim closed, a turn deleted: user_gen.changed moves on
        mem.context.cache.user("alice").db.execute("UPDATE user_gen SET changed = changed + 1 WHERE user_id='alice'")
    index.forget_all()
    assert results(mem) == (truth if damage != "stale" else from_sqlite(mem, monkeypatch))
    assert vecfile.read(mem.context.cache.user("alice").path, "alice", "markmem/minilm-m2v", 256,
                        index.stamp(mem.context.cache.user("alice"), "alice")) is not None  # rewritten


def test_erasure_and_reindex_delete_the_files(mem: Memory, tmp_repo: Path) -> None:
    results(mem)
    results(mem, "bob")
    assert any(p.name.startswith("bob.") for p in files(tmp_repo))
    mem.forget("bob")
    assert not any(p.name.startswith("bob.") for p in files(tmp_repo))
    assert any(p.name.startswith("alice.") for p in files(tmp_repo))
    mem.reindex()
    index.forget_all()
    assert not any(p.name.startswith("alice.") and p.suffix == ".json"
                   and vecfile.read(mem.context.cache.user("alice").path, "alice", "markmem/minilm-m2v", 256,
                                    index.stamp(mem.context.cache.user("alice"), "alice")) is None
                   for p in files(tmp_repo))


def test_the_rows_layout_round_trips_and_refuses_what_it_cannot_hold() -> None:
    kinds, ids, rowids = ["turn", "claim", "turn"], ["r-1", "c-2", "r-3é"], [4, -1, 9]
    packed = vecfile._pack(kinds, ids, rowids)
    assert packed is not None
    got_kinds, got_ids, got_rowids, turns = vecfile._unpack(packed, 3)
    assert (got_kinds, got_ids, got_rowids.tolist(), turns.tolist()) == (kinds, ids, rowids, [0, 2])
    empty = vecfile._unpack(vecfile._pack([], [], []) or b"", 0)
    assert (empty[0], empty[1], len(empty[2]), len(empty[3])) == ([], [], 0, 0)
    assert vecfile._pack(["turn"], ["a\nb"], [1]) is None  # an id the layout cannot hold: not saved
    assert vecfile._pack(["page"], ["a"], [1]) is None
    assert vecfile._pack(["turn"], ["a", "b"], [1]) is None
