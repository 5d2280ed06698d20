"""The core CLI commands via click's CliRunner, asserting through the library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from markmem import Memory
from markmem.cli import main

FAST = {"MARKMEM_PII_ENGINE": "regex", "MARKMEM_VECTOR_MODEL": "none"}


def run(repo: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner(env={**FAST, "MARKMEM_REPO": str(repo)}).invoke(main, list(args), input=input)


def lib(repo: Path) -> Memory:
    return Memory(repo, pii_engine="regex", vector_model=None, background=False)


def test_init_add_search_get_list(tmp_path: Path) -> None:
    repo = tmp_path / "mem"
    assert run(repo, "init", str(repo)).exit_code == 0
    added = run(repo, "add", "I live in Lisbon and my email is ana@example.com", "--user", "ana", "--json")
    assert added.exit_code == 0, added.output
    assert json.loads(added.output)["pii"] == ["EMAIL_ADDRESS"]
    hits = json.loads(run(repo, "search", "Lisbon", "--user", "ana", "--json").output)
    assert hits and all(h["user_id"] == "ana" for h in hits)
    assert "Lisbon" in run(repo, "search", "Lisbon", "--user", "ana", "--context").output
    listed = json.loads(run(repo, "list", "--user", "ana", "--json").output)
    page_id = next(p["id"] for p in listed if p["id"].endswith("/lives-in"))
    assert json.loads(run(repo, "get", page_id, "--json").output)["id"] == page_id
    with lib(repo) as mem:  # the CLI wrote through the library: same pages, PII masked on disk
        assert [p.id for p in mem.get_all("ana")] == [p["id"] for p in listed]
    assert "ana@example.com" not in "".join(p.read_text() for p in (repo / "raw").rglob("*.jsonl"))


def test_update_history_delete(tmp_path: Path) -> None:
    repo = tmp_path / "mem"
    run(repo, "add", "I live in Lisbon", "--user", "ana")
    page = "u/ana/profile/lives-in"
    updated = json.loads(run(repo, "update", page, "I live in Porto", "--json").output)
    assert updated["provenance"] == "human_edited" and updated["supersedes"]
    history = json.loads(run(repo, "history", page, "--json", "--no-diff").output)
    assert [c["op"] for c in history][:2] == ["update", "compile"]
    assert "update" in run(repo, "history", page).output
    assert run(repo, "delete", page).exit_code == 0
    with lib(repo) as mem:
        assert mem.get(page).archived  # type: ignore[union-attr]
        assert mem.get(updated["id"]).value == "I live in Porto"  # type: ignore[union-attr]


def test_add_from_stdin_and_flush(tmp_path: Path) -> None:
    repo = tmp_path / "mem"
    assert run(repo, "add", "--user", "bo", "--no-flush", input="I work as a nurse\n").exit_code == 0
    flushed = json.loads(run(repo, "flush", "--json").output)
    assert sum(r["entries"] for r in flushed) == 1
    with lib(repo) as mem:
        assert [c.value for p in mem.get_all("bo") for c in p.claims] == ["nurse"]


def test_reindex_doctor_stats(tmp_path: Path) -> None:
    repo = tmp_path / "mem"
    run(repo, "add", "I like tea", "--user", "ana")
    assert "indexed 1 raw entries" in run(repo, "reindex").output
    doctor = run(repo, "doctor", "--json")
    assert doctor.exit_code == 0 and json.loads(doctor.output)["pii_gate"] == "regex"
    assert json.loads(run(repo, "stats", "--json").output)["raw_entries"] == 1


@pytest.mark.parametrize(("args", "message"), [
    (("search", "x", "--user", "../etc"), "invalid user_id"),
    (("get", "u/ana/profile/missing"), "page not found"),
    (("add", "x", "--user", "ana", "--metadata", "{not json"), "--metadata"),
])
def test_errors_exit_nonzero_with_a_message(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    run(tmp_path / "mem", "add", "seed", "--user", "ana")
    result = run(tmp_path / "mem", *args)
    assert result.exit_code in (1, 2) and message in result.output
    assert "Traceback" not in result.output


def test_repo_defaults_to_env_then_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner(env={**FAST, "MARKMEM_REPO": None}).invoke(main, ["add", "I like tea", "--user", "ana"])
    assert result.exit_code == 0 and (tmp_path / "raw" / "u" / "ana").is_dir()


def test_reading_commands_never_create_a_repo(tmp_path: Path) -> None:
    result = run(tmp_path / "nothing", "search", "x", "--user", "ana")
    assert result.exit_code == 1 and "markmem init" in result.output
    assert not (tmp_path / "nothing").exists()


def test_search_explain_shows_the_time_window_and_events(tmp_path: Path) -> None:
    from datetime import datetime, timedelta, timezone

    repo = tmp_path / "mem"
    run(repo, "add", "I went hiking in the hills", "--user", "ana")
    tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    out = run(repo, "search", "Where did I go hiking yesterday?", "--user", "ana", "--as-of", tomorrow, "--explain")
    assert out.exit_code == 0, out.output
    assert "hiking in the hills" in out.output and "time window: 'yesterday' = " in out.output
    out = run(repo, "search", "Which did I do first, hiking or the pottery class?", "--user", "ana", "--explain")
    assert "events searched: Which did I do hiking | Which did I do the pottery class" in out.output
    assert "time window" not in run(repo, "search", "hiking", "--user", "ana", "--explain").output
