"""Context packs: a token-budgeted, prompt-ready block; active claims only; every line cited by id.

Layout, in this order, until the budget is spent (a line that does not fit is skipped, the
next may still fit; a section header is only printed with a line under it):

1. ``## What I remember about this user``: facts first. The claims the search found, in rank order
   (each is one clause), then the standing context (L0: the active claims of pinned pages);
   de-duplicated by their text;
2. ``## Relevant memories``: the turns among the hits in rank order, each ``- text (date) [id]``;
   a turn not said by the user is labelled with its role (``- assistant: ...``); after them, a claim
   the user later moved on from (its ``Hit.stale`` lists its own value: :mod:`.facts`), noted so.

In a current pack (no ``as_of``/``known_at``) a claim that is no longer valid never appears, and
neither does a turn whose every extracted claim has since been closed (what it said is known to
be stale: the claim that replaced it is listed instead, see :mod:`.facts`) nor chit-chat.
Tokens are counted with :mod:`markmem.adapters.tokens` (the built-in model's WordPiece tokenizer,
or a named fallback); the pack records which. Same inputs, same pack, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache

from ..context import Context
from ..index import claimbook
from ..model import Hit, Pack
from .facts import low_content
from .fts import claim_time

HEADER = "## What I remember about this user"
RELEVANT = "## Relevant memories"


def _counter() -> tuple[Callable[[list[str]], list[int]], str]:
    try:
        from ..adapters.tokens import tokenizer_name

        return (lambda texts: [_line_cost(t) for t in texts]), tokenizer_name()
    except ImportError:  # the adapter is missing: a conservative estimate, named as such
        return (lambda texts: [int(len(t.split()) * 1.4) + 1 for t in texts]), "estimate: 1.4 x words"


@lru_cache(maxsize=8192)
def _line_cost(line: str) -> int:
    """Tokens in one pack line. One by one, not as a batch: a pack has a handful of short lines and
    a batch wakes the tokenizer's thread pool (~0.5 ms on a busy machine); the same lines (the
    standing context, hits that come back) recur from one search to the next."""
    from ..adapters.tokens import count_tokens

    return count_tokens(line)


def standing_claims(ctx: Context, user_id: str, as_of: str | None, known_at: str | None) -> list[dict[str, object]]:
    where, params = claim_time(as_of, known_at)
    sql = ("SELECT c.id, c.text FROM claims c JOIN pages p ON p.id = c.page_id "
           f"WHERE c.user_id = ? AND p.pinned = 1 AND p.archived = 0 AND c.archived = 0 {where} "
           "AND (c.subject IS NULL OR c.subject IN (?, 'user')) ORDER BY c.page_id, c.id")
    return ctx.cache.user(user_id).rows(sql, [user_id, *params, user_id])


def stale_turns(ctx: Context, user_id: str, turn_ids: Sequence[str]) -> set[str]:
    """Turns cited only by claims that have been closed (superseded or ended)."""
    if not turn_ids:
        return set()
    book = claimbook.book(ctx.cache.user(user_id), user_id, lazy=True) if claimbook.ENABLED else None
    if book is not None:
        return {rid for rid in turn_ids if (rows := book.cite(rid))
                and all(r["valid_until"] is not None for r in rows)}
    closed = _citing(ctx, user_id, turn_ids, "IS NOT NULL")
    if not closed:
        return set()
    return closed - _citing(ctx, user_id, sorted(closed), "IS NULL")


def _citing(ctx: Context, user_id: str, turn_ids: Sequence[str], validity: str) -> set[str]:
    ids = set(turn_ids)
    rows = ctx.cache.user(user_id).rows(
        f"SELECT c.sources FROM claims c WHERE c.user_id = ? AND c.archived = 0 AND c.valid_until {validity} "
        f"AND ({' OR '.join('instr(c.sources, ?) > 0' for _ in ids)})",
        [user_id, *(f"#{i}\"" for i in sorted(ids))],
    )
    found = {ref.rsplit("#", 1)[-1] for r in rows for ref in json.loads(r["sources"] or "[]")}
    return found & ids


def pack(ctx: Context, user_id: str, hits: Sequence[Hit], budget: int, as_of: str | None = None,
         known_at: str | None = None) -> Pack:
    current = as_of is None and known_at is None
    stale = stale_turns(ctx, user_id, [h.id for h in hits if h.kind == "turn"]) if current else set()
    facts: list[tuple[str, str]] = []
    seen: set[str] = set()
    ended = {h.id for h in hits if h.kind == "claim" and current and h.valid_until is not None
             and h.valid_until <= _now()}
    moved = {h.id for h in hits if current and moved_on(h)}  # its own value: the user has since moved on
    relevant = [(h.id, h.text, _named(h)) for h in hits if h.kind == "claim" and h.id not in ended | moved]
    standing = [(str(r["id"]), str(r["text"]), "") for r in standing_claims(ctx, user_id, as_of, known_at)
                if str(r["id"]) not in ended | moved]  # a claim the user's later words ended (``read.ended``)
    for ident, text, named in relevant + standing:  # the question's facts first, then the standing ones
        key = " ".join(text.casefold().split())
        if key in seen:
            continue
        seen.add(key)
        facts.append((ident, f"- {_one_line(text)}{f' ({named})' if named else ''} [{ident}]"))
    turns = [h for h in hits if h.kind == "turn" and not (current and (h.id in stale or low_content(h.text)))]
    turns = [h for h in turns if not _marked(h)] + [h for h in turns if _marked(h)]  # what is past goes last
    turns += [h for h in hits if h.id in moved]  # after them, a claim whose value is past (noted so)
    items: list[tuple[str, str]] = []
    if facts:
        items += [("", HEADER), *facts]
    if turns:
        items += [("", RELEVANT), *((h.id, _line(h)) for h in turns)]
    return _fit(items, budget, tuple(hits))


def _now() -> str:
    from ..ids import now

    return now()


def moved_on(h: Hit) -> bool:
    """A claim whose own value ``Hit.stale`` lists (``read.facts``: the user's later statement moved on)."""
    return h.kind == "claim" and any(s.get("claim") == h.id and s.get("value") and s.get("named") == s.get("value")
                                     for s in h.stale)


def _marked(h: Hit) -> bool:
    return h.kind == "turn" and h.valid_until is not None


def _line(h: Hit) -> str:
    date = f" ({h.valid_from[:10]})" if h.kind == "turn" and h.valid_from else ""
    if _marked(h):  # a turn naming what has since changed: dated, and when it changed
        change = "superseded" if h.superseded_by else "ended"
        date = f" ({h.valid_from[:10] + '; ' if h.valid_from else ''}{change} on {str(h.valid_until)[:10]})"
    if h.kind == "turn" and h.starts:  # a planned change, not yet true as of the search's time
        date = f" ({h.valid_from[:10] + '; ' if h.valid_from else ''}not yet true: from {h.starts[:10]})"
    if h.stale and not _marked(h) and not h.starts:  # it holds; a value it names does not
        date = f" ({h.valid_from[:10] + '; ' if h.valid_from else ''}{_named(h)})"
    who = f"{h.role}: " if h.kind == "turn" and h.role and h.role != "user" else ""
    return f"- {who}{_one_line(h.text)}{date} [{h.id}]"


def _named(h: Hit) -> str:
    """The closed values a hit that holds names (``Hit.stale``), each with when it changed:
    "Malmo: superseded on 2025-05-02"."""
    return "; ".join(f"{_one_line(str(s['named']))}: {'superseded' if s.get('superseded_by') else 'ended'} on "
                     f"{str(s['valid_until'])[:10]}" for s in h.stale)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _fit(items: list[tuple[str, str]], budget: int, hits: tuple[Hit, ...]) -> Pack:
    count, name = _counter()
    costs = count([line + "\n" for _, line in items])
    lines: list[str] = []
    cited: list[str] = []
    used = 0
    for (ident, line), cost in zip(items, costs, strict=True):
        if ident in cited or used + cost > budget:
            continue
        if not ident and not _any_fits(items, costs, line, used + cost, budget, cited):
            continue  # never a section header without a line under it
        lines.append(line)
        used += cost
        if ident:
            cited.append(ident)
    text = "\n".join(lines) + "\n" if lines else ""
    return Pack(text, used, budget, name, tuple(cited), hits)


def _any_fits(items: list[tuple[str, str]], costs: list[int], header: str, used: int, budget: int,
              cited: list[str]) -> bool:
    """Whether any line of this header's section still fits (else the header is left out)."""
    start = next(i for i, (ident, line) in enumerate(items) if not ident and line == header) + 1
    for (ident, _), c in zip(items[start:], costs[start:], strict=True):
        if not ident:
            return False  # the next section
        if used + c <= budget and ident not in cited:
            return True
    return False
