"""The read side's regular expressions saved beside the cache (index.rxcache): a fresh process that
finds the file uses patterns with the very program ``re`` compiles (``Pattern ==`` compares flags,
source and code), searches give the same hits as a process without the file, and a damaged, foreign
or missing file is ignored (the patterns compiled as usual, the file rewritten).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from markmem import Memory
from markmem.index import rxcache

pytestmark = pytest.mark.skipif(not rxcache.ENABLED, reason="this Python's re keeps no plain _cache")

SCRIPT = textwrap.dedent("""
    import json, re, sys
    from markmem.index import rxcache
    if sys.argv[2] == "off":
        rxcache.ENABLED = False
    from markmem import Memory
    m = Memory(sys.argv[1], pii_engine="regex", vector_model="builtin", background=False)
    out = []
    for q in ("Where does Anna live?", "What did I say about pottery?", "sourdough bread"):
        out.append([[h.id, h.score, h.text] for h in m.search(q, user_id="alice", top_k=5)])
    held = [p for name in rxcache.modules() for p in vars(sys.modules[name]).values() if isinstance(p, re.Pattern)]
    from re import _compiler
    same = all(p == _compiler.compile(p.pattern, p.flags) for p in held)
    print(json.dumps({"hits": out, "held": len(held), "same": same}))
    m.close()
""")


def run(repo: Path, mode: str = "on") -> dict:  # type: ignore[type-arg]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "HF_HUB_OFFLINE": "1"}
    got = subprocess.run([sys.executable, "-c", SCRIPT, str(repo), mode], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(got.stdout)  # type: ignore[no-any-return]


def saved_file(repo: Path) -> Path:
    found = list((repo / ".markmem").rglob(rxcache.NAME))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def repo(tmp_repo: Path) -> Path:
    m = Memory(tmp_repo, pii_engine="regex", vector_model="builtin", background=False)
    m.add([{"role": "user", "content": t} for t in (
        "My friend Anna lives in Lisbon.", "I made a pottery glaze with Marco last week.",
        "I bake sourdough bread on Sundays.", "Anna moved to Porto in May.")], user_id="alice")
    m.flush()
    m.close()
    return tmp_repo


def test_a_fresh_process_saves_then_reads_the_patterns_and_ranks_the_same(repo: Path) -> None:
    off = run(repo, "off")
    assert not list((repo / ".markmem").rglob(rxcache.NAME))
    first = run(repo)  # compiles, saves
    path = saved_file(repo)
    entries = rxcache._read(path)
    assert len(entries) >= 20
    second = run(repo)  # reads the file
    assert first["hits"] == second["hits"] == off["hits"]
    assert first["same"] and second["same"] and second["held"] == first["held"] >= 20


def test_every_saved_program_is_the_one_re_compiles(repo: Path) -> None:
    run(repo)
    import _sre  # type: ignore[import-not-found]
    from re import _compiler  # type: ignore[attr-defined]

    for (pattern, flags), e in rxcache._read(saved_file(repo)).items():
        assert _sre.compile(*e[:1], *e[2:]) == _compiler.compile(pattern, flags), pattern


def test_a_damaged_or_foreign_file_is_ignored_and_rewritten(repo: Path) -> None:
    run(repo)
    path = saved_file(repo)
    good = path.read_bytes()
    damaged = bytearray(good)
    damaged[len(damaged) // 2] ^= 0x01
    path.write_bytes(bytes(damaged))
    assert rxcache._read(path) == {}
    path.write_bytes(b"garbage")
    assert rxcache._read(path) == {}
    off = run(repo, "off")
    assert run(repo)["hits"] == off["hits"]
    assert path.read_bytes() == good  # rewritten from a fresh compile: the same bytes


def test_only_patterns_held_by_newly_imported_modules_are_saved(tmp_path: Path) -> None:
    cache: dict = {}  # type: ignore[type-arg]
    pat = re.compile(r"\bnot (?:a )?module(?P<x>s)?\b", re.I)
    cache[(str, pat.pattern, re.I.value)] = pat
    user = re.compile(re.escape("Anna Lisbon") + r"\b")
    cache[(str, user.pattern, 0)] = user
    mod = type(sys)("markmem._rxcache_probe")
    setattr(mod, "HELD", (pat,))  # noqa: B010 - a module object made here
    sys.modules[mod.__name__] = mod
    try:
        got = rxcache._new(cache, {}, {mod.__name__})
    finally:
        del sys.modules[mod.__name__]
    assert list(got) == [(pat.pattern, re.I.value)]
    rxcache._write(tmp_path / rxcache.NAME, got)
    assert rxcache._read(tmp_path / rxcache.NAME) == got


def test_reindex_deletes_the_file_and_a_later_search_rewrites_it(repo: Path) -> None:
    before = run(repo)
    path = saved_file(repo)
    m = Memory(repo, pii_engine="regex", vector_model="builtin", background=False)
    m.reindex()
    m.close()
    assert not path.exists()
    assert run(repo)["hits"] == before["hits"]
    assert saved_file(repo) == path
