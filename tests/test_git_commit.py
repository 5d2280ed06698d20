"""The commit path: update-index --info-only, then git fast-import (one pack, no loose objects)."""

from __future__ import annotations

from pathlib import Path

import pytest

from markmem import Memory
from markmem.errors import RepoError
from markmem.store import git as gitmod
from markmem.store import raw
from markmem.store.git import Git
from tests.conftest import git


def open_mem(repo: Path) -> Memory:
    return Memory(repo, pii_engine="regex", vector_model=None, background=False)


def loose_objects(repo: Path) -> int:
    counts = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return int(counts["count"])


def test_compile_commits_as_packs_and_keeps_the_index_in_step(tmp_repo: Path) -> None:
    with open_mem(tmp_repo) as mem:
        for i in range(30):
            mem.add(f"I live in town{i}", user_id=f"u{i % 3}")
        report = mem.flush()[0]
        assert report.commit == git(tmp_repo, "rev-parse", "HEAD").strip()
        assert mem.context.git.head() == report.commit
    assert loose_objects(tmp_repo) == 0
    assert git(tmp_repo, "status", "--porcelain") == ""
    git(tmp_repo, "fsck", "--strict")
    assert git(tmp_repo, "log", "-1", "--format=%an <%ae> | %cn", "HEAD").strip() == \
        "markmem <markmem@localhost> | markmem"
    assert "Markmem-Op: compile" in git(tmp_repo, "log", "-1", "--format=%B")


def test_commit_stages_exactly_the_paths_and_skips_no_change(tmp_repo: Path) -> None:
    open_mem(tmp_repo).close()
    g = Git(tmp_repo)
    names = ["wiki/plain.md", 'wiki/odd "name" \\ é.md', "wiki/sub dir/x.md"]
    for n in names:
        (tmp_repo / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_repo / n).write_text(f"content of {n}\n")
    (tmp_repo / "wiki/not-mine.md").write_text("left alone\n")
    sha = g.commit(names, gitmod.message("test: add", {"Markmem-Op": "test"}))
    assert sha and sha == g.head()
    tree = git(tmp_repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0")
    assert set(names) <= set(tree) and "wiki/not-mine.md" not in tree
    assert git(tmp_repo, "show", 'HEAD:wiki/odd "name" \\ é.md') == 'content of wiki/odd "name" \\ é.md\n'
    assert g.commit(names, gitmod.message("test: again", {})) is None  # nothing changed
    assert g.commit([], gitmod.message("test: empty", {})) is None
    (tmp_repo / names[0]).unlink()
    assert g.commit([names[0]], gitmod.message("test: delete", {})) is not None
    assert names[0] not in git(tmp_repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0")
    assert g.commit([], gitmod.message("test: allowed", {}), allow_empty=True) is not None
    git(tmp_repo, "fsck", "--strict")
    assert git(tmp_repo, "status", "--porcelain", "--", "wiki") == "?? wiki/not-mine.md\n"


def test_head_from_loose_and_packed_refs_and_detached(tmp_repo: Path) -> None:
    g = Git(tmp_repo)
    assert g.head() is None  # unborn branch
    open_mem(tmp_repo).close()
    want = git(tmp_repo, "rev-parse", "HEAD").strip()
    assert g.head() == want
    git(tmp_repo, "pack-refs", "--all")
    assert not (tmp_repo / ".git/refs/heads/main").exists()
    assert g.head() == want
    (tmp_repo / "wiki").mkdir(exist_ok=True)
    (tmp_repo / "wiki/a.md").write_text("a\n")
    sha = g.commit(["wiki/a.md"], gitmod.message("test: packed", {}))
    assert sha == g.head() == git(tmp_repo, "rev-parse", "HEAD").strip()
    git(tmp_repo, "checkout", "-q", "--detach")
    (tmp_repo / "wiki/b.md").write_text("b\n")
    sha = g.commit(["wiki/b.md"], gitmod.message("test: detached", {}))  # the porcelain path
    assert sha == g.head() == git(tmp_repo, "rev-parse", "HEAD").strip()
    git(tmp_repo, "fsck", "--strict")


def test_a_commit_killed_after_staging_is_finished_on_open(tmp_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_mem(tmp_repo) as mem:
        ids = [mem.add(f"My favorite number is {i}", user_id="alice").ids[0] for i in range(5)]

        def killed(*_a: object, **_k: object) -> str:
            raise RepoError("killed before fast-import")

        monkeypatch.setattr(Git, "_fast_import", killed)
        with pytest.raises(RepoError):
            mem.flush()
        monkeypatch.undo()
    assert git(tmp_repo, "diff", "--cached", "--name-only")  # staged, objects not written yet
    with open_mem(tmp_repo) as mem:
        assert git(tmp_repo, "status", "--porcelain") == ""
        assert "Markmem-Op: recover" in git(tmp_repo, "log", "-1", "--format=%B")
        mem.flush()
        claims = [c for p in mem.get_all("alice") for c in p.claims]
        assert sorted(s.rsplit("#", 1)[1] for c in claims for s in c.sources) == sorted(ids)
    git(tmp_repo, "fsck", "--strict")


def test_a_killed_fast_import_keep_file_is_cleared(tmp_repo: Path) -> None:
    open_mem(tmp_repo).close()
    pack = tmp_repo / ".git/objects/pack"
    pack.mkdir(parents=True, exist_ok=True)
    (pack / "pack-dead.keep").write_text("fast-import version 2.39\n")
    (pack / "pack-mine.keep").write_text("kept on purpose\n")
    open_mem(tmp_repo).close()
    assert not (pack / "pack-dead.keep").exists()
    assert (pack / "pack-mine.keep").exists()


def test_packs_stay_few(tmp_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitmod, "MAX_PACKS", 3)
    with open_mem(tmp_repo) as mem:
        for i in range(8):
            mem.add(f"I live in town{i}", user_id="alice")
            mem.flush()
            assert len(list((tmp_repo / ".git/objects/pack").glob("*.pack"))) <= 4
        assert len(mem.get_all("alice")[0].claims) == 8
    git(tmp_repo, "fsck", "--strict")


def test_raw_segments_roll_and_restart_after_removal(tmp_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(raw, "SEGMENT_BYTES", 400)
    with open_mem(tmp_repo) as mem:
        ids = [mem.add(f"My favorite number is {i}", user_id="bob").ids[0] for i in range(12)]
        mem.flush()
        files = [p for _u, p in raw.iter_files(tmp_repo, "bob")]
        assert len(files) >= 4 and files[0].endswith(".jsonl") and files[1].split("/")[-1].count(".") == 2
        assert {e.id for e in raw.iter_entries(tmp_repo, mem.context.codec, "bob")} == set(ids)
        stamp = next(raw.iter_entries(tmp_repo, mem.context.codec, "bob")).recorded_at
    for f in files:
        (tmp_repo / f).unlink()
    assert raw.current_segment(tmp_repo, "bob", stamp) == raw.raw_path("bob", stamp, 0)


def test_a_file_growing_during_the_commit_leaves_the_index_equal_to_the_commit(
    tmp_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """add() appends to raw files without the writer lock: the commit and the index must agree
    on the bytes that were read, and the appended line stays a worktree change."""
    open_mem(tmp_repo).close()
    g = Git(tmp_repo)
    rel = "raw/u/alice/2026/01/01.jsonl"
    (tmp_repo / rel).parent.mkdir(parents=True)
    (tmp_repo / rel).write_text('{"id": "r-1"}\n')
    stage = Git._stage

    def append_meanwhile(self: Git, *args: object, **kw: object) -> None:
        with open(tmp_repo / rel, "a") as fh:
            fh.write('{"id": "r-2"}\n')
        stage(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "_stage", append_meanwhile)
    assert g.commit([rel], gitmod.message("test: raw", {})) is not None
    assert git(tmp_repo, "show", f"HEAD:{rel}") == '{"id": "r-1"}\n'
    assert git(tmp_repo, "diff", "--cached", "--name-only") == ""
    assert git(tmp_repo, "status", "--porcelain", "--", rel) == f" M {rel}\n"
    git(tmp_repo, "fsck", "--strict")


def test_temp_files_of_a_killed_write_are_removed_not_committed(tmp_repo: Path) -> None:
    with open_mem(tmp_repo) as mem:
        mem.add("I live in Lisbon", user_id="alice")
        mem.flush()
        page = mem.get_all("alice")[0]
    folder = (tmp_repo / page.path).parent
    (folder / ".tmp-abc123").write_text("half a page")
    (tmp_repo / "raw/u/alice/.tmp-def456").write_text("half a checkpoint")
    with open_mem(tmp_repo):
        pass
    assert not (folder / ".tmp-abc123").exists() and not (tmp_repo / "raw/u/alice/.tmp-def456").exists()
    assert ".tmp-" not in git(tmp_repo, "log", "--all", "--name-only", "--format=")
    assert git(tmp_repo, "status", "--porcelain") == ""
