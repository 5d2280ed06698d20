"""One file of derived state saved beside the cache, read back by a fresh process instead of rebuilding.

Used by ``index.lexstore`` (a user's BM25 postings) and ``read.graphstore`` (a user's entity graph);
the files live in the cache's ``vec/`` folder beside the vector matrices (``index.vecfile``), so
erasure and a recreated cache delete them with those (``vecfile.forget_user_files`` /
``forget_all_files``).

Layout: ``MAGIC`` (8 bytes), a little-endian header (kind tag, header length, CRC-32 of everything
after the fixed part), the header (``marshal``: the caller's small values, with the array table),
then the arrays (raw, 8-byte aligned). A file is used only when its magic, kind, CRC-32, the code
tag (``code_tag``: this Python's marshal format and the source of the modules that build the
state, so a file written by other code is never read) and the caller's own checks (user, stamp)
all hold; anything else (missing, truncated, garbage, foreign, stale) reads as None and the
caller rebuilds and rewrites it. Writes are atomic (a temporary file, then ``os.replace``) and
never raise: the state is rebuilt next time.
"""

from __future__ import annotations

import marshal
import mmap
import os
import struct
import sys
import threading
import zlib
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..ids import validate_user_id

MAGIC = b"MMSAVE\x00\x01"
_FIXED = struct.Struct("<8sII")  # kind, header length, CRC-32 of the rest
_ALIGN = 8


def folder(cache_path: Path) -> Path:
    """The folder of saved files beside a cache file (the vector matrices' own, ``u/vec/``)."""
    return Path(cache_path).parent / "vec"


def path_of(cache_path: Path, user_id: str, kind: str) -> Path | None:
    """``<user>.<kind>`` in ``folder`` (``kind``: a short word, ``lex`` or ``graph``); None for an
    in-memory cache."""
    if str(cache_path) == ":memory:":
        return None
    return folder(cache_path) / f"{validate_user_id(user_id)}.{kind}"


KINDS = ("lex", "graph", "book")  # the kinds ``vecfile.forget_user_files`` deletes with a user's matrices


@cache
def code_tag(*modules: ModuleType) -> int:
    """A tag of the code that builds a saved state: the Python version (marshal's format) and the
    source of ``modules``. A file saved by other code (another markmem) is then never read."""
    crc = zlib.crc32(f"{sys.version_info[:2]}".encode())
    for mod in modules:
        try:
            crc = zlib.crc32(Path(str(mod.__file__)).read_bytes(), crc)
        except (OSError, TypeError):
            crc = zlib.crc32(f"{mod.__name__} {getattr(sys.modules.get('markmem'), '__version__', '')}".encode(), crc)
    return crc


def write(path: Path, kind: str, head: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> bool:
    """Save ``head`` (marshal-able values) and ``arrays`` atomically; False when it could not be."""
    table = []
    blobs: list[bytes] = []
    at = 0
    for name, arr in (arrays or {}).items():
        raw = np.ascontiguousarray(arr).tobytes()
        table.append((name, arr.dtype.str, tuple(int(s) for s in arr.shape), at))
        pad = -len(raw) % _ALIGN
        blobs.append(raw + b"\0" * pad)
        at += len(raw) + pad
    header = marshal.dumps({**head, "_arrays": table})
    header += b"\0" * (-(len(MAGIC) + _FIXED.size + len(header)) % _ALIGN)
    body = b"".join(blobs)
    crc = zlib.crc32(body, zlib.crc32(header))
    data = MAGIC + _FIXED.pack(kind.encode()[:8], len(header), crc) + header + body
    tmp = path.with_name(f".tmp-{os.getpid()}-{threading.get_ident()}-{path.name}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        tmp.unlink(missing_ok=True)
        return False


def read(path: Path, kind: str) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """``(head, arrays)`` as written (the arrays writable: ``_bytes``), or None when the file is
    missing, unreadable, truncated, corrupt or of another kind."""
    start = len(MAGIC) + _FIXED.size
    data = _bytes(path, start)
    if data is None:
        return None
    if len(data) < start or bytes(data[: len(MAGIC)]) != MAGIC:
        return None
    got_kind, hlen, crc = _FIXED.unpack_from(data, len(MAGIC))
    if got_kind.rstrip(b"\0") != kind.encode()[:8] or start + hlen > len(data):
        return None
    view = memoryview(data)
    if zlib.crc32(view[start:]) != crc:
        return None
    try:
        head = marshal.loads(view[start:start + hlen])
        if not isinstance(head, dict):
            return None
        base = start + hlen
        arrays = {}
        for name, dtype, shape, at in head.pop("_arrays"):
            count = int(np.prod(shape)) if shape else 1
            arr = np.frombuffer(data, dtype=np.dtype(dtype), count=count, offset=base + at)
            arrays[name] = arr.reshape(shape)
        return head, arrays
    except (ValueError, EOFError, TypeError, KeyError):
        return None


def _bytes(path: Path, least: int) -> bytearray | mmap.mmap | None:
    """The file's bytes, writable, when it holds at least ``least``: on POSIX a private copy-on-write
    mapping (``ACCESS_COPY``: pages are read as touched, a write stays in this process, a file
    replaced meanwhile stays mapped as it was; reading 4.8 MB into a new buffer cost a fresh
    process ~5-15 ms of page faults and copying, of its first search at 10k turns), elsewhere
    read into a buffer (a mapped file cannot be replaced there)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < least:
                return None
            if os.name == "posix":
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
            data = bytearray(size)
            return data if f.readinto(data) == size else None
    except (OSError, ValueError):
        return None


def remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
