"""The per-user vector matrix, saved beside the cache so a fresh process does not rebuild it.

Loading a user's matrix from SQLite reads every vector blob through a join (0.3 s of CPU at 10k
memories on a busy machine): most of a fresh process's first search. ``index.vectors`` saves the
matrix it built into two files in ``vec/`` beside the cache file that holds the user's rows, and
reads them back on its next cold load:

* ``<user>.<model tag>.f32``: the rows, float32, row-major; ``<user>.<model tag>.json``: a JSON line
  with the stamp the rows reflect (cache ``epoch``, ``user_gen`` ``added`` and ``changed``), the
  model, ``dim``, the highest raw and claim rowids covered and CRC-32s of the rows and of the next
  line, then a JSON line of each row's kind, id and raw rowid (checked by its bytes' CRC-32, not
  re-encoded: a fresh process's first search reads it).
* A file is used only when its epoch and ``changed`` equal the cache's (rows added since are then
  appended from SQLite, as for an in-memory matrix), its model and dimension are the embedder's,
  and the sizes and checksums hold. Anything else (stale, truncated, corrupt, unreadable) is
  ignored and rewritten: the file is derived, never trusted, and ``reindex`` (a new epoch) makes
  every one of them stale. Erasing a user deletes theirs (``forget_user_files``).
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..ids import validate_user_id

Stamp = tuple[str, int, int]


@dataclass
class Saved:
    stamp: Stamp
    kinds: list[str]
    ids: list[str]
    rowids: list[int]  # a turn's raw rowid; -1 for a claim
    data: np.ndarray  # (n, dim) float32
    raw_seen: int
    claim_seen: int


def folder(cache_path: Path) -> Path:
    return Path(cache_path).parent / "vec"


def _names(cache_path: Path, user_id: str, model: str) -> tuple[Path, Path]:
    tag = f"{zlib.crc32(model.encode()):08x}"
    base = folder(cache_path) / f"{validate_user_id(user_id)}.{tag}"
    return base.with_suffix(base.suffix + ".json"), base.with_suffix(base.suffix + ".f32")


def read(cache_path: Path, user_id: str, model: str, dim: int, now: Stamp) -> Saved | None:
    """The saved matrix when it can serve ``now`` (same epoch and ``changed``), else None."""
    if str(cache_path) == ":memory:":
        return None
    meta_path, data_path = _names(cache_path, user_id, model)
    try:
        head, _, rows_json = meta_path.read_bytes().partition(b"\n")
        meta: dict[str, Any] = json.loads(head)
        stamp = (str(meta["stamp"][0]), int(meta["stamp"][1]), int(meta["stamp"][2]))
        if stamp[0] != now[0] or stamp[2] != now[2] or stamp[1] > now[1]:
            return None
        if meta["model"] != model or int(meta["dim"]) != dim or meta.get("user") != user_id:
            return None
        if zlib.crc32(rows_json) != int(meta["crc_rows"]):
            return None
        kinds, ids, rowids = json.loads(rows_json)
        raw = data_path.read_bytes()
        n = len(ids)
        if len(raw) != n * dim * 4 or len(kinds) != n or len(rowids) != n:
            return None
        if zlib.crc32(raw) != int(meta["crc_data"]):
            return None
        data = np.frombuffer(raw, dtype=np.float32).reshape(n, dim)
        return Saved(stamp, [str(k) for k in kinds], [str(i) for i in ids], [int(r) for r in rowids], data,
                     int(meta["raw_seen"]), int(meta["claim_seen"]))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # missing, unreadable or malformed: rebuilt from SQLite


def write(cache_path: Path, user_id: str, model: str, saved: Saved) -> None:
    """Save atomically (data first, then the metadata that vouches for it). Failures are ignored:
    the matrix is rebuilt from SQLite next time."""
    if str(cache_path) == ":memory:":
        return
    meta_path, data_path = _names(cache_path, user_id, model)
    raw = np.ascontiguousarray(saved.data, dtype=np.float32).tobytes()
    rows_json = json.dumps([saved.kinds, saved.ids, saved.rowids]).encode()
    meta = {"user": user_id, "model": model, "dim": int(saved.data.shape[1]) if saved.data.ndim == 2 else 0,
            "stamp": list(saved.stamp), "raw_seen": saved.raw_seen, "claim_seen": saved.claim_seen,
            "crc_data": zlib.crc32(raw), "crc_rows": zlib.crc32(rows_json)}
    try:
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        for path, body in ((data_path, raw), (meta_path, json.dumps(meta).encode() + b"\n" + rows_json)):
            tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
            tmp.write_bytes(body)
            os.replace(tmp, path)
    except OSError:
        return


def forget_user_files(cache_path: Path, user_id: str) -> None:
    """Delete every saved matrix of the user (an erasure), and the user's other saved files beside
    them (``index.savefile``: lexicon, graph)."""
    from .savefile import KINDS

    where = folder(cache_path)
    prefix = validate_user_id(user_id) + "."
    if where.is_dir():
        for path in where.iterdir():
            rest = path.name[len(prefix):] if path.name.startswith(prefix) else ""
            if (len(rest) > 9 and rest[8] == "." and rest[9:] in ("json", "f32")) or rest in KINDS:  # <8 hex>.json|f32
                path.unlink(missing_ok=True)


def forget_all_files(cache_path: Path) -> None:
    """Delete every saved matrix beside this cache file (the whole cache is being recreated)."""
    if str(cache_path) == ":memory:":
        return
    where = folder(cache_path)
    if where.is_dir():
        for path in where.iterdir():
            path.unlink(missing_ok=True)
