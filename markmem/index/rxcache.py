"""The read side's regular expressions, compiled once and saved beside the cache for the next process.

A fresh process's first search imports the read side (``read.pack`` and what it imports), whose
modules compile ~45 patterns at import, built from word lists: ~20 ms of CPU at a quiet minute, in
Python (``re``'s parser and code generator), a seventh of that search at 10k turns. The compiled
program of a pattern is data: ``re._compiler`` ends with ``_sre.compile(pattern, flags, code,
groups, groupindex, indexgroup)``. ``imported`` saves those arguments into ``vec/re.cache`` (beside
the vector matrices, ``index.vecfile``), and a later process puts the patterns ``_sre.compile``
makes from them into ``re``'s own cache before the read side is imported, so each ``re.compile``
of theirs finds its pattern there: the same program, bit for bit (``Pattern ==`` compares the
flags, the source and the code; ``tests/test_rxcache.py`` checks every saved one against a fresh
compile).

What is saved: only patterns compiled while the read side was being imported and held by the
globals of a markmem module imported then (a module's constants, built from its source: no user's
text is in them). The file is keyed by this Python's version and its ``_sre`` (magic, code size),
and carries a CRC-32; anything else (missing, foreign, damaged) is ignored and the patterns are
compiled as usual, then the file is rewritten. A pattern whose source changed is a new key: it is
compiled, and added. ``reindex`` deletes the file with the others in ``vec/``
(``vecfile.forget_all_files``): it is derived, never trusted beyond its checks.

Only on the Pythons whose ``re`` keeps a plain ``_cache`` dict keyed ``(type, pattern, flags)``
(3.11, 3.12); elsewhere this does nothing.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import marshal
import os
import re
import sys
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

NAME = "re.cache"
MAGIC = b"MMRE\x00\x01"
LIMIT = 400  # entries saved at most (re's own cache holds 512)
ENABLED = sys.version_info[:2] in ((3, 11), (3, 12)) and isinstance(getattr(re, "_cache", None), dict)
_TAG = f"{sys.version}|{_sre.MAGIC}|{_sre.CODESIZE}".encode()
_LOCK = threading.Lock()
_done = False

Entry = tuple[str, int, int, list[int], int, dict[str, int], tuple[str | None, ...]]  # (pattern, flags key, ...)


def imported(cache_path: Path | str, load: Callable[[], Any]) -> None:
    """Run ``load`` (the read side's imports) with the saved patterns in ``re``'s cache, once per
    process; save the patterns it compiled that were not saved yet. Never raises for the file."""
    global _done
    if _done or not ENABLED or str(cache_path) == ":memory:":
        load()
        return
    with _LOCK:
        if _done:
            load()
            return
        path = Path(cache_path).parent / "vec" / NAME
        saved = _read(path)
        cache: dict[Any, Any] = re._cache  # type: ignore[attr-defined]
        for e in saved.values():
            key = (str, e[0], e[1])
            if key not in cache and len(cache) < getattr(re, "_MAXCACHE", 512):
                try:
                    cache[key] = _sre.compile(*e[:1], *e[2:])
                except (RuntimeError, TypeError, ValueError):
                    continue
        before = set(modules())
        load()
        _done = True
        new = _new(cache, saved, set(modules()) - before)
        if new:
            _write(path, {**saved, **new})


def modules() -> list[str]:
    return [name for name, m in list(sys.modules.items()) if m is not None and name.startswith("markmem")]


def _new(cache: dict[Any, Any], saved: dict[tuple[str, int], Entry], names: set[str]) -> dict[tuple[str, int], Entry]:
    """The patterns held by the globals of the newly imported modules ``names`` (directly, or in a
    tuple, list or dict there) that are not saved, as ``_sre.compile``'s arguments."""
    held: dict[int, re.Pattern[str]] = {}
    for name in names:
        for value in list(vars(sys.modules[name]).values()):
            items = value.values() if isinstance(value, dict) else value if isinstance(value, tuple | list) else [value]
            for x in items:
                if isinstance(x, re.Pattern) and isinstance(x.pattern, str):
                    held[id(x)] = x
    out: dict[tuple[str, int], Entry] = {}
    for key, pat in list(cache.items()):
        if key[0] is not str or id(pat) not in held or (key[1], key[2]) in saved:
            continue
        e = _entry(key[1], key[2])
        if e is not None and _sre.compile(*e[:1], *e[2:]) == pat:  # the same program: else not saved
            out[(key[1], key[2])] = e
    return out


def _entry(pattern: str, flags: int) -> Entry | None:
    """``re._compiler.compile``'s arguments to ``_sre.compile`` for ``pattern``."""
    try:
        from re import _compiler, _parser  # type: ignore[attr-defined]

        p = _parser.parse(pattern, flags)
        code = _compiler._code(p, flags)
        groupindex = dict(p.state.groupdict)
        indexgroup: list[str | None] = [None] * p.state.groups
        for k, i in groupindex.items():
            indexgroup[i] = k
        return (pattern, int(flags), int(flags | p.state.flags), [int(c) for c in code], int(p.state.groups - 1),
                groupindex, tuple(indexgroup))
    except Exception:  # noqa: BLE001 - an internal that moved: not saved
        return None


def _read(path: Path) -> dict[tuple[str, int], Entry]:
    try:
        body = path.read_bytes()
        if body[:6] != MAGIC or int.from_bytes(body[6:10], "little") != zlib.crc32(body[10:]):
            return {}
        tag, entries = marshal.loads(body[10:])
        if tag != _TAG or not isinstance(entries, list):
            return {}
        out: dict[tuple[str, int], Entry] = {}
        for e in entries:
            if (isinstance(e, tuple) and len(e) == 7 and isinstance(e[0], str) and isinstance(e[1], int)
                    and isinstance(e[3], list)):
                out[(e[0], e[1])] = e
        return out
    except (OSError, ValueError, EOFError, TypeError):
        return {}


def _write(path: Path, entries: dict[tuple[str, int], Entry]) -> None:
    try:
        body = marshal.dumps((_TAG, list(entries.values())[-LIMIT:]))
    except ValueError:  # a value marshal cannot hold: not saved
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
        tmp.write_bytes(MAGIC + zlib.crc32(body).to_bytes(4, "little") + body)
        os.replace(tmp, path)
    except OSError:
        return
