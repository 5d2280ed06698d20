"""Search results pinned on a fixed corpus, and the fast paths checked against the slow ones.

Optimisations of the read path (caches, early termination, persisted indexes) must not change what a
search returns: the same hits in the same order, the same pack. The corpus is dated relative to
today (claims decay with their age), so the pinned results hold on any day.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from markmem import Memory

ALICE = [
    (330, "I live in Lisbon with my partner."),
    (330, "ok sounds good"),
    (303, "I work at Acme Corp as a data engineer."),
    (266, "I love sushi, especially salmon nigiri."),
    (244, "My dad lives in Aberdeen."),
    (183, "I moved to Porto last week."),
    (153, "I now work at Globex as a team lead."),
    (152, "What if we moved to Brussels?"),
    (122, "Actually I don't like sushi anymore, raw fish makes me sick."),
    (120, "We went hiking in the mountains near Porto on the weekend."),
    (91, "haha yes exactly!"),
]
BOB = [(334, "I live in Berlin and work at Initech."), (303, "sushi is my favourite food")]

PINNED = {'Where does the user live?': ([('claim', 'I moved to Porto last week.', False),
                                    ('turn', 'I live in Lisbon with my partner.', True),
                                    ('turn', "Actually I don't like sushi anymore, raw fish makes me sick.", False),
                                    ('turn', 'We went hiking in the mountains near Porto on the weekend.', False),
                                    ('claim', 'I now work at Globex as a team lead.', False)],
                                   '## What I remember about this user\n'
                                   '- I moved to Porto last week.\n'
                                   '- I now work at Globex as a team lead.\n'
                                   '## Relevant memories\n'
                                   "- Actually I don't like sushi anymore, raw fish makes me sick."
                                   " (DATE; sushi: ended on DATE)\n"
                                   '- We went hiking in the mountains near Porto on the weekend.\n'),
     # h-stale: the marked (stale) turn is no longer first; the statement now true goes before it
     'What does the user think about sushi?': ([('turn',
                                                 "Actually I don't like sushi anymore, raw fish makes me sick.",
                                                 False),
                                                ('turn', 'I love sushi, especially salmon nigiri.', True),
                                                ('claim', 'I moved to Porto last week.', False),
                                                ('turn', 'I live in Lisbon with my partner.', True),
                                                ('claim', 'I now work at Globex as a team lead.', False)],
                                               '## What I remember about this user\n'
                                               '- I moved to Porto last week.\n'
                                               '- I now work at Globex as a team lead.\n'
                                               '## Relevant memories\n'
                                               "- Actually I don't like sushi anymore, raw fish makes me sick."
                                               " (DATE; sushi: ended on DATE)\n"),
     'Which company does the user work at?': ([('claim', 'I now work at Globex as a team lead.', False),
                                               ('turn', 'I work at Acme Corp as a data engineer.', True),
                                               ('claim', 'I now work at Globex as a team lead.', False),
                                               ('turn',
                                                "Actually I don't like sushi anymore, raw fish makes me sick.",
                                                False),
                                               ('claim', 'I moved to Porto last week.', False)],
                                              '## What I remember about this user\n'
                                              '- I now work at Globex as a team lead.\n'
                                              '- I moved to Porto last week.\n'
                                              '## Relevant memories\n'
                                              "- Actually I don't like sushi anymore, raw fish makes me sick."
                                              " (DATE; sushi: ended on DATE)\n"),
     'hiking mountains': ([('turn', 'We went hiking in the mountains near Porto on the weekend.', False),
                           ('claim', 'I moved to Porto last week.', False),
                           ('claim', 'I now work at Globex as a team lead.', False),
                           ('claim', 'I now work at Globex as a team lead.', False),
                           ('turn', 'I live in Lisbon with my partner.', True)],
                          '## What I remember about this user\n'
                          '- I moved to Porto last week.\n'
                          '- I now work at Globex as a team lead.\n'
                          '## Relevant memories\n'
                          '- We went hiking in the mountains near Porto on the weekend.\n'),
     'Where does my dad live?': ([('claim', 'My dad lives in Aberdeen.', False),
                                  ('claim', 'I moved to Porto last week.', False),
                                  ('turn', 'I live in Lisbon with my partner.', True),
                                  ('turn', "Actually I don't like sushi anymore, raw fish makes me sick.", False),
                                  ('turn', 'We went hiking in the mountains near Porto on the weekend.', False)],
                                 '## What I remember about this user\n'
                                 '- My dad lives in Aberdeen.\n'
                                 '- I moved to Porto last week.\n'
                                 '- I now work at Globex as a team lead.\n'
                                 '## Relevant memories\n'
                                 "- Actually I don't like sushi anymore, raw fish makes me sick."
                                 " (DATE; sushi: ended on DATE)\n"
                                 '- We went hiking in the mountains near Porto on the weekend.\n'),
     'Brussels': ([('turn', 'What if we moved to Brussels?', False),
                   ('claim', 'I moved to Porto last week.', False),
                   ('turn', 'I live in Lisbon with my partner.', True),
                   ('turn', 'We went hiking in the mountains near Porto on the weekend.', False),
                   ('claim', 'I now work at Globex as a team lead.', False)],
                  '## What I remember about this user\n'
                  '- I moved to Porto last week.\n'
                  '- I now work at Globex as a team lead.\n'
                  '## Relevant memories\n'
                  '- What if we moved to Brussels?\n'
                  '- We went hiking in the mountains near Porto on the weekend.\n')}


def ago(days: int, minute: int) -> str:
    when = datetime.now(timezone.utc).replace(hour=10, minute=minute, second=0, microsecond=0) - timedelta(days=days)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def build(repo: Path, users: tuple[str, ...] = ("alice", "bob"), **kw: object) -> Memory:
    m = Memory(repo, pii_engine="regex", vector_model="builtin", background=False, **kw)  # type: ignore[arg-type]
    for who, turns in (("alice", ALICE), ("bob", BOB)):
        if who in users:
            for i, (days, text) in enumerate(turns):
                m.add([{"role": "user", "content": text}], user_id=who, occurred_at=ago(days, i))
    m.flush()
    return m


def results(m: Memory, query: str) -> tuple[list[tuple[str, str, bool]], str]:
    hits = [(h.kind, h.text, h.valid_until is not None) for h in m.search(query, user_id="alice", top_k=5)]
    pack = m.search(query, user_id="alice", format="context").text
    pack = re.sub(r" \(\d{4}-\d\d-\d\d\)| \[[rc]-[0-9a-f]+\]", "", pack)
    return hits, re.sub(r"\d{4}-\d\d-\d\d", "DATE", pack)  # a note's dates: "(DATE; sushi: ended on DATE)"


@pytest.fixture(scope="module")
def pinned_mem(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import subprocess

    repo = tmp_path_factory.mktemp("pinned") / "memory"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    m = build(repo)
    yield m
    m.close()


@pytest.mark.parametrize("query", list(PINNED))
def test_results_are_pinned(pinned_mem: Memory, query: str) -> None:
    assert results(pinned_mem, query) == PINNED[query]


def test_claim_book_answers_as_sql_does(pinned_mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    from markmem.index import claimbook

    def full(m: Memory) -> list[object]:
        out: list[object] = []
        for q in PINNED:
            out.append([(h.id, h.score, h.valid_until, h.superseded_by) for h in m.search(q, user_id="alice")])
            out.append(m.search(q, user_id="alice", format="context").text)
        return out

    fast = full(pinned_mem)
    monkeypatch.setattr(claimbook, "ENABLED", False)
    assert full(pinned_mem) == fast


def test_claim_book_follows_new_and_closed_claims(tmp_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from markmem.index import claimbook

    m = build(tmp_repo, ("alice",))
    try:
        before = m.search("Where does the user live?", user_id="alice", format="context").text
        m.add([{"role": "user", "content": "I moved to Madrid last month."}], user_id="alice", occurred_at=ago(10, 0))
        m.flush()
        fast = [(h.id, h.score, h.valid_until) for h in m.search("Where does the user live?", user_id="alice")]
        after = m.search("Where does the user live?", user_id="alice", format="context").text
        assert "Madrid" in after and after != before
        monkeypatch.setattr(claimbook, "ENABLED", False)
        assert [(h.id, h.score, h.valid_until) for h in m.search("Where does the user live?", user_id="alice")] == fast
        assert m.search("Where does the user live?", user_id="alice", format="context").text == after
    finally:
        m.close()


def _everything(m: Memory) -> list[object]:
    out: list[object] = []
    for q in PINNED:
        out.append([(h.id, h.kind, h.score, h.text, h.valid_until, h.superseded_by)
                    for h in m.search(q, user_id="alice", top_k=8)])
        out.append(m.search(q, user_id="alice", format="context").text)
    return out


@pytest.mark.parametrize("layout", ["auto", "split"])
def test_another_user_added_or_erased_changes_nothing(tmp_repo: Path, layout: str) -> None:
    """Per-user statistics in every repo (DESIGN invariant 10): bob's turns and claims, added or
    erased, leave alice's hits (ids, scores) and packs byte-identical."""
    m = build(tmp_repo, ("alice",), cache_layout=layout)
    try:
        alone = _everything(m)
        for i, (days, text) in enumerate(BOB * 3):
            m.add([{"role": "user", "content": text + f" {i}"}], user_id="bob", occurred_at=ago(days, i))
        m.flush()
        assert m.search("sushi Berlin", user_id="bob")
        assert _everything(m) == alone
        m.forget("bob")
        assert _everything(m) == alone
    finally:
        m.close()


def test_a_one_file_cache_is_asked_for(tmp_repo: Path) -> None:
    """``cache_layout="one"`` keeps one file (statistics shared: for a repo that serves one user)."""
    m = build(tmp_repo, ("alice",), cache_layout="one")
    try:
        assert m.context.cache.layout == "one"
        assert [h.text for h in m.search("Where does the user live?", user_id="alice")][:2] == \
            [t for _k, t, _s in PINNED["Where does the user live?"][0][:2]]
    finally:
        m.close()


def test_first_searches_count_terms_one_by_one_as_a_whole_read_does(pinned_mem: Memory,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from markmem.read import fts

    cache = pinned_mem.context.cache.user("alice")
    sql = "SELECT max(rowid), (SELECT value FROM meta WHERE key = 'epoch') FROM raw"
    total, epoch = cache.db.execute(sql).fetchone()
    terms = {"live", "user", "sushi", "porto", "nosuchterm", "work"}
    fts.forget_vocabularies()
    looked_up = fts.term_counts(cache, terms, total, epoch)
    assert looked_up == {t: fts.vocabulary(cache, total, epoch).get(t, 0) for t in terms}
    assert looked_up["live"] > 0 and looked_up["nosuchterm"] == 0
    fts.forget_vocabularies()
    first = _everything(pinned_mem)  # the first searches look terms up
    monkeypatch.setattr(fts, "LOOKUPS_FIRST", 0)
    fts.forget_vocabularies()
    assert _everything(pinned_mem) == first


def test_compiles_keep_the_claim_index_in_few_segments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each compile writes an FTS5 segment; past ``FTS_SEGMENTS`` they are merged (a claim lane over
    18 segments cost 6x one over a merged index), with the same results as unmerged segments."""
    import subprocess

    from markmem.index import cache as cache_mod

    def compiled_one_by_one(repo: Path) -> list[object]:
        repo.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        m = build(repo, ())
        try:
            for i, (days, text) in enumerate(ALICE):
                m.add([{"role": "user", "content": text}], user_id="alice", occurred_at=ago(days, i))
                m.flush()
                segments = m.context.cache.user("alice").db.execute(
                    "SELECT count(DISTINCT segid) FROM claims_fts_idx").fetchone()[0]
                assert segments <= cache_mod.FTS_SEGMENTS + 1 or cache_mod.FTS_SEGMENTS > 100
            return [[(h.kind, h.score, h.text) for h in m.search(q, user_id="alice", top_k=8)] for q in PINNED]
        finally:
            m.close()

    merged = compiled_one_by_one(tmp_path / "merged")
    monkeypatch.setattr(cache_mod, "FTS_SEGMENTS", 10_000)
    assert compiled_one_by_one(tmp_path / "unmerged") == merged
