"""The raw log: ``raw/u/<user>/<YYYY>/<MM>/<DD>.jsonl``, append-only, one JSON object a line.

``append`` returns only after the bytes are fsynced. A torn last line (a crash mid-append,
so never acknowledged) is cut off before the next append and ignored by readers.
The folder is the authority: a line that does not parse, lacks its fields or names another
``user_id`` than its folder's is skipped by every reader and reported as a :class:`BadLine`.
Per-user ``checkpoint.json`` records how far each file has been compiled (byte offsets).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import RawEntry
from .codec import Codec
from .flush import Flush, fsync_path
from .links import crosses_link, open_nofollow, refuse_links

CHECKPOINT = "checkpoint.json"


@dataclass(frozen=True)
class Located:
    """A raw line's place: file (repo-relative) and byte range."""

    path: str
    start: int
    end: int
    raw_id: str
    user_id: str


# A day's log rolls over to DD.1.jsonl, DD.2.jsonl... past 64 KiB. Every commit stores the whole
# new version of each raw file it touches (git has no appends), so the segment size bounds what a
# batch re-hashes and re-compresses per user: 100 users at 1 MiB meant ~30 MB of blobs a batch.
SEGMENT_BYTES = 64 << 10

_last_segment: dict[tuple[str, str, str], int] = {}  # (root, user, day) -> newest segment seen


def raw_path(user_id: str, recorded_at: str, segment: int = 0) -> str:
    y, m, d = recorded_at[:4], recorded_at[5:7], recorded_at[8:10]
    return f"raw/u/{user_id}/{y}/{m}/{d}{'.' + str(segment) if segment else ''}.jsonl"


def current_segment(root: Path, user_id: str, recorded_at: str, *, sized: bool = True) -> str:
    """The day's newest segment with room left, so a batch never re-hashes a huge file.

    Starts from the newest segment this process has seen (segments only grow; if that file is
    gone, e.g. erased, it starts over from 0) instead of probing every segment of the day. Plain
    ``os`` calls on strings: every add() comes here, and pathlib's joins cost more than the stats.
    ``sized=False``: the day's newest segment, full or not (:func:`append` reads its size from the
    descriptor it opens, one ``stat`` fewer, and moves on to the next one if it is full)."""
    base = str(root)
    key = (base, user_id, recorded_at[:10])
    seg = _last_segment.get(key, 0)
    if seg and not os.path.exists(os.path.join(base, raw_path(user_id, recorded_at, seg))):
        seg = 0
    while True:
        rel = raw_path(user_id, recorded_at, seg)
        if os.path.exists(os.path.join(base, raw_path(user_id, recorded_at, seg + 1))):
            seg += 1
            continue
        _last_segment[key] = seg
        if not sized:
            return rel
        try:
            full = os.stat(os.path.join(base, rel)).st_size >= SEGMENT_BYTES
        except FileNotFoundError:
            full = False
        return raw_path(user_id, recorded_at, seg + 1) if full else rel


@dataclass(frozen=True)
class BadLine:
    """A raw line every reader skips: file (repo-relative), 1-based line number and why."""

    path: str
    line: int
    reason: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def entry_from_json(data: dict[str, Any], path: str) -> RawEntry:
    return RawEntry(
        id=data["id"],
        user_id=data["user_id"],
        role=data.get("role", "user"),
        content=data.get("content", ""),
        recorded_at=data["recorded_at"],
        occurred_at=data.get("occurred_at"),
        speaker=data.get("speaker"),
        agent_id=data.get("agent_id"),
        run_id=data.get("run_id"),
        metadata=data.get("metadata") or {},
        pii=tuple(data.get("pii") or ()),
        quarantined=data.get("quarantined"),
        path=path,
    )


def append(root: Path, entries: Sequence[RawEntry], codec: Codec, *, sync: bool = True,
           to_sync: list[Path] | None = None, flush: Flush | None = None) -> list[Located]:
    """Append entries (all of one user) grouped by file; caller holds the append lock. With
    ``to_sync`` (and ``sync`` off) the files and new folders are listed there for the caller to
    flush with :func:`sync_all` before it acknowledges them. With ``flush`` (and ``sync``) the
    descriptors go to it instead of being flushed here: the caller starts it, and waits for it
    before it shows or acknowledges anything (``store.flush``)."""
    out: list[Located] = []
    by_file: dict[str, list[RawEntry]] = {}
    segments: dict[tuple[str, str], str] = {}  # one lookup per user and day, not per entry of a list
    for e in entries:
        day = (e.user_id, e.recorded_at[:10])
        rel = segments.get(day)
        if rel is None:
            rel = segments[day] = current_segment(root, e.user_id, e.recorded_at, sized=False)
        by_file.setdefault(rel, []).append(e)
    for rel, group in by_file.items():
        fd, rel, created, size = _open_segment(root, rel, group[0].user_id, group[0].recorded_at)
        handed = False
        try:  # plain descriptor calls: a buffered file object cost seven more system calls per add()
            if size and os.pread(fd, 1, size - 1) != b"\n":  # torn tail from a crash: never acknowledged
                size = _last_newline(fd, size)
                os.ftruncate(fd, size)
            pos = size
            chunks = []
            for e in group:
                line = json.dumps(codec.seal_entry(e.user_id, e.to_json()), ensure_ascii=False)
                data = (line + "\n").encode("utf-8")
                chunks.append(data)
                out.append(Located(rel, pos, pos + len(data), e.id, e.user_id))
                pos += len(data)
            _write_all(fd, b"".join(chunks))  # O_APPEND: at the end, where ``size`` says
            if sync and flush is not None:
                flush.add(fd, os.path.dirname(os.path.join(root, rel)) if created else None)
                handed = True
            elif sync:
                os.fdatasync(fd)
        finally:
            if not handed:
                os.close(fd)
        if created and sync and flush is None:
            fsync_path(str(Path(root, rel).parent))
        if to_sync is not None:
            full = Path(root, rel)
            to_sync += [full, full.parent] if created else [full]
    return out


_APPEND = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_segment(root: Path, rel: str, user_id: str, recorded_at: str) -> tuple[int, str, bool, int]:
    """(descriptor, file, created, size) for appending to the day's newest segment ``rel`` (from
    ``current_segment(..., sized=False)``), or to the next one if ``rel`` is full. The size comes
    from the descriptor (the caller holds the append lock: it is where the next write lands)."""
    fd, created = _open_append(root, rel)
    size = _size(fd)
    if size < SEGMENT_BYTES:
        return fd, rel, created, size
    os.close(fd)
    key = (str(root), user_id, recorded_at[:10])
    seg = _last_segment.get(key, 0) + 1
    _last_segment[key] = seg
    nxt = raw_path(user_id, recorded_at, seg)
    fd, created = _open_append(root, nxt)
    return fd, nxt, created, _size(fd)


def _size(fd: int) -> int:
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    except BaseException:
        os.close(fd)
        raise


def _open_append(root: Path, rel: str) -> tuple[int, bool]:
    """(descriptor, created). The folders are checked for symlinks (``refuse_links``);
    ``O_NOFOLLOW`` refuses one at the file itself, and opening without ``O_CREAT`` first tells
    whether the file is new (two ``stat`` calls fewer than checking each on its own)."""
    folder, _sep, _name = rel.rpartition("/")
    refuse_links(root, folder)
    full = os.path.join(root, rel)
    try:
        return os.open(full, _APPEND), False
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_links(root, rel)  # the file itself is a symlink: the usual error
        raise
    os.makedirs(os.path.join(root, folder), exist_ok=True)
    return os.open(full, _APPEND | os.O_CREAT, 0o644), True


def sync_all(paths: Sequence[Path]) -> None:
    """fsync files and folders (``append``'s ``to_sync``) from a few threads at once: the
    filesystem's journal commits them together, where one after another each waits for its own
    flush (a compile worker's batch touches a file per user)."""
    from concurrent.futures import ThreadPoolExecutor

    unique = list(dict.fromkeys(paths))
    if len(unique) <= 1:
        for path in unique:
            fsync_path(str(path))
        return
    with ThreadPoolExecutor(max_workers=min(16, len(unique))) as pool:
        list(pool.map(fsync_path, map(str, unique)))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _last_newline(fd: int, size: int) -> int:
    step = 4096
    pos = size
    while pos > 0:
        start = max(0, pos - step)
        chunk = os.pread(fd, pos - start, start)
        idx = chunk.rfind(b"\n")
        if idx >= 0:
            return start + idx + 1
        pos = start
    return 0


def read_range(
    root: Path, rel: str, start: int, end: int | None, codec: Codec, user_id: str,
    bad: list[BadLine] | None = None,
) -> Iterator[tuple[RawEntry, int, int]]:
    """Yield (entry, start, end) for complete, well-formed lines in [start, end) that belong to
    ``user_id``; the others are skipped and, with ``bad``, listed there."""
    with os.fdopen(open_nofollow(root, rel), "rb") as fh:
        fh.seek(start)
        data = fh.read() if end is None else fh.read(end - start)
    pos = start
    for line in data.split(b"\n")[:-1]:  # the last piece is a torn tail or empty
        line_end = pos + len(line) + 1
        if line.strip():
            try:
                yield parse_line(line, codec, user_id, rel), pos, line_end
            except _LINE_ERRORS as exc:
                if bad is not None:
                    bad.append(BadLine(rel, _line_number(root / rel, pos), _reason(exc)))
        pos = line_end


_LINE_ERRORS = (ValueError, KeyError, TypeError, AttributeError)


def parse_line(line: bytes, codec: Codec, user_id: str, rel: str) -> RawEntry:
    """One stored line as an entry of ``user_id`` (the folder's user); ValueError if it is not one."""
    stored = json.loads(line)
    if not isinstance(stored, dict):
        raise ValueError("not a JSON object")
    if stored.get("user_id") != user_id:
        raise ValueError(f"user_id {stored.get('user_id')!r} disagrees with its folder raw/u/{user_id}/")
    entry = entry_from_json(codec.open_entry(user_id, stored), rel)
    if entry.user_id != user_id or not isinstance(entry.id, str) or not isinstance(entry.recorded_at, str):
        raise ValueError("sealed line names another user or lacks id / recorded_at")
    return entry


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, KeyError):
        return f"missing field {exc}"
    return f"malformed line: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"[:200]


def _line_number(full: Path, pos: int) -> int:
    with open(full, "rb") as fh:  # read_range just opened it without following links
        return fh.read(pos).count(b"\n") + 1


def bad_lines(root: Path, codec: Codec, user_id: str | None = None) -> list[BadLine]:
    """Every malformed or foreign line of the raw logs (for doctor and lint)."""
    found: list[BadLine] = []
    for uid, rel in iter_files(root, user_id):
        for _entry in read_range(root, rel, 0, None, codec, uid, found):
            pass
    return found


def iter_files(root: Path, user_id: str | None = None) -> Iterator[tuple[str, str]]:
    """Yield (user_id, repo-relative path) of every raw file, sorted."""
    base = root / "raw" / "u"
    if crosses_link(root, "raw/u"):
        return
    users = [user_id] if user_id else sorted(p.name for p in base.iterdir()) if base.exists() else []
    for uid in users:
        udir = base / uid
        if os.path.islink(udir) or not udir.is_dir():
            continue  # a symlinked folder is never followed (doctor and lint list it)
        paths = [Path(d, f) for d, _dirs, files in os.walk(udir) for f in files
                 if f.endswith(".jsonl") and not os.path.islink(os.path.join(d, f))]
        for path in sorted(paths, key=_segment_order):
            yield uid, path.relative_to(root).as_posix()


def _segment_order(path: Path) -> tuple[str, int]:
    day, _, seg = path.name.removesuffix(".jsonl").partition(".")
    return (str(path.parent / day), int(seg or 0))


def iter_entries(root: Path, codec: Codec, user_id: str | None = None) -> Iterator[RawEntry]:
    for uid, rel in iter_files(root, user_id):
        for entry, _s, _e in read_range(root, rel, 0, None, codec, uid):
            yield entry


def checkpoint_path(user_id: str) -> str:
    return f"raw/u/{user_id}/{CHECKPOINT}"


def read_checkpoint(root: Path, user_id: str) -> dict[str, int]:
    path = root / checkpoint_path(user_id)
    if not path.exists() or crosses_link(root, checkpoint_path(user_id)):
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
        return {str(k): int(v) for k, v in data.get("compiled", {}).items()}
    except (ValueError, AttributeError):
        return {}  # a damaged checkpoint only means re-compiling, which is idempotent


def write_checkpoint(root: Path, user_id: str, offsets: dict[str, int]) -> str:
    from .pages import atomic_write

    rel = checkpoint_path(user_id)
    refuse_links(root, rel)
    text = json.dumps({"compiled": dict(sorted(offsets.items()))}, indent=1) + "\n"
    atomic_write(root / rel, text, sync=False)  # losing it only means an idempotent re-compile
    return rel
