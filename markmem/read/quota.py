"""A per-conversation quota in the first results (measured, off by default: bench/results/recall.md).

"How many fitness classes do I attend?" is answered by turns spread over several conversations; the
first hits find the conversations, and each holds more than one answer. Here the conversations of
the first ``top`` hits (a conversation: the turns of one ``add()``, i.e. one valid time) each get
their best ``per`` turns into the first ``n`` results, above global score order; the rest of the
first ``n`` is filled in score order.
"""

from __future__ import annotations

from .fuse import Cand

SCAN = 50  # candidates searched for a conversation's turns


def conversation(c: Cand) -> str | None:
    return c.row.get("valid_at") or c.row.get("valid_from")


def spread(ranked: list[Cand], n: int, top: int, per: int) -> list[Cand]:
    """``ranked`` with each of its first ``top`` hits' conversations given ``per`` turns in the first ``n``."""
    if per <= 0 or len(ranked) <= n:
        return ranked
    wanted = list(dict.fromkeys(k for c in ranked[:top] if (k := conversation(c))))
    chosen: dict[tuple[str, str], Cand] = {}
    for key in wanted:
        for c in [c for c in ranked[:SCAN] if conversation(c) == key][:per]:
            chosen.setdefault(c.key, c)
    chosen = dict(list(chosen.items())[:n])
    for c in ranked:
        if len(chosen) >= n:
            break
        chosen.setdefault(c.key, c)
    head = sorted(chosen.values(), key=lambda c: (-c.score, c.kind, c.id))
    return head + [c for c in ranked if c.key not in chosen]
