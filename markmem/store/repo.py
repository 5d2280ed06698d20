"""The memory repo's layout and initialisation.

    raw/u/<user>/<YYYY>/<MM>/<DD>.jsonl   append-only inputs (+ checkpoint.json)
    wiki/u/<user>/<type>/<slug>.md         compiled pages; wiki/u/<user>/review/<id>.yaml pending review
    .markmem/ops/<YYYY-MM>.jsonl           operations log and tombstones (committed)
    .markmem/config.yaml                   repo-level settings chosen at init (committed)
    .markmem/state.db, cache/, keys/, *.lock   local only (git-ignored)
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ..errors import RepoError
from .git import Git, message
from .links import crosses_link, refuse_links
from .pages import atomic_write

GITIGNORE = """\
# markmem: local state, rebuildable or secret; never committed
.markmem/cache/
.markmem/keys/
.markmem/state.db*
.markmem/*.lock
.markmem/tmp/
"""
SCHEMA_FILE = ".markmem-schema"
CONFIG_FILE = ".markmem/config.yaml"


def schema_text() -> str:
    return resources.files("markmem").joinpath("schema.yaml").read_text("utf-8")


@cache
def schema_version() -> int:
    """The packaged schema's version (parsed once per process: the file ships with the code)."""
    return int(yaml.safe_load(schema_text())["version"])


def read_repo_config(root: Path) -> dict[str, Any]:
    path = root / CONFIG_FILE
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text("utf-8")) or {}
    if not isinstance(data, dict):
        raise RepoError(f"{CONFIG_FILE} is not a mapping")
    return data


def is_memory_repo(root: Path) -> bool:
    return (root / CONFIG_FILE).exists()


def init_repo(root: Path, git: Git, *, encryption: bool = False, create: bool = True, adopt: bool = False) -> bool:
    """Create the layout if missing. Returns True when it made the initial commit.

    Refuses (RepoError) to open a folder that is not a memory repo when ``create`` is False, and to
    turn an existing git repo with history (say, a source tree) into one unless ``adopt`` is True.
    """
    if not is_memory_repo(root):
        if not create:
            raise RepoError(f"{root} is not a markmem memory repo (no {CONFIG_FILE}); run `markmem init {root}`")
        if git.is_repo() and git.head() is not None and not adopt:
            raise RepoError(f"{root} is a git repo with history but not a memory repo; "
                            "pass adopt_existing=True to make it one, or use a new folder")
    root.mkdir(parents=True, exist_ok=True)
    if not git.is_repo():
        git.init()
    (root / ".markmem").mkdir(exist_ok=True)
    created: list[str] = []
    if not (root / SCHEMA_FILE).exists():
        atomic_write(root / SCHEMA_FILE, schema_text())
        created.append(SCHEMA_FILE)
    gi = root / ".gitignore"
    existing = gi.read_text("utf-8") if gi.exists() else ""
    if ".markmem/cache/" not in existing:
        atomic_write(gi, existing + ("\n" if existing and not existing.endswith("\n") else "") + GITIGNORE)
        created.append(".gitignore")
    if not (root / CONFIG_FILE).exists():
        cfg = {"schema": schema_version(), "encryption": "aes-256-gcm" if encryption else "none"}
        atomic_write(root / CONFIG_FILE, yaml.safe_dump(cfg, sort_keys=False))
        created.append(CONFIG_FILE)
    if not created:
        return False
    trailers = {"Markmem-Op": "init", "Markmem-Schema": str(schema_version())}
    return git.commit(created, message("markmem: initialise memory repo", trailers)) is not None


def append_op(root: Path, record: dict[str, Any]) -> str:
    """Append one operation record (no PII: ids, counts, hashes only). Returns its path."""
    when = str(record.get("at", ""))
    rel = f".markmem/ops/{when[:7] or 'undated'}.jsonl"
    path = root / rel
    refuse_links(root, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
    return rel


def iter_ops(root: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if crosses_link(root, ".markmem/ops"):
        return out
    for path in sorted((root / ".markmem" / "ops").glob("*.jsonl")):
        if path.is_symlink():
            continue
        for line in path.read_bytes().splitlines():
            try:
                record = json.loads(line) if line.strip() else None
            except ValueError:
                continue  # a damaged line (doctor's concern): the others still count
            if isinstance(record, dict):
                out.append(record)
    return out
