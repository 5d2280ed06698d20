"""Erasure leaves no trace of the user id in local state, and erasing nobody writes nothing (issue #13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from markmem import Memory
from tests.conftest import git

pytest.importorskip("markmem.erase.api")

PII_ID = "jane.doe-1980-04-02"  # an id shaped like a name and a birth date


def local_bytes(repo: Path) -> bytes:
    """Every byte of the cache and the queue database, WAL files included."""
    found = b""
    for path in sorted((repo / ".markmem").rglob("*")):
        if path.is_file() and (path.name.startswith(("state.db", "index.db")) or "cache" in path.parts):
            found += path.read_bytes()
    return found


@pytest.mark.parametrize("mode", ["scrub", "rewrite"])
def test_forget_leaves_no_user_id_in_the_cache_or_the_queue(mem: Memory, mode: str) -> None:
    mem.add("I live in Oslo and I like jazz", user_id=PII_ID)
    mem.add("I live in Rome", user_id="bob")
    mem.flush()
    mem.add("I also like chess", user_id=PII_ID)  # still queued when the erasure starts
    assert PII_ID.encode() in local_bytes(mem.root)
    mem.forget(PII_ID, mode=mode)
    assert PII_ID.encode() not in local_bytes(mem.root)
    assert mem.search("Rome", user_id="bob")


def test_forgetting_a_user_that_never_existed_writes_nothing(mem: Memory) -> None:
    mem.add("I live in Rome", user_id="bob")
    mem.flush()
    head = git(mem.root, "rev-parse", "HEAD")
    for mode in ("scrub", "rewrite"):
        report = mem.forget("nobody", mode=mode)
        assert report.commit is None and "Nothing to erase" in str(report)  # type: ignore[union-attr]
        assert report.to_json()["removed"] == {"nothing": True}  # type: ignore[union-attr]
    assert git(mem.root, "rev-parse", "HEAD") == head
    assert not git(mem.root, "status", "--porcelain")


def test_forgetting_twice_says_nothing_to_erase_the_second_time(mem: Memory) -> None:
    mem.add("I live in Oslo", user_id="alice")
    mem.flush()
    first = mem.forget("alice")
    assert first.commit  # type: ignore[union-attr]
    head = git(mem.root, "rev-parse", "HEAD")
    assert "Nothing to erase" in str(mem.forget("alice"))
    assert git(mem.root, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("step", ["journal", "scrubbed"])
def test_an_interrupted_rewrite_keeps_no_plaintext_in_its_journal(tmp_repo: Path, step: str) -> None:
    from tests.test_erase import alice_markers, all_objects, populate
    from tests.test_erase_safety import crash_during, open_mem

    with open_mem(tmp_repo) as mem:
        populate(mem, batches=1)
    crash_during(tmp_repo, "rewrite", step)
    journals = list((tmp_repo / ".markmem" / "erasure").glob("erased-*.json"))
    assert journals, "the crash left a journal to resume from"
    stored = b"".join(p.read_bytes() for p in journals)
    assert not [m for m in alice_markers() if m.encode() in stored]
    with open_mem(tmp_repo) as mem:  # the re-run collects the fingerprints again and verifies clean
        report = mem.forget("alice", "rewrite")
        assert report.ok and report.resumed  # type: ignore[union-attr]
        assert report.verify is not None and report.verify.fingerprints > 0  # type: ignore[union-attr]
    assert not [m for m in alice_markers() if m.encode() in all_objects(tmp_repo)]


def test_forget_empties_the_process_memo_caches_that_hold_memory_text(tmp_repo: Path) -> None:
    """Process-wide caches (clause parses, pack line costs, FTS token map, page YAML scalars, value
    terms...) are shared by every user: after an erasure none still holds the erased user's words."""
    import sys

    from markmem.erase import scrub

    m = Memory(tmp_repo, pii_engine="regex", background=False)  # default vectors and clause parser
    try:
        m.add("Actually I moved to Quixotville last spring, my cat Zorblax loves it", user_id="jane")
        m.add("I live in Rome", user_id="bob")
        m.flush()
        m.search("Where does the user live? Quixotville", user_id="jane", format="context")
        m.search("Zorblax last spring", user_id="jane", as_of="2026-01-01T00:00:00Z")

        def holding() -> list[str]:
            found = []
            for name, attr in scrub.TEXT_CACHES + scrub.TEXT_DICTS:
                module = sys.modules.get(name)
                if module is None:
                    continue
                cache = getattr(module, attr)
                if hasattr(cache, "cache_info"):
                    text = repr(cache.cache_info()) if cache.cache_info().currsize == 0 else "filled"
                else:
                    text = repr(list(cache.keys())[:50_000]) + repr(list(cache.values())[:50_000])
                if "filled" in text or "quixotville" in text.lower() or "zorblax" in text.lower():
                    found.append(f"{name}.{attr}")
            return found

        assert holding()  # the search and the compile filled some of them
        m.forget("jane", mode="scrub")
        assert holding() == []
        assert m.search("Rome", user_id="bob")  # they refill for the users that are left
    finally:
        m.close()
