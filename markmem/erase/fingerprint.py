"""Content fingerprints: the strings ``verify`` looks for in every git object.

A fingerprint is a fragment of a user's stored text that reads the same in every encoding markmem
writes (JSON raw lines, YAML frontmatter, markdown prose): a run of 12 to 160 bytes cut at quotes,
backslashes, control characters and double spaces; the two longest per string. They come from the
user's raw turns (content and metadata), claims (text and value) and review items, in the working
tree, in every version reachable from any ref or reflog, and in the cache. Fragments that also
occur in other users' current folders are dropped: they are that user's data too (a copy in a
shared page or any other file is not dropped: it is a leak that verification must report).

Besides text, the object ids of every stored version of the user's files (``blobs``) are kept:
after a rewrite none of them may exist any more, whatever its encoding. In encrypted repos the
user's text is never in git, so no plaintext is kept at all (the ids and the blob counters, which
prove that every stored copy was sealed, are not personal data).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..context import Context
from . import gitio, journal

MIN_BYTES = 12
MAX_BYTES = 160
PER_STRING = 2
SEALED_PREFIX = "markmem-sealed: "  # first line of a sealed page (see crypto.HEADER)
_SPLIT = re.compile(r"[\x00-\x1f\x7f-\x9f\"'\\\u2028\u2029\ufeff]+| {2,}")
_YAML_TEXT = re.compile(r"^[ \t-]*(text|value|content): (.+)$", re.M)


def segments(text: str) -> list[str]:
    """The longest encoding-stable fragments of ``text`` (at most PER_STRING)."""
    out = []
    for piece in _SPLIT.split(text):
        piece = piece.strip()
        data = piece.encode("utf-8")
        if len(data) < MIN_BYTES:
            continue
        if len(data) > MAX_BYTES:
            piece = data[:MAX_BYTES].decode("utf-8", "ignore").strip()
        out.append(piece)
    out.sort(key=len, reverse=True)
    return out[:PER_STRING]


@dataclass
class Fingerprints:
    plain: set[str] = field(default_factory=set)
    blobs: set[str] = field(default_factory=set)  # object ids of every stored version of the user's files
    short: int = 0  # strings too short to search for without false hits
    sealed_blobs: int = 0  # stored copies under the user's folders that are ciphertext
    plain_blobs: int = 0  # ... and that hold readable text

    def text(self, value: Any, *, count: bool = True) -> None:
        """Fingerprint a string (or the strings in a mapping/list); ``count`` short ones as unsearchable."""
        if isinstance(value, str):
            found = segments(value)
            self.plain.update(found)
            self.short += count and not found and bool(value.strip())
        elif isinstance(value, dict):
            for v in value.values():
                self.text(v, count=False)
        elif isinstance(value, list):
            for v in value:
                self.text(v, count=False)


class Collector:
    """Feeds blobs (by path) into Fingerprints; raw lines seen once are skipped (logs are append-only)."""

    def __init__(self) -> None:
        self.fp = Fingerprints()
        self._lines: set[int] = set()

    def blob(self, path: str, data: bytes, oid: str) -> None:
        if not data or oid in self.fp.blobs:
            return  # the empty blob is everybody's: not a trace of this user
        self.fp.blobs.add(oid)
        if path.endswith("/checkpoint.json"):
            return
        if path.endswith(".jsonl"):
            self._raw(data)
            return
        text = data.decode("utf-8", "replace")
        if text.startswith(SEALED_PREFIX):
            self.fp.sealed_blobs += 1
            return
        self.fp.plain_blobs += 1
        for m in _YAML_TEXT.finditer(text):
            self.fp.text(m.group(2), count=m.group(1) != "value")

    def _raw(self, data: bytes) -> None:
        sealed = plain = False
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            key = hash(line)
            if key in self._lines:
                continue
            self._lines.add(key)
            try:
                obj = json.loads(line)
            except ValueError:
                self.fp.text(line.decode("utf-8", "replace"))
                plain = True
                continue
            if isinstance(obj, dict) and isinstance(obj.get("enc"), str):
                sealed = True
            elif isinstance(obj, dict):
                self.fp.text(obj.get("content"))
                self.fp.text(obj.get("metadata"))
                plain = True
        self.fp.sealed_blobs += sealed and not plain
        self.fp.plain_blobs += plain

    def tree(self, root: Path, user_id: str) -> None:
        """The working tree's files (also uncommitted ones), with the ids git would give them."""
        algo = gitio.object_format(root)
        for prefix in gitio.prefixes(user_id):
            for folder, _dirs, files in os.walk(root / prefix):
                for name in sorted(files):
                    if name.startswith(".tmp-"):
                        continue
                    full = Path(folder) / name
                    data = full.read_bytes()
                    oid = hashlib.new(algo, b"blob %d\0" % len(data) + data).hexdigest()
                    self.blob(full.relative_to(root).as_posix(), data, oid)

    def history(self, root: Path, user_id: str) -> None:
        where = dict(gitio.reachable_paths(root, user_id))
        for sha, data in gitio.cat_blobs(root, where):
            self.blob(where[sha], data, sha)

    def cache(self, ctx: Context, user_id: str) -> None:
        for row in ctx.cache.user(user_id).rows("SELECT content, metadata FROM raw WHERE user_id=?", [user_id]):
            self.fp.text(row["content"])
            self.fp.text(json.loads(row["metadata"] or "{}"))
        for row in ctx.cache.user(user_id).rows("SELECT text, value FROM claims WHERE user_id=?", [user_id]):
            self.fp.text(row["text"])
            self.fp.text(row["value"], count=False)


def collect(ctx: Context, user_id: str, *, cache: bool = True) -> Fingerprints:
    """Everything the repo (tree, history) and the cache hold of the user, as fingerprints."""
    c = Collector()
    c.tree(ctx.root, user_id)
    c.history(ctx.root, user_id)
    if cache and ctx.codec.name == "plain":
        c.cache(ctx, user_id)
    c.fp.plain -= shared(ctx.root, user_id, c.fp.plain)
    return c.fp


def shared(root: Path, user_id: str, needles: set[str]) -> set[str]:
    """The needles that also occur in other users' current folders: not the user's alone."""
    targets = _others(root, user_id)
    if not needles or not targets:
        return set()
    found: set[str] = set()
    with needle_file(root, needles) as path:
        if shutil.which("grep"):
            cmd = ["grep", "-r", "-a", "-h", "-o", "-F", "-f", str(path), "--", *map(str, targets)]
            out = subprocess.run(cmd, capture_output=True).stdout
            found = set(out.decode("utf-8", "replace").splitlines()) & needles
        else:  # pragma: no cover - no grep on PATH
            for target in targets:
                files = [target] if target.is_file() else [p for p in target.rglob("*") if p.is_file()]
                for f in files:
                    text = f.read_bytes().decode("utf-8", "replace")
                    found.update(n for n in needles if n in text)
    # grep -o reports the leftmost-longest match only: a needle inside a found one occurs too
    return found | {n for n in needles - found if any(n in f for f in found)}


def _others(root: Path, user_id: str) -> list[Path]:
    """Other users' folders. Shared pages and other files are not included: a copy there is a leak."""
    out: list[Path] = []
    for top in ("wiki", "raw"):
        base = root / top / "u"
        out += [p for p in sorted(base.iterdir()) if p.name != user_id] if base.is_dir() else []
    return out


class needle_file:
    """A 0600 temp file of needles (one a line) in the erasure folder, removed on exit."""

    def __init__(self, root: Path, needles: set[str] | list[str]) -> None:
        self.root = root
        self.needles = sorted(needles)

    def __enter__(self) -> Path:
        import tempfile

        folder = journal.erasure_dir(self.root)
        fd, name = tempfile.mkstemp(prefix=".needles-", dir=folder)
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write("".join(n + "\n" for n in self.needles))
        self.path = Path(name)
        return self.path

    def __exit__(self, *exc: object) -> None:
        self.path.unlink(missing_ok=True)
