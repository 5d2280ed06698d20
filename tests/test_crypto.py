"""Encryption at rest (AES-256-GCM, per-user keys) and crypto-shredding."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from markmem import EncryptionError, Memory, RepoError
from markmem.erase import crypto, fingerprint
from markmem.erase.crypto import AesCodec, Undecryptable
from markmem.store.pages import read_page
from tests.conftest import git
from tests.test_erase import alice_markers, all_objects, populate


def open_mem(repo: Path, **kw: object) -> Memory:
    return Memory(repo, pii_engine="regex", vector_model=None, background=False, **kw)


@pytest.fixture
def emem(tmp_repo: Path):
    m = open_mem(tmp_repo, encryption=True)
    yield m
    m.close()


def test_codec_round_trip_and_binding(tmp_path: Path) -> None:
    codec = AesCodec(tmp_path / "keys")
    entry = {"id": "r-000000000001", "user_id": "alice", "content": "I live in Zanzibar", "pii": []}
    sealed = codec.seal_entry("alice", entry)
    assert set(sealed) == {"id", "user_id", "enc"} and "Zanzibar" not in json.dumps(sealed)
    assert codec.open_entry("alice", sealed) == entry
    text = codec.seal_text("alice", "---\nid: u/alice/profile/x\n---\nsecret page\n")
    assert text.startswith(crypto.HEADER) and text.startswith(fingerprint.SEALED_PREFIX)
    assert codec.open_text("alice", text).endswith("secret page\n")
    assert codec.seal_text("alice", "same") != codec.seal_text("alice", "same")  # fresh nonce each time
    key = tmp_path / "keys" / "alice.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    codec.seal_text("bob", "x")
    with pytest.raises(Undecryptable):
        codec.open_text("bob", text)  # alice's ciphertext is bound to alice
    with pytest.raises(Undecryptable):
        codec.open_entry("alice", {**sealed, "id": "r-000000000002"})  # and to its raw id
    assert codec.open_text("alice", "plain, written by hand") == "plain, written by hand"


def test_master_key_wraps_the_data_keys(tmp_path: Path) -> None:
    master = "correct horse battery staple 42"
    codec = AesCodec(tmp_path / "keys", master_key=master)
    sealed = codec.seal_text("alice", "wrapped")
    record = json.loads((tmp_path / "keys" / "alice.key").read_text())
    assert record["wrapped"] is True
    assert AesCodec(tmp_path / "keys", master_key=master).open_text("alice", sealed) == "wrapped"
    with pytest.raises(EncryptionError, match="MARKMEM_MASTER_KEY"):
        AesCodec(tmp_path / "keys").open_text("alice", sealed)
    with pytest.raises(EncryptionError, match="wrong master key"):
        AesCodec(tmp_path / "keys", master_key="wrong").open_text("alice", sealed)


def test_every_byte_of_user_content_in_the_repo_is_ciphertext(emem: Memory) -> None:
    populate(emem)
    repo = emem.root
    assert emem.doctor()["encryption"] == "aes-256-gcm"
    blob = all_objects(repo)
    tree = b"".join(p.read_bytes() for d in ("wiki", "raw") for p in (repo / d).rglob("*") if p.is_file())
    for marker in alice_markers() + ["Lisbon", "aisle seats"]:
        assert marker.encode() not in blob and marker.encode() not in tree, marker
    line = json.loads((next((repo / "raw" / "u" / "alice").rglob("*.jsonl"))).read_text().splitlines()[0])
    assert set(line) == {"id", "user_id", "enc"}
    # reading decrypts transparently; search works
    assert any("Zanzibar" in c.text for p in emem.get_all("alice") for c in p.claims)
    assert emem.search("Lisbon", user_id="bob")
    assert emem.review("alice")
    assert ".markmem/keys/" in (repo / ".gitignore").read_text()
    assert "keys" not in git(repo, "ls-files", ".markmem")


def test_a_plain_repo_refuses_encryption_later(mem: Memory) -> None:
    with pytest.raises(RepoError, match="migration"):
        open_mem(mem.root, encryption=True)


def test_shred_makes_history_unreadable_and_others_keep_working(emem: Memory) -> None:
    populate(emem)
    repo = emem.root
    old = git(repo, "rev-parse", "HEAD").strip()
    old_raw = next(p for p in git(repo, "ls-tree", "-r", "--name-only", old).splitlines()
                   if p.startswith("raw/u/alice/") and p.endswith(".jsonl"))
    old_page = next(p for p in git(repo, "ls-tree", "-r", "--name-only", old).splitlines()
                    if p.startswith("wiki/u/alice/") and p.endswith(".md"))
    bob_before = [(h.id, h.text) for h in emem.search("Lisbon", user_id="bob")]

    report = emem.forget("alice", "shred")

    assert report.ok and report.timings_ms["key"] <= report.timings_ms["total"]
    assert not (repo / ".markmem" / "keys" / "alice.key").exists()
    assert emem.get_all("alice") == [] and emem.search("quokka", user_id="alice") == []
    # history still holds the blobs, as ciphertext, and nothing can open them any more
    stored = git(repo, "show", f"{old}:{old_page}")
    assert stored.startswith(crypto.HEADER) and "quokka" not in stored.lower()
    with pytest.raises(EncryptionError):
        emem.context.codec.open_text("alice", stored)
    line = json.loads(git(repo, "show", f"{old}:{old_raw}").splitlines()[0])
    with pytest.raises(EncryptionError):
        AesCodec(repo / ".markmem" / "keys").open_entry("alice", line)
    # other users: same results, still writable
    assert [(h.id, h.text) for h in emem.search("Lisbon", user_id="bob")] == bob_before
    emem.add("I moved to Porto", user_id="bob")
    assert emem.flush()
    result = emem.verify_erasure("alice")
    assert result.ok and result.mode == "shred" and result.retained["blob"] > 0
    stones = [json.loads(ln) for p in (repo / ".markmem" / "ops").glob("*.jsonl") for ln in p.read_text().splitlines()]
    assert not any("alice" in json.dumps(s) for s in stones)


def test_a_copy_without_the_key_reindexes_the_other_users(emem: Memory, tmp_path: Path) -> None:
    """A backup or clone whose key for a user is gone: reindex skips and reports that user."""
    populate(emem)
    emem.flush()
    copy = tmp_path / "backup"
    subprocess.run(["git", "clone", "-q", str(emem.root), str(copy)], check=True)
    shutil.copytree(emem.root / ".markmem" / "keys", copy / ".markmem" / "keys")
    (copy / ".markmem" / "keys" / "alice.key").unlink()
    restored = open_mem(copy)
    try:
        report = restored.reindex()
        assert report.problems and all("alice" in path for path, _ in report.problems)
        assert restored.search("Lisbon", user_id="bob")
        assert restored.get_all("alice") == []
        with pytest.raises(EncryptionError):
            read_page(copy, next(iter(p for p, _ in report.problems if p.endswith(".md"))), restored.context.codec)
    finally:
        restored.close()


def test_shred_then_rewrite_removes_the_ciphertext_too(emem: Memory) -> None:
    populate(emem, batches=2)
    emem.forget("alice", "shred")
    report = emem.forget("alice", "rewrite")  # blob ids come from history: no PII kept
    assert report.ok and report.verify is not None and report.verify.blobs_checked > 0
    assert b'"user_id": "alice"' not in all_objects(emem.root)
    assert emem.verify_erasure("alice").ok


def test_shred_needs_an_encrypted_repo(mem: Memory) -> None:
    populate(mem, batches=1)
    with pytest.raises(EncryptionError):
        mem.forget("alice", "shred")


def test_master_key_end_to_end(tmp_repo: Path) -> None:
    master = "k3y-from-a-secret-manager-0123456789"
    mem = open_mem(tmp_repo, encryption=True, master_key=master)
    try:
        populate(mem, batches=1)
        assert json.loads((tmp_repo / ".markmem" / "keys" / "alice.key").read_text())["wrapped"] is True
        plan = mem.forget("alice", "shred", dry_run=True)
        assert plan.key_present is True and "delete the key" in str(plan)
    finally:
        mem.close()
    with pytest.raises(EncryptionError, match="MARKMEM_MASTER_KEY"):
        AesCodec(tmp_repo / ".markmem" / "keys").open_text("bob", next(
            (tmp_repo / "wiki" / "u" / "bob").rglob("*.md")).read_text())


def cache_bytes(repo: Path) -> bytes:
    """Every byte of the cache files (databases, WALs, shared memory), as they lie on disk."""
    folder = repo / ".markmem" / "cache"
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.parametrize("mode", ["shred", "rewrite"])
def test_no_trace_of_the_user_stays_in_the_cache_file(tmp_repo: Path, mode: str) -> None:
    """Deleted rows, their older versions (rewritten by later compiles, moved when pages split)
    and their FTS terms all go: no word of the user's is left in a free page, an FTS segment or
    the WAL. (Zeroing deleted cells, ``secure_delete``, is not enough: with these two users'
    rows interleaved, copies survive page rebuilds; the erasure VACUUMs the cache.)"""
    mem = open_mem(tmp_repo, encryption=mode == "shred", batch_size=50)
    try:
        for i in range(100):
            mem.add(f"I like quokka-{i} things and walked past the kelp near Frobnicator", user_id="alice")
            mem.add(f"Bob went to Lisbon {i} again", user_id="bob")
            if i % 25 == 0:
                mem.flush()
        mem.flush()
        assert b"quokka" in cache_bytes(tmp_repo).lower()
        mem.forget("alice", mode)
        data = cache_bytes(tmp_repo).lower()
        for word in (b"quokka", b"frobnicator"):
            assert word not in data, word
        assert mem.search("Lisbon", user_id="bob")  # the cache still works for everyone else
        assert not mem.search("quokka", user_id="alice")
        if mode == "shred":  # an encrypted repo's cache keeps each user in a file of their own
            assert not (tmp_repo / ".markmem" / "cache" / "u" / "alice.db").exists()
            assert (tmp_repo / ".markmem" / "cache" / "u" / "bob.db").exists()
    finally:
        mem.close()
