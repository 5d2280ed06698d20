"""The cache is derived: delete it, corrupt it, or hand-break a page, and the repo still answers."""

from __future__ import annotations

import shutil
from pathlib import Path

from markmem import Memory
from tests.conftest import git

FACTS = [
    ("alice", "I live in Lisbon and I work as a pilot", "2026-01-01T00:00:00Z"),
    ("alice", "I prefer window seats", "2026-01-02T00:00:00Z"),
    ("alice", "Actually I prefer aisle seats now", "2026-02-01T00:00:00Z"),
    ("alice", "we watched the zeppelin documentary", "2026-02-02T00:00:00Z"),
    ("bob", "I live in Lisbon too and I love surfing", "2026-01-05T00:00:00Z"),
]
QUERIES = ["where does alice live", "seats", "zeppelin", "pilot job", "surfing Lisbon"]


def results(mem: Memory) -> list:
    out = []
    for user in ("alice", "bob"):
        for q in QUERIES:
            out.append([(h.id, h.kind, h.text, h.valid_until) for h in mem.search(q, user_id=user, top_k=5)])
            out.append(mem.search(q, user_id=user, format="context").text)
    return out


def build(repo: Path) -> Memory:
    mem = Memory(repo, pii_engine="regex", vector_model=None, background=False)
    for user, text, when in FACTS:
        mem.add(text, user_id=user, occurred_at=when)
    mem.flush()
    return mem


def test_deleting_the_cache_gives_identical_results(tmp_repo: Path) -> None:
    mem = build(tmp_repo)
    before = results(mem)
    mem.close()
    shutil.rmtree(tmp_repo / ".markmem" / "cache")  # a folder: one file, or (encrypted) one per user too
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as again:
        assert results(again) == before


def test_reindex_gives_identical_results(tmp_repo: Path) -> None:
    mem = build(tmp_repo)
    before = results(mem)
    seen: list[str] = []
    report = mem.reindex(progress=lambda stage, done, total: seen.append(stage))
    assert report.pages >= 3 and report.raw == 5 and not report.problems
    assert {"raw", "pages"} <= set(seen)
    assert results(mem) == before
    mem.close()


def test_corrupt_cache_is_rebuilt_on_open(tmp_repo: Path) -> None:
    mem = build(tmp_repo)
    before = results(mem)
    mem.close()
    db = tmp_repo / ".markmem" / "cache" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as again:
        assert results(again) == before


def test_hand_broken_page_is_reported_and_reindex_carries_on(tmp_repo: Path) -> None:
    mem = build(tmp_repo)
    pages = mem.get_all("alice")
    broken = tmp_repo / pages[0].path
    broken.write_text("---\nid: [unclosed\nclaims: {\n---\n# oops\n")
    report = mem.reindex()
    assert [p for p, _ in report.problems] == [pages[0].path]
    on_disk = len(list((tmp_repo / "wiki").rglob("*.md")))
    assert report.pages == on_disk - 1  # every other page still indexed
    doctor = mem.doctor()
    assert doctor["problems"][0]["path"] == pages[0].path and "invalid YAML" in doctor["problems"][0]["reason"]
    assert mem.search("zeppelin", user_id="alice")  # everything else still answers
    mem.close()


def test_new_fact_for_a_broken_page_goes_to_review_not_over_it(tmp_repo: Path) -> None:
    mem = build(tmp_repo)
    (page,) = [p for p in mem.get_all("alice") if p.title == "lives in"]
    path = tmp_repo / page.path
    path.write_text("---\nid: [broken\n---\n")
    git(tmp_repo, "commit", "-qam", "human broke it")
    mem.add("I moved to Porto", user_id="alice")
    mem.flush()
    assert path.read_text() == "---\nid: [broken\n---\n"
    assert [i["kind"] for i in mem.review("alice")] == ["low_confidence"]
    mem.close()


def test_commits_made_elsewhere_are_picked_up_on_open(tmp_repo: Path) -> None:
    mem = build(tmp_repo)
    (page,) = [p for p in mem.get_all("alice") if p.title == "lives in"]
    mem.close()
    path = tmp_repo / page.path
    path.write_text(path.read_text().replace("I live in Lisbon", "I live in Lisbon next to a zookeeper"))
    git(tmp_repo, "commit", "-qam", "human edit")
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as again:
        assert any(h.kind == "claim" for h in again.search("zookeeper", user_id="alice"))


def test_a_user_file_left_without_its_schema_is_finished_not_fatal(tmp_repo: Path) -> None:
    """kill -9 between creating a user's cache file and writing its schema leaves a file with no
    tables; the next process finishes it (it used to fail every write with 'no such table: raw')."""
    import sqlite3

    build(tmp_repo).close()
    folder = tmp_repo / ".markmem" / "cache" / "u"
    folder.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(folder / "carol.db")
    conn.execute("PRAGMA journal_mode=WAL")  # the file exists, no table yet
    conn.close()
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        mem.add("My cat is called Whiskerton", user_id="carol")
        mem.flush()
        hits = mem.search("Whiskerton", user_id="carol")
        assert any("Whiskerton" in h.text for h in hits)  # type: ignore[union-attr]
