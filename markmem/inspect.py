"""Read-only views over the repo: get, list, history, review items, doctor, stats."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .context import Context
from .errors import InvalidInput, MalformedPage, NotFound
from .ids import validate_page_id
from .model import Claim, Commit, Page, RawEntry
from .store import raw
from .store.links import find_links
from .store.pages import iter_page_files, page_path, parse_page, read_page
from .store.repo import schema_version
from .write import review

_CLAIM_RE = re.compile(r"c-[0-9a-f]{10}")
_RAW_RE = re.compile(r"r-[0-9a-f]{12}")


def get(ctx: Context, ident: str) -> Page | Claim | RawEntry:
    if not isinstance(ident, str):
        raise InvalidInput("id must be text", field="id")
    if _CLAIM_RE.fullmatch(ident):
        rows = ctx.cache.rows("SELECT page_id FROM claims WHERE id=?", [ident])
        if not rows:
            raise NotFound("claim", ident)
        page = load_page(ctx, rows[0]["page_id"])
        for c in page.claims:
            if c.id == ident:
                return c
        raise NotFound("claim", ident)
    if _RAW_RE.fullmatch(ident):
        rows = ctx.cache.rows("SELECT user_id, path FROM raw WHERE id=?", [ident])
        if not rows:
            raise NotFound("raw entry", ident)
        for entry, _s, _e in raw.read_range(ctx.root, rows[0]["path"], 0, None, ctx.codec, rows[0]["user_id"]):
            if entry.id == ident:
                return entry
        raise NotFound("raw entry", ident)
    return load_page(ctx, validate_page_id(ident))


def owner(ctx: Context, found: Page | Claim | RawEntry) -> str | None:
    if isinstance(found, (Page, RawEntry)):
        return found.user_id
    rows = ctx.cache.rows("SELECT user_id FROM claims WHERE id=?", [found.id])
    return rows[0]["user_id"] if rows else None


def load_page(ctx: Context, page_id: str) -> Page:
    rel = page_path(page_id)
    if not (ctx.root / rel).exists():
        raise NotFound("page", page_id)
    return read_page(ctx.root, rel, ctx.codec)


def get_all(ctx: Context, user_id: str, type: str | None, include_archived: bool, limit: int | None = None,
            offset: int = 0) -> list[Page]:
    sql = "SELECT id FROM pages WHERE user_id=?"
    params: list[Any] = [user_id]
    if type is not None:
        sql += " AND type=?"
        params.append(type)
    else:  # entity pages are the graph's: asked for by type, or through related()
        sql += " AND type != 'entity'"
    if not include_archived:
        sql += " AND archived=0"
    sql += " ORDER BY id"
    if limit is not None or offset:
        sql += " LIMIT ? OFFSET ?"
        params += [-1 if limit is None else limit, offset]
    pages = []
    for r in ctx.cache.user(user_id).rows(sql, params):
        try:
            pages.append(load_page(ctx, r["id"]))
        except (MalformedPage, NotFound):  # broken or gone since the cache saw it: doctor lists it
            continue
    return pages


def history(ctx: Context, ident: str, include_diff: bool, limit: int | None = None, offset: int = 0
            ) -> list[Commit]:
    page_id = ident
    if _CLAIM_RE.fullmatch(ident):
        rows = ctx.cache.rows("SELECT page_id FROM claims WHERE id=?", [ident])
        if not rows:
            raise NotFound("claim", ident)
        page_id = rows[0]["page_id"]
    rel = page_path(validate_page_id(page_id))
    fmt = "--format=%x1e%H%x1f%aI%x1f%B%x1d"
    window = [*([f"--skip={offset}"] if offset else []), *([f"-n{limit}"] if limit is not None else [])]
    out = ctx.git.run("log", "--follow", fmt, *window, *(["-p"] if include_diff else []), "--", rel)
    entries = [(head.split("\x1f", 2), patch) for head, _, patch in
               (chunk.partition("\x1d") for chunk in out.split("\x1e")[1:])]
    versions = _versions(ctx, [f"{sha}{rev}:{rel}" for (sha, _w, _m), _p in entries for rev in ("", "^")], rel)
    commits: list[Commit] = []
    for (sha, when, msg), patch in entries:
        op = next((ln.split(":", 1)[1].strip() for ln in msg.splitlines() if ln.startswith("Markmem-Op:")), None)
        diff = patch.lstrip("\n") if include_diff else None
        if diff is not None and not diff.startswith(f"diff --git a/{rel} b/{rel}\n"):  # a rename or copy
            diff = ctx.git.run("show", "--format=", sha, "--", rel)  # the path's own diff, as git show gives it
        changes = _claim_changes(versions[f"{sha}:{rel}"], versions[f"{sha}^:{rel}"])
        commits.append(Commit(sha, when, msg.strip(), op, diff, changes))
    if not commits and not offset and not (ctx.root / rel).exists():
        raise NotFound("page", page_id)
    return commits


def _versions(ctx: Context, revs: list[str], rel: str) -> dict[str, dict[str, Claim]]:
    """Claims of the page at each ``rev:path``: one ``git cat-file --batch`` for all of them, and
    each distinct text parsed once (a commit's "before" is the previous commit's "after")."""
    out = ctx.git.run("cat-file", "--batch", input="".join(r + "\n" for r in revs).encode()).encode("utf-8")
    parsed: dict[bytes, dict[str, Claim]] = {}
    found: dict[str, dict[str, Claim]] = {}
    pos = 0
    for rev in revs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")
        if header[-1] == b"missing" or len(header) != 3:
            found[rev], pos = {}, end + 1
            continue
        size = int(header[2])
        blob = out[end + 1:end + 1 + size]
        pos = end + 2 + size
        if blob not in parsed:
            parsed[blob] = _parse_claims(ctx, blob.decode("utf-8", "replace"), rel)
        found[rev] = parsed[blob]
    return found


def _parse_claims(ctx: Context, text: str, rel: str) -> dict[str, Claim]:
    if not text:
        return {}
    user = rel.split("/")[2] if rel.startswith("wiki/u/") else None
    try:
        page = parse_page(ctx.codec.open_text(user, text) if user else text, rel)
    except (MalformedPage, Exception):
        return {}
    return {c.id: c for c in page.claims}


def _claim_changes(after: dict[str, Claim], before: dict[str, Claim]) -> tuple[dict[str, Any], ...]:
    changes: list[dict[str, Any]] = []
    for cid, c in after.items():
        old = before.get(cid)
        if old is None:
            kind = "edited_by_human" if c.provenance == "human_edited" else "added"
            changes.append({"claim": cid, "change": kind, "supersedes": c.supersedes})
        elif old.valid_until is None and c.valid_until is not None:
            kind = "superseded" if c.superseded_by else "closed"
            changes.append({"claim": cid, "change": kind, "valid_until": c.valid_until, "by": c.superseded_by})
        elif old.sources != c.sources:
            changes.append({"claim": cid, "change": "reinforced"})
    changes += [{"claim": cid, "change": "removed"} for cid in before if cid not in after]
    return tuple(changes)


def review_items(ctx: Context, user_id: str | None) -> list[dict[str, Any]]:
    return review.list_items(ctx.root, ctx.codec, user_id)


def doctor(ctx: Context, worker_error: BaseException | None) -> dict[str, Any]:
    problems = ctx.cache.rows("SELECT path, reason FROM problems ORDER BY path")
    problems += [{"path": rel, "reason": "a symlink (never followed, written through or committed)"}
                 for rel in find_links(ctx.root)]
    bad_items: list[tuple[str, str]] = []
    review.list_items(ctx.root, ctx.codec, None, bad_items)
    problems += [{"path": rel, "reason": reason} for rel, reason in bad_items]
    pages_on_disk = len(iter_page_files(ctx.root))
    bad_pages = sum(1 for p in problems if p["path"].startswith("wiki/") and p["path"].endswith(".md")
                    and not p["reason"].startswith("a symlink"))
    cached = ctx.cache.count("pages")
    return {
        "repo": str(ctx.root),
        "schema": schema_version(),
        "git_head": ctx.git.head(),
        "cache": {"ok": ctx.cache.ok(), "pages": cached, "pages_on_disk": pages_on_disk,
                  "in_sync": cached + bad_pages == pages_on_disk},
        "pii_gate": ctx.scanner.name,
        "injection_guard": ctx.detect_injection is not None,
        "extractor": ctx.extractor.name,
        "vectors": ctx.embedder.name if ctx.embedder else None,
        "encryption": ctx.codec.name,
        "queue_pending": ctx.queue.pending(),
        "problems": [{"path": p["path"], "reason": p["reason"]} for p in problems],
        "warnings": list(ctx.warnings) + ([f"background compile: {worker_error}"] if worker_error else []),
    }


def stats(ctx: Context) -> dict[str, Any]:
    files = ctx.cache.each()  # one, or (split per user) the shared file and each user's
    claims = [f.db.execute("SELECT count(*), sum(valid_until IS NULL) FROM claims").fetchone() for f in files]
    users = {str(u) for f in files for (u,) in f.db.execute("SELECT DISTINCT user_id FROM raw")}
    commits = ctx.git.run("rev-list", "--count", "HEAD", check=False).strip()
    return {
        "users": len(users),
        "raw_entries": ctx.cache.count("raw"),
        "pages": ctx.cache.count("pages"),
        "claims": sum(int(n or 0) for n, _a in claims),
        "active_claims": sum(int(a or 0) for _n, a in claims),
        **_graph_counts(ctx, files),
        "review_pending": len(review.list_items(ctx.root, ctx.codec)),
        "queue_pending": ctx.queue.pending(),
        "commits": int(commits or 0),
        "git_bytes": _dir_size(ctx.root / ".git"),
        **{k: v for k, v in sorted(ctx.stats.items())},
    }


def _graph_counts(ctx: Context, files: list[Any]) -> dict[str, int]:
    """Entity pages (the people, pets, places, organisations users speak of) and their active relations."""
    from .read import graph

    sql = "SELECT DISTINCT user_id FROM pages WHERE type = 'entity' AND user_id IS NOT NULL"
    entities = relations = 0
    for uid in sorted({str(u) for f in files for (u,) in f.db.execute(sql)}):
        e, r = graph.counts(ctx, uid)
        entities, relations = entities + e, relations + r
    return {"entities": entities, "relations": relations}


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, default=str)


def users(ctx: Context, contains: str | None = None, limit: int | None = None, offset: int = 0
          ) -> list[dict[str, Any]]:
    """Every user the cache knows, with counts and last activity, sorted by id (``contains``
    keeps the ids holding that text; ``limit``/``offset`` a window of them). The ids come from an
    index skip-scan; counts are read for the window's users only, so a page of 50 costs the same in
    a repo of 100 or 10,000 users."""
    needle = (contains or "").strip().lower()
    chosen = sorted(u for u in _user_ids(ctx) if needle in u)
    chosen = chosen[offset:None if limit is None else offset + limit]
    found = {u: {"user_id": u, "raw_entries": 0, "pages": 0, "active_claims": 0, "closed_claims": 0,
                 "review_pending": 0, "last_activity": None} for u in chosen}
    for uid, row in found.items():
        db = ctx.cache.user(uid).db
        n, last = db.execute("SELECT count(*), max(recorded_at) FROM raw WHERE user_id=?", (uid,)).fetchone()
        pages, updated = db.execute("SELECT count(*), max(updated) FROM pages WHERE user_id=?", (uid,)).fetchone()
        active, claims = db.execute("SELECT sum(valid_until IS NULL), count(*) FROM claims WHERE user_id=?",
                                    (uid,)).fetchone()
        row.update(raw_entries=n, pages=pages, last_activity=_later(last, updated), active_claims=int(active or 0),
                   closed_claims=claims - int(active or 0))
        review_dir = ctx.root / "wiki" / "u" / uid / "review"
        row["review_pending"] = len(list(review_dir.glob("v-*.yaml"))) if review_dir.is_dir() else 0
    return list(found.values())


def _user_ids(ctx: Context) -> set[str]:
    """Every user id with rows in the cache: per table, one index seek per distinct id."""
    ids: set[str] = set()
    for f in ctx.cache.each():
        for table in ("raw", "pages", "claims"):
            ids.update(u for (u,) in f.db.execute(
                f"WITH RECURSIVE ids(u) AS (SELECT min(user_id) FROM {table} UNION ALL "
                f"SELECT (SELECT min(user_id) FROM {table} WHERE user_id > u) FROM ids WHERE u IS NOT NULL) "
                "SELECT u FROM ids WHERE u IS NOT NULL"))
    return ids


def _later(a: str | None, b: str | None) -> str | None:
    return max(x for x in (a, b) if x) if (a or b) else None
