"""One spaCy pipeline per process, not per repo: a backend that opens and closes many ``Memory`` objects
(one per tenant repo, a test suite, a bench) must not keep each one's ~28 MB model alive. The parse caches
used to be keyed by the splitter object, so every closed repo's splitter, and its loaded pipeline, stayed
reachable from them. Real spaCy, real repos."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from markmem import Memory
from markmem.config import DEFAULT_SPACY_MODEL
from markmem.write import clauses

TURN = "I moved to Lisbon last spring and I work as a nurse at the Santa Maria hospital now"


def _compile_one(repo: Path) -> None:
    with Memory(repo, pii_engine="regex", vector_model=None, background=False, clause_parser="spacy") as mem:
        mem.add(TURN, user_id="alice", occurred_at="2026-01-05T10:00:00Z")
        mem.flush()
        assert mem.search("where does alice live", user_id="alice")


def test_closed_repos_do_not_keep_their_splitter_alive(tmp_path: Path) -> None:
    made: list[weakref.ref[clauses.SpacySplitter]] = []
    real_init = clauses.SpacySplitter.__init__

    def tracked(self: clauses.SpacySplitter, model: str) -> None:
        real_init(self, model)
        made.append(weakref.ref(self))

    clauses.SpacySplitter.__init__ = tracked  # type: ignore[method-assign]
    try:
        for i in range(3):
            _compile_one(tmp_path / f"r{i}")
    finally:
        clauses.SpacySplitter.__init__ = real_init  # type: ignore[method-assign]
    gc.collect()
    assert len(made) == 3
    assert [ref() for ref in made] == [None, None, None]


def _pipelines() -> int:
    import spacy

    gc.collect()
    return sum(isinstance(o, spacy.language.Language) for o in gc.get_objects())


def test_every_repo_parses_with_one_loaded_pipeline(tmp_path: Path) -> None:
    before = _pipelines()  # Presidio's own pipeline, or this one, may already be loaded by other tests
    for i in range(3):
        _compile_one(tmp_path / f"r{i}")
    assert _pipelines() - before <= 1
    model = clauses.load_splitter("spacy", DEFAULT_SPACY_MODEL)[0].model  # type: ignore[attr-defined]
    a, b = clauses.SpacySplitter(model), clauses.SpacySplitter(model)
    assert a.parse(TURN) is b.parse(TURN)  # one cache across splitters: the same Doc
