"""What a fresh process reads back instead of rebuilding: the lexicon (index.lexstore), the entity
graph (read.graphstore) and the claim book (index.claimbook). The same results, bit for bit, as a process
that rebuilds them; a stale, damaged or foreign file is never used (rebuilt and rewritten, no error);
erasure and reindex delete them.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from markmem import Memory
from markmem.index import claimbook, lexicon, lexstore, savefile, vectors
from markmem.read import fts, graph, graphstore

PEOPLE = ["Anna", "Marco", "Priya", "Tom"]
PLACES = ["Lisbon", "Porto", "Berlin", "Oslo"]
QUERIES = ["Where does Anna live?", "pottery glaze kiln", "What did Marco say about Berlin?", "sushi Oslo",
           "hiking trail with Priya", "Tom bread sourdough", "café naïve Zürich", "What does the user think?"]
WORDS = "pottery glaze kiln hiking trail sourdough bread sushi ramen café naïve Zürich lake tent park".split()


def turns(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
        shape = i % 4
        if shape == 0:
            out.append(f"My friend {rng.choice(PEOPLE)} lives in {rng.choice(PLACES)}.")
        elif shape == 1:
            out.append(f"{rng.choice(PEOPLE)} told me about {words}.")
        else:
            out.append(f"I think {words} in {rng.choice(PLACES)} is great.")
    return out


@pytest.fixture(autouse=True)
def graph_lane_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph lane is off by default (bench/results/recall.md); its saved graph is tested with it on."""
    from markmem.read import fuse, search

    monkeypatch.setattr(search, "DEFAULT", fuse.Recipe(graph_depth=10))


def open_mem(repo: Path) -> Memory:
    return Memory(repo, pii_engine="regex", vector_model="builtin", background=False)


@pytest.fixture
def repo(tmp_repo: Path) -> Path:
    m = open_mem(tmp_repo)
    for who in ("alice", "bob"):
        texts = turns(60, seed=len(who))
        for i in range(0, len(texts), 20):
            m.add([{"role": "user", "content": t} for t in texts[i:i + 20]], user_id=who)
    m.flush()
    m.close()
    fresh_process()
    return tmp_repo


def fresh_process() -> None:
    """This process's derived state dropped, as a new process starts."""
    lexicon.forget_all()
    vectors.forget_all()
    claimbook.forget_all()
    fts.forget_vocabularies()
    with graph._lock:
        graph._graphs.clear()
    graphstore._SAVED.clear()


def results(m: Memory, user: str = "alice") -> list[object]:
    out: list[object] = []
    for q in QUERIES:
        hits = m.search(q, user_id=user, top_k=8, explain=True)
        out.append([(h.id, h.score, json.dumps(h.explain, sort_keys=True, default=str)) for h in hits])
    return out


def saved(repo: Path, user: str, kind: str) -> Path:
    return repo / ".markmem" / "cache" / "u" / "vec" / f"{user}.{kind}"


def rebuilt(m: Memory, monkeypatch: pytest.MonkeyPatch, user: str = "alice") -> list[object]:
    """The results of a process that builds everything from SQLite and the pages."""
    fresh_process()
    with monkeypatch.context() as patch:
        patch.setattr(lexstore, "SAVE", False)
        patch.setattr(graphstore, "SAVE", False)
        patch.setattr(claimbook, "SAVE", False)
        out = results(m, user)
    fresh_process()
    return out


def test_a_fresh_process_reads_the_saved_lexicon_and_graph(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = open_mem(repo)
    truth = rebuilt(m, monkeypatch)
    results(m)  # builds, then saves
    assert saved(repo, "alice", "lex").is_file() and saved(repo, "alice", "graph").is_file()
    fresh_process()
    loads: list[object] = []
    real_lex, real_graph = lexstore.load, graphstore.load
    monkeypatch.setattr(lexstore, "load", lambda *a: loads.append(real_lex(*a)) or loads[-1])
    monkeypatch.setattr(graphstore, "load", lambda *a: loads.append(real_graph(*a)) or loads[-1])
    assert results(m) == truth
    assert len(loads) == 2 and all(x is not None for x in loads)
    m.close()


def test_the_saved_graph_is_the_built_one(repo: Path) -> None:
    m = open_mem(repo)
    m.search("Where does Anna live?", user_id="alice")
    built = graph._graphs[(str(m.root), "alice")]
    fresh_process()
    got = graphstore.load(m.context.cache.user("alice"), "alice")
    assert got is not None and got.entities and got.mentions
    for name in ("stamp", "seen", "turns", "mentions", "entities", "names", "edges"):
        assert getattr(got, name) == getattr(built, name), name
    assert [list(got.edges[k]) for k in got.edges] == [list(built.edges[k]) for k in built.edges]  # same order
    assert got.pattern is not None and built.pattern is not None and got.pattern.pattern == built.pattern.pattern
    m.close()


def test_turns_added_after_the_save_are_found(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = open_mem(repo)
    results(m)
    fresh_process()
    m.add("Anna and I glazed a lighthouse mug in the kiln", user_id="alice")  # not compiled: a turn only
    m.flush()
    fresh_process()
    got = results(m)
    assert any("lighthouse" in h.text for h in m.search("lighthouse mug", user_id="alice"))
    assert got == rebuilt(m, monkeypatch)
    m.close()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip", "version", "foreign", "folder", "empty"])
def test_a_damaged_stale_or_foreign_file_is_rebuilt_without_error(repo: Path, damage: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    m = open_mem(repo)
    truth = rebuilt(m, monkeypatch)
    results(m)
    fresh_process()
    for kind in ("lex", "graph", "book"):
        path = saved(repo, "alice", kind)
        raw = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(raw[: len(raw) // 2])
        elif damage == "garbage":
            path.write_bytes(os.urandom(len(raw)))
        elif damage == "flip":
            flipped = bytearray(raw)
            flipped[len(raw) - 3] ^= 0x10
            path.write_bytes(bytes(flipped))
        elif damage == "version":  # written by other code (another markmem): its code tag differs
            head, arrays = savefile.read(path, kind) or ({}, {})
            savefile.write(path, kind, {**head, "tag": head["tag"] + 1}, arrays)
        elif damage == "foreign":  # another user's file copied over this one
            path.write_bytes(saved(repo, "bob", kind).read_bytes() if saved(repo, "bob", kind).exists() else raw[:9])
        elif damage == "empty":
            path.write_bytes(b"")
    if damage == "folder":
        for p in saved(repo, "alice", "lex").parent.iterdir():
            p.unlink()
        saved(repo, "alice", "lex").parent.rmdir()
    assert lexstore.load(m.context.cache.user("alice").path, "alice", lexicon.stamp(
        m.context.cache.user("alice").db, "alice")) is None
    fresh_process()
    assert results(m) == truth
    fresh_process()
    assert lexstore.load(m.context.cache.user("alice").path, "alice", lexicon.stamp(
        m.context.cache.user("alice").db, "alice")) is not None  # rewritten
    assert graphstore.load(m.context.cache.user("alice"), "alice") is not None
    cache = m.context.cache.user("alice")
    assert claimbook._read_saved(cache, "alice", claimbook.stamp(cache, "alice")) is not None
    m.close()


def test_the_saved_claim_book_is_the_one_sql_reads(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = open_mem(repo)
    cache = m.context.cache.user("alice")
    now = claimbook.stamp(cache, "alice")
    with monkeypatch.context() as patch:
        patch.setattr(claimbook, "SAVE", False)
        truth = claimbook._load(cache, "alice", now)
    assert truth.by_id and truth.citing  # the fixture's turns gave claims
    first = claimbook._load(cache, "alice", now)  # read with SQL, saved
    assert saved(repo, "alice", "book").is_file()
    assert claimbook._read_saved(cache, "alice", now) is not None
    again = claimbook._load(cache, "alice", now)  # read back from the file
    for got in (first, again):
        assert list(got.by_id.items()) == list(truth.by_id.items()) and got.citing == truth.citing
    later = (now[0], now[1] + 1, now[2])  # a turn or claim added since: never used
    assert claimbook._read_saved(cache, "alice", later) is None
    saved(repo, "alice", "book").unlink()
    assert claimbook._read_saved(cache, "alice", now) is None
    assert list(claimbook._load(cache, "alice", now).by_id.items()) == list(truth.by_id.items())
    m.close()


def test_the_ready_book_is_the_annotated_one_sql_gives(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once ``read.echo.ledger`` has added its fields to every row, the book is saved ready: a fresh
    process reads back the same rows (keys in the same order), the same ``citing`` (holding the very
    row objects of ``by_id``), the same ledger, its state and the claims' predicates, and searches as
    a process that read SQL."""
    from markmem.read import echo, turnmarks

    m = open_mem(repo)
    truth = rebuilt(m, monkeypatch)
    cache = m.context.cache.user("alice")
    now = claimbook.stamp(cache, "alice")
    built = claimbook.book(cache, "alice", now)
    assert built is not None and built.by_id
    ledger = echo.ledger(cache, "alice", built)  # annotates every row, then saves the book ready
    head = savefile.read(saved(repo, "alice", "book"), claimbook.KIND)
    assert head is not None and head[0]["ready"] == ["markmem.read.echo", "markmem.read.turnmarks"]
    fresh_process()
    got = claimbook._read_saved(cache, "alice", now)
    assert got is not None and got.stamp == now
    assert [list(r.items()) for r in got.by_id.values()] == [list(r.items()) for r in built.by_id.values()]
    assert got.citing == built.citing and got.citing.keys() == built.citing.keys()
    assert all(r is got.by_id[r["id"]] for rows in got.citing.values() for r in rows)
    assert echo.ledger(cache, "alice", got) == ledger
    kept = got.__dict__.get("_echo_state")  # the ledger's state, saved with the book: the one computed
    assert kept is not None and echo._plain(kept) == echo._plain(built.__dict__["_echo_state"])
    at = kept.lo or "2000-01-01"
    assert echo.state(ledger, at, got) is kept and echo._plain(kept) == echo._plain(echo.state(ledger, at, None))
    assert got.__dict__.get("_echo_preds") == turnmarks.predicates(cache, "alice", None)  # saved with it too
    assert turnmarks.predicates(cache, "alice", got) is got.__dict__["_echo_preds"]
    assert claimbook._read_saved(cache, "alice", (now[0], now[1], now[2] + 1)) is None  # another stamp
    with monkeypatch.context() as patch:  # saved by other code of the annotating module: never used
        patch.setattr(savefile, "code_tag", lambda *mods: 7)
        assert claimbook._read_saved(cache, "alice", now) is None
    assert results(m) == truth
    fresh_process()
    assert results(m) == truth  # this one read the ready file
    m.close()


def test_a_stale_file_is_never_used(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = open_mem(repo)
    results(m)
    cache = m.context.cache.user("alice")
    # a turn deleted or changed in place (user_gen.turns moves on): the saved postings may hold it
    cache.db.execute("UPDATE user_gen SET turns = turns + 1, changed = changed + 1 WHERE user_id = 'alice'")
    assert lexstore.load(cache.path, "alice", lexicon.stamp(cache.db, "alice")) is None
    fresh_process()
    assert results(m) == rebuilt(m, monkeypatch)
    m.close()


def test_erasure_and_reindex_delete_the_files(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = open_mem(repo)
    results(m)
    results(m, "bob")
    assert saved(repo, "bob", "lex").is_file() and saved(repo, "bob", "graph").is_file()
    assert saved(repo, "bob", "book").is_file()
    m.forget("bob")
    assert not saved(repo, "bob", "lex").exists() and not saved(repo, "bob", "graph").exists()
    assert not saved(repo, "bob", "book").exists()
    assert saved(repo, "alice", "lex").is_file()
    m.reindex()
    assert not saved(repo, "alice", "lex").exists()  # the cache was recreated: every saved file went with it
    assert not saved(repo, "alice", "graph").exists() and not saved(repo, "alice", "book").exists()
    truth = rebuilt(m, monkeypatch)
    results(m)
    assert saved(repo, "alice", "lex").is_file()  # written again, from the rebuilt cache
    fresh_process()
    assert results(m) == truth
    assert not saved(repo, "bob", "book").exists()
    m.close()


SCRIPT = textwrap.dedent("""
    import json, sys
    from markmem import Memory
    from markmem.index import claimbook, lexicon, lexstore
    from markmem.read import fuse, graphstore, search
    search.DEFAULT = fuse.Recipe(graph_depth=10)  # the graph lane on, so its saved graph is read too
    if sys.argv[2] == "rebuild":
        lexstore.SAVE = graphstore.SAVE = claimbook.SAVE = False
    loads = []
    real = lexstore.load
    lexstore.load = lambda *a: loads.append(real(*a) is not None) or real(*a)
    m = Memory(sys.argv[1], pii_engine="regex", vector_model="builtin", background=False)
    out = []
    for q in json.loads(sys.argv[3]):
        for user in ("alice", "bob"):
            hits = m.search(q, user_id=user, top_k=8, explain=True)
            out.append([[h.id, repr(h.score), json.dumps(h.explain, sort_keys=True, default=repr)] for h in hits])
    lexicon.wait_built()
    print(json.dumps({"loaded": any(loads), "results": out}))
    m.close()
""")


def test_a_process_reading_the_files_ranks_as_one_that_rebuilds(repo: Path) -> None:
    def run(mode: str) -> dict[str, object]:
        proc = subprocess.run([sys.executable, "-c", SCRIPT, str(repo), mode, json.dumps(QUERIES)],
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]

    first = run("save")  # builds, saves
    assert not first["loaded"]
    again = run("save")  # reads the files
    assert again["loaded"]
    truth = run("rebuild")
    assert again["results"] == truth["results"] == first["results"]


def test_a_search_in_a_fresh_process_imports_no_heavy_library(repo: Path) -> None:
    """With the regex gate, a CLI-like process that opens the repo and searches (a question with no
    calendar date) loads none of spaCy, Presidio, dateparser, LiteLLM, GitPython, model2vec, tokenizers."""
    heavy = ["spacy", "presidio_analyzer", "presidio_anonymizer", "dateparser", "litellm", "git", "model2vec",
             "tokenizers", "huggingface_hub", "torch"]
    m = open_mem(repo)
    m.add([{"role": "user", "content": t} for t in turns(40, seed=3) if t.isascii()], user_id="carol")
    m.flush()
    m.close()
    code = textwrap.dedent(f"""
        import sys
        from markmem import Memory
        m = Memory({str(repo)!r}, pii_engine="regex", vector_model="builtin", background=False)
        for q in {[q for q in QUERIES if q.isascii()]!r} + ["What did Anna say last summer?", "Where was I?"]:
            m.search(q, user_id="alice")
            m.search(q, user_id="carol", format="context")  # plain ASCII turns only
        print(sorted(h for h in {heavy!r} if h in sys.modules))
        for q in {QUERIES!r}:
            m.search(q, user_id="alice", format="context")  # "café naïve Zürich": through tokenizers
        print(sorted(h for h in {heavy!r} if h in sys.modules))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-2:] == ["[]", "['tokenizers']"]


def _saved_and_built(repo: Path):  # type: ignore[no-untyped-def]
    """The open memory, the lexicon a search saved for alice read back, and the same lexicon built."""
    m = open_mem(repo)
    results(m)
    cache = m.context.cache.user("alice")
    now = lexicon.stamp(cache.db, "alice")
    return m, lexstore.load(cache.path, "alice", now), lexicon._build(cache.db, "alice", now)


def test_saved_postings_read_back_as_the_built_ones(repo: Path) -> None:
    """Saved narrower (uint8/uint16), widened term by term when read: the built postings, as int32."""
    import numpy as np

    m, loaded, built = _saved_and_built(repo)
    assert loaded is not None and loaded.doc.dtype != np.int32 and set(loaded.tokens.ids) == set(built.tokens.ids)
    for term, tid in built.tokens.ids.items():
        got, want = loaded.postings(loaded.tokens.ids[term]), built.postings(tid)
        assert all(g.dtype == np.int32 and g.tolist() == w.tolist() for g, w in zip(got, want, strict=True))
    m.close()


def test_a_saved_files_arrays_are_private_and_writable(tmp_path: Path) -> None:
    """``savefile.read`` maps the file copy-on-write: its arrays can be written (a lexicon updates its
    own in place) without changing the file, and a file replaced after the read leaves them as read."""
    import numpy as np

    path = tmp_path / "vec" / "u.lex"
    assert savefile.write(path, "lex", {"n": 3}, {"a": np.arange(5, dtype=np.int64), "b": np.ones(3, np.uint8)})
    before = path.read_bytes()
    head, arrays = savefile.read(path, "lex") or ({}, {})
    assert head == {"n": 3} and arrays["a"].tolist() == [0, 1, 2, 3, 4] and arrays["a"].flags.writeable
    arrays["a"][0] = 99
    arrays["b"][:] = 7
    assert path.read_bytes() == before
    assert savefile.write(path, "lex", {"n": 4}, {"a": np.zeros(2, np.int64)})
    assert arrays["a"].tolist() == [99, 1, 2, 3, 4] and arrays["b"].tolist() == [7, 7, 7]
    again = savefile.read(path, "lex")
    assert again is not None and again[0] == {"n": 4} and again[1]["a"].tolist() == [0, 0]
    path.write_bytes(b"")
    assert savefile.read(path, "lex") is None and savefile.read(tmp_path / "none.lex", "lex") is None


def test_claim_rows_of_another_width_are_refused() -> None:
    names = ["id", "value"]
    assert claimbook._dicts(names, [("c-1", "a"), ["c-2", None]]) == [{"id": "c-1", "value": "a"},
                                                                        {"id": "c-2", "value": None}]
    with pytest.raises(ValueError):
        claimbook._dicts(names, [("c-1", "a"), ("c-2",)])
    with pytest.raises(ValueError):
        claimbook._dicts(names, [("c-1", "a", "extra")])


def test_saved_rows_decode_as_the_built_ones(repo: Path) -> None:
    """A saved lexicon's ``info`` decodes each row when read (``lexstore.Rows``): the built rows, by
    index, slice and iteration; a write (turns caught up) turns it into the list it stands for."""
    m, loaded, built = _saved_and_built(repo)
    assert loaded is not None and isinstance(loaded.info, lexstore.Rows)
    rows = loaded.info
    n = len(built.info)
    assert len(rows) == n > 3 and rows[n - 1] == built.info[-1] == rows[-1] and rows[0] == built.info[0]
    assert list(rows) == built.info and rows[1:3] == built.info[1:3] and rows[::-1] == built.info[::-1]
    with pytest.raises(IndexError):
        rows[n]
    first, last = ("r-x", "user", None, "", 0, None), ("r-y", "assistant", "Bo", "Bo: ", 1, None)
    rows[0] = first
    rows.append(last)
    assert list(rows) == [first, *built.info[1:], last]
    m.close()


def test_saved_rows_refuse_an_inconsistent_table() -> None:
    import marshal

    import numpy as np

    blob, at = lexstore._rows([("r-1", "user", None, "", 0, None), ("r-2", "user", "Al", "Al: ", 1, 4)])
    assert list(lexstore.Rows(blob, at)) == [("r-1", "user", None, "", 0, None), ("r-2", "user", "Al", "Al: ", 1, 4)]
    assert list(lexstore.Rows(*lexstore._rows([]))) == []
    for bad in (at[:-1], at + 1, np.array([0, 30, 10, len(blob)], np.int64), at.astype(np.int32)):
        with pytest.raises(ValueError):
            lexstore.Rows(blob, bad)
    odd = np.frombuffer(marshal.dumps(["not", "a", "row"]), np.uint8)
    with pytest.raises(ValueError):
        lexstore.Rows(odd, np.array([0, len(odd)], np.int64))[0]


def test_saved_rows_settle_into_a_list_after_a_quarter_is_read(repo: Path) -> None:
    """``Lexicon.light`` reads a saved lexicon's rows one by one until it has read a quarter of their number,
    then swaps them for the plain list they stand for: the same light rows before and after, and a write
    (an upsert catching turns up) still works on it."""
    m, loaded, built = _saved_and_built(repo)
    assert loaded is not None and isinstance(loaded.info, lexstore.Rows)
    n = len(built.info)
    docs = list(range(n))
    want = built.light("alice", docs)
    first = loaded.light("alice", docs[:1])
    assert isinstance(loaded.info, lexstore.Rows) and first == want[:1]
    assert loaded.light("alice", docs) == want  # past a quarter: settled
    assert type(loaded.info) is list and loaded.info == built.info
    assert loaded.light("alice", docs[::-1]) == want[::-1]
    m.close()
    fresh_process()
    m = open_mem(repo)
    before = results(m)
    m.add([{"role": "user", "content": "I moved to Oslo last week with Anna."}], user_id="alice")
    m.flush()
    after = results(m)
    assert before != after and after == rebuilt(m, pytest.MonkeyPatch())
    m.close()
