"""AES-256-GCM codec: every byte of a user's content in the repo is ciphertext under a per-user key.

Keys live in ``.markmem/keys/<user>.key`` (mode 0600, git-ignored, never committed): a random
256-bit data key per user, stored plain or wrapped (AES-GCM) by a key-encryption key derived
(HKDF-SHA256) from ``MARKMEM_MASTER_KEY``. Deleting a user's key file is crypto-shredding: every
copy of that user's content (working tree, history, clones, backups) becomes unreadable at once.

Stored forms (see ``markmem/schema.yaml``):

* raw line: ``{"id": ..., "user_id": ..., "enc": base64(nonce | ciphertext+tag)}``; the AAD binds
  the line to its user and raw id, so a sealed line cannot be moved to another user or entry.
* page / review item: a text file ``markmem-sealed: aes-256-gcm v1`` + base64 lines; the AAD
  binds it to its user.

Reading data whose key is gone (or wrong) raises :class:`Undecryptable`, an ``EncryptionError``
that is also a ``MalformedPage``/``ValueError`` so that the cache rebuild skips and reports such
files instead of failing (other users keep working).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
import tempfile
import threading
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..errors import EncryptionError, MalformedPage

HEADER = "markmem-sealed: aes-256-gcm v1"
_NONCE = 12
_KEY_BYTES = 32


class Undecryptable(EncryptionError, MalformedPage, ValueError):
    """A user's content cannot be opened: the key is missing (shredded), wrong, or the data is damaged."""

    def __init__(self, user_id: str, reason: str) -> None:
        MalformedPage.__init__(self, f"u/{user_id}", reason)
        self.user_id = user_id

    def __str__(self) -> str:
        return f"cannot decrypt data of user {self.user_id}: {self.reason}"


class AesCodec:
    """The :class:`markmem.store.codec.Codec` for encrypted repos (``encryption: aes-256-gcm``)."""

    name = "aes-256-gcm"

    def __init__(self, keys_dir: Path, master_key: str | None = None) -> None:
        self.keys_dir = Path(keys_dir)
        self._kek = _derive_kek(master_key) if master_key else None
        self._keys: dict[str, tuple[AESGCM, int]] = {}  # user -> (cipher, inode of its key file)
        self._lock = threading.Lock()

    # -- the Codec protocol -------------------------------------------------------------
    def seal_entry(self, user_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        rid = str(entry["id"])
        data = json.dumps(entry, ensure_ascii=False, sort_keys=True).encode("utf-8")
        return {"id": rid, "user_id": user_id, "enc": self._seal(user_id, data, _aad("raw", user_id, rid))}

    def open_entry(self, user_id: str, stored: dict[str, Any]) -> dict[str, Any]:
        if "enc" not in stored:
            return stored  # a plain line (written before encryption or by hand): nothing to open
        rid = str(stored.get("id", ""))
        data = self._open(user_id, str(stored["enc"]), _aad("raw", user_id, rid))
        entry = json.loads(data)
        if entry.get("id") != rid or entry.get("user_id") != user_id:
            raise Undecryptable(user_id, "sealed line does not match its id")
        return dict(entry)

    def seal_text(self, user_id: str, text: str) -> str:
        blob = self._seal(user_id, text.encode("utf-8"), _aad("text", user_id))
        lines = [blob[i : i + 76] for i in range(0, len(blob), 76)]
        return HEADER + "\n" + "\n".join(lines) + "\n"

    def open_text(self, user_id: str, stored: str) -> str:
        if not stored.startswith(HEADER):
            return stored
        blob = "".join(stored[len(HEADER) :].split())
        return self._open(user_id, blob, _aad("text", user_id)).decode("utf-8")

    # -- keys ----------------------------------------------------------------------------
    def key_path(self, user_id: str) -> Path:
        return self.keys_dir / f"{user_id}.key"

    def has_key(self, user_id: str) -> bool:
        return self.key_path(user_id).exists()

    def destroy_key(self, user_id: str) -> bool:
        """Crypto-shred: delete the user's key file (durably) and forget it in memory."""
        path = self.key_path(user_id)
        with self._lock:
            self._keys.pop(user_id, None)
            try:
                size = path.stat().st_size
                with open(path, "r+b") as fh:  # overwrite first: no plain key left in free blocks
                    fh.write(secrets.token_bytes(size))
                    fh.flush()
                    os.fsync(fh.fileno())
                path.unlink()
            except FileNotFoundError:
                return False
            _fsync_dir(self.keys_dir)
        return True

    def _cipher(self, user_id: str, create: bool) -> AESGCM:
        path = self.key_path(user_id)
        with self._lock:
            try:
                inode = path.stat().st_ino
            except FileNotFoundError:
                self._keys.pop(user_id, None)
                if not create:
                    raise Undecryptable(user_id, "no key (crypto-shredded, or keys not copied)") from None
                inode = self._create_key(user_id, path)
            cached = self._keys.get(user_id)
            if cached is not None and cached[1] == inode:
                return cached[0]
            cipher = AESGCM(self._load_key(user_id, path))
            self._keys[user_id] = (cipher, inode)
            return cipher

    def _create_key(self, user_id: str, path: Path) -> int:
        self.keys_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        key = AESGCM.generate_key(bit_length=256)
        record: dict[str, Any] = {"v": 1, "alg": "aes-256-gcm", "user_id": user_id}
        if self._kek is not None:
            nonce = secrets.token_bytes(_NONCE)
            wrapped = AESGCM(self._kek).encrypt(nonce, key, _aad("key", user_id))
            record.update(wrapped=True, key=_b64(nonce + wrapped))
        else:
            record.update(wrapped=False, key=_b64(key))
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.keys_dir)  # mkstemp: mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, path)  # never replaces a key another process created first
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
        _fsync_dir(self.keys_dir)
        return path.stat().st_ino

    def _load_key(self, user_id: str, path: Path) -> bytes:
        try:
            record = json.loads(path.read_text("utf-8"))
            raw = base64.b64decode(record["key"], validate=True)
        except (OSError, ValueError, KeyError, TypeError, binascii.Error) as exc:
            raise EncryptionError(f"key file for user {user_id} is unreadable: {exc}") from None
        if record.get("wrapped"):
            if self._kek is None:
                raise EncryptionError(f"the key of user {user_id} is wrapped: set MARKMEM_MASTER_KEY")
            try:
                raw = AESGCM(self._kek).decrypt(raw[:_NONCE], raw[_NONCE:], _aad("key", user_id))
            except InvalidTag:
                raise EncryptionError(f"cannot unwrap the key of user {user_id}: wrong master key") from None
        if len(raw) != _KEY_BYTES:
            raise EncryptionError(f"key file for user {user_id} does not hold a 256-bit key")
        return raw

    # -- primitives ----------------------------------------------------------------------
    def _seal(self, user_id: str, data: bytes, aad: bytes) -> str:
        nonce = secrets.token_bytes(_NONCE)
        return _b64(nonce + self._cipher(user_id, create=True).encrypt(nonce, data, aad))

    def _open(self, user_id: str, blob: str, aad: bytes) -> bytes:
        try:
            raw = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise Undecryptable(user_id, "sealed data is not base64") from None
        if len(raw) < _NONCE + 16:
            raise Undecryptable(user_id, "sealed data is truncated")
        try:
            return self._cipher(user_id, create=False).decrypt(raw[:_NONCE], raw[_NONCE:], aad)
        except InvalidTag:
            raise Undecryptable(user_id, "wrong key (crypto-shredded and re-created?) or damaged data") from None


def _aad(kind: str, user_id: str, extra: str = "") -> bytes:
    return "\x1f".join(("markmem", kind, "v1", user_id, extra)).encode("utf-8")


def _derive_kek(master_key: str) -> bytes:
    if not master_key.strip():
        raise EncryptionError("MARKMEM_MASTER_KEY is empty")
    hkdf = HKDF(algorithm=hashes.SHA256(), length=_KEY_BYTES, salt=b"markmem-master-kek-v1",
                info=b"markmem: wrap per-user aes-256-gcm data keys")
    return hkdf.derive(master_key.encode("utf-8"))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
