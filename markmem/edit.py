"""Human edits through the API: update (a human_edited claim at full trust) and delete."""

from __future__ import annotations

from dataclasses import replace

from .context import Context
from .errors import InvalidInput, NotFound
from .ids import now, short_hash, validate_page_id
from .index.text import content_hash
from .inspect import _CLAIM_RE, _RAW_RE, load_page
from .model import Claim, Page
from .store.git import message
from .store.pages import render_body, write_page
from .write.messages import clean_text


def _page_of(ctx: Context, ident: str) -> tuple[Page, str | None]:
    if _CLAIM_RE.fullmatch(ident):
        rows = ctx.cache.rows("SELECT page_id FROM claims WHERE id=?", [ident])
        if not rows:
            raise NotFound("claim", ident)
        return load_page(ctx, rows[0]["page_id"]), ident
    if _RAW_RE.fullmatch(ident):
        raise InvalidInput("raw entries are append-only; use forget() to erase a user's inputs", field="id")
    return load_page(ctx, validate_page_id(ident)), None


def _save(ctx: Context, page: Page, op: str, stamp: str) -> str | None:
    page = replace(page, updated=stamp, body=render_body(page))
    write_page(ctx.root, page, ctx.codec)
    sha = ctx.git.commit([page.path], message(f"markmem: {op} {page.id}", {"Markmem-Op": op,
                                                                            "Markmem-Users": page.user_id or ""}))
    with ctx.cache.tx():
        ctx.cache.upsert_page(page, content_hash(page.body))
        if sha:
            ctx.cache.set_meta("head", sha)
    return sha


def update(ctx: Context, ident: str, text: str) -> Claim:
    text = clean_text(text, max_bytes=ctx.settings.max_input_bytes, field="text").strip()
    with ctx.write_lock.held():
        page, cid = _page_of(ctx, ident)
        active = [c for c in page.claims if c.active]
        if cid:
            target = next((c for c in page.claims if c.id == cid), None)
        else:
            target = active[0] if len(active) == 1 else None
        if cid and target is None:
            raise NotFound("claim", cid)
        if target is not None and not target.active:
            raise InvalidInput(f"claim {target.id} is already closed; update the active one", field="id")
        stamp = now()
        new = Claim(
            id="c-" + short_hash("human", page.id, text, stamp),
            subject=target.subject if target else (page.user_id or "shared"),
            predicate=target.predicate if target else "note",
            value=text, text=text, provenance="human_edited", confidence=1.0,
            valid_from=stamp, recorded_at=stamp, supersedes=target.id if target else None,
        )
        claims = [
            replace(c, valid_until=stamp, closed_at=stamp, superseded_by=new.id) if target and c.id == target.id else c
            for c in page.claims
        ]
        _save(ctx, replace(page, claims=(*claims, new)), "update", stamp)
        return new


def delete(ctx: Context, ident: str, hard: bool) -> str | None:
    with ctx.write_lock.held():
        page, cid = _page_of(ctx, ident)
        stamp = now()
        if cid is None:
            if hard:
                (ctx.root / page.path).unlink()
                sha = ctx.git.commit([page.path], message(f"markmem: delete {page.id}", {
                    "Markmem-Op": "delete", "Markmem-Users": page.user_id or ""}))
                ctx.cache.delete_page(page.id)
                return sha
            return _save(ctx, replace(page, archived=True), "archive", stamp)
        if hard:
            claims = tuple(c for c in page.claims if c.id != cid)
        else:
            claims = tuple(
                replace(c, valid_until=c.valid_until or stamp, closed_at=c.closed_at or stamp,
                        metadata={**c.metadata, "deleted": stamp}) if c.id == cid else c
                for c in page.claims
            )
        return _save(ctx, replace(page, claims=claims), "delete" if hard else "retract", stamp)
