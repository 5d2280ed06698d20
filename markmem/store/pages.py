"""Pages: markdown with YAML frontmatter holding the claim ledger. Parse, render, write.

The prose under the frontmatter is generated from the ledger (:func:`render_body`);
``lint`` reports drift when a human edits one without the other.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from ..errors import MalformedPage
from ..ids import entity_page_id
from ..model import Claim, Page
from . import yamlfast
from .links import crosses_link, open_nofollow, refuse_links, walk

try:
    _Loader: Any = yaml.CSafeLoader
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader, _Dumper = yaml.SafeLoader, yaml.SafeDumper

_PAGE_KEYS = ("id", "type", "user_id", "title", "created", "updated", "pinned", "archived", "claims")
_CLAIM_OPTIONAL = ("closed_at", "supersedes", "superseded_by")


def claim_to_dict(c: Claim) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": c.id,
        "subject": c.subject,
        "predicate": c.predicate,
        "value": c.value,
        "text": c.text,
        "provenance": c.provenance,
        "confidence": round(float(c.confidence), 4),
        "valid_from": c.valid_from,
        "valid_until": c.valid_until,
        "recorded_at": c.recorded_at,
    }
    for key in _CLAIM_OPTIONAL:
        if getattr(c, key) is not None:
            d[key] = getattr(c, key)
    d["sources"] = list(c.sources)
    if c.metadata:
        d["metadata"] = dict(c.metadata)
    return d


def claim_from_dict(d: dict[str, Any]) -> Claim:
    def opt(key: str) -> str | None:
        v = d.get(key)
        return None if v is None else str(v)

    return Claim(
        id=str(d["id"]),
        subject=str(d.get("subject", "")),
        predicate=str(d.get("predicate", "")),
        value=str(d.get("value", "")),
        text=str(d.get("text", "")),
        provenance=str(d.get("provenance", "user_stated")),
        confidence=float(d.get("confidence", 0.8)),
        valid_from=opt("valid_from"),
        valid_until=opt("valid_until"),
        recorded_at=opt("recorded_at"),
        closed_at=opt("closed_at"),
        supersedes=opt("supersedes"),
        superseded_by=opt("superseded_by"),
        sources=tuple(str(s) for s in d.get("sources") or ()),
        metadata=dict(d.get("metadata") or {}),
    )


def render_body(page: Page) -> str:
    if page.type == "entity":
        return _render_entity(page)
    lines = [f"# {page.title}", ""]
    active: list[str] = []
    closed: list[Claim] = []
    for c in page.claims:  # the resolver re-renders a page per applied claim: keep this loop tight
        if c.valid_until is None:  # Claim.active
            start = c.valid_from or ""
            later = f" (from {start[:10]})" if c.recorded_at and start > c.recorded_at else ""  # future-dated
            active.append(f"- {_one_line(c.text)}{later} ^{c.id}")
        elif c.closed_at is None and c.superseded_by is None:  # a temporary state: it ends by itself
            active.append(f"- {_one_line(c.text)} (until {c.valid_until[:10]}) ^{c.id}")
        else:
            closed.append(c)
    lines += active or ["_(no active claims)_"]
    if closed:
        lines += ["", "## Superseded"]
        for c in closed:
            span = f"{(c.valid_from or '?')[:10]} → {(c.valid_until or '?')[:10]}"
            why = f", replaced by {c.superseded_by}" if c.superseded_by else ""
            lines.append(f"- ~~{_one_line(c.text)}~~ ({span}{why}) ^{c.id}")
    return "\n".join(lines) + "\n"


def _render_entity(page: Page) -> str:
    """An entity page (write/entities.py): its kind, then each relation as a link to the other
    entity's page, so any markdown viewer can follow them."""
    user = page.user_id or ""
    lines = [f"# {page.title}", "", f"_{page.extra.get('kind', 'entity')}_", ""]
    active: list[str] = []
    closed: list[str] = []
    for c in page.claims:
        link = f"[{c.value}]({entity_page_id(user, c.value).rsplit('/', 1)[1]}.md)"
        words = c.predicate.replace("_", " ")
        if c.valid_until is None:
            active.append(f"- {words} {link} ^{c.id}")
        else:
            closed.append(f"- ~~{words} {link}~~ ({(c.valid_from or '?')[:10]} → {c.valid_until[:10]}) ^{c.id}")
    lines += active or ["_(no relations)_"]
    if closed:
        lines += ["", "## Superseded", *closed]
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=1 << 16)
def _one_line(text: str) -> str:
    return " ".join(text.split())


def dump_page(page: Page) -> str:
    meta: dict[str, Any] = {
        "id": page.id,
        "type": page.type,
        "user_id": page.user_id,
        "title": page.title,
        "created": page.created,
        "updated": page.updated,
        "pinned": page.pinned,
    }
    if page.archived:
        meta["archived"] = True
    meta.update(page.extra)
    if "claims" in meta:  # a stray key named claims: let the emitter see the whole mapping
        meta["claims"] = [claim_to_dict(c) for c in page.claims]
        return f"---\n{yamlfast.dump(meta)}---\n{page.body or render_body(page)}"
    # The claims come last and each item's lines depend only on the claim: emit them one by one,
    # reusing the text of claims dumped before (most of a page is unchanged from batch to batch).
    claims = "\n".join(_claim_yaml(c) for c in page.claims) if page.claims else None
    head = yamlfast.dump(meta) + ("claims:\n" + claims + "\n" if claims else "claims: []\n")
    return f"---\n{head}---\n{page.body or render_body(page)}"


_CLAIM_TEXT_MAX = 1 << 15
_claim_text: OrderedDict[int, tuple[Claim, str]] = OrderedDict()


def _claim_yaml(c: Claim) -> str:
    """A claim as an item of the frontmatter's ``claims`` list, cached by identity (claims are frozen)."""
    hit = _claim_text.get(id(c))
    if hit is not None and hit[0] is c:
        return hit[1]
    sub = yamlfast.emit(claim_to_dict(c), "  ")
    text = "\n".join(["- " + sub[0][2:], *sub[1:]])
    with _cache_lock:
        _claim_text[id(c)] = (c, text)
        if len(_claim_text) > _CLAIM_TEXT_MAX:
            _claim_text.popitem(last=False)
    return text


def split_frontmatter(text: str, path: str) -> tuple[dict[str, Any], str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise MalformedPage(path, "no YAML frontmatter (file must start with '---')")
    end = text.find("\n---\n", 3)
    if end < 0:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise MalformedPage(path, "frontmatter is not closed by '---'")
    try:
        meta = yamlfast.load(text[4:end])
    except yamlfast.Unsupported:
        meta = None
    try:
        if meta is None:
            meta = yaml.load(text[4:end], Loader=_Loader)
    except yaml.YAMLError as exc:
        raise MalformedPage(path, f"invalid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise MalformedPage(path, "frontmatter is not a mapping")
    return meta, text[end + 5 :]


def parse_page(text: str, path: str) -> Page:
    meta, body = split_frontmatter(text, path)
    try:
        claims = tuple(claim_from_dict(c) for c in meta.get("claims") or ())
        return Page(
            id=str(meta["id"]),
            type=str(meta.get("type", "fact")),
            user_id=None if meta.get("user_id") is None else str(meta["user_id"]),
            title=str(meta.get("title", meta["id"])),
            created=str(meta.get("created", "")),
            updated=str(meta.get("updated", "")),
            claims=claims,
            body=body,
            pinned=bool(meta.get("pinned", False)),
            archived=bool(meta.get("archived", False)),
            extra={k: v for k, v in meta.items() if k not in _PAGE_KEYS},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise MalformedPage(path, f"bad field: {exc}") from None


def atomic_write(path: Path, text: str, *, sync: bool = True) -> None:
    """Write via a temp file + rename so a reader never sees half a file.

    The temp file (``.tmp-<pid>-<thread>-<name>``, mode 0600) is unique to this thread, so plain
    ``os`` calls do (a compile writes hundreds of files: ``mkstemp`` and a text wrapper cost more
    than the write). ``recover`` deletes the temp files of a killed writer."""
    data = text.encode("utf-8")
    name = path.name if len(path.name) <= 160 else _short_name(path.name)
    tmp = os.path.join(path.parent, f".tmp-{os.getpid()}-{threading.get_ident()}-{name}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, flags, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if sync or not _exchange(tmp, str(path)):
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _exchange(tmp: str, path: str) -> bool:
    """Swap ``tmp`` and an existing ``path`` atomically (Linux ``renameat2(RENAME_EXCHANGE)``), then
    remove ``tmp`` (now the old text). Why not ``os.replace``: ext4 (``auto_da_alloc``, on by default)
    flushes a file renamed over an existing one before the rename, ~2-3 ms a page; a compile rewrites
    hundreds of pages, so that flush was most of its time. Only for ``sync=False`` writes (derived
    files git also holds): after a power cut such a file may be empty, as the caller accepted. The
    path names a whole file at every moment. False (nothing done): no such call here, or no ``path``
    yet (a new file's rename is cheap); the caller then uses ``os.replace``."""
    swap = _renameat2()
    if swap is None:
        return False
    if swap(-100, tmp.encode(), -100, path.encode(), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        return False
    os.unlink(tmp)
    return True


@lru_cache(maxsize=1)
def _renameat2() -> Callable[..., int] | None:
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # an old libc (glibc < 2.28) or musl without it
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


def _short_name(name: str) -> str:
    import hashlib

    return hashlib.blake2b(name.encode("utf-8"), digest_size=12).hexdigest()


def page_path(page_id: str) -> str:
    return f"wiki/{page_id}.md"


def user_of_path(rel: str) -> str | None:
    parts = rel.split("/")
    return parts[2] if len(parts) > 3 and parts[1] == "u" else None


def read_page(root: Path, rel: str, codec: Any, *, checked: bool = True) -> Page:
    """Read and parse one page file (``codec`` opens sealed content). The folder is the authority:
    a symlink (never followed), a file that is not UTF-8 and, with ``checked``, a page whose id is
    not its path or whose ``user_id`` is not its folder's user are a :class:`MalformedPage`."""
    try:
        with os.fdopen(open_nofollow(root, rel), "rb") as fh:
            text = fh.read().decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedPage(rel, "not UTF-8 text") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise MalformedPage(rel, "a symlink (never followed)") from None
        raise
    user = user_of_path(rel)
    if user is not None:
        text = codec.open_text(user, text)
    page = parse_page(text, rel)
    if checked:
        check_owned(page, rel)
    return page


def check_owned(page: Page, rel: str) -> None:
    """A page must sit at its id's path and name its folder's user (None outside ``wiki/u/``)."""
    if page.path != rel:
        raise MalformedPage(rel, f"id {page.id!r} does not match the file's path")
    if page.user_id != user_of_path(rel):
        raise MalformedPage(rel, f"user_id {page.user_id!r} disagrees with its folder")


# Parsed pages of this process, checked against the file's (inode, mtime, ctime, size) before use:
# a compile re-reads the pages the previous batch wrote, and parsing them was a fifth of its time.
# Every write is a rename of a new file (a new inode), so any change, by anyone, is a miss.
_CACHE_MAX = 4096
_cache: OrderedDict[str, tuple[tuple[int, int, int, int], Page]] = OrderedDict()
_cache_lock = threading.Lock()


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def _remember(full: str, key: tuple[int, int, int, int], page: Page) -> None:
    with _cache_lock:
        _cache[full] = (key, page)
        _cache.move_to_end(full)
        while len(_cache) > _CACHE_MAX:
            _cache.popitem(last=False)


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int))


def _round_trips(page: Page, rendered: bool = False) -> bool:
    """Would parsing what :func:`dump_page` writes give back an equal page? (See tests/test_pages.py:
    true for scalar metadata and rounded confidences; a page with anything else is re-read.)"""
    return (all(_plain(v) for v in page.extra.values())
            and all(round(c.confidence, 4) == c.confidence and all(_plain(v) for v in c.metadata.values())
                    for c in page.claims)
            and bool(page.body) and (rendered or page.body == render_body(page)))


def page_loader(root: Path, codec: Any) -> Callable[[str], Page | None]:
    """``load(page_id)``: the page, None if there is no such file; MalformedPage if it cannot be parsed."""

    def load(page_id: str) -> Page | None:
        rel = page_path(page_id)
        full = str(root / rel)
        try:
            key = _stat_key(os.stat(full))
        except FileNotFoundError:
            return None
        hit = _cache.get(full)
        if hit is not None and hit[0] == key:
            return hit[1]
        page = read_page(root, rel, codec)
        _remember(full, key, page)
        return page

    return load


def write_page(root: Path, page: Page, codec: Any, *, sync: bool = True, rendered: bool = False) -> str:
    """Write a page (atomic replace). ``rendered``: the caller knows ``page.body`` is
    ``render_body(page)`` (the compiler re-renders every page it changes), so it need not be checked."""
    text = dump_page(page)
    if page.user_id is not None:
        text = codec.seal_text(page.user_id, text)
    full = root / page.path
    refuse_links(root, page.path)
    atomic_write(full, text, sync=sync)
    if _round_trips(page, rendered):  # the next batch that touches this page need not parse it again
        _remember(str(full), _stat_key(os.stat(full)), page)
    else:
        with _cache_lock:
            _cache.pop(str(full), None)
    return text


def iter_page_files(root: Path, user_id: str | None = None) -> list[str]:
    prefix = "wiki/" + ("u/" + user_id if user_id else "")
    base = root / prefix
    if not base.exists() or crosses_link(root, prefix):
        return []
    return sorted(rel for rel, entry in walk(root, prefix.rstrip("/")) if entry.name.endswith(".md")
                  and not entry.name.startswith(".") and entry.is_file(follow_symlinks=False))


def page_ids_with_prefix(root: Path, prefix: str) -> list[str]:
    """Ids of the existing pages whose id starts with ``prefix`` (e.g. every value page of a
    multi-valued predicate: ``u/alice/relationship/pet--v``)."""
    folder, _, stem = prefix.rpartition("/")
    base = root / "wiki" / folder
    if not folder or not base.is_dir():
        return []
    return sorted(f"{folder}/{p.stem}" for p in base.glob("*.md")
                  if p.stem.startswith(stem) and "." not in p.stem)  # not archive pages (<id>.a<k>)
