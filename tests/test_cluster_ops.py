"""Cluster mode on a real PostgreSQL (pgserver): compliance and repo-level work across shards.

Access exports that list turns still in the intake, erasure of the derived index in an encrypted
cluster, and import / update / delete / maintenance / related / tombstones on shard repos."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from markmem import Memory
from markmem.cluster.layout import shard_dir, shard_of

SETTINGS = {"pii_engine": "regex", "clause_parser": "regex", "vector_model": None, "background": False}


def open_cluster(root: Path, url: str, **kw: object) -> Memory:
    return Memory(root, database_url=url, **{**SETTINGS, **kw})  # type: ignore[arg-type]


def test_an_access_export_lists_turns_still_in_the_intake_as_pending(tmp_path: Path, database_url: str) -> None:
    root = tmp_path / "cluster"
    with open_cluster(root, database_url, shards=2) as mem:
        mem.add("I live in Porto", user_id="ana")
        mem.flush()
        waiting = mem.add("I adopted a parrot called Kiwi", user_id="ana").ids[0]
        mem.add("I live in Oslo", user_id="bob")  # another user's pending turn: not listed
        data = mem.export(user_id="ana", to="access", path=tmp_path / "out")
    raw = {e["id"]: e for e in data["raw"]}
    assert raw[waiting]["pending"] is True and raw[waiting]["content"] == "I adopted a parrot called Kiwi"
    assert [e for e in data["raw"] if e.get("pending")] == [raw[waiting]]
    assert all(e["user_id"] == "ana" for e in data["raw"]) and "Oslo" not in json.dumps(data)
    assert data["summary"]["raw_entries"] == 2 and data["summary"]["pending_compilation"] == 1
    markdown = (tmp_path / "out" / "access-ana.md").read_text()
    assert "Kiwi" in markdown and "not compiled yet" in markdown
    assert json.loads((tmp_path / "out" / "access-ana.json").read_text())["raw"][-1]["pending"] is True


def test_an_access_export_of_an_encrypted_cluster_opens_the_sealed_intake(tmp_path: Path, database_url: str) -> None:
    root = tmp_path / "cluster"
    with open_cluster(root, database_url, shards=2, encryption=True, master_key="k" * 32) as mem:
        rid = mem.add("My locker code is kept in Lisbon", user_id="ivo").ids[0]
        data = mem.export(user_id="ivo", to="access")
    assert [(e["id"], e["content"], e["pending"]) for e in data["raw"]] == [
        (rid, "My locker code is kept in Lisbon", True)]


def index_text(url: str, user_id: str) -> str:
    """Every text column of the user's rows in the derived index, concatenated."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = [conn.execute(f"SELECT t::text FROM {table} t WHERE user_id = %s", (user_id,)).fetchall()
                for table in ("mm_turns", "mm_pages", "mm_claims")]
    return " ".join(r[0] for part in rows for r in part)


def test_a_shred_deletes_the_plaintext_index_rows_and_verify_counts_them(tmp_path: Path, database_url: str) -> None:
    """An encrypted cluster's derived index holds plaintext (search needs it; docs/DEPLOY.md says so):
    the key cannot reach it, so forget deletes those rows, whatever the mode, and verify-erasure
    fails while any row of the user is left in any index table."""
    import psycopg

    root = tmp_path / "cluster"
    with open_cluster(root, database_url, shards=2, encryption=True, master_key="k" * 32) as mem:
        mem.add("My locker code is kept in Lisbon", user_id="ivo")
        mem.add("I work as a pilot", user_id="kai")
        mem.flush()
        mem.add("I adopted a parrot called Kiwi", user_id="ivo")  # still in the intake
        assert "Lisbon" in index_text(database_url, "ivo") and "Kiwi" in index_text(database_url, "ivo")
        assert mem.forget("ivo", mode="shred").ok
        assert index_text(database_url, "ivo") == ""
        check = mem.verify_erasure("ivo")
        assert check.ok, check.findings[:5]
        assert mem.search("locker Lisbon parrot", user_id="ivo") == []
        assert "pilot" in index_text(database_url, "kai")  # another user's rows are untouched
        with psycopg.connect(database_url, autocommit=True) as conn:  # a row a replica wrote back late
            conn.execute("INSERT INTO mm_turns (user_id, id, seq, role, content, body, recorded_at, hash) "
                         "VALUES ('ivo', 'r-stray', 1, 'user', 'Lisbon', 'Lisbon', '2026-01-01', 'x')")
        late = mem.verify_erasure("ivo")
    assert not late.ok and any(f.kind == "database" and f.where.startswith("mm_turns: 1 row") for f in late.findings), late.findings
