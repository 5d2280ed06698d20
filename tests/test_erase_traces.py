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
