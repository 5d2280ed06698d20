"""A correction: a new claim that supersedes one active claim (or adds a note to a page).

Pure: ``edit.update`` (an edit through the API) and ``decide`` (approving an edit the injection
guard held for review) both build the changed page here, so both record it the same way. Who
made the edit sets the provenance: a person's edit is ``human_edited`` at full trust; an edit
an agent made (the model, through MCP) is ``agent_inferred``, weighted as the model's word.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import InvalidInput
from ..ids import short_hash
from ..model import Claim, Page
from ..store.pages import render_body

EDITORS = ("human", "agent")
_PROVENANCE = {"human": ("human_edited", 1.0), "agent": ("agent_inferred", 0.8)}
EDIT_KEY = "markmem_edit"  # raw metadata of an edit held for review: {claim, page, by}


def check_editor(by: object) -> str:
    if by not in EDITORS:
        raise InvalidInput(f"by must be one of {EDITORS}, not {by!r}", field="by")
    return str(by)


def target_of(page: Page, claim_id: str | None) -> Claim | None:
    """The claim an edit replaces: the one named, else the page's only active claim (or None)."""
    if claim_id is None:
        active = [c for c in page.claims if c.active]
        return active[0] if len(active) == 1 else None
    target = next((c for c in page.claims if c.id == claim_id), None)
    if target is None:
        from ..errors import NotFound

        raise NotFound("claim", claim_id)
    if not target.active:
        raise InvalidInput(f"claim {target.id} is already closed; update the active one", field="id")
    return target


def correct(page: Page, target: Claim | None, text: str, by: str, stamp: str) -> tuple[Page, Claim]:
    """``page`` with ``target`` closed and superseded by a claim reading ``text`` (already gated)."""
    provenance, confidence = _PROVENANCE[check_editor(by)]
    new = Claim(
        id="c-" + short_hash("human" if by == "human" else by, page.id, text, stamp),
        subject=target.subject if target else (page.user_id or "shared"),
        predicate=target.predicate if target else "note",
        value=text, text=text, provenance=provenance, confidence=confidence,
        valid_from=stamp, recorded_at=stamp, supersedes=target.id if target else None,
    )
    claims = [
        replace(c, valid_until=stamp, closed_at=stamp, superseded_by=new.id) if target and c.id == target.id else c
        for c in page.claims
    ]
    changed = replace(page, claims=(*claims, new), updated=stamp)
    return replace(changed, body=render_body(changed)), new
