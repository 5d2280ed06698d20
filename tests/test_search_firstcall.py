"""A fresh process's first search: what it no longer loads or builds, with the same answers."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from markmem import Memory
from markmem.adapters import wordpiece
from markmem.adapters.vecspec import BUILTIN_DIR
from markmem.index import claimbook, topk


def test_unique_is_numpys() -> None:
    rng = random.Random(4)
    for n in (0, 1, 2, 7, 300):
        a = np.array([rng.randint(0, 40) for _ in range(n)], np.int32)
        got, want = topk._unique(a), np.unique(a)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_a_first_search_does_not_import_numpy_ma(tmp_repo: Path) -> None:
    """``np.unique`` imports ``numpy.ma`` on its first call (~30 ms); the search path does not use it."""
    m = Memory(tmp_repo, pii_engine="regex", vector_model="builtin", background=False)
    m.add([{"role": "user", "content": f"I live in Lisbon and the user works at Acme {i}"} for i in range(80)],
          user_id="alice")
    m.flush()
    m.close()
    code = textwrap.dedent(f"""
        import sys
        from markmem import Memory
        from markmem.index import topk
        topk.EARLY_AT = 10  # bounded top-k for these 80 turns, as for thousands
        m = Memory({str(tmp_repo)!r}, pii_engine="regex", vector_model="builtin", background=False)
        for q in ("Where does the user live?", "Which company does the user work at?", "Lisbon Acme"):
            m.search(q, user_id="alice")
            m.search(q, user_id="alice", format="context")
        print("numpy" in sys.modules, "numpy.ma" in sys.modules)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]


def test_a_few_hundred_pieces_are_looked_up_without_building_the_dict() -> None:
    fast = wordpiece.WordPiece.from_file(BUILTIN_DIR / "tokenizer.json")
    assert fast is not None and isinstance(fast.vocab, wordpiece.Sorted)
    texts = ["What did Sam say about pottery glaze?", "Alex: hiking trip to the bakotizu mountains, so much fun"] * 3
    ids = [fast.ids(t) for t in texts]
    assert isinstance(fast.vocab, wordpiece.Sorted)  # a first search's words: bisection only
    fast._dict()
    assert isinstance(fast.vocab, dict) and [fast.ids(t) for t in texts] == ids
    fast._words = {}
    assert [fast.ids(t) for t in texts] == ids


def test_claim_sources_parsed_in_one_go_are_the_row_by_row_ones() -> None:
    rows: list[dict[str, object]] = [{"sources": '["raw/u/a/2025-01-01.jsonl#r-1"]'}, {"sources": None},
                                     {"sources": "[]"}, {"sources": '["x#r-2", "y", ["z]"]]'}]
    assert claimbook._sources(rows) == [json.loads(str(r["sources"] or "[]")) for r in rows]
    odd = [{"sources": ' ["a"]'}, {"sources": '{"a": 1}'}, {"sources": '["b"]'}]  # not each one array: row by row
    assert claimbook._sources(odd) == [["a"], {"a": 1}, ["b"]]
    with pytest.raises(ValueError):  # two arrays in one row: an error, as row by row, never a shifted split
        claimbook._sources([*rows, {"sources": '["a"], ["b"]'}])


def test_the_echo_ledger_reads_sources_and_closers_as_row_by_row() -> None:
    from markmem.read import echo

    rows = [{"sources": '["raw/u/a/2025.jsonl#r-1", "r-2"]', "closed_by": None, "value": "Lisbon"},
            {"sources": None, "closed_by": '["raw/u/a/2025.jsonl#r-9"]', "value": "a nurse"},
            {"sources": "[]", "closed_by": "", "value": ""}]
    book = type("Book", (), {"by_id": {i: r for i, r in enumerate(rows)}})()
    got = echo.ledger(None, "a", book)  # type: ignore[arg-type]  # a book: no cache read
    assert [r["_refs"] for r in got] == [["r-1", "r-2"], [], []]
    assert [r["_closers"] for r in got] == [[], ["r-9"], []]
    assert echo.ledger(None, "a", book) is got  # kept on the book between searches


def test_matrix_positions_are_the_row_by_row_dict() -> None:
    from markmem.index import vectors

    rng = random.Random(9)
    m = vectors.Matrix(("e", 0, 0), 4, data=np.zeros((0, 4), np.float32))
    want: dict[tuple[str, str], int] = {}
    for batch in range(5):
        kinds = [rng.choice(["turn", "claim"]) for _ in range(30)]
        ids = [f"x{rng.randint(0, 40)}" for _ in range(30)]  # repeats: the later row wins
        m.append(kinds, ids, np.zeros((30, 4), np.float32), list(range(batch * 30, batch * 30 + 30)))
        want.update(zip(zip(kinds, ids, strict=True), range(m.n - 30, m.n), strict=True))
        probes = [(k, f"x{i}") for k in ("turn", "claim", "page") for i in range(45)]
        assert [m.pos.get(p) for p in probes] == [want.get(p) for p in probes]



def test_matrix_turn_rows_list_is_turn_rows_before_and_after_its_dict() -> None:
    """A warm process finds a turn's row by a rowid dict (``turn_rows_list``): the rows
    ``turn_rows``' searchsorted gives, a wrong id or an unknown rowid -1, after appends too."""
    from markmem.index import vectors

    rng = random.Random(4)
    m = vectors.Matrix(("e", 0, 0), 2, data=np.zeros((0, 2), np.float32))
    rowid = 0
    for batch in range(vectors.ROWID_DICT_AFTER + 6):
        kinds = [rng.choice(["turn", "turn", "claim"]) for _ in range(20)]
        ids = [f"{k[0]}{batch}-{i}" for i, k in enumerate(kinds)]
        rowids = []
        for _ in kinds:
            rowid += rng.randint(1, 3)  # ascending, with gaps
            rowids.append(rowid)
        m.append(kinds, ids, np.zeros((20, 2), np.float32), rowids)
        turns = [(r, i) for k, i, r in zip(kinds, ids, rowids, strict=True) if k == "turn"]
        assert m.turn_rowid is not None
        seen = [(r, i) for r, i in zip(m.turn_rowid.tolist(), [m.ids[a] for a in m.turn_at.tolist()], strict=True)]
        probes = rng.sample(seen, min(10, len(seen))) + turns[:3] \
            + [(r, "other") for r, _ in turns[:2]] + [(rowid + 5, "t-new"), (0, "none")]
        ask_r, ask_i = [r for r, _ in probes], [i for _, i in probes]
        assert m.turn_rows_list(ask_r, ask_i) == m.turn_rows(ask_r, ask_i).tolist()  # type: ignore[union-attr]
    assert m._by_rowid is not None  # the dict served the later batches


def test_matrix_positions_answer_the_same_from_many_threads() -> None:
    import threading

    from markmem.index import vectors

    kinds = ["turn" if i % 3 else "claim" for i in range(3000)]
    ids = [f"u{i}" for i in range(3000)]
    want = dict(zip(zip(kinds, ids, strict=True), range(3000), strict=True))
    probes = list(want) + [("turn", "nope")]
    for _ in range(5):
        m = vectors.Matrix(("e", 0, 0), 2, data=np.zeros((0, 2), np.float32))
        m.append(kinds, ids, np.zeros((3000, 2), np.float32), list(range(3000)))
        bad: list[object] = []

        def check(m: vectors.Matrix = m, bad: list[object] = bad) -> None:
            bad.extend(p for p in probes if m.pos.get(p) != want.get(p))

        threads = [threading.Thread(target=check) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert bad == []


def _warm_repo(repo: Path) -> None:
    m = Memory(repo, pii_engine="regex", vector_model="builtin", background=False)
    for i in range(6):
        m.add([{"role": "user", "content": f"I live in Lisbon and I work at Acme {i}"},
               {"role": "user", "content": f"Sam said the pottery glaze cracked in the kiln again ({i})"},
               {"role": "user", "content": f"My dog Rex loves the park near the lake {i}"}], user_id="alice")
    m.add("I moved to Porto last month", user_id="alice")
    m.flush()
    m.close()


_FIRST = """
import json, sys
from markmem import Memory
from markmem.index import claimbook, lexicon
m = Memory(sys.argv[1], pii_engine="regex", vector_model="builtin", background=False)
if sys.argv[2] == "warm":
    m.warm("alice")
    assert "numpy" in sys.modules and any(k[1] == "alice" for k in lexicon._LEX), "not loaded"
    assert any(k[1] == "alice" for k in claimbook._BOOKS), "no claim book"
out = []
for q in ("Where does the user live?", "What did Sam say about pottery glaze?", "Rex park"):
    out.append([[h.id, h.score] for h in m.search(q, user_id="alice", top_k=8)])
    out.append(m.search(q, user_id="alice", format="context").text)
print(json.dumps(out))
"""


def test_a_search_after_warm_is_a_cold_first_searchs(tmp_repo: Path) -> None:
    """``Memory.warm`` loads what a first search would, and nothing ranks differently: the same hits,
    scores and packs as a fresh process's first searches without it."""
    _warm_repo(tmp_repo)
    got = {}
    for mode in ("cold", "warm", "cold"):  # the second cold run reads what the warm one saved
        proc = subprocess.run([sys.executable, "-c", _FIRST, str(tmp_repo), mode], capture_output=True, text=True,
                              timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
        got.setdefault(mode, json.loads(proc.stdout))
        assert json.loads(proc.stdout) == got["cold"]
    assert got["cold"][0] and got["cold"][2]  # something was found


def test_warm_checks_the_user_and_needs_no_user(tmp_repo: Path) -> None:
    from markmem.errors import InvalidUserId

    _warm_repo(tmp_repo)
    m = Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False)
    try:
        with pytest.raises(InvalidUserId):
            m.warm("../bob")
        m.warm()  # the read side only
        m.warm("nobody")  # a user with no memories: nothing to load, nothing created
        assert m.search("Lisbon", user_id="nobody") == []
        assert m.get_all("nobody") == []
        hits = m.search("Where does the user live?", user_id="alice")
        assert hits and hits[0].user_id == "alice"
    finally:
        m.close()
