"""The per-user vector matrix, saved beside the cache so a fresh process does not rebuild it.

Loading a user's matrix from SQLite reads every vector blob through a join (0.3 s of CPU at 10k
memories on a busy machine): most of a fresh process's first search. ``index.vectors`` saves the
matrix it built into two files in ``vec/`` beside the cache file that holds the user's rows, and
reads them back on its next cold load:

* ``<user>.<model tag>.f32``: the rows, float32, row-major (memory-mapped when read back on POSIX:
  no copy); ``<user>.<model tag>.json``: a JSON line with the stamp the rows reflect (cache
  ``epoch``, ``user_gen`` ``added`` and ``changed``), the model, ``dim``, the row count, the layout
  ``FORMAT``, the highest raw and claim rowids covered and CRC-32s of the rows and of what follows
  the line: each row's kind (a byte), raw rowid (int64) and id (one a line; ``_pack``), read
  without a JSON parse (a fresh process's first search reads it).
* A file is used only when its epoch and ``changed`` equal the cache's (rows added since are then
  appended from SQLite, as for an in-memory matrix), its model and dimension are the embedder's,
  and the sizes and checksums hold. Anything else (stale, truncated, corrupt, unreadable) is
  ignored and rewritten: the file is derived, never trusted, and ``reindex`` (a new epoch) makes
  every one of them stale. Erasing a user deletes theirs (``forget_user_files``).
"""

from __future__ import annotations

import json
import mmap
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
    rowids: list[int] | np.ndarray  # a turn's raw rowid; -1 for a claim
    data: np.ndarray  # (n, dim) float32
    raw_seen: int
    claim_seen: int
    turns: np.ndarray | None = None  # the turns' positions (int64), when read from a file


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
        head, _, rows = meta_path.read_bytes().partition(b"\n")
        meta: dict[str, Any] = json.loads(head)
        stamp = (str(meta["stamp"][0]), int(meta["stamp"][1]), int(meta["stamp"][2]))
        if stamp[0] != now[0] or stamp[2] != now[2] or stamp[1] > now[1]:
            return None
        if meta["model"] != model or int(meta["dim"]) != dim or meta.get("user") != user_id:
            return None
        if meta.get("format") != FORMAT or zlib.crc32(rows) != int(meta["crc_rows"]):
            return None
        n = int(meta["n"])
        kinds, ids, rowids, turns = _unpack(rows, n)
        raw = _rows(data_path, n * dim * 4)
        if raw is None or zlib.crc32(raw) != int(meta["crc_data"]):
            return None
        data = np.frombuffer(raw, dtype=np.float32).reshape(n, dim)
        return Saved(stamp, kinds, ids, rowids, data, int(meta["raw_seen"]), int(meta["claim_seen"]), turns)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # missing, unreadable or malformed: rebuilt from SQLite


FORMAT = 2  # the rows' layout (``_pack``); a file of another layout is rebuilt
_KIND_CODE = {"turn": b"t", "claim": b"c"}
_KIND_OF = {ord("t"): "turn", ord("c"): "claim"}


def _pack(kinds: list[str], ids: list[str], rowids: list[int] | np.ndarray) -> bytes | None:
    """The rows' kinds (a byte each), raw rowids (int64) and ids (one a line): read back without a
    JSON parse (~10 ms for 10k rows). None (not saved) for a kind or an id it cannot hold."""
    if not len(kinds) == len(ids) == len(rowids) or any("\n" in i for i in ids):
        return None
    try:
        code = b"".join(_KIND_CODE[k] for k in kinds)
    except KeyError:
        return None
    return code + np.array(rowids, "<i8").tobytes() + "\n".join(ids).encode()


def _unpack(rows: bytes, n: int) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """``_pack``'s kinds and ids, the rowids (int64) and the turns' positions (ValueError or
    KeyError when the bytes do not hold ``n`` rows)."""
    kinds = [_KIND_OF[c] for c in rows[:n]]
    rowids = np.frombuffer(rows, "<i8", count=n, offset=n).astype(np.int64) if n else np.zeros(0, np.int64)
    ids = rows[9 * n:].decode().split("\n") if n else []
    if len(kinds) != n or len(ids) != n:
        raise ValueError("saved rows do not match their count")
    turns = np.flatnonzero(np.frombuffer(rows, np.uint8, count=n) == ord("t")).astype(np.int64)
    return kinds, ids, rowids, turns


def _rows(path: Path, size: int) -> bytes | mmap.mmap | None:
    """The file's bytes when it holds exactly ``size``: memory-mapped read-only on POSIX (no copy of
    the 10 MB of a 10k matrix: the page cache serves it, and a file replaced or deleted meanwhile
    stays mapped as it was), read on other systems (a mapped file cannot be replaced there)."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size != size:
            return None
        if size == 0 or os.name != "posix":
            return f.read()
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def write(cache_path: Path, user_id: str, model: str, saved: Saved) -> None:
    """Save atomically (data first, then the metadata that vouches for it). Failures are ignored:
    the matrix is rebuilt from SQLite next time."""
    if str(cache_path) == ":memory:":
        return
    meta_path, data_path = _names(cache_path, user_id, model)
    rows = _pack(saved.kinds, saved.ids, saved.rowids)
    if rows is None:
        return
    raw = np.ascontiguousarray(saved.data, dtype=np.float32).tobytes()
    meta = {"user": user_id, "model": model, "dim": int(saved.data.shape[1]) if saved.data.ndim == 2 else 0,
            "stamp": list(saved.stamp), "raw_seen": saved.raw_seen, "claim_seen": saved.claim_seen,
            "crc_data": zlib.crc32(raw), "crc_rows": zlib.crc32(rows), "format": FORMAT, "n": len(saved.ids)}
    try:
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        for path, body in ((data_path, raw), (meta_path, json.dumps(meta).encode() + b"\n" + rows)):
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
