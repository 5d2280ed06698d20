"""Context packs: a token-budgeted, prompt-ready block; active claims only; every line cited by id.

L0 (standing context: active claims on pinned pages) comes first, then the search hits, in a
deterministic order, until the budget is spent.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..context import Context
from ..model import Hit, Pack


def _counter():  # type: ignore[no-untyped-def]
    try:
        from ..adapters.tokens import count_tokens, tokenizer_name

        return count_tokens, tokenizer_name()
    except Exception:  # tokenizer unavailable: a conservative estimate, named as such
        return (lambda t: int(len(t.split()) * 1.4) + 1), "estimate: 1.4 x words"


def standing_claims(ctx: Context, user_id: str, as_of: str | None, known_at: str | None) -> list[dict[str, object]]:
    sql = ("SELECT c.id, c.text, c.valid_from FROM claims c JOIN pages p ON p.id = c.page_id "
           "WHERE c.user_id = ? AND p.pinned = 1 AND p.archived = 0")
    params: list[object] = [user_id]
    if as_of is None and known_at is None:
        sql += " AND c.valid_until IS NULL"
    if as_of is not None:
        sql += " AND (c.valid_from IS NULL OR c.valid_from <= ?) AND (c.valid_until IS NULL OR c.valid_until > ?)"
        params += [as_of, as_of]
    if known_at is not None:
        sql += " AND c.recorded_at <= ? AND (c.closed_at IS NULL OR c.closed_at > ?)"
        params += [known_at, known_at]
    return ctx.cache.rows(sql + " ORDER BY c.page_id, c.id", params)


def pack(ctx: Context, user_id: str, hits: Sequence[Hit], budget: int, as_of: str | None = None,
         known_at: str | None = None) -> Pack:
    count, name = _counter()
    header = "## What I remember about this user"
    lines: list[str] = [header]
    used = count(header)
    cited: list[str] = []
    seen: set[str] = set()
    items: list[tuple[str, str]] = []
    for row in standing_claims(ctx, user_id, as_of, known_at):
        items.append((str(row["id"]), f"- {row['text']} [{row['id']}]"))
    if hits:
        items.append(("", "## Relevant memories"))
    for h in hits:
        if h.kind == "claim" and h.valid_until is not None and as_of is None and known_at is None:
            continue  # superseded claims never reach a current pack
        date = f" ({h.valid_from[:10]})" if h.kind == "turn" and h.valid_from else ""
        items.append((h.id, f"- {' '.join(h.text.split())}{date} [{h.id}]"))
    for ident, line in items:
        if ident and ident in seen:
            continue
        cost = count(line)
        if used + cost > budget:
            if ident:
                continue
            break
        lines.append(line)
        used += cost
        if ident:
            seen.add(ident)
            cited.append(ident)
    if lines and lines[-1] == "## Relevant memories":
        lines.pop()
    return Pack("\n".join(lines) + "\n", used, budget, name, tuple(cited), tuple(hits))
