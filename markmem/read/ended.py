"""Older turns a later one says are over: "i drive for uber at the moment" after "quit uber, I'm doing
deliveries for DHL now"; "I'm in a book club that meets monthly" after "I left the book club".

The ledger marks a turn stale through the claims citing it (``read.facts``) or the closed values it
names (``read.echo``). When the older statement was never read as a claim, neither applies, and the
turn is shown as if it still held. The user's later turn can still say so in words: an ending verb
("quit", "sold", "left", "cancelled", "gave up", "no more", "took me off", ...) followed by the thing
ended, or the thing followed by an ending ("Sam and I split up", "Pickles died", "mustard was a
phase"). An earlier candidate turn (the user's or the assistant's) that names that thing, and that no
claim valid now cites, is marked ended at the later turn's time (``valid_until``; ``superseded_by``:
a claim valid now that cites the later turn, if any).

Only the candidates of one current search are read (a few dozen short texts; each text's reading is
cached), never the whole history. A question or a hypothetical ("should I quit uber?") ends nothing;
a thing a claim valid now still names ("quit uber" then "back at uber") is not ended; a transcript's
turns ("Caroline: ...") are left alone (their speakers change topics, not facts, in one line).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from functools import lru_cache
from typing import Any

from ..index import claimbook
from ..index.cache import Cache
from . import echo, live
from .fuse import Cand

_CLAUSE = re.compile(r"[,.;!?:()]+|\s(?:but|so|and now|though|then)\s", re.IGNORECASE)
_AFTER = re.compile(
    r"\b(?:quit|sold|left(?= (?:the|my|our) )|gave(?= (?:\w+ ){0,3}up\b)|cancel(?:l?ed)|"
    r"gave up|given up|stopped|dropped|ditched|no more|"
    r"no longer (?:have|own|do|go to|use|take|play|eat|drink)|took me off|came off|got rid of|done with|"
    r"finished with|moved out of|moved away from|switched (?:me |us |him |her )?from|swapped|traded in|"
    r"traded(?= (?:the|my|our) )|closed(?= (?:the|my|our) )|moved from|"
    r"handed in (?:my |our |his |her )?notice (?:at|to)|"
    r"(?:got |been |was |were )?(?:laid off|let go|fired|made redundant) (?:from|by|at)|resigned from|"
    r"broke up with|split up with|rehomed|gave away|no longer (?:at|with)|"
    r"(?:had to |have to )?rehome(?= )|gave(?= (?:the|my|our) (?:\w+ ){0,2}(?:to|away)\b)|"
    r"unsubscribed from|uninstalled|"
    r"(?:i'?m|i am|we'?re|we are) not(?= (?:\w+ ){0,2}any ?more\b)|(?-i:left(?= [A-Z])))\s+"
    r"(?:(?:the|my|our|a|an|that|this|his|her|their)\s+)?", re.IGNORECASE)
_BEFORE = re.compile(
    r"(?:\s+and i (?:split up|broke up|divorced|separated)|\s+(?:has |have |had )?(?:died|passed away)|"
    r"(?:\s+(?:is|was|are|were)|['’]s) (?:done|over|a phase|gone|finished|dead to me)|\s+(?:split up|broke up)|"
    r"\s+(?:has |have |had )?(?:shut|closed)(?: down)?|\s+(?:has |have |had )?retired|"
    r"\s+(?:isn['’]?t|is not|aren['’]?t|are not) (?:my|our) \w+ any ?more|"
    r"\s+(?:is|are|was|were) (?:behind (?:us|me)|history|a thing of the past)|\s+wasn['’]?t for (?:me|us)|"
    r"\s+(?:didn['’]?t|did not) make it|\s+(?:got|was|were|has been|have been|had been) stolen)\b",
    re.IGNORECASE)
_TO = re.compile(r"\s(?:to|for|with|because|bc)\s", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_STOP = frozenset(
    "the a an my our his her their its your this that these those to for of in on at with from by and or but so "
    "i i'm im me we us you he she they it it's is was were be been being am are do did does have has had just "
    "now then too very really lol haha tbh ok okay yeah thing things stuff lot bit all some any more most also "
    "again still even only last next week month year today yesterday morning night day days time back up out "
    "off over going gone get got go went work job home house flat place office school class party meeting town "
    "early late anymore account membership subscription contract plan".split())
_ASKS = re.compile(r"\?\s*$|^\W*(?:should|would|could|can|shall|might|maybe|perhaps|what if|if)\b", re.IGNORECASE)
_SPEAKER = re.compile(r"^[^\s:]{1,30}(?: [^\s:]{1,30})?:\s")
_AGAIN = re.compile(r"\b(?:back (?:at|in|to|with|on|into)|again|re-?join\w*|re-?start\w*|return\w*|re-?sign\w*|"
                    r"now|new|currently|these days)\b", re.IGNORECASE)
LATER = True  # False: only turns said before the ending are marked (the rule before h-stale3)
MIN = 3


def _stem(word: str) -> str:
    w = word.casefold().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    return w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w


# "I used to teach at Westbrook Academy", "I used to be paleo": the thing after one verb (and a preposition);
# "moved my current account from Barclays to Monzo", "went from EDF to Ovo": the thing after "from"
_MORE = re.compile(
    r"\b(?:used to [a-z]+(?:\s+(?:at|in|for|with|on|as))?|"
    r"(?:moved|switched|changed|went|jumped|transferred|swapped|upgraded|ported)"
    r"(?:\s+(?!(?:to|from|back|and|but|i|we)\b)[\w'’]+){0,3}\s+from)\s+"
    r"(?:(?:the|my|our|a|an|that|this|his|her|their)\s+)?", re.IGNORECASE)
MORE = True  # False: only the endings before h-stale4 ("used to ..." and "<verb> ... from X to Y" end nothing);
# ``things`` is memoised: call ``things.cache_clear()`` after changing it


@lru_cache(maxsize=8192)
def things(text: str) -> frozenset[str]:
    """The words of what ``text`` says is over (stemmed, casefolded); empty when it ends nothing."""
    if _SPEAKER.match(text) or _ASKS.search(text):
        return frozenset()
    out: set[str] = set()
    for clause in _CLAUSE.split(text):
        for m in (*_AFTER.finditer(clause), *(_MORE.finditer(clause) if MORE else ())):
            out.update(_content(_WORD.findall(_TO.split(clause[m.end():], 1)[0])[:3]))  # "from X to Y": X
        for m in _BEFORE.finditer(clause):
            out.update(_content(_WORD.findall(clause[:m.start()])[-2:]))
    return frozenset(out)


_TAKES_UP = re.compile(r"\b(?:instead|switch\w*|moved|changed|went|swapped|upgraded|ported|transferred|jumped|"
                       r"now|new|currently|these days|again|back|started|joined|got into|taken up|took up)\b",
                       re.IGNORECASE)


def ends_only(text: str) -> bool:
    """``text`` says something is over and takes nothing up: each clause ends something or names nothing
    ("my road bike got stolen outside the station", "sold my trumpet, I'm done with the brass band"; not
    "dropped Portuguese, switched to Greek", nor "got an e-bike so no more 73 bus for me")."""
    return bool(things(text)) and not _TAKES_UP.search(text) and all(
        things(c) or not [w for w in _content(_WORD.findall(c)) if w not in _NOT] for c in clauses(text))


_NOT = frozenset(("not", "never", "nope", "sadly", "honestly", "anyway"))


def clauses(text: str) -> list[str]:
    """``text`` split where ``things`` splits it (punctuation, "but", "so", ...)."""
    return [c for c in _CLAUSE.split(text) if c and c.strip()]


def runs(text: str, stems: Iterable[str]) -> list[str]:
    """The runs of consecutive words of ``text`` whose stems are in ``stems``, as written, each once
    ("switched broadband from Virgin Media to ...", {"virgin", "media"}: ["Virgin Media"])."""
    want = set(stems)
    out: list[str] = []
    cur: list[tuple[str, bool]] = []  # (word, wanted); a number next to a wanted word joins it ("73 bus", "Pixel 8")
    end = 0

    def flush() -> None:
        if any(hit for _, hit in cur):
            out.append(" ".join(w for w, _ in cur))
        cur.clear()
    for m in re.finditer(r"[^\W_][\w'’-]*", text):
        w = m.group(0)
        hit = _stem(w) in want
        if not (hit or w.isdigit()) or (cur and text[end:m.start()].strip()):
            flush()
        if hit or w.isdigit():
            cur.append((w, hit))
            end = m.end()
    flush()
    return list(dict.fromkeys(out))


def _content(words: Iterable[str]) -> list[str]:
    return [s for w in words if (s := _stem(w)) not in _STOP and len(s) >= MIN]


def content_words(text: str) -> set[str]:
    """The stems of ``text``'s content words (no stop words, none shorter than ``MIN``)."""
    return set(_content(_WORD.findall(text)))


@lru_cache(maxsize=8192)
def words(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in _WORD.findall(text))


def ended(turns: Mapping[str, tuple[str, str, int, str]], claims: Mapping[str, tuple[str, str]],
          cited: Container[str], held: Iterable[str]) -> dict[str, str]:
    """Candidate turns (id -> (text, said at, rowid, role)) a later USER turn or a later claim valid now
    (id -> (its clause, valid from)) among the candidates says are over: id -> the id of that later
    turn or claim (the latest). ``cited``: turns a claim valid now cites (never marked); ``held``: the
    words of the values of claims valid now (never ended), or word -> when the latest such claim began
    (then a word is kept only from endings said no later than that: "back at uber" after "quit uber")."""
    later = enders(turns, claims, held)
    if not later:
        return {}
    out: dict[str, str] = {}
    for rid, (text, said, rowid, _role) in turns.items():
        if rid in cited or _SPEAKER.match(text):
            continue
        mine = words(text)
        for eid, (when, order, gone) in later.items():
            if eid == rid or not gone & mine:
                continue
            if (when, order) <= (said, rowid) and not (LATER and _passing(rid, text, mine, gone, later)):
                continue
            if rid not in out or later[out[rid]][:2] < (when, order):
                out[rid] = eid
    return out


def _passing(rid: str, text: str, mine: frozenset[str], gone: frozenset[str], later: Mapping[str, Any]) -> bool:
    """A turn said after an ending that still names the thing ended, in passing ("a guy from Marlow's
    came in for dinner" after "handed in my notice at Marlow's"): every word of what ended, said by a
    turn that neither ends something itself (it is a change, not an old statement) nor takes the thing
    up again ("back at uber", "rejoined the club", "... now")."""
    return gone <= mine and rid not in later and not _AGAIN.search(text)


_Ender = tuple[str, int, frozenset[str]]


def enders(turns: Mapping[str, tuple[str, str, int, str]], claims: Mapping[str, tuple[str, str]],
           held: Iterable[str] | Mapping[str, str]) -> dict[str, _Ender]:
    """The user's turns and the claims that say something is over: id -> (when, order, the words of
    what is over, less the words ``held`` keeps)."""
    def keep(when: str) -> set[str] | frozenset[str]:
        if isinstance(held, Mapping):
            return {w for w, since in held.items() if since >= when}
        return frozenset(held)
    later: dict[str, _Ender] = {}
    for rid, (text, said, rowid, role) in turns.items():
        if role == "user" and (gone := things(text)) and (gone := gone - keep(said)):
            later[rid] = (said, rowid, gone)
    for cid, (text, since) in claims.items():
        if since and (gone := things(text)) and (gone := gone - keep(since)):
            later[cid] = (since, -1, gone)  # said at the same time as a turn: not later than it
    return later


def held_words(values: Iterable[str]) -> frozenset[str]:
    """The words (stemmed) of the values of the claims valid now."""
    return frozenset(_stem(w) for v in values for w in _WORD.findall(v))


# -- the step of a current search (``read.facts.rerank``) --------------------------------------------
def marks(cache: Cache, ranked: list[Cand], stale: Mapping[str, Any], echoed: Mapping[str, Any],
          ledger: list[dict[str, Any]], at: str, user_id: str, book: claimbook.Book | None) -> dict[str, Any]:
    """Turns a later user turn or claim among the candidates says are over (``ended``): marked ended
    at its time, superseded by the claim (or a claim valid now that cites the turn), if any. Most
    searches stop at the first step: no candidate turn to mark, or nothing among them ending."""
    turns: dict[str, tuple[str, str, int, str]] = {}
    for c in ranked:
        if c.kind != "turn" or c.id in stale or (c.id in echoed and c.row.get("role") != "user"):
            continue
        text = str(c.row.get("content") or "")
        if not _SPEAKER.match(text):  # a transcript's line: never marked here (see the module doc)
            turns[c.id] = (text, str(c.row.get("valid_at") or ""), int(c.row.get("rowid") or 0),
                           str(c.row.get("role") or "user"))
    if not turns:
        return {}
    mine = [c for c in ranked if c.kind == "claim" and str(c.row.get("subject") or user_id) in (user_id, "user")]
    texts = _claim_texts(cache, user_id, [c.id for c in mine], book) if mine else {}
    claims = {c.id: (texts.get(c.id, ""), str(c.row.get("valid_from") or "")) for c in mine}
    if not any(things(t) for t, _, _, role in turns.values() if role == "user") and \
            not any(things(t) for t, _ in claims.values()):
        return {}
    now = live.view(ledger, at, user_id, book)
    held: dict[str, str] | None = getattr(now, "_held_since", None)
    if held is None:  # kept on the view: the same while the valid claims are
        held = held_since((str(r.get("value") or ""), str(r.get("valid_from") or "")) for r in ledger
                          if echo.active(r, at))
        now._held_since = held  # type: ignore[attr-defined]
    later = enders(turns, claims, held)
    wanted = {c.id for c in mine}
    values = {str(r["id"]): str(r.get("value") or "") for r in ledger if r["id"] in wanted} if later else {}
    over = _claims_over(mine, values, later, now.cites)
    out: dict[str, Any] = {cid: _mark(eid, claims, turns, now.cites) for cid, eid in over.items()}
    cited = {ref for ref, ids in now.cites.items() if any(i not in over for i in ids)}
    for rid, closer in ended(turns, claims, cited, held).items():
        if rid not in echoed:
            out[rid] = _mark(closer, claims, turns, now.cites)
    return out


def _mark(closer: str, claims: Mapping[str, tuple[str, str]], turns: Mapping[str, tuple[str, str, int, str]],
          cites: Mapping[str, list[str]]) -> dict[str, Any]:
    if closer in claims:
        return {"valid_until": claims[closer][1], "superseded_by": closer}
    return {"valid_until": turns[closer][1], "superseded_by": next(iter(cites.get(closer, ())), None)}


def _claims_over(mine: list[Cand], values: Mapping[str, str], later: Mapping[str, _Ender],
                 cites: Mapping[str, list[str]]) -> dict[str, str]:
    """The user's claims valid now whose value a later turn or claim among the candidates says is over
    ("my dentist is dr patel" then "changed dentist, ... dr patel retired"): claim id -> that ender.
    Only the value's words count (a clause holding several facts is not ended by one of them)."""
    out: dict[str, str] = {}
    for c in mine:
        since = str(c.row.get("valid_from") or "")
        value = _content(_WORD.findall(values.get(c.id, "")))
        if not since or not value or c.row.get("valid_until"):
            continue
        for eid, (when, _order, gone) in later.items():
            if when > since and gone & set(value) and c.id not in cites.get(eid, ()) and eid != c.id:
                if c.id not in out or later[out[c.id]][0] < when:
                    out[c.id] = eid
    return out


def held_since(values: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Word (stemmed) -> when the latest claim valid now holding it in its value began."""
    out: dict[str, str] = {}
    for value, since in values:
        for w in _WORD.findall(value):
            if out.get(k := _stem(w), "") < since:
                out[k] = since
            else:
                out.setdefault(k, since)
    return out


def _claim_texts(cache: Cache, user_id: str, ids: list[str], book: claimbook.Book | None) -> dict[str, str]:
    """Claim id -> its clause, for ``ids``; kept on the claim book (a new book whenever a claim changes),
    so a claim's text is read once, not at every search."""
    kept: dict[str, str] = getattr(book, "_texts", None) or {}
    missing = [i for i in ids if i not in kept]
    if missing:
        rows = cache.user(user_id).rows(
            f"SELECT id, text FROM claims WHERE id IN ({','.join('?' * len(missing))}) AND +user_id = ?",
            [*missing, user_id])
        kept.update({str(r["id"]): str(r["text"] or "") for r in rows})
        if book is not None:
            book._texts = kept  # type: ignore[attr-defined]
    return kept
