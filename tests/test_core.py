"""The write path end to end: add -> raw (durable) -> compile -> pages -> one commit per batch."""

from __future__ import annotations

import json

import pytest

from markmem import Claim, Memory, NotFound, Page, RawEntry
from markmem.store.git import Git
from tests.conftest import git


def claims_of(mem: Memory, user: str, predicate: str) -> list[Claim]:
    return [c for p in mem.get_all(user) for c in p.claims if c.predicate == predicate]


def test_add_returns_ids_and_writes_raw_before_compiling(mem: Memory) -> None:
    result = mem.add("I live in Lisbon", user_id="alice", metadata={"msg": 7})
    assert len(result.ids) == 1 and result.user_id == "alice"
    files = list((mem.root / "raw" / "u" / "alice").rglob("*.jsonl"))
    assert len(files) == 1
    line = json.loads(files[0].read_text().splitlines()[0])
    assert line["id"] == result.ids[0] and line["metadata"] == {"msg": 7}
    assert mem.get_all("alice") == []  # nothing compiled on the hot path
    assert mem.stats()["queue_pending"] == 1


def test_one_commit_per_batch_with_trailers(mem: Memory) -> None:
    before = int(git(mem.root, "rev-list", "--count", "HEAD"))
    mem.add("I live in Lisbon", user_id="alice")
    mem.add("I work as a pilot", user_id="bob")
    reports = mem.flush()
    assert len(reports) == 1
    assert int(git(mem.root, "rev-list", "--count", "HEAD")) == before + 1
    msg = git(mem.root, "log", "-1", "--format=%B")
    assert "Markmem-Op: compile" in msg and "Markmem-Users: alice,bob" in msg
    assert f"Markmem-Batch: {reports[0].batch_id}" in msg
    assert git(mem.root, "status", "--porcelain") == ""


def test_changed_fact_supersedes_and_as_of_answers(mem: Memory) -> None:
    mem.add("I prefer window seats", user_id="alice", occurred_at="2026-07-31T10:00:00Z")
    mem.add("Actually I prefer aisle seats now", user_id="alice", occurred_at="2026-08-02T09:12:00Z")
    mem.flush()
    old, new = sorted(claims_of(mem, "alice", "seat_preference"), key=lambda c: c.valid_from or "")
    assert old.value == "window seats" and new.value == "aisle seats"
    assert old.valid_until == new.valid_from == "2026-08-02T09:12:00.000000Z"
    assert old.superseded_by == new.id and new.supersedes == old.id and new.valid_until is None
    now = mem.search("seats", user_id="alice", format="context")
    assert "aisle" in now.text and "I prefer window seats [" not in now.text
    then = mem.search("seats", user_id="alice", format="context", as_of="2026-08-01T00:00:00Z")
    assert "window" in then.text


def test_same_value_reinforces_instead_of_duplicating(mem: Memory) -> None:
    mem.add("I live in Lisbon", user_id="alice")
    mem.flush()
    mem.add("I live in Lisbon", user_id="alice")
    mem.flush()
    (claim,) = claims_of(mem, "alice", "lives_in")
    assert len(claim.sources) == 2 and claim.active


def test_never_across_users_or_speakers(mem: Memory) -> None:
    mem.add("I live in Paris", user_id="alice", occurred_at="2026-01-01T00:00:00Z")
    mem.add("I live in Tokyo", user_id="bob", occurred_at="2026-02-01T00:00:00Z")
    mem.add([{"role": "assistant", "content": "I live in Rome"},
              {"role": "user", "name": "carol", "content": "I live in Oslo"}],
             user_id="alice", occurred_at="2026-03-01T00:00:00Z")
    mem.flush()
    alice = claims_of(mem, "alice", "lives_in")
    mine = [c for c in alice if c.subject == "alice"]
    assert [c.value for c in mine] == ["Paris"] and mine[0].active
    assert [c.subject for c in alice if c.value == "Oslo"] == ["carol"]
    assert not any(c.value == "Rome" for c in alice)
    assert [c.value for c in claims_of(mem, "bob", "lives_in")] == ["Tokyo"]


def test_pages_named_by_stable_ids_not_user_text(mem: Memory) -> None:
    mem.add("My favorite painter is Frida Kahlo. I prefer Maria's cooking.", user_id="alice")
    mem.flush()
    paths = [p.path for p in mem.get_all("alice")]
    assert paths and not any("frida" in p.lower() or "maria" in p.lower() for p in paths)
    assert "frida" not in git(mem.root, "log", "--format=%B").lower()


def test_every_turn_is_retrievable_as_itself(mem: Memory) -> None:
    mem.add([{"role": "user", "content": "we talked about the zeppelin museum"},
             {"role": "assistant", "content": "yes, the zeppelin one in Friedrichshafen"}], user_id="alice")
    hits = mem.search("zeppelin museum", user_id="alice")  # before flush: read-your-writes
    assert {h.kind for h in hits} == {"turn"} and len(hits) == 2
    mem.flush()
    assert len([h for h in mem.search("zeppelin", user_id="alice") if h.kind == "turn"]) == 2


def test_metadata_and_occurred_at_travel_to_claims_and_hits(mem: Memory) -> None:
    mem.add("I work as a pilot", user_id="alice", metadata={"dia_id": "D1:3"}, occurred_at="2023-05-08T13:56:00Z")
    mem.flush()
    (claim,) = claims_of(mem, "alice", "job")
    assert claim.metadata == {"dia_id": "D1:3"} and claim.valid_from == "2023-05-08T13:56:00.000000Z"
    hits = mem.search("pilot", user_id="alice")
    assert all(h.sources[0].metadata == {"dia_id": "D1:3"} for h in hits)
    assert all(h.sources[0].occurred_at == "2023-05-08T13:56:00.000000Z" for h in hits)


def test_get_page_claim_and_raw(mem: Memory) -> None:
    r = mem.add("I live in Lisbon", user_id="alice")
    mem.flush()
    (page,) = mem.get_all("alice")
    assert isinstance(mem.get(page.id), Page)
    claim = mem.get(page.claims[0].id)
    assert isinstance(claim, Claim) and claim.value == "Lisbon"
    entry = mem.get(r.ids[0])
    assert isinstance(entry, RawEntry) and entry.content == "I live in Lisbon"
    with pytest.raises(NotFound):
        mem.get("c-0000000000")
    with pytest.raises(NotFound):
        mem.get("u/alice/profile/nothing-here")


def test_update_records_human_edit_at_full_trust(mem: Memory) -> None:
    mem.add("I live in Lisbon", user_id="alice")
    mem.flush()
    (old,) = claims_of(mem, "alice", "lives_in")
    new = mem.update(old.id, "I live in Porto")
    assert new.provenance == "human_edited" and new.confidence == 1.0 and new.supersedes == old.id
    claims = {c.id: c for c in claims_of(mem, "alice", "lives_in")}
    assert claims[old.id].superseded_by == new.id and not claims[old.id].active
    assert "Markmem-Op: update" in git(mem.root, "log", "-1", "--format=%B")


def test_delete_soft_archives_and_hard_removes(mem: Memory) -> None:
    mem.add("I live in Lisbon. I work as a pilot.", user_id="alice")
    mem.flush()
    pages = {p.title: p for p in mem.get_all("alice")}
    mem.delete(pages["lives in"].id)
    assert pages["lives in"].id not in [p.id for p in mem.get_all("alice")]
    assert (mem.root / pages["lives in"].path).exists()
    assert not [h for h in mem.search("Lisbon", user_id="alice") if h.kind == "claim"]
    mem.delete(pages["job"].id, hard=True)
    assert not (mem.root / pages["job"].path).exists()
    assert git(mem.root, "status", "--porcelain") == ""


def test_history_follows_a_page_with_claim_changes(mem: Memory) -> None:
    mem.add("I prefer window seats", user_id="alice", occurred_at="2026-07-31T10:00:00Z")
    mem.flush()
    mem.add("I prefer aisle seats now", user_id="alice", occurred_at="2026-08-02T10:00:00Z")
    mem.flush()
    (page,) = [p for p in mem.get_all("alice") if p.title == "seat preference"]
    commits = mem.history(page.id)
    assert len(commits) == 2 and commits[0].op == "compile"
    kinds = {ch["change"] for ch in commits[0].changes}
    assert kinds == {"added", "superseded"}
    assert commits[0].diff and "aisle seats" in commits[0].diff


def test_history_in_one_pass_matches_git_show_per_commit(mem: Memory) -> None:
    """history() reads every version with one ``git log -p`` and one ``cat-file --batch``; each diff
    must be what ``git show`` prints for that commit and path, and the oldest commit adds all."""
    for i, city in enumerate(("Berlin", "Lisbon", "Porto", "Oslo")):
        mem.add(f"I live in {city}", user_id="alice", occurred_at=f"2026-0{i + 1}-01T10:00:00Z")
        mem.flush()
    (page,) = [p for p in mem.get_all("alice") if p.title == "lives in"]
    commits = mem.history(page.id)
    assert len(commits) == 4
    for c in commits:
        assert c.diff == git(mem.root, "show", "--format=", c.sha, "--", page.path)
    assert [ch["change"] for ch in commits[-1].changes] == ["added"]
    assert sorted(ch["change"] for ch in commits[0].changes) == ["added", "superseded"]
    assert [c.diff for c in mem.history(page.id, include_diff=False)] == [None] * 4


def test_reopen_sees_everything(tmp_repo) -> None:
    with Memory(tmp_repo, pii_engine="regex", vector_model=None) as m:
        m.add("I live in Lisbon", user_id="alice")
        m.flush()
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as m:
        assert [p.title for p in m.get_all("alice")] == ["lives in"]
        assert Git(m.root).dirty_paths(["wiki", "raw"]) == []


def test_a_fact_that_changes_often_rolls_into_archive_pages(mem: Memory) -> None:
    from markmem.write.rollover import KEEP_CLOSED, ROLL_AT

    for i in range(ROLL_AT + 10):
        mem.add(f"My favorite number is {i}", user_id="alice", occurred_at=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z")
        mem.flush()
    pages = {p.id: p for p in mem.get_all("alice")}
    (live,) = [p for p in pages.values() if "archive_of" not in p.extra]
    (archive,) = [p for p in pages.values() if p.extra.get("archive_of") == live.id]
    assert len(live.claims) <= KEEP_CLOSED + 11 and len(live.active_claims()) == 1
    assert len(live.claims) + len(archive.claims) == ROLL_AT + 10
    old = mem.search("favorite number", user_id="alice", as_of="2026-01-01T00:00:01.5Z", format="context")
    assert "My favorite number is 1 [" in old.text


def test_refuses_to_take_over_a_source_repo(tmp_repo) -> None:
    from markmem import RepoError

    (tmp_repo / "main.py").write_text("print('hi')\n")
    git(tmp_repo, "add", "main.py")
    git(tmp_repo, "commit", "-qm", "code")
    with pytest.raises(RepoError, match="not a memory repo"):
        Memory(tmp_repo, pii_engine="regex", vector_model=None)
    assert not (tmp_repo / ".markmem").exists()
    Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False, adopt_existing=True).close()


def test_create_false_refuses_a_missing_repo(tmp_path) -> None:
    from markmem import RepoError

    with pytest.raises(RepoError, match="markmem init"):
        Memory(tmp_path / "nothing", pii_engine="regex", vector_model=None, create=False)
