"""Read the repo once for lint and maintenance: every wiki file, every page, every raw id.

Nothing here writes. Pages are parsed with the same code the write path uses
(:func:`markmem.store.pages.read_page`); a page that does not parse is kept as a
:class:`PageFile` with its error, so lint can report it and maintenance can leave it alone.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidUserId, MalformedPage
from ..ids import validate_user_id
from ..model import Claim, Page
from ..store import raw
from ..store.codec import Codec
from ..store.pages import read_page

SHARED = "shared"
_SOURCE_RE = re.compile(r"raw/u/([^/#]+)/(\d{4})/(\d{2})/(\d{2})\.jsonl#(r-[0-9a-f]+)")
_ID_PREFIX = re.compile(r'\{"id": "(r-[0-9a-f]+)"')


@dataclass(frozen=True)
class PageFile:
    """One ``wiki/**/*.md`` file: its owner (``u/<id>``, ``shared`` or None) and the parsed page."""

    rel: str
    owner: str | None
    page: Page | None = None
    error: str | None = None

    @property
    def user(self) -> str | None:
        return self.owner[2:] if self.owner and self.owner.startswith("u/") else None


def owner_of(rel: str) -> str | None:
    """``u/<id>`` for ``wiki/u/<valid id>/...``, ``shared`` for ``wiki/shared/...``, else None."""
    parts = rel.split("/")
    if len(parts) >= 4 and parts[0] == "wiki" and parts[1] == "u":
        try:
            return "u/" + validate_user_id(parts[2])
        except InvalidUserId:
            return None
    if len(parts) >= 3 and parts[:2] == ["wiki", SHARED]:
        return SHARED
    return None


def wiki_files(root: Path) -> list[str]:
    """Every file under ``wiki/`` (repo-relative, sorted), skipping atomic-write temp files and
    symlinks (never followed: lint reports them under the ``symlink`` rule)."""
    base = root / "wiki"
    out: list[str] = []
    for dirpath, _dirs, files in os.walk(base):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        out.extend(f"{rel_dir}/{name}" for name in files
                   if not name.startswith(".tmp-") and not os.path.islink(os.path.join(dirpath, name)))
    return sorted(out)


def load_page(root: Path, rel: str, codec: Codec) -> PageFile:
    owner = owner_of(rel)
    try:
        page = read_page(root, rel, codec, checked=False)  # the rules report path and owner
    except MalformedPage as exc:
        return PageFile(rel, owner, error=exc.reason)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return PageFile(rel, owner, error=f"unreadable: {type(exc).__name__}")
    if page.path != rel:
        return PageFile(rel, owner, page, error=f"id {page.id!r} does not match the file's path")
    return PageFile(rel, owner, page)


Progress = Callable[[str, int, int], None]  # (stage, done, total)
TICK = 200  # report every this many pages: a bar over 100k pages need not redraw 100k times


def load_pages(root: Path, codec: Codec, files: Iterable[str] | None = None,
               progress: Progress | None = None) -> list[PageFile]:
    """Every page file parsed; ``progress("pages", done, total)`` as they are read."""
    names = [rel for rel in (wiki_files(root) if files is None else files) if rel.endswith(".md")]
    out: list[PageFile] = []
    for i, rel in enumerate(names, 1):
        out.append(load_page(root, rel, codec))
        if progress and (i % TICK == 0 or i == len(names)):
            progress("pages", i, len(names))
    return out


def source_parts(ref: str) -> tuple[str, str, str] | None:
    """``raw/u/alice/2026/08/02.jsonl#r-9c1e`` -> (user, file path, raw id); None if malformed."""
    m = _SOURCE_RE.fullmatch(ref)
    if m is None:
        return None
    path, _, rid = ref.partition("#")
    return m.group(1), path, rid


def source_day(ref: str) -> str | None:
    """The day (``YYYY-MM-DD``) the source entry was recorded: raw files are named by it."""
    m = _SOURCE_RE.fullmatch(ref)
    return f"{m.group(2)}-{m.group(3)}-{m.group(4)}" if m else None


def line_ids(data: bytes) -> list[tuple[str, int, int]]:
    """(raw id, start, end) of every complete line of a raw file. Reads ids only, never content,
    so it works on sealed (encrypted) lines too."""
    out: list[tuple[str, int, int]] = []
    pos = 0
    for line in data.split(b"\n")[:-1]:
        end = pos + len(line) + 1
        if line.strip():
            rid = _line_id(line)
            if rid:
                out.append((rid, pos, end))
        pos = end
    return out


def _line_id(line: bytes) -> str | None:
    m = _ID_PREFIX.match(line.decode("utf-8", "replace")[:40])
    if m:
        return m.group(1)
    try:
        value = json.loads(line).get("id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


class RawIndex:
    """Raw ids per raw file, read lazily (lint only opens the files claims point at)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._ids: dict[str, frozenset[str] | None] = {}

    def ids(self, path: str) -> frozenset[str] | None:
        if path not in self._ids:
            full = self.root / path
            self._ids[path] = frozenset(r for r, _s, _e in line_ids(full.read_bytes())) if full.is_file() else None
        return self._ids[path]

    def exists(self, ref: str) -> bool:
        parts = source_parts(ref)
        if parts is None:
            return False
        found = self.ids(parts[1])
        return found is not None and parts[2] in found


def raw_files(root: Path) -> list[tuple[str, str]]:
    """(user id, repo-relative path) of every raw log file."""
    return list(raw.iter_files(root))


def claim_days(c: Claim) -> list[str]:
    """Days on which memory learned or was re-told this claim: recorded_at and each source's day."""
    days = [c.recorded_at[:10]] if c.recorded_at else []
    refs = (*c.sources, *c.metadata.get("expired_sources", ()))
    days += [d for d in (source_day(str(r)) for r in refs) if d]
    return days
