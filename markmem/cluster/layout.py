"""Where a user lives: a stable hash picks the shard; a shard is an ordinary repo at ``shards/NN``.

The shard count is fixed when the cluster is created: it is recorded in PostgreSQL
(``markmem_cluster``) and in every shard repo's ``.markmem/config.yaml``; a different count
asked for later is refused, since it would move users between repos.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml

from ..errors import InvalidInput, RepoError
from ..store.git import Git, message
from ..store.pages import atomic_write
from ..store.repo import CONFIG_FILE, init_repo, read_repo_config
from . import intake

DEFAULT_SHARDS = 8
INIT_LOCK = 0x6D6D0000  # advisory lock key held while a cluster is created


def shard_of(user_id: str, shards: int) -> int:
    """Stable across processes, machines and Python versions (not ``hash()``)."""
    digest = hashlib.sha256(user_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def shard_dir(root: Path, shard: int) -> Path:
    return root / "shards" / f"{shard:02d}"


def remote_url(template: str | None, shard: int) -> str | None:
    return None if template is None else template.replace("{shard}", f"{shard:02d}")


def ensure(conn: Any, root: Path, asked: int | None, create: bool, author: tuple[str, str],
           encryption: bool = False) -> int:
    """Create the tables, record the shard count and create missing shard repos (once, under a
    cluster-wide advisory lock). Returns the shard count."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (INIT_LOCK,))
        intake.ensure_schema(conn)
        recorded = intake.get_setting(conn, "shards")
        if recorded is None:
            if not create:
                raise RepoError("no markmem cluster in this database; run `markmem init` with MARKMEM_DATABASE_URL set")
            shards = asked or DEFAULT_SHARDS
            intake.set_setting(conn, "shards", str(shards))
        else:
            shards = int(recorded)
            if asked is not None and asked != shards:
                raise InvalidInput(f"this cluster has {shards} shards (fixed at init), not {asked}", field="shards")
        for n in range(shards):
            _ensure_repo(shard_dir(root, n), n, shards, author, encryption)
    return shards


def _ensure_repo(path: Path, shard: int, shards: int, author: tuple[str, str], encryption: bool) -> None:
    git = Git(path, author)
    init_repo(path, git, encryption=encryption, create=True)
    cfg = read_repo_config(path)
    want = {"shard": shard, "shards": shards}
    if cfg.get("cluster") == want:
        return
    if "cluster" in cfg:
        raise RepoError(f"{path} records cluster {cfg['cluster']}, not {want}")
    cfg["cluster"] = want
    atomic_write(path / CONFIG_FILE, yaml.safe_dump(cfg, sort_keys=False))
    git.commit([CONFIG_FILE], message(f"markmem: shard {shard:02d} of {shards}", {"Markmem-Op": "init"}))
