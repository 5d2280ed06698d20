"""Design invariant 9: the folder is the authority (issue #13 parts 4 and 5).

A malformed or foreign raw line, an unreadable page or one that claims another user, and any
symlink inside the repo are skipped, listed by doctor and lint with their path (and line), never
followed, never written through, never committed, and never stop another user's reads, writes or
compiles. Each case runs through the Python API and the CLI on a real git repo.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from markmem import Memory
from markmem.cli import main
from markmem.errors import RepoError
from tests.conftest import git

KW = {"pii_engine": "regex", "vector_model": None, "background": False}


def open_mem(repo: Path) -> Memory:
    return Memory(repo, **KW)


@pytest.fixture
def two_users(tmp_repo: Path) -> Path:
    with open_mem(tmp_repo) as m:
        m.add("I live in Oslo", user_id="alice")
        m.add("I live in Rome", user_id="bob")
        m.flush()
    return tmp_repo


def raw_file(repo: Path, user: str) -> Path:
    return sorted((repo / "raw" / "u" / user).rglob("*.jsonl"))[0]


def page_file(repo: Path, user: str) -> Path:
    return repo / "wiki" / "u" / user / "profile" / "lives-in.md"


def commit_all(repo: Path, what: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", what)


def fresh_open(repo: Path) -> Memory:
    """Open with no cache and no queue: everything is rebuilt from the repo."""
    subprocess.run(["rm", "-rf", str(repo / ".markmem" / "cache"), str(repo / ".markmem" / "state.db")], check=True)
    return open_mem(repo)


def cli(repo: Path, *args: str) -> tuple[int, str]:
    env = {"MARKMEM_PII_ENGINE": "regex", "MARKMEM_VECTOR_MODEL": "none"}
    result = CliRunner().invoke(main, [*args, "--repo", str(repo)], env=env, catch_exceptions=False)
    return result.exit_code, result.output


def everything_still_works(repo: Path) -> Memory:
    """doctor, reindex, search, add, compile and lint all run for the users not at fault."""
    mem = fresh_open(repo)
    assert any("Rome" in h.text for h in mem.search("Rome", user_id="bob"))
    mem.add("I like green tea", user_id="bob")
    mem.add("I like jam", user_id="carol")
    assert mem.flush() and mem.get_all("carol")
    assert mem.reindex() is not None
    return mem


BAD_LINES = {
    "truncated": b'{"id": "r-0123456789ab", "user_id": "alice", "con\n',
    "binary": b"\xff\xfe\x00\x01garbage\x02\n",
    "not-an-object": b"[1, 2, 3]\n",
    "no-id": b'{"user_id": "alice", "content": "x"}\n',
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_a_bad_raw_line_is_skipped_and_listed(two_users: Path, kind: str) -> None:
    f = raw_file(two_users, "alice")
    with open(f, "ab") as fh:
        fh.write(BAD_LINES[kind])
    commit_all(two_users, f"a {kind} line")
    where = f"{f.relative_to(two_users).as_posix()}:2"
    with everything_still_works(two_users) as mem:
        assert any("Oslo" in h.text for h in mem.search("Oslo", user_id="alice"))
        assert where in {p["path"] for p in mem.doctor()["problems"]}
        assert where in {i.path for i in mem.lint().issues if i.rule == "invalid-raw-line"}
        mem.add("I like chess", user_id="alice")  # the user with the bad line still writes and compiles
        assert mem.flush()[0].entries == 1
    code, out = cli(two_users, "lint")
    assert code == 1 and where in out and "invalid-raw-line" in out
    code, out = cli(two_users, "doctor")
    assert code == 1 and where in out  # problems found: exit 1, and every other command still runs


def test_a_raw_line_naming_another_user_is_never_theirs(two_users: Path) -> None:
    f = raw_file(two_users, "alice")
    line = json.loads(f.read_text().splitlines()[0])
    line.update(id="r-00000000abcd", user_id="bob", content="I live in Paris")
    with open(f, "a") as fh:
        fh.write(json.dumps(line) + "\n")
    commit_all(two_users, "a foreign line")
    with everything_still_works(two_users) as mem:
        assert not [h for h in mem.search("Paris", user_id="bob")]
        assert not [h for h in mem.search("Paris", user_id="alice")]
        assert all("Paris" not in c.text for p in mem.get_all("bob") for c in p.claims)
        reasons = {p["path"]: p["reason"] for p in mem.doctor()["problems"]}
        assert "disagrees with its folder" in reasons[f"{f.relative_to(two_users).as_posix()}:2"]


def test_an_unreadable_page_is_skipped_and_listed(two_users: Path) -> None:
    page_file(two_users, "alice").write_bytes(os.urandom(256))
    commit_all(two_users, "random bytes")
    with everything_still_works(two_users) as mem:
        rel = "wiki/u/alice/profile/lives-in.md"
        assert rel in {p["path"] for p in mem.doctor()["problems"]}
        assert rel in {i.path for i in mem.lint().issues if i.rule == "invalid-page"}
        assert "u/alice/profile/lives-in" not in {p.id for p in mem.get_all("alice")}
    code, out = cli(two_users, "search", "Rome", "--user", "bob")
    assert code == 0 and "Rome" in out


def test_a_page_claiming_another_user_is_not_theirs(two_users: Path) -> None:
    f = page_file(two_users, "alice")
    f.write_text(f.read_text().replace("user_id: alice", "user_id: bob"))
    commit_all(two_users, "a page that claims bob")
    with everything_still_works(two_users) as mem:
        assert {p.id for p in mem.get_all("bob")} <= {p.id for p in mem.get_all("bob") if p.id.startswith("u/bob/")}
        assert not [p for p in mem.get_all("bob") if p.id.startswith("u/alice/")]
        assert not [h for h in mem.search("Oslo", user_id="bob")]
        assert "wiki/u/alice/profile/lives-in.md" in {p["path"] for p in mem.doctor()["problems"]}
        with pytest.raises(Exception, match="disagrees with its folder"):
            mem.get("u/alice/profile/lives-in", user_id="bob")


# --- symlinks (part 5) ----------------------------------------------------------------------------
def test_add_never_appends_through_a_symlinked_user_folder(two_users: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (two_users / "raw" / "u" / "mallory").symlink_to(outside, target_is_directory=True)
    with open_mem(two_users) as mem:
        with pytest.raises(RepoError, match="symlink"):
            mem.add("my secret is 42", user_id="mallory")
        mem.add("I like tea", user_id="bob")  # others still write
        assert mem.flush()
        assert "raw/u/mallory" in {p["path"] for p in mem.doctor()["problems"]}
        assert "raw/u/mallory" in {i.path for i in mem.lint().issues if i.rule == "symlink"}
    assert list(outside.rglob("*")) == []
    assert "mallory" not in git(two_users, "ls-files")


def test_wiki_symlinks_are_never_read_or_committed(two_users: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text(page_file(two_users, "bob").read_text().replace("Rome", "Atlantis"))
    target = page_file(two_users, "bob")
    target.unlink()
    target.symlink_to(secret)
    (two_users / "wiki" / "u" / "eve").symlink_to(tmp_path, target_is_directory=True)
    with fresh_open(two_users) as mem:
        assert not [h for h in mem.search("Atlantis", user_id="bob")]
        issues = mem.lint(fix=True)
        assert {"wiki/u/bob/profile/lives-in.md", "wiki/u/eve"} <= {i.path for i in issues.issues
                                                                    if i.rule == "symlink"}
        report = mem.reindex()
        assert report.pages >= 1
        mem.add("I like tea", user_id="alice")
        mem.flush()
    tree = git(two_users, "ls-tree", "-r", "HEAD")
    assert "120000" not in tree and "Atlantis" not in git(two_users, "log", "-p", "--all")


def test_forget_never_appends_through_a_symlinked_ops_log(two_users: Path, tmp_path: Path) -> None:
    pytest.importorskip("markmem.erase.api")
    ops = two_users / ".markmem" / "ops"
    outside = tmp_path / "ops-outside"
    if ops.exists():
        os.rename(ops, outside)
    else:
        outside.mkdir()
    ops.symlink_to(outside, target_is_directory=True)
    before = {p: p.read_bytes() for p in outside.iterdir()}
    with open_mem(two_users) as mem, pytest.raises(RepoError, match="symlink"):
        mem.forget("alice")
    assert {p: p.read_bytes() for p in outside.iterdir()} == before


def test_open_time_recovery_never_commits_a_symlink(two_users: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.md").write_text("---\nid: x\n---\n")
    (two_users / "wiki" / "u" / "bob" / "profile" / "link.md").symlink_to(tmp_path / "elsewhere.md")
    (two_users / "wiki" / "u" / "bob" / "profile" / "real.md").write_text("---\nid: u/bob/profile/real\n---\n")
    with open_mem(two_users):
        pass
    tracked = git(two_users, "ls-files")
    assert "wiki/u/bob/profile/real.md" in tracked and "link.md" not in tracked


def test_forget_removes_a_symlinked_folder_without_touching_its_target(two_users: Path, tmp_path: Path) -> None:
    pytest.importorskip("markmem.erase.api")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not markmem's")
    (two_users / "raw" / "u" / "mallory").symlink_to(outside, target_is_directory=True)
    with open_mem(two_users) as mem:
        plan = mem.forget("mallory", dry_run=True)
        assert plan.files == ("raw/u/mallory",)  # type: ignore[union-attr]
        mem.forget("mallory")
        assert mem.get_all("bob")
    assert not os.path.lexists(two_users / "raw" / "u" / "mallory")
    assert (outside / "keep.txt").read_text() == "not markmem's"


@pytest.mark.parametrize("content", [b"\xff\xfe binary", b"id: [unclosed", b"- a list\n",
                                     b"id: v-0123456789\nuser_id: bob\nkind: quarantine\n"])
def test_a_bad_review_item_is_skipped_and_listed(two_users: Path, content: bytes) -> None:
    folder = two_users / "wiki" / "u" / "alice" / "review"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "v-0123456789.yaml").write_bytes(content)
    commit_all(two_users, "a bad review item")
    with everything_still_works(two_users) as mem:
        assert mem.review() == [] and mem.review("bob") == []
        assert mem.stats()["review_pending"] == 0
        rel = "wiki/u/alice/review/v-0123456789.yaml"
        assert rel in {p["path"] for p in mem.doctor()["problems"]}
        assert rel in {i.path for i in mem.lint().issues if i.rule == "invalid-page"}
