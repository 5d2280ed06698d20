"""``markmem.compat.mem0.Memory`` runs a mem0-style program unchanged (but for its import line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from markmem import Memory as Core
from markmem.compat.mem0 import Memory

PROGRAM = """
import json

from markmem.compat.mem0 import Memory

m = Memory()
messages = [
    {"role": "user", "content": "I'm vegetarian and I work as a nurse"},
    {"role": "assistant", "content": "Noted, I'll suggest vegetarian recipes."},
]
added = m.add(messages, user_id="alice", metadata={"category": "food"})
related = m.search(query="nurse", user_id="alice", limit=3)
all_memories = m.get_all(user_id="alice")
memory_id = [r["id"] for r in all_memories["results"] if "nurse" in r["memory"]][0]
updated = m.update(memory_id=memory_id, data="I work as a teacher")
history = m.history(memory_id=memory_id)
one = m.get(memory_id)
after = m.get_all(user_id="alice")
deleted = m.delete_all(user_id="alice")
print(json.dumps({"added": added, "related": related, "all": all_memories, "updated": updated, "history": history,
                  "one": one, "after": after, "deleted": deleted, "empty": m.get_all(user_id="alice")}))
"""


def test_a_mem0_program_runs_unchanged(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "MARKMEM_REPO": str(tmp_path / "r"),
           "MARKMEM_PII_ENGINE": "regex", "MARKMEM_VECTOR_MODEL": "none"}
    run = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["added"]["results"] and all(r["event"] == "ADD" and r["id"].startswith("c-")
                                           for r in out["added"]["results"])
    assert out["related"]["results"] and all({"id", "memory", "score"} <= r.keys() for r in out["related"]["results"])
    assert all(r["metadata"] == {"category": "food"} and r["user_id"] == "alice" for r in out["all"]["results"])
    assert out["updated"] == {"message": "Memory updated successfully!"}
    assert [h["event"] for h in out["history"]] == ["ADD", "UPDATE"]
    assert out["history"][1]["new_memory"] == "I work as a teacher"
    assert out["one"]["memory"] == out["history"][0]["new_memory"]  # the old version stays readable
    assert "I work as a teacher" in {r["memory"] for r in out["after"]["results"]}
    assert out["deleted"] == {"message": "Memories deleted successfully!"} and out["empty"] == {"results": []}


def test_add_reports_updates_and_needs_an_owner(tmp_path: Path) -> None:
    with Memory({"markmem": {"repo_path": str(tmp_path / "r"), "pii_engine": "regex", "vector_model": None}}) as m:
        first = m.add("I live in Lisbon", user_id="bob")["results"]
        assert [r["event"] for r in first] == ["ADD"]
        second = m.add("I moved to Porto", user_id="bob")["results"]
        assert second == [{"id": second[0]["id"], "memory": "I moved to Porto", "event": "UPDATE",
                           "previous_memory": "I live in Lisbon"}]
        assert m.get("c-0000000000") is None
        with pytest.raises(ValueError, match="user_id"):
            m.search("x")
    with Core(tmp_path / "r", pii_engine="regex", vector_model=None, background=False) as core:
        assert [c.text for p in core.get_all("bob") for c in p.active_claims()] == ["I moved to Porto"]
