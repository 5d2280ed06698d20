"""Data-subject access: export(to="access") and history(user_id=...)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from markmem import Memory
from markmem.erase.access import to_markdown
from tests.test_erase import populate


def test_access_export_holds_everything_about_one_user(mem: Memory, tmp_path: Path) -> None:
    populate(mem)
    mem.add("Actually I live in Oslo now", user_id="alice")
    mem.flush()
    data = mem.export("alice", to="access", path=tmp_path / "out")
    assert data["user_id"] == "alice" and data["format"] == "markmem-access-export"
    s = data["summary"]
    assert s["raw_entries"] == len(data["raw"]) == 12 and s["pages"] == len(data["pages"]) >= 3
    assert {c["status"] for c in data["claims"]} >= {"active", "superseded"}
    closed = [c for c in data["claims"] if c["status"] == "superseded"]
    assert all(c["valid_until"] and c["superseded_by"] for c in closed)
    assert len(data["review"]) == 1 and data["review"][0]["kind"] == "quarantine"
    assert all(p["markdown"].startswith("---\n") for p in data["pages"])
    assert any(h["op"] == "compile" for h in data["history"])
    text = json.dumps(data)
    assert "Lisbon" not in text and "aisle" not in text and "bob" not in text  # nothing of another user
    js, md = (Path(f) for f in data["files"])
    assert js.name == "access-alice.json" and md.suffix == ".md"
    assert stat.S_IMODE(js.stat().st_mode) == 0o600 and stat.S_IMODE(md.stat().st_mode) == 0o600
    loaded = json.loads(js.read_text())
    assert loaded["summary"] == s
    doc = md.read_text()
    assert "# Data held about user `alice`" in doc and "Oslo" in doc and "## Past facts" in doc
    assert to_markdown(data) == doc


def test_access_export_of_an_encrypted_repo_is_readable(tmp_repo: Path) -> None:
    mem = Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False, encryption=True)
    try:
        populate(mem, batches=1)
        data = mem.export("alice", to="access", path=tmp_repo.parent / "alice.json")
        assert any("Zanzibar" in e["content"] for e in data["raw"])
        assert (tmp_repo.parent / "alice.md").exists()
    finally:
        mem.close()


def test_user_history_lists_every_operation_and_survives_erasure(mem: Memory) -> None:
    populate(mem, batches=2)
    item = mem.review("alice")[0]
    mem.review_decide(item["id"], "reject")
    events = mem.history(user_id="alice")
    ops = [e["op"] for e in events]
    assert ops.count("compile") == 3 and "review" in ops
    git_compile = next(e for e in events if e["op"] == "compile" and e.get("users_in_batch") == 2)
    assert git_compile["source"] == "git" and git_compile["files"]
    assert all(f.split()[-1].startswith(("raw/u/alice/", "wiki/u/alice/")) for f in git_compile["files"])
    assert "bob" not in json.dumps(events)  # other users' ids never leak into alice's history
    assert [e["at"] for e in events] == sorted((e["at"] for e in events), reverse=True)

    mem.forget("alice", "rewrite")
    after = mem.history(user_id="alice")
    assert {e["op"] for e in after} >= {"forget", "forget-verified", "review"}
    assert all(e.get("pseudonymised") for e in after)  # only token-bearing records remain
    assert "quokka" not in json.dumps(after).lower()
    assert mem.history(user_id="bob") and not any(e["op"] == "forget" for e in mem.history(user_id="bob"))
