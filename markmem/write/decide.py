"""Review decisions: approve, reject or edit a pending review item. ``Memory.review_decide``.

=================  ===========================================  ===========================================
decision           quarantine (injection guard held the turn)   low_confidence (a hedged candidate)
=================  ===========================================  ===========================================
``approve``        the turn is compiled (extract -> resolve),   the stored candidate is applied, its
                   bypassing the guard; it becomes searchable   confidence raised to ``review_below``
``reject``         nothing is compiled; the raw row stays       the candidate is dropped
                   excluded from search (reason ``rejected``)
``edit`` + text    ``text`` (PII-gated) is compiled instead,    value/text replaced by ``text`` (PII-gated),
                   as ``human_edited``; the original turn       then applied as ``human_edited``
                   stays excluded (reason ``edited``)
=================  ===========================================  ===========================================

A quarantined turn carrying ``markmem_edit`` is an ``update()`` the injection guard held: approve
applies that edit as its author made it (``human_edited`` or ``agent_inferred``), edit applies the
reviewer's text as a human edit. A reviewer's text passes the one gate too; text that reads as an
instruction override is refused (``EditQuarantined``) and the item stays pending.

Each decision is ONE commit (``Markmem-Op: review``) holding the changed pages, the removed
item file and one ops-log record (ids, kind and decision only, never text). The record's
``quarantine`` field is the raw row's new state; ``index.rebuild`` replays it, so a rebuilt
cache hides and shows exactly the same turns.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any

from ..context import Context
from ..errors import EditQuarantined, InvalidInput, NotFound
from ..ids import now, validate_page_id
from ..index.text import content_hash
from ..model import Candidate, RawEntry
from ..store import raw
from ..store.git import message
from ..store.pages import page_ids_with_prefix, page_loader, write_page
from ..store.repo import append_op
from . import review
from .correct import EDIT_KEY, correct, target_of
from .extract import HeuristicExtractor, facts_in
from .gate import gate
from .messages import clean_text
from .resolve import Resolution, normalise_predicate, resolve

log = logging.getLogger("markmem")

DECISIONS = ("approve", "reject", "edit")
_ITEM_RE = re.compile(r"v-[0-9a-f]{10}")
# the raw row's quarantine state after each decision on a quarantined turn
_QUARANTINE_AFTER = {"approve": None, "reject": "rejected", "edit": "edited"}


def find_item(ctx: Context, item_id: str) -> dict[str, Any]:
    """The pending item with this id, whichever user it belongs to. NotFound if none."""
    if not isinstance(item_id, str) or not _ITEM_RE.fullmatch(item_id):
        raise InvalidInput(f"invalid review item id: {item_id!r} (expected v- and 10 hex digits)", field="id")
    for path in sorted((ctx.root / "wiki" / "u").glob(f"*/review/{item_id}.yaml")):
        return review.read_item(ctx.root, path.parent.parent.name, item_id, ctx.codec)
    raise NotFound("review item", item_id)


def show(ctx: Context, item_id: str) -> dict[str, Any]:
    """The item plus the (already PII-gated) raw turn it refers to, under ``raw``."""
    item = find_item(ctx, item_id)
    entry = _raw_entry(ctx, item)
    turn = {"id": entry.id, "role": entry.role, "speaker": entry.speaker, "content": entry.content,
            "when": entry.when, "quarantined": entry.quarantined}
    return {**item, "raw": turn}


def decide(ctx: Context, item_id: str, decision: str, text: str | None = None) -> dict[str, Any]:
    """Apply a human's decision; one commit; returns what changed (ids only)."""
    if decision not in DECISIONS:
        raise InvalidInput(f"decision must be one of {DECISIONS}, not {decision!r}", field="decision")
    if decision == "edit":
        text = _gate(ctx, clean_text(text, max_bytes=ctx.settings.max_input_bytes, field="text").strip(), item_id)
    elif text is not None:
        raise InvalidInput("text is only taken by the 'edit' decision", field="text")
    with ctx.write_lock.held():
        item = find_item(ctx, item_id)
        stamp = now()
        res = Resolution()
        new_items: list[dict[str, Any]] = []
        if decision != "reject":
            entry = _raw_entry(ctx, item)
            res = _resolve(ctx, item, entry, decision, text, stamp)
            new_items = [review.low_confidence_item(c, e, stamp) for c, e in res.review]
        return _commit(ctx, item, decision, res, new_items, stamp)


# -- compile what the decision lets through -------------------------------------------------
def _resolve(ctx: Context, item: dict[str, Any], entry: RawEntry, decision: str, text: str | None,
             stamp: str) -> Resolution:
    if item["kind"] == "quarantine" and isinstance(entry.metadata.get(EDIT_KEY), dict):
        return _held_edit(ctx, entry, decision, text, stamp)
    if item["kind"] == "quarantine":
        cands = _from_turn(ctx, entry, decision, text)
    else:
        cands = [_from_candidate(ctx, item, decision, text)]
    cands = [replace(c, raw_id=entry.id) for c in cands]
    if decision == "edit" or item["kind"] == "low_confidence":
        # a human vouched for these very facts: never back to review for their confidence.
        # (An approved quarantined turn is compiled like any other: its hedges still go to review.)
        floor = ctx.settings.review_below
        cands = [replace(c, confidence=max(c.confidence, floor)) for c in cands]
    if decision == "edit":
        cands = [replace(c, provenance="human_edited") for c in cands]
    return resolve(cands, {entry.id: entry}, page_loader(ctx.root, ctx.codec), stamp, ctx.settings.review_below,
                   siblings=lambda prefix: page_ids_with_prefix(ctx.root, prefix))


def _from_turn(ctx: Context, entry: RawEntry, decision: str, text: str | None) -> list[Candidate]:
    turn = replace(entry, quarantined=None)
    if decision == "edit":
        turn = replace(turn, content=text or "")
    try:
        return list(ctx.extractor.extract([turn]).candidates)
    except Exception as exc:  # same policy as the compile worker: fall back, never lose the decision
        log.warning("extractor %s failed (%s); using the heuristic extractor", ctx.extractor.name,
                    type(exc).__name__)
        return list(HeuristicExtractor().extract([turn]).candidates)


def _from_candidate(ctx: Context, item: dict[str, Any], decision: str, text: str | None) -> Candidate:
    data = dict(item.get("candidate") or {})
    try:
        cand = Candidate(**data)
    except TypeError:
        raise InvalidInput(f"review item {item['id']} holds no usable candidate", field="id") from None
    if decision != "edit":
        return cand
    gated = text or ""
    value = gated  # a bare value ("Munich"), or a sentence the extractor reads for this predicate
    predicate = normalise_predicate(cand.predicate)
    for p, v, *_ in facts_in(gated):
        if p == predicate:
            value = v
            break
    return replace(cand, value=value, text=gated, negated=False)


def _held_edit(ctx: Context, entry: RawEntry, decision: str, text: str | None, stamp: str) -> Resolution:
    """An ``update()`` the injection guard held: approving applies it as its author made it; an
    edit decision applies the reviewer's text instead, as the reviewer's (human) edit."""
    held = entry.metadata[EDIT_KEY]
    page = page_loader(ctx.root, ctx.codec)(validate_page_id(str(held.get("page"))))
    if page is None or page.user_id != entry.user_id:
        raise NotFound("page", str(held.get("page")))
    by = "human" if decision == "edit" else str(held.get("by", "human"))
    claim = held.get("claim")
    changed, _new = correct(page, target_of(page, None if claim is None else str(claim)),
                            (text or "") if decision == "edit" else entry.content, by, stamp)
    return Resolution(pages={changed.id: changed}, added=1, closed=int(claim is not None))


def _gate(ctx: Context, text: str, item_id: str) -> str:
    """A reviewer's text passes the one gate like any input: PII per policy (block raises), and
    instruction-override text is refused (EditQuarantined: the item stays pending)."""
    gated = gate(ctx, [text])[0]
    if gated.quarantined:
        raise EditQuarantined(gated.quarantined, None, item_id)
    return gated.text


def _raw_entry(ctx: Context, item: dict[str, Any]) -> RawEntry:
    user_id, raw_id = item["user_id"], item["raw_id"]
    rel = str(item.get("source", "")).partition("#")[0]
    files = [rel] if rel and (ctx.root / rel).exists() else [p for _u, p in raw.iter_files(ctx.root, user_id)]
    for path in files:
        for entry, _s, _e in raw.read_range(ctx.root, path, 0, None, ctx.codec, user_id):
            if entry.id == raw_id:
                return entry
    raise NotFound("raw entry", raw_id)



# -- one commit, ops record, cache ----------------------------------------------------------
def _commit(ctx: Context, item: dict[str, Any], decision: str, res: Resolution,
            new_items: list[dict[str, Any]], stamp: str) -> dict[str, Any]:
    user_id, item_id = item["user_id"], item["id"]
    paths = [review.item_path(user_id, item_id)]
    for page in res.pages.values():
        write_page(ctx.root, page, ctx.codec, sync=False)
        paths.append(page.path)
    paths += [review.write_item(ctx.root, i, ctx.codec) for i in new_items]
    (ctx.root / paths[0]).unlink()
    added = sorted(c.id for p in res.pages.values() for c in p.claims if c.recorded_at == stamp)
    record: dict[str, Any] = {
        "op": "review", "at": stamp, "item": item_id, "kind": item["kind"], "decision": decision,
        "user_id": user_id, "raw_id": item["raw_id"], "claims": added,
    }
    if item["kind"] == "quarantine":
        record["quarantine"] = _QUARANTINE_AFTER[decision]
    paths.append(append_op(ctx.root, record))
    trailers = {"Markmem-Op": "review", "Markmem-Review": item_id, "Markmem-Decision": decision,
                "Markmem-Users": user_id, "Markmem-Claims": f"+{res.added} -{res.closed} ={res.reinforced}"}
    sha = ctx.git.commit(paths, message(f"markmem: review {decision} {item_id} ({item['kind']})", trailers))
    with ctx.cache.tx():
        for page in res.pages.values():
            ctx.cache.upsert_page(page, content_hash(page.body))
        if "quarantine" in record:
            ctx.cache.set_quarantine(item["raw_id"], record["quarantine"], user_id)
        if sha:
            ctx.cache.set_meta("head", sha)
    return {
        "id": item_id, "kind": item["kind"], "decision": decision, "user_id": user_id,
        "raw_id": item["raw_id"], "claims": added, "closed": res.closed, "reinforced": res.reinforced,
        "review": [i["id"] for i in new_items], "commit": sha,
    }
