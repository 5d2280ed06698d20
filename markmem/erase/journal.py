"""The erasure journal and the user token: what lets an interrupted ``forget`` resume, with no PII in git.

* ``user_token(ctx, user_id)`` -> ``erased-<16 hex>``: a keyed hash (HMAC-SHA256) of the user id.
  It is what tombstones, redacted ops records and rewritten commit trailers carry instead of the id.
  The key is derived from ``MARKMEM_MASTER_KEY`` when set (stable across clones that share it),
  else a random secret in ``.markmem/keys/tombstone.secret`` (local, git-ignored). Without the key
  a tombstone cannot be linked back to a guessed user id.
* The journal ``.markmem/erasure/<token>.json`` (mode 0600, in a self-ignoring folder, never
  committed) is written before the first destructive step and records the state reached. For
  ``rewrite`` it also holds the object ids of the user's stored versions (not PII). The content
  fingerprints ``verify`` searches for (fragments of the user's text, i.e. PII) are kept in memory
  only, never in the file: a resumed rewrite collects them again from history (which still holds
  the text until the rewrite ran); past that point the object ids and the user id remain to check.
  It is deleted as soon as a verification finds no hit.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..context import Context

ERASURE_DIR = ".markmem/erasure"
SECRET_FILE = "tombstone.secret"


def user_token(ctx: Context, user_id: str, *, create: bool = True) -> str | None:
    """The user's pseudonym in tombstones; None when ``create`` is False and no secret exists yet."""
    secret = _secret(ctx, create)
    if secret is None:
        return None
    digest = hmac.new(secret, b"markmem-user\x1f" + user_id.encode("utf-8"), hashlib.sha256)
    return "erased-" + digest.hexdigest()[:16]


def _secret(ctx: Context, create: bool) -> bytes | None:
    if ctx.settings.master_key:
        return hmac.new(ctx.settings.master_key.encode("utf-8"), b"markmem-tombstone-key-v1", hashlib.sha256).digest()
    keys = ctx.root / ".markmem" / "keys"
    path = keys / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text("ascii").strip())
    except (FileNotFoundError, ValueError):
        if not create:
            return None
    keys.mkdir(parents=True, exist_ok=True, mode=0o700)
    _write_private(path, secrets.token_hex(32) + "\n", exclusive=True)
    return bytes.fromhex(path.read_text("ascii").strip())


@dataclass
class Journal:
    erasure_id: str
    token: str
    mode: str
    started: str
    user_id: str = ""  # local only (the journal is never committed), so that an erasure can be resumed
    state: str = "started"  # started -> scrubbed -> rewritten -> done (shred: started -> shredded -> done)
    needles: list[str] = field(default_factory=list)  # plaintext fingerprints (rewrite, plain repos): in memory only
    blobs: list[str] = field(default_factory=list)  # object ids of the user's stored versions (not PII)
    short: int = 0  # content strings too short to fingerprint
    removed: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def erasure_dir(root: Path) -> Path:
    path = root / ERASURE_DIR
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    ignore = path / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# markmem erasure journals: local only, may hold fingerprints of erased text\n*\n")
    return path


def journal_path(root: Path, token: str) -> Path:
    return root / ERASURE_DIR / f"{token}.json"


def load(root: Path, token: str) -> Journal | None:
    path = journal_path(root, token)
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:
        return None  # a torn journal: the steps are idempotent, so starting over is safe
    known = {k: v for k, v in data.items() if k in Journal.__dataclass_fields__}
    return Journal(**known)


def save(root: Path, journal: Journal) -> None:
    erasure_dir(root)
    data = {**journal.to_json(), "needles": []}  # plaintext fragments never reach the disk
    _write_private(journal_path(root, journal.token), json.dumps(data, ensure_ascii=False) + "\n")


def discard(root: Path, token: str) -> bool:
    path = journal_path(root, token)
    try:
        size = path.stat().st_size
        with open(path, "r+b") as fh:  # it may hold fingerprints: overwrite before unlinking
            fh.write(b"\0" * size)
            fh.flush()
            os.fsync(fh.fileno())
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def pending(root: Path) -> list[Journal]:
    """Journals of erasures that did not finish (``forget`` with the same user resumes them)."""
    folder = root / ERASURE_DIR
    out = []
    for path in sorted(folder.glob("erased-*.json")) if folder.is_dir() else []:
        j = load(root, path.stem)
        if j is not None:
            out.append(j)
    return out


def _write_private(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Write a 0600 file atomically (temp + fsync + rename/link)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if exclusive:
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
