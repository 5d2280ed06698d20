"""``markmem import --from chatgpt|claude``: a person's chat history, gated turn by turn, compiled into
claims valid from when they were said; re-importing adds nothing. The export files are built here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from markmem import Memory
from markmem.cli import main
from markmem.portability.chats import parse
from tests.conftest import git

FAST = {"MARKMEM_PII_ENGINE": "regex", "MARKMEM_VECTOR_MODEL": "none"}
T2023, T2024 = 1_684_000_000.0, 1_715_000_000.0  # 2023-05-13, 2024-05-06


def chatgpt_export() -> list[dict]:
    """Two conversations as ChatGPT's conversations.json has them: a node mapping with a side branch."""
    def node(nid: str, parent: str | None, role: str | None, text: str, when: float | None, **meta: object) -> dict:
        message = None if role is None else {
            "id": nid, "author": {"role": role}, "create_time": when, "metadata": dict(meta),
            "content": {"content_type": "text", "parts": [text]}}
        return {"id": nid, "message": message, "parent": parent, "children": []}

    first = {"conversation_id": "conv-1", "title": "Moving", "create_time": T2023, "current_node": "m3", "mapping": {
        "root": node("root", None, None, "", None),
        "m0": node("m0", "root", "system", "You are ChatGPT", T2023, is_visually_hidden_from_conversation=True),
        "m1": node("m1", "m0", "user", "I live in Lisbon and my email is ana@example.com", T2023),
        "m2": node("m2", "m1", "assistant", "Lisbon is lovely!", T2023 + 5),
        "edit": node("edit", "m1", "assistant", "a regenerated answer the user did not keep", T2023 + 6),
        "m3": node("m3", "m2", "user", "I work as a nurse", T2023 + 60),
    }}
    second = {"conversation_id": "conv-2", "title": "News", "current_node": "n1", "mapping": {
        "n1": node("n1", None, "user", "I moved to Porto last month", T2024),
    }}
    return [first, second]


def claude_export() -> list[dict]:
    return [{"uuid": "c-1", "name": "Chat", "created_at": "2023-05-13T10:00:00Z", "chat_messages": [
        {"uuid": "u1", "sender": "human", "created_at": "2023-05-13T10:00:00Z", "text": "I live in Lisbon",
         "content": [{"type": "text", "text": "I live in Lisbon"}]},
        {"uuid": "a1", "sender": "assistant", "created_at": "2023-05-13T10:00:05Z", "text": "",
         "content": [{"type": "text", "text": "Nice city."}]},
        {"uuid": "u2", "sender": "human", "created_at": "2024-05-06T09:00:00Z", "text": "I moved to Porto",
         "content": []},
    ]}]


def test_chatgpt_follows_the_kept_branch_and_skips_hidden_turns() -> None:
    turns = parse(json.dumps(chatgpt_export()), "chatgpt")
    assert [(t.role, t.text) for t in turns] == [
        ("user", "I live in Lisbon and my email is ana@example.com"), ("assistant", "Lisbon is lovely!"),
        ("user", "I work as a nurse"), ("user", "I moved to Porto last month")]
    assert turns[0].when == "2023-05-13T17:46:40Z" and turns[0].conversation == "conv-1"


@pytest.mark.parametrize("fmt,export", [("chatgpt", chatgpt_export), ("claude", claude_export)])
def test_import_gates_compiles_and_is_idempotent(tmp_path: Path, fmt: str, export) -> None:  # type: ignore[no-untyped-def]
    repo, source = tmp_path / "memory", tmp_path / "conversations.json"
    source.write_text(json.dumps(export()))
    runner = CliRunner(env={**FAST, "MARKMEM_REPO": str(repo)})
    result = runner.invoke(main, ["import", "--from", fmt, str(source), "--user", "ana", "--json"])
    assert result.exit_code == 0, result.output
    first = json.loads(result.output)
    assert first["raw"] >= 3 and first["claims"] >= 2 and first["commit"]
    with Memory(repo, pii_engine="regex", vector_model=None, background=False) as mem:
        (lives,) = [p for p in mem.get_all("ana") if p.id.endswith("/lives-in")]
        old, new = sorted(lives.claims, key=lambda c: c.valid_from or "")
        assert old.value == "Lisbon" and old.valid_from.startswith("2023-05-13")  # type: ignore[union-attr]
        assert new.active and "Porto" in new.value and new.valid_from.startswith("2024-05-06")  # type: ignore[union-attr]
        assert old.superseded_by == new.id
    disk = "".join(p.read_text() for p in (repo / "raw").rglob("*.jsonl"))
    assert "ana@example.com" not in disk  # the PII gate ran on every turn
    assert "did not keep" not in disk  # the abandoned branch is not imported
    assert "compile: u/ana" in git(repo, "log", "--format=%s")
    again = runner.invoke(main, ["import", "--from", fmt, str(source), "--user", "ana"])
    assert again.exit_code == 0 and again.output.startswith("imported 0 entries"), again.output


def test_a_chat_import_needs_its_owner(tmp_path: Path) -> None:
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps(claude_export()))
    result = CliRunner(env={**FAST, "MARKMEM_REPO": str(tmp_path / "m")}).invoke(
        main, ["import", "--from", "claude", str(source)])
    assert result.exit_code == 1 and "--user" in result.output
