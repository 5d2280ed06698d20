"""Whose fact a candidate is, for ``read.facts``: a question about the user leaves out (or puts last)
the claims and turns about someone it does not name ("my dad lives in Aberdeen" for "where does the
user live?"); a transcript's speakers are the subjects of what they say, not third parties."""

from __future__ import annotations

import json
import re
from typing import Any

from ..index import claimbook
from ..index.cache import Cache
from . import echo, live
from .fuse import Cand


def names(asked: str, subject: object, user_id: str) -> bool:
    who = str(subject or user_id).casefold()
    return who != user_id.casefold() and bool(re.search(rf"(?<!\w){re.escape(who)}(?!\w)", asked))


ABOUT_USER = re.compile(r"\b(?:the user|user's|i|i'm|i've|me|my|mine|myself)\b")  # a question about the user


def said_by_others(ranked: list[Cand]) -> set[str]:
    return {c.id for c in ranked if c.kind == "turn" and c.row.get("role") not in (None, "user")}


def others_turns(cache: Cache, user_id: str, ranked: list[Cand], ledger: list[dict[str, Any]], asked: str,
                  present: str, book: claimbook.Book | None = None) -> set[str]:
    """Turns about someone the question does not name: every claim citing them is about that person
    (``others``), or, said by the assistant, they name a value of such a claim ("Swindon is famous
    for its roundabout!" after "my brother lives in Swindon"). Only the claims that cite a candidate
    turn or that such a turn names are looked at."""
    now = live.view(ledger, present, user_id, book)  # the valid claims, indexed once per window
    mine = now.mine
    if not mine:
        return set()
    turns = [c for c in ranked if c.kind == "turn"]
    wanted = {c.id for c in turns}
    citing = {ref: now.cites[ref] for ref in wanted if ref in now.cites}
    said = {c.id: str(c.row.get("content") or "") for c in turns
            if c.row.get("role") not in (None, "user") and c.id not in citing}
    named = echo.echoes(said, now.mine_terms, _mine_firsts(now)) if said else {}
    at = sorted({i for ref in wanted for i in now.mine_at.get(ref, ())})
    near = {mine[i]["id"]: mine[i] for i in at} | {r["id"]: r for r in named.values()}
    theirs = others(cache, user_id, list(near.values()), asked, book)
    if not theirs:
        return set()
    out = {c.id for c in turns if citing.get(c.id) and all(i in theirs for i in citing[c.id])}
    values = {t: r for r in near.values() if r["id"] in theirs for t in r["_terms"] if t not in now.own}
    return out | set(echo.echoes(said, values))


def _mine_firsts(now: live.View) -> dict[str, list[str]]:
    """``echo.first_words(now.mine_terms)``, kept on the view."""
    got: dict[str, list[str]] | None = now.__dict__.get("_mine_firsts")
    if got is None:
        got = now.__dict__["_mine_firsts"] = echo.first_words(now.mine_terms)
    return got


_REL = (r"(?:wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|mum|mom|mother|dad|father|parents|brother|sister|"
        r"son|daughter|kids?|child|children|friend|mate|flatmate|roommate|housemate|colleague|coworker|boss|"
        r"neighbou?r|cousin|aunt|uncle|gran|grandma|grandpa|nan|niece|nephew|in-laws)")
_ANOTHER = re.compile(rf"^\W*(?:(?:my|our)\s+(?:best\s+|older\s+|younger\s+|little\s+|big\s+)?({_REL})\b"
                      rf"(?:\s+(\w+))?|(\w+),?\s+(?:my|our)\s+({_REL})\b|({_REL})['’]s\b)", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|i'll|me|my|myself|we|we're|we've|us|our)\b", re.IGNORECASE)
ASKS_FAMILY = re.compile(rf"\b{_REL}|\b(?:family|relatives|people)\b", re.IGNORECASE)


def about_another(c: Cand, asked: str, memo: dict[str, frozenset[str] | None] | None = None) -> bool:
    """A user's turn about someone else and not the user: it opens on them ("my boyfriend Marco went
    ...", "Priya my flatmate went vegan", "Dad's finally retired!") and says nothing in the first
    person after that; the question names not that person (the caller asks only when the question
    names no relation of the user's: "what diet is the user's boyfriend on?")."""
    if c.kind != "turn" or c.row.get("role") not in (None, "user"):
        return False
    content = str(c.row.get("content") or "")
    named = memo.get(content, _UNSEEN) if memo is not None else _UNSEEN
    if named is _UNSEEN:
        named = _opens_on(content)
        if memo is not None:
            if len(memo) >= MEMO_MAX:
                memo.clear()
            memo[content] = named
    if named is None:
        return False
    return not any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", asked) for w in named)


def _opens_on(content: str) -> frozenset[str] | None:
    """The people a text opens on, casefolded, when it says nothing in the first person after them;
    else None (``about_another``'s reading of the text alone)."""
    text = content.replace("’", "'")
    m = _ANOTHER.match(text)
    if m is None or _FIRST_PERSON.search(text[m.end():]):
        return None
    return frozenset(w.casefold() for w in m.groups() if w)


_UNSEEN = frozenset({"\0"})  # not a name: a text the memo has not read
MEMO_MAX = 8192  # texts whose reading ``about_another``'s memo keeps (the caller's, per claim book)


def others(cache: Cache, user_id: str, claims: list[dict[str, Any]], asked: str,
            book: claimbook.Book | None = None) -> set[str]:
    """Claims about someone the question does not name, and who did not say them: "my dad lives in
    Aberdeen" for "where does the user live?". A transcript's speakers ("Caroline: I moved to ...")
    are the subjects of what they say, not third parties."""
    maybe = [c for c in claims if str(c.get("subject") or user_id) not in (user_id,)
             and str(c.get("subject")).casefold() not in asked]
    if not maybe:
        return set()
    refs = {c["id"]: [r.rsplit("#", 1)[-1] for r in json.loads(c.get("sources") or "[]")] for c in maybe}
    said_by = _said_by(cache, user_id, sorted({r for rs in refs.values() for r in rs}), book)
    return {c["id"] for c in maybe
            if not any(str(c.get("subject")).casefold() in said_by.get(r, set()) for r in refs[c["id"]])}


def _said_by(cache: Cache, user_id: str, ids: list[str], book: claimbook.Book | None) -> dict[str, set[str]]:
    """Raw id -> who said it: the message's speaker, or a transcript label ("Caroline: ..."), casefolded.
    Kept on the claim book (a changed or deleted turn bumps the stamp that replaces the book)."""
    kept: dict[str, set[str]] = {} if book is None else book.__dict__.setdefault("_said_by", {})
    missing = [i for i in ids if i not in kept]
    rows = cache.user(user_id).rows(
        f"SELECT id, speaker, substr(content, 1, 40) AS head FROM raw WHERE id IN ({','.join('?' * len(missing))}) "
        "AND +user_id = ?", [*missing, user_id]) if missing else []
    for r in rows:
        label = str(r["head"]).split(":", 1)[0] if ":" in str(r["head"]) else ""
        kept[r["id"]] = {str(r["speaker"] or "").casefold(), label.strip().casefold()}
    return kept


