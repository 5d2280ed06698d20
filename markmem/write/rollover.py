"""Keep every page small: a ledger with many closed claims moves its oldest into an archive page.

A fact that changes thousands of times (a bot's status, a counter) would otherwise grow one
page without bound and make every batch that touches it slower. Archive pages
(``<page id>.a<k>``) are written once, stay searchable for ``as_of``/``known_at``, and are
never rewritten by compilation.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import Page
from ..store.pages import render_body

ROLL_AT = 32  # closed claims on a page before it rolls over
KEEP_CLOSED = 8  # the most recent closed claims that stay on the live page


def roll(page: Page, now: str) -> list[Page]:
    # Claims recorded by the batch being compiled never move: if the batch is re-run after a
    # crash, its idempotency check finds them on the live page.
    closed = [c for c in page.claims if not c.active and (c.recorded_at or "") < now]
    if len(closed) <= ROLL_AT:
        return [page]
    closed.sort(key=lambda c: (c.valid_until or "", c.id))
    moving = {c.id for c in closed[: len(closed) - KEEP_CLOSED]}
    k = int(page.extra.get("archives", 0)) + 1
    archive = Page(
        id=f"{page.id}.a{k}", type=page.type, user_id=page.user_id, title=f"{page.title} (archive {k})",
        created=now, updated=now, claims=tuple(c for c in page.claims if c.id in moving),
        extra={"archive_of": page.id},
    )
    live = replace(page, claims=tuple(c for c in page.claims if c.id not in moving),
                   extra={**page.extra, "archives": k})
    # The archive is written first: a crash between the two writes then leaves the moved claims
    # in both places (the re-run rewrites the same archive id), never in neither.
    return [replace(archive, body=render_body(archive)), replace(live, body=render_body(live))]
