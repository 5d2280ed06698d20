"""Turns that repeat a value memory knows to be past: "Bruges in winter sounds magical!" (the
assistant, in January) after the user moved from Bruges to Ghent in July.

No claim cites such a turn (the assistant's turns, chit-chat with a place name in it, a friend's
opinion of the old town), so ``read.facts`` cannot tell from the ledger that it is stale. It can
tell from its words: the turn names the value of a claim that was closed (superseded or ended) by
the time of the search, and that value is not the value of any claim still valid then (changing
back to an earlier value makes it current again). Such a turn is marked like a stale one
(``valid_until``, ``superseded_by``: the closed claim's) and shown after the turns that state what
is true now.

A value is matched by its words as a phrase (leading articles and prepositions dropped: "on
Wednesday" is matched as "wednesday") and, for a short name, by each capitalised word of it
("Fernhill Insurance" is also "Fernhill"); whole words, case-insensitive. A name that is a
claim's subject or a transcript speaker is never a value to mark (it names a person).
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..ids import now
from ..index import claimbook
from ..index.cache import Cache
from ..write.extract_topic import on_topic, topic_words

_LEAD = frozenset("a an the my our his her their your its some on in at to for of about from with by".split())
_GENERIC = frozenset("the and this that with from home work city town street road house flat the new old "
                     "monday tuesday wednesday thursday friday saturday sunday".split())
_WORD = re.compile(r"[^\W_]+(?:['’.&-][^\W_]+)*", re.UNICODE)
_TOKEN = re.compile(r"\w+")
MIN_TERM = 3


def ledger(cache: Cache, user_id: str, book: claimbook.Book | None) -> list[dict[str, Any]]:
    """The user's live (not archived) claims with their values: from the book, or with SQL. Each row
    also holds, read once (a book's rows are kept between searches), ``_refs``: the raw ids it
    cites, ``_closers``: those of the turns that ended it, ``_terms``: its value's terms."""
    kept: list[dict[str, Any]] | None = getattr(book, "_echo_rows", None)
    if kept is not None:
        return kept
    rows = list(book.by_id.values()) if book is not None else cache.user(user_id).rows(
        f"SELECT {claimbook.COLS} FROM claims c WHERE c.user_id = ? AND c.archived = 0 ORDER BY c.rowid", [user_id])
    if book is not None:
        book._echo_rows = rows  # type: ignore[attr-defined]
    fresh = [r for r in rows if "_refs" not in r]
    if fresh:  # each JSON column parsed in one call: one per row was a third of a fresh process's first search
        sources = claimbook.json_arrays([r["sources"] for r in fresh])
        closers = claimbook.json_arrays([r.get("closed_by") for r in fresh])
        for r, refs, closed in zip(fresh, sources, closers, strict=True):
            r["_refs"] = [str(x).rsplit("#", 1)[-1] for x in refs]
            r["_closers"] = [str(x).rsplit("#", 1)[-1] for x in closed]
            r["_terms"] = terms(str(r.get("value") or ""))
        if cache is not None and isinstance(book, claimbook.Book) and len(fresh) == len(rows):
            # saved with these fields (and the state now): the next fresh process reads them back
            _save_ready(cache, user_id, book, rows)
    elif isinstance(book, claimbook.Book) and book.extra:
        _restore(book)
    return rows


def _save_ready(cache: Cache, user_id: str, book: claimbook.Book, rows: list[dict[str, Any]]) -> None:
    """The book saved ready (``claimbook.save_ready``) with, computed when the file is written (as the
    search about to use them would), the ledger's state now and ``read.turnmarks.predicates``."""
    from . import turnmarks  # imports this module: both are loaded by the time a search asks

    def extra() -> dict[str, Any]:
        return {"echo_state": _plain(state(rows, now(), book)), "preds": turnmarks.predicates(cache, user_id, book)}

    claimbook.save_ready(cache, user_id, book, READY_KEYS, (sys.modules[__name__], turnmarks), extra)


def _restore(book: claimbook.Book) -> None:
    """What ``_save_ready`` saved, kept on ``book`` as ``state`` and ``turnmarks.predicates`` keep it."""
    kept_state = _state_of(book.extra.pop("echo_state", None))
    if kept_state is not None and getattr(book, "_echo_state", None) is None:
        book._echo_state = kept_state  # type: ignore[attr-defined]  # state() checks its window
    preds = book.extra.pop("preds", None)
    if isinstance(preds, dict) and getattr(book, "_echo_preds", None) is None:
        book._echo_preds = preds  # type: ignore[attr-defined]


READY_KEYS = ("_refs", "_closers", "_terms")  # what ``ledger`` adds to each row, in that order


def active(row: Mapping[str, Any], at: str) -> bool:
    return (row["valid_until"] is None or row["valid_until"] > at) and \
        (row["valid_from"] is None or row["valid_from"] <= at)


@lru_cache(maxsize=8192)
def terms(value: str) -> tuple[str, ...]:
    """The phrases a value is recognised by (casefolded)."""
    words = _WORD.findall(value)
    while words and words[0].casefold() in _LEAD:
        words = words[1:]
    if not words:
        return ()
    out = [" ".join(w.casefold() for w in words)]
    if len(words) <= 4:
        out += [w.casefold() for w in words
                if w[:1].isupper() and len(w) >= 4 and w.casefold() not in _GENERIC]
    return tuple(dict.fromkeys(t for t in out if len(t) >= MIN_TERM))


def closed_terms(claims: Iterable[Mapping[str, Any]], at: str, names: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """Each term of a value closed by ``at`` and held by no claim valid at ``at`` -> the closed claim
    (the latest closed, when several share it)."""
    return _without(_closed(claims, at), names)


def _without(closed: dict[str, dict[str, Any]], names: Iterable[str]) -> dict[str, dict[str, Any]]:
    skip = {str(n).casefold() for n in names if n}
    return {t: row for t, row in closed.items() if t not in skip and not set(t.split()) <= skip} if skip else closed


def _closed(claims: Iterable[Mapping[str, Any]], at: str) -> dict[str, dict[str, Any]]:
    live: set[str] = set()
    closed: dict[str, dict[str, Any]] = {}
    for row in claims:
        value = str(row.get("value") or "")
        if not value:
            continue
        found = row["_terms"] if "_terms" in row else terms(value)
        if active(row, at):
            live.update(found)
            live.update(_words(value))
        elif row["valid_until"] is not None and row["valid_until"] <= at:
            for t in found:
                if t not in closed or str(closed[t]["valid_until"]) < str(row["valid_until"]):
                    closed[t] = dict(row)
    return {t: row for t, row in closed.items() if t not in live and not set(t.split()) <= live}


@dataclass
class State:
    """What the ledger says at one time: the turns a valid claim cites or that ended a claim, and
    the closed values' terms. The same for every time between two of the claims' boundaries."""

    cited: set[str]
    closed: dict[str, dict[str, Any]]
    subjects: set[str]
    lo: str
    hi: str | None


def _plain(got: State) -> dict[str, Any]:
    """A state's fields (marshal-able), to save with a ready book."""
    return {"cited": got.cited, "closed": got.closed, "subjects": got.subjects, "lo": got.lo, "hi": got.hi}


def _state_of(saved: Any) -> State | None:
    """The state ``_plain`` saved, or None when it is not of that shape."""
    try:
        got = State(saved["cited"], saved["closed"], saved["subjects"], saved["lo"], saved["hi"])
    except (KeyError, TypeError):
        return None
    ok = isinstance(got.cited, set) and isinstance(got.closed, dict) and isinstance(got.subjects, set) \
        and isinstance(got.lo, str) and (got.hi is None or isinstance(got.hi, str))
    return got if ok else None


def state(ledger: list[dict[str, Any]], at: str, book: claimbook.Book | None) -> State:
    """The ledger's state at ``at``, kept on the claim book while ``at`` stays between the same two
    boundaries (a claim's ``valid_from`` or ``valid_until``) and the book is unchanged."""
    kept: State | None = getattr(book, "_echo_state", None)
    if kept is not None and kept.lo <= at and (kept.hi is None or at < kept.hi):
        return kept
    bounds = {b for r in ledger for b in (r["valid_from"], r["valid_until"]) if b}
    cited = {ref for r in ledger if active(r, at) for ref in r["_refs"]} | \
        {ref for r in ledger for ref in r["_closers"]}
    got = State(cited, _closed(ledger, at), {str(r.get("subject") or "") for r in ledger},
                max((b for b in bounds if b <= at), default=""), min((b for b in bounds if b > at), default=None))
    if book is not None:
        book._echo_state = got  # type: ignore[attr-defined]  # dropped with the book when its stamp changes
    return got


def without(closed: dict[str, dict[str, Any]], names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``closed`` less the terms that name a person (a claim's subject, a speaker)."""
    return _without(closed, names)


def value_words(value: str) -> frozenset[str]:
    """The words of a value, casefolded (a possessive 's dropped too: "Marlow's" is "marlow")."""
    return frozenset(w[:-2] if w.endswith(("'s", "’s")) else w for w in _words(value)) | _words(value)


@lru_cache(maxsize=8192)
def _words(value: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in _WORD.findall(value))


@lru_cache(maxsize=4096)
def _pattern(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(term)}(?!\w)")


def named(low: str, term: str) -> bool:
    """Whether the casefolded text ``low`` names ``term`` (whole words)."""
    return bool(_pattern(term).search(low))


def echoes(texts: Mapping[str, str], closed: Mapping[str, dict[str, Any]],
           firsts: Mapping[str, list[str]] | None = None) -> dict[str, dict[str, Any]]:
    """The turns (id -> text) that name a closed value: id -> the closed claim named (the latest).
    ``firsts``: ``first_words(closed)``, when the caller keeps it."""
    if not closed:
        return {}
    if firsts is None:
        firsts = first_words(closed)
    out: dict[str, dict[str, Any]] = {}
    few = len(firsts) <= FEW_FIRSTS
    for rid, text in texts.items():
        low = text.casefold().replace("\u2019", "'")
        found = [closed[t] for w in (_named_firsts(low, firsts) if few else set(_TOKEN.findall(low)) & firsts.keys())
                 for t in firsts[w] if _pattern(t).search(low)]
        if found:
            out[rid] = max(found, key=_latest)  # ties by id: set order varies with PYTHONHASHSEED
    return out


FEW_FIRSTS = 64  # up to this many first words, each is looked for in a turn (else the turn's words are listed)


def _named_firsts(low: str, firsts: Mapping[str, list[str]]) -> list[str]:
    """The first words (whole ``\\w+`` runs) that are words of ``low``: the words of ``low`` that are
    keys of ``firsts``, without listing every word of ``low`` (a substring test rules out most)."""
    return [w for w in firsts if w in low and _pattern(w).search(low)]


def first_words(closed: Mapping[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The terms of ``closed`` by their first word (what ``echoes`` looks a turn's words up in)."""
    firsts: dict[str, list[str]] = {}
    for t in closed:
        firsts.setdefault(_TOKEN.findall(t)[0], []).append(t)
    return firsts


# -- older turns on the topic of a later one-valued fact -------------------------------------------
# The ledger misses changes it could not read; the turn that stated the old value is then cited by no
# claim and names no closed value ("I start work at 9am", later "new hours, I start at 7:30 now").
# Such a turn, said before the start of a one-valued fact the user holds now, on the same topic (a
# word of the fact's slot) and not naming that fact's value, is marked as replaced by that fact.
def one_valued(ledger: list[dict[str, Any]], preds: Mapping[str, str], user_id: str, at: str) -> list[dict[str, Any]]:
    """The user's own claims valid at ``at`` whose slot holds one value then (each with ``_pred``).

    The answer changes only where ``at`` crosses a claim's ``valid_from`` or ``valid_until``, so for
    a ledger and predicates kept between searches (the claim book's) it is kept per window between
    two such boundaries (``_ONE_VALUED``; read-only to callers)."""
    key = (id(ledger), id(preds), user_id)
    kept = _ONE_VALUED.get(key)
    if kept is not None and kept[0] is ledger and kept[1] is preds:
        bounds = kept[2]
        window = bisect_right(bounds, at)
        if kept[3] == window:
            return kept[4]
    else:
        bounds = sorted({v for r in ledger for v in (r["valid_from"], r["valid_until"]) if isinstance(v, str)})
        window = bisect_right(bounds, at)
    got = _one_valued(ledger, preds, user_id, at)
    _ONE_VALUED[key] = (ledger, preds, bounds, window, got)
    while len(_ONE_VALUED) > 16:
        _ONE_VALUED.pop(next(iter(_ONE_VALUED)))
    return got


_ONE_VALUED: dict[tuple[int, int, str], tuple[Any, ...]] = {}  # emptied by an erasure (erase.scrub.TEXT_DICTS)


def _one_valued(ledger: list[dict[str, Any]], preds: Mapping[str, str], user_id: str, at: str) -> list[dict[str, Any]]:
    live = [r for r in ledger if active(r, at) and str(r.get("subject") or user_id) in (user_id, "user")
            and preds.get(str(r["id"]))]
    count: dict[str, int] = {}
    for r in live:
        count[preds[str(r["id"])]] = count.get(preds[str(r["id"])], 0) + 1
    return [{**r, "_pred": preds[str(r["id"])]} for r in live if count[preds[str(r["id"])]] == 1 and r.get("value")]


def newer_on_topic(turns: Mapping[str, tuple[str, str, int]], facts: list[dict[str, Any]],
                   rowids: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """Turns (id -> (text, said at, rowid)) said before a one-valued fact (``one_valued``) began, on its
    topic, not naming its value: id -> that fact (the latest). ``rowids``: raw id -> rowid, to order
    turns said at the same time as the fact's source."""
    out: dict[str, dict[str, Any]] = {}
    for rid, (text, said, rowid) in turns.items():
        low = text.casefold().replace("\u2019", "'")
        words = set(_TOKEN.findall(low))
        for fact in facts:
            start = str(fact.get("valid_from") or "")
            if not start or said > start or rid in fact["_refs"]:
                continue
            if said == start and not any(rowids.get(ref, -1) > rowid for ref in fact["_refs"]):
                continue  # said together: only a turn before the fact's own source is older
            if not on_topic(words, topic_words(fact["_pred"])) or _names(low, words, fact):
                continue
            if rid not in out or str(out[rid]["valid_until"]) < start:
                out[rid] = {**fact, "valid_until": start, "superseded_by": fact["id"]}  # replaced when it began
    return out


def _names(low: str, words: set[str], fact: Mapping[str, Any]) -> bool:
    value = str(fact.get("value") or "")
    found = fact["_terms"] if "_terms" in fact else terms(value)
    return any(_pattern(t).search(low) for t in found) or bool(_words(value) & words - _GENERIC - _LEAD)


def _latest(row: Mapping[str, Any]) -> tuple[str, str]:
    """The later-closed claim; between two closed at once, the one with the larger id (any fixed order)."""
    return str(row["valid_until"]), str(row.get("id") or "")


# -- the closed values a text names (``Hit.stale``) ---------------------------------------------------
# A turn or claim that still holds ("we moved from Malmo to Lund", "sold the Golf, we share my wife's
# Skoda", a claim "upgraded from the Pixel 6 to an iPhone 15") may name a value the ledger has closed.
# The hit itself is not past, so it gets no ``valid_until``; it lists what it names that is.
def named_closed(text: str, closed: Mapping[str, dict[str, Any]],
                 firsts: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    """Every closed claim (``closed``: term -> the latest closed claim) whose value ``text`` names, once
    per claim, in the order named: ``{"named": the words as written, "value", "claim", "turn": None,
    "valid_until", "superseded_by"}``; a term inside a longer named term of the same claim counts once."""
    if not closed:
        return []
    low = text.casefold().replace("\u2019", "'")
    spans: list[tuple[int, int, str]] = []
    for w in (_named_firsts(low, firsts) if len(firsts) <= FEW_FIRSTS else set(_TOKEN.findall(low)) & firsts.keys()):
        for t in firsts[w]:
            m = _pattern(t).search(low)
            if m:
                spans.append((m.start(), m.end(), t))
    out: dict[str, dict[str, Any]] = {}
    for start, end, t in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        row = closed[t]
        cid = str(row.get("id") or "")
        if cid in out:
            continue
        said = text[start:end] if len(low) == len(text) else t
        out[cid] = {"named": said, "value": row.get("value"), "claim": cid, "turn": None,
                    "valid_until": row.get("valid_until"), "superseded_by": row.get("superseded_by")}
    return list(out.values())
