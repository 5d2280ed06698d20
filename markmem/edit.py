"""Edits through the API: update (a correction that supersedes a claim, gated like any input) and delete."""

from __future__ import annotations

from dataclasses import replace
from typing import NoReturn

from .context import Context
from .errors import EditQuarantined, InvalidInput, NotFound
from .ids import now, validate_page_id
from .index.text import content_hash
from .inspect import _CLAIM_RE, _RAW_RE, load_page
from .model import Claim, Page
from .store.git import message
from .store.pages import render_body, write_page
from .write import pipeline, review
from .write.correct import check_editor, correct, target_of
from .write.gate import gate
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


def _save(ctx: Context, page: Page, op: str, stamp: str, rendered: bool = False) -> str | None:
    if not rendered:
        page = replace(page, updated=stamp, body=render_body(page))
    write_page(ctx.root, page, ctx.codec)
    sha = ctx.git.commit([page.path], message(f"markmem: {op} {page.id}", {"Markmem-Op": op,
                                                                            "Markmem-Users": page.user_id or ""}))
    with ctx.cache.tx():
        ctx.cache.upsert_page(page, content_hash(page.body))
        if sha:
            ctx.cache.set_meta("head", sha)
    return sha


def update(ctx: Context, ident: str, text: str, by: str = "human") -> Claim:
    """Gate ``text`` like any input, then supersede the claim. Injection text is held for review
    (EditQuarantined); PII is masked or tagged per policy, or blocked (nothing written)."""
    check_editor(by)
    text = clean_text(text, max_bytes=ctx.settings.max_input_bytes, field="text").strip()
    gated = gate(ctx, [text])[0]
    if gated.quarantined:
        _hold(ctx, ident, text, by, gated.quarantined)
    with ctx.write_lock.held():
        page, cid = _page_of(ctx, ident)
        stamp = now()
        changed, new = correct(page, target_of(page, cid), gated.text, by, stamp)
        _save(ctx, changed, "update", stamp, rendered=True)
        return new


def _hold(ctx: Context, ident: str, text: str, by: str, reason: str) -> NoReturn:
    """Keep a suspicious edit as a quarantined raw entry of the page's owner; raise EditQuarantined."""
    page, cid = _page_of(ctx, ident)
    target = target_of(page, cid)
    if page.user_id is None:
        raise EditQuarantined(reason, None, None)
    held = {"page": page.id, "claim": target.id if target else None, "by": by}
    turn = {"role": "other", "name": f"{by} edit", "content": text}
    result = pipeline.accept(ctx, [turn], page.user_id, edit_of=held)  # gates it again: same verdict
    raw_id = result.ids[0]
    item_id = review.quarantine_item_id(raw_id) if result.quarantined else None
    raise EditQuarantined(reason, raw_id, item_id)


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
