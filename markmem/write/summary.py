"""A compile commit's subject and trailers, readable in ``git log`` and free of user text.

    compile: bob lives_in, job superseded; 3 added (lives_in, job, pet)

Names only what is not the user's words: user ids (already the folder names), predicates from the
fixed vocabulary (any other predicate, e.g. an open slot such as "seat preference" or one an LLM made
up, is named by its page's type: ``other preference``, ``other fact``), and counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model import Page
from .resolve import PAGE_TYPES, VOCAB, normalise_predicate

SHOW = 3  # names listed before "+N"


def compile_message(users: Sequence[str], pages: Iterable[Page], stamp: str, entries: int, added: int,
                    reinforced: int, to_review: int) -> tuple[str, dict[str, str]]:
    """``(subject, extra trailers)`` for one compiled batch; ``stamp`` is the batch's recorded_at."""
    new: list[str] = []
    superseded: list[str] = []
    closed: list[str] = []
    for page in pages:
        for c in page.claims:
            name = _predicate(c.predicate, page.type)
            if c.recorded_at == stamp:
                new.append(name)
            if c.closed_at == stamp:  # also a claim said and replaced within this batch
                (superseded if c.superseded_by else closed).append(name)
    parts = [f"{_names(superseded)} superseded"] if superseded else []
    parts += [f"{_names(closed)} closed"] if closed else []
    parts += [f"{added} added ({_names(new)})"] if added and new else [f"{added} added"] if added else []
    parts += [f"{reinforced} reinforced"] if reinforced else []
    parts += [f"{to_review} to review"] if to_review else []
    what = "; ".join(parts) or f"{entries} {'entry' if entries == 1 else 'entries'}, no new facts"
    trailers = {"Markmem-Predicates": ",".join(_unique(new + superseded + closed))} if new or superseded or closed \
        else {}
    if superseded:
        trailers["Markmem-Superseded"] = ",".join(_unique(superseded))
    who = f"u/{users[0]}" if len(users) == 1 else f"{len(users)} users;"
    return f"compile: {who} {what}", trailers


def _predicate(predicate: str, page_type: str) -> str:
    name = normalise_predicate(predicate)
    return name if name in VOCAB else f"other {page_type}" if page_type in PAGE_TYPES else "other"


def _unique(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _names(names: Sequence[str]) -> str:
    shown = _unique(names)
    more = len(shown) - SHOW
    return ", ".join(shown[:SHOW]) + (f" +{more}" if more > 0 else "")
