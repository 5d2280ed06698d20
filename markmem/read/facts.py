"""Fact-first ranking for current searches: what is true now is not hidden behind what was said.

After fusion, in a current search (no ``as_of``/``known_at``), the fused order is kept except:

* a turn whose every extracted claim has since been closed is **stale**: it is marked
  (``valid_until``, ``superseded_by``: the claim that replaced it) and the claim now current at the
  end of that chain is put right before it (brought in if fusion had not found it). "Where do I
  live?" matches "I live in Lisbon" (said last year); the answer is "I moved to Porto";
* chit-chat ("ok sounds good") and a claim about someone the question does not name ("my dad
  lives in Aberdeen" for "where does the user live?") go last; a transcript's speakers
  ("Caroline: I moved to ...") are the subjects of what they say, not third parties;
* what states nothing (chit-chat, a question, a hypothetical such as "what if we moved to
  Brussels", the assistant's turn) or is about someone else is left out when only the cosine
  relates it to the question (no word of the question is in it).

Stale turns stay where fusion put them (marked): a question about the past still finds them. On
LoCoMo this keeps any@5 at the level of plain fusion (``bench/locomo.py``).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from ..index import claimbook
from ..index.cache import Cache
from . import cited, echo, ended, kinds, turnmarks, whose
from .fuse import Cand
from .kinds import low_content
from .said import asks_assistant

__all__ = ["low_content", "mark", "rerank", "utc_now"]


def utc_now() -> str:
    """``ids.now()``'s string (``ids.format_time`` of the present), formatted without ``strftime``."""
    d = datetime.now(timezone.utc)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}.{d.microsecond:06d}Z"


def rerank(cache: Cache, user_id: str, ranked: list[Cand], query: str = "",
           stamp: claimbook.Stamp | None = None, shown: int | None = None) -> list[Cand]:
    """Fused candidates, fact first (see the module docstring). Marks go in ``Cand.row``. ``stamp``:
    the user's stamp as the search read it (``fts.Snapshot.vectors``), for the claim book. ``shown``:
    how many of the result the caller shows (its ``top_k``; None: all): only those get ``row["stale"]``."""
    present = utc_now()
    # not lazy: the ledger below reads every live claim anyway, so the first search loads the book
    # for about what reading the ledger with SQL costs, and the next ones find it
    book = claimbook.book(cache, user_id, stamp) if claimbook.ENABLED else None
    cited.hydrate(cache, user_id, ranked, book)
    stale = cited.citing(cache, user_id, [c.id for c in ranked if c.kind == "turn"], present, book)
    ledger = echo.ledger(cache, user_id, book)
    echoed = turnmarks.naming_closed(ranked, stale, ledger, present, book)
    echoed.update(turnmarks.topical(cache, user_id, ranked, stale, echoed, ledger, present, book))
    echoed.update(ended.marks(cache, ranked, stale, echoed, ledger, present, user_id, book))
    cited.mark(ranked, stale, echoed)
    if REPLACED_NAMES or OLDER_NAMED or LAPSED:  # the steps of h-stale3 (read.turnmarks), each with its switch
        known = turnmarks.known(ledger, ranked, present, book)
        more = turnmarks.naming_replaced(ranked, stale, echoed, *known) if REPLACED_NAMES else {}
        if OLDER_NAMED and whose.ABOUT_USER.search(query.casefold()) and not asks_assistant(query):
            one = echo.one_valued(ledger, turnmarks.predicates(cache, user_id, book), user_id, present)
            more.update(turnmarks.older_named(ranked, stale, {**echoed, **more}, *known, one))
        if LAPSED:
            more.update(turnmarks.lapsed(ranked, stale, {**echoed, **more}, known[0], present))
        cited.mark(ranked, {}, more)
        echoed.update(more)
    have = {c.id for c in ranked if c.kind == "claim"}
    marked = set(echoed)
    chains = {c.row["superseded_by"]: c for c in ranked
              if (c.id in stale or c.id in marked) and c.row.get("superseded_by")}
    memo = None if book is None else echo.state(ledger, present, book).__dict__.setdefault("_succ", {})
    found = cited.successors(cache, user_id, chains, present, book, memo)
    others_said = whose.said_by_others(ranked)
    echoed = {k: v for k, v in echoed.items() if k in others_said}  # a user's own turn: marked in place
    asked = query.casefold()
    drop = bool(whose.ABOUT_USER.search(asked))
    asked_back = asks_assistant(query)
    others_asked = None if not drop else bool(whose.ASKS_FAMILY.search(asked))  # False: about the user alone
    others = whose.others(cache, user_id, [c.row for c in ranked if c.kind == "claim"], asked, book)
    others |= whose.others_turns(cache, user_id, ranked, ledger, asked, present, book)
    claims = {c.id: c for c in ranked if c.kind == "claim"}
    opens = None if book is None else book.__dict__.setdefault("_opens_on", {})  # a text's reading, per book
    out: list[Cand] = []
    past: list[Cand] = []
    late: list[Cand] = []
    for c in ranked:
        if c.kind == "claim":
            if c.id not in claims:
                continue  # already moved up, before the turn it replaced
            claims.pop(c.id)
        if others_asked is False and c.kind == "turn" and whose.about_another(c, asked, opens):
            continue  # "my boyfriend Marco went on a carnivore diet" for "what is the user's diet?"
        if c.id in stale or c.id in marked:  # its successor first, then the turn itself (marked)
            out += cited.successor(c, found, claims, have, bring=c.id in stale or c.id in echoed)
            (past if c.id in echoed else out).append(c)  # another's turn naming an old value: after the facts
        elif c.id in others:
            if kinds.lexical(c) and not drop:
                late.append(c)  # else: left out (a question about the user leaves other people's facts out)
        elif c.kind == "turn" and low_content(str(c.row.get("content") or "")):
            if kinds.lexical(c):
                late.append(c)  # else: only the cosine relates it: left out
        elif c.kind == "turn" and kinds.not_a_statement(c) and not kinds.lexical(c):
            continue  # a question, a hypothetical or the assistant's turn that shares no word with the question
        elif drop and not asked_back and kinds.suggestion(c):
            continue  # the assistant's suggestion ("How about Miso?") states no fact of the user
        else:
            out.append(c)
    if drop:  # "where does the user's wife work?": the wife's facts before the user's own
        named = [c for c in out if c.kind == "claim" and whose.names(asked, c.row.get("subject"), user_id)]
        out = named + [c for c in out if c not in named]
    what = bool(WHAT_HOLDS and _WHAT.match(asked))
    out = _unmarked_first(out, SWAP_WITHIN, asking=drop and not asked_back, what=what)
    if LATER_WORD and drop and not asked_back and what:
        out = _later_word_first(out, asked, SWAP_WITHIN, book)
    if RESTATED and drop and not asked_back:
        out = _moved_on(cache, user_id, out, asked, ledger, present, book, shown)
    return stale_named(cache, user_id, out + past + late, ledger, present, book, shown)


def _moved_on(cache: Cache, user_id: str, out: list[Cand], asked: str, ledger: list[dict[str, Any]], at: str,
              book: claimbook.Book | None, shown: int | None) -> list[Cand]:
    """What the user said and later moved on from, though the ledger still holds it (``_restated``): listed
    in ``Hit.stale``, with the earlier candidates naming it (the assistant's "Wednesday swims, nice"); when it
    is the first candidate, the later statement of the first five takes its place."""
    by_id = book.by_id if book is not None else {str(r["id"]): r for r in ledger}
    one = {str(r["id"]) for r in echo.one_valued(ledger, turnmarks.predicates(cache, user_id, book), user_id, at)}
    texts = ended._claim_texts(cache, user_id, [c.id for c in out[:STALE_WITHIN]
                                                if c.kind == "claim" and not _text(c)], book)
    moved = _restated(out, asked, user_id, one, at, shown, by_id, texts, book)
    if not moved:
        return out
    _echoes_of(out[: shown or SWAP_WITHIN], moved, texts)
    if out[0].id in moved and (t := moved[out[0].id][0]) in out[:SWAP_WITHIN]:
        return [t, *(c for c in out if c is not t)]
    return out


# a later statement that tells of a change, not a repeat: a word of time contrast or of changing
_NOW = re.compile(r"\b(?:now|these days|nowadays|any ?more|instead|no longer|switch\w*|changed|moved|onto|new)\b",
                  re.IGNORECASE)


def _restated(out: list[Cand], asked: str, user_id: str, one: set[str], at: str, shown: int | None,
              by_id: Any, texts: dict[str, str], book: claimbook.Book | None) -> dict[str, tuple[Cand, frozenset[str]]]:
    """The user's statements among the shown candidates (the first ``shown``) that a LATER statement of
    the user among the first ``STALE_WITHIN`` moved on from, though the ledger still holds them: id ->
    (that later statement, the words of what is past). Each gets ``row["stale"]``.

    The older one is a claim of a slot holding one value then (``echo.one_valued``: its value is what is
    past; "swimming club is on Wednesday evenings for me") or, with ``TURNS_RESTATED``, a user's turn no
    claim valid now cites (its names and numbers are: "our energy comes from British Gas"). The later one,
    said after it and by ``at``, a statement (not a question, a plan, chit-chat, a transcript line), tells
    of a change (``_NOW``: "now", "these days", "instead", "switched", "changed", "moved", "new", ...),
    shares a content word with the older one (the same thing: "the pool changed the club night to Mondays
    from this term"; a word of the question alone is not enough: "I don't like sushi anymore" is not about
    "I moved to Porto"), brings a word of its own, and does not say the older value again unless as over
    (``ended.things``). A many-valued slot is never read so ("adopted a second dog" keeps the first)."""
    head = out[: shown or SWAP_WITHIN]
    moved: dict[str, tuple[Cand, frozenset[str]]] = {}
    q = ended.content_words(asked) - {"user"}
    for s in head:
        if _past(s) or s.row.get("stale") or not _users(s, user_id):
            continue
        t1 = _when(s)
        text = _text(s) or texts.get(s.id, "")
        if s.kind == "claim":
            if s.id not in one:
                continue
            value = str((by_id.get(s.id) or {}).get("value") or "")
            vwords = ended.content_words(value) or _toks(value)
        else:
            if not TURNS_RESTATED or kinds.states_nothing(s) or ended._SPEAKER.match(text) or (
                    book is not None and any(r.get("valid_until") is None for r in book.cite(s.id))):
                continue
            value = ""
            vwords = {ended._stem(w) for w in _PROPER.findall(text) if w not in _SELF}
        if not t1 or not text or not vwords:
            continue
        skey = ended.content_words(text)
        for t in out[:STALE_WITHIN]:
            if t is s or not _users(t, user_id) or _past(t) or (t.kind == "turn" and kinds.states_nothing(t)):
                continue
            tt = _text(t) or texts.get(t.id, "")
            if not tt or low_content(tt) or ended._SPEAKER.match(tt) or not (t1 < _when(t) <= at):
                continue
            if not _NOW.search(tt):
                continue
            mine = ended.content_words(tt)
            if not (mine & skey):
                continue  # not about the same thing (a word of the question alone is not enough)
            said = _toks(tt)
            if s.kind == "claim" and (said & vwords) - ended.things(tt):
                continue  # it says the value again
            if not (mine - skey - q):
                continue  # nothing new
            # a turn: its names of which one at least is not said again ("British Gas", then "our gas")
            named = [value] if value else [r for r in ended.runs(text, vwords) if _toks(r) - said]
            if not named:
                continue
            s.row = {**s.row, "stale": tuple(
                {"named": n, "value": value or None, "claim": s.id if s.kind == "claim" else None,
                 "turn": t.id if t.kind == "turn" else None, "valid_until": _when(t),
                 "superseded_by": t.id if t.kind == "claim" else None} for n in named)}
            moved[s.id] = (t, frozenset(vwords))
            break
    return moved


def _toks(text: str) -> set[str]:
    """The stemmed words of ``text`` and its numbers ("42", "7:40")."""
    return set(ended.words(text)) | set(_NUM.findall(text))


_NUM = re.compile(r"(?<![\w:.])\d[\d:.]*\w*")
_PROPER = re.compile(r"(?<![\w'’])(?:[A-Z][\w'’-]*|\d[\w:.]*)")  # a turn's names and numbers
_SELF = frozenset(("I", "I'm", "I’m", "I've", "I’ve", "I'd", "I’d", "I'll", "I’ll"))


def _echoes_of(head: list[Cand], moved: dict[str, tuple[Cand, frozenset[str]]], texts: dict[str, str]) -> None:
    """The candidates said by the time of the later statement (the user's or the assistant's: "Wednesday
    swims, nice midweek break.") that name what a moved-on statement held list it in ``row["stale"]`` too."""
    for c in head:
        if c.id in moved or _past(c):
            continue
        text = _text(c) or texts.get(c.id, "")
        if not text or ended._SPEAKER.match(text):
            continue
        mine = _toks(text)
        for sid, (t, vw) in moved.items():
            if c is t or _when(c) > _when(t) or not (mine & vw):
                continue
            runs = ended.runs(text, mine & vw)
            if runs:
                c.row = {**c.row, "stale": (*c.row.get("stale", ()), *(
                    {"named": r, "value": None, "claim": sid if sid.startswith("c-") else None,
                     "turn": t.id if t.kind == "turn" else None, "valid_until": _when(t),
                     "superseded_by": None} for r in runs))}


def _when(c: Cand) -> str:
    return str(c.row.get("valid_at") or c.row.get("valid_from") or "")


def _past(c: Cand) -> bool:
    return bool(c.row.get("valid_until") or c.row.get("superseded_by") or c.row.get("starts"))


def _later_word_first(out: list[Cand], asked: str, within: int, book: claimbook.Book | None) -> list[Cand]:
    """A first candidate that is a user's turn no claim cites (the ledger never read it: "I'm at Brighton
    uni doing my masters") gives its place to the latest LATER statement of the user among the first
    ``within`` that says one of its words again beyond the question's ("I start a PhD at Sussex in
    October once the masters wraps up"): the user's later word on the same thing. Never to a turn that
    only tells of an ending (``ended.ends_only``), a question or a plan. A claim first, or a turn a claim
    cites, stays: there the ledger's reading stands (_restated)."""
    first = out[0] if out else None
    if first is None or _past(first) or first.kind != "turn" or first.row.get("role") not in (None, "user") or (
            book is not None and book.cite(first.id)):
        return out
    t1 = _when(first)
    text = _text(first)
    if not t1 or not text or ended._SPEAKER.match(text):
        return out
    key = ended.content_words(text) - ended.content_words(asked)
    pick = None
    for c in out[1:within]:
        if c.kind != "turn" or c.row.get("role") not in (None, "user") or _past(c) or kinds.states_nothing(c):
            continue
        said = _text(c)
        if not said or low_content(said) or ended._SPEAKER.match(said) or _when(c) <= t1 or ended.ends_only(said):
            continue
        if ended.content_words(said) & key and (pick is None or _when(c) > _when(pick)):
            pick = c
    return out if pick is None else [pick, *(c for c in out if c is not pick)]


def _users(c: Cand, user_id: str) -> bool:
    if c.kind == "claim":
        return str(c.row.get("subject") or user_id) in (user_id, "user")
    return c.row.get("role") in (None, "user")


_WHAT = re.compile(r"\W*(?:what|which|who|whom|where|how)\b")


def _ends_only(c: Cand) -> bool:
    """A user's turn that only tells of something over ("my road bike got stolen"): ``ended.ends_only``."""
    return c.kind == "turn" and c.row.get("role") in (None, "user") and ended.ends_only(_text(c))


def _unmarked_first(out: list[Cand], within: int | None = None, asking: bool = False,
                    what: bool = False) -> list[Cand]:
    """What was said and has since changed, or is not yet true, is never the first answer: when the
    first candidate is such a marked turn, the next claim or unmarked statement (not a question, a
    hypothetical, the assistant's turn or chit-chat) among the first ``within`` (all: None) goes
    first; the rest keep their order. ``asking`` (a current search asking about the user's facts, not
    about what the assistant said; a bare "Brussels" keeps the turn naming it first): a first turn
    that states nothing (a question, a hypothetical, the assistant's turn: "need a name for my puppy,
    any ideas?"), or a claim the user's later words ended (``read.ended``), gives its place the same
    way to a statement of the first five. ``what`` (such a search asking what, which, who, where or how:
    the answer is what holds): a first turn that only tells of something over (``_ends_only``: "sold my
    trumpet" for "which instruments does the user play?") gives its place the same way, never to another
    such turn."""
    if not out or (out[0].kind != "turn" and not (asking and out[0].row.get("valid_until"))):
        return out  # a claim first: only one the user's later words ended (``read.ended``) gives way
    what = what and asking
    if not (out[0].row.get("valid_until") or out[0].row.get("starts") or (asking and kinds.states_nothing(out[0]))
            or (what and _ends_only(out[0]))):
        return out
    head = out[:within] if within else out
    says = kinds.states_nothing if asking else kinds.not_a_statement
    pick = next((c for c in head if (c.kind == "claim" and not (asking and c.row.get("valid_until"))) or not (
        c.row.get("valid_until") or c.row.get("starts") or says(c)
        or low_content(str(c.row.get("content") or "")) or (what and _ends_only(c)))), None)
    return out if pick is None else [pick, *(c for c in out if c is not pick)]


def mark(cache: Cache, user_id: str, ranked: list[Cand], at: str,
         stamp: claimbook.Stamp | None = None) -> list[Cand]:
    """An ``as_of`` search: mark the turns stale at ``at``: every claim citing them closed by then, or
    naming a value closed by then (``read.echo``); and the turns telling of a change planned after
    ``at`` ("from March I'll live in Bologna": every claim citing them starts later): not yet true
    then, they are marked with ``starts``. The order is kept, but for the first place (never such a
    marked turn when one of the first five is not: ``_unmarked_first``): putting those turns last
    lowered LongMemEval dev60 (turn any@5 88.3 -> 86.7, all@10 78.3 -> 75.0), whose questions are
    asked as of their date and whose evidence often tells of plans."""
    book = claimbook.book(cache, user_id, stamp, lazy=True) if claimbook.ENABLED else None
    cited.hydrate(cache, user_id, ranked, book)
    stale = cited.citing(cache, user_id, [c.id for c in ranked if c.kind == "turn"], at, book)
    ledger = echo.ledger(cache, user_id, book)
    echoed = turnmarks.naming_closed(ranked, stale, ledger, at, book)
    echoed.update(turnmarks.topical(cache, user_id, ranked, stale, echoed, ledger, at, book))
    cited.mark(ranked, stale, echoed)
    planned = turnmarks.planned(cache, user_id, ranked, ledger, at)
    if PLANS:
        planned.update(turnmarks.plans(ranked, ledger, {**stale, **echoed, **planned}, at))
    for c in ranked:
        if c.id in planned:
            c.row = {**c.row, "starts": planned[c.id]}
    return stale_named(cache, user_id, _unmarked_first(ranked, SWAP_WITHIN), ledger, at, book)


def stale_named(cache: Cache, user_id: str, ranked: list[Cand], ledger: list[dict[str, Any]], at: str,
                book: claimbook.Book | None, shown: int | None = None) -> list[Cand]:
    """Each candidate not itself marked past (no ``valid_until`` by ``at``, no ``superseded_by``, no
    ``starts``) that names values the ledger closed by ``at`` gets them as ``row["stale"]``
    (``echo.named_closed``; ``Hit.stale``): "we moved from Malmo to Lund" still holds, Malmo does not.
    A transcript's speaker ("Caroline: ...") is never such a value. Only the first ``STALE_WITHIN``
    candidates are read (a search shows fewer); of those, only the first ``shown`` (None: all) get marks
    (the rest are not shown: the speakers of all of them still count)."""
    if not NAMES_CLOSED or not ranked:
        return ranked
    now = echo.state(ledger, at, book)
    head = ranked[:STALE_WITHIN]
    phrases: dict[str, dict[str, Any]] = {}
    if REPLACED_STALE:
        _cited, held, people = turnmarks.known(ledger, head, at, book)
        phrases = turnmarks.replaced_phrases(head, at, held, people, now.__dict__.setdefault("_phrases", {}))
    if REPLACED_STALE:  # a claim this search marked ended (``read.ended``): its value is past too
        phrases.update(_ended_values(head, ledger, at, book, phrases))
    if not now.closed and not phrases and not OWN_ENDINGS:
        return ranked
    names = {str(c.row.get("speaker") or "").casefold() for c in head}
    names |= {t.split(":", 1)[0].casefold() for c in head if 0 < (t := _text(c)).find(":") < 40}
    names.discard("")
    closed = now.closed  # a speaker's name is dropped from what is found (not from the terms: kept per state)
    firsts: dict[str, list[str]] | None = now.__dict__.get("_firsts")
    if firsts is None:
        firsts = now.__dict__["_firsts"] = echo.first_words(closed)
    seen = head if shown is None else head[:shown]
    todo = [c for c in seen if not ((u := c.row.get("valid_until")) and str(u) <= at)
            and not c.row.get("superseded_by") and not c.row.get("starts")]
    texts = ended._claim_texts(cache, user_id, [c.id for c in todo if c.kind == "claim" and not _text(c)], book)
    later = _enders(head, texts, now, ledger, at, user_id) if LATER_ENDINGS else {}
    ids = {c.id for c in head if c.kind == "claim"}
    for c in todo:
        text = _text(c) or texts.get(c.id, "")
        found = echo.named_closed(text, closed, firsts)
        if names:  # "Caroline: ..." names Caroline, never an old value
            found = [f for f in found if not set(str(f["named"]).casefold().split()) <= names]
        if phrases:  # what a turn marked replaced named ("with Virgin Media"), the ledger never held
            low = text.casefold().replace("\u2019", "'")
            have = {str(f["named"]).casefold() for f in found}
            for k, p in phrases.items():
                m = echo._pattern(k).search(low) if k in low and k not in have else None
                if m and p.get("claim") != c.id:
                    said = text[m.start():m.end()] if len(low) == len(text) else p["named"]
                    found.append({"named": said, "value": p.get("value"), "claim": p.get("claim"),
                                  "turn": p.get("turn"), "valid_until": p["valid_until"],
                                  "superseded_by": p["superseded_by"]})
                    have.add(k)
        if OWN_ENDINGS and (c.kind == "claim" or c.row.get("role") in (None, "user")):
            found += _own_endings(c, text, now, ledger, at)
        if later:
            found += _ended_later(c, text, later, at, {str(f["named"]).casefold() for f in found}, ids)
        if found:
            c.row = {**c.row, "stale": _once([*c.row.get("stale", ()), *found])}
    return ranked


def _ended_values(head: list[Cand], ledger: list[dict[str, Any]], at: str, book: claimbook.Book | None,
                  have: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The terms (``echo.terms``) of the values of the claims among ``head`` this search marked ended by
    ``at`` (the ledger still holds them), less those ``have`` already: term -> its entry for ``Hit.stale``."""
    ids = [c.id for c in head if c.kind == "claim" and (u := c.row.get("valid_until")) and str(u) <= at]
    if not ids:
        return {}
    by_id = book.by_id if book is not None else {str(r["id"]): r for r in ledger}
    out: dict[str, dict[str, Any]] = {}
    for c in head:
        row = by_id.get(c.id) if c.id in ids else None
        if row is None:
            continue
        for t in echo.terms(str(row.get("value") or "")):
            if t not in have and t not in out:
                out[t] = {"named": t, "value": row.get("value"), "claim": c.id, "turn": None,
                          "valid_until": c.row["valid_until"], "superseded_by": c.row.get("superseded_by")}
    return out


def _own_endings(c: Cand, text: str, now: echo.State, ledger: list[dict[str, Any]], at: str) -> list[dict[str, Any]]:
    """What the user's text itself says is over (``ended.things``: "went from EDF to Ovo": EDF), ended
    when it was said (by ``at``), less the words of a value a claim valid at ``at`` took up at or after
    that time ("back at uber" after "quit uber"): as written, each run of such words once."""
    said = str(c.row.get("valid_at") or c.row.get("valid_from") or "")
    if not said or said > at:
        return []
    gone = ended.things(text)
    if not gone:
        return []
    held: dict[str, str] | None = now.__dict__.get("_held_since")
    if held is None:
        held = now.__dict__["_held_since"] = ended.held_since(
            (str(r.get("value") or ""), str(r.get("valid_from") or "")) for r in ledger if echo.active(r, at))
    gone = frozenset(w for w in gone if held.get(w, "") < said)
    out: list[dict[str, Any]] = []
    # the first run of each clause: the thing right after (or before) its ending ("sold the iPhone 11 on
    # eBay": the iPhone 11, not eBay)
    first = [r[0] for clause in ended.clauses(text) if (r := ended.runs(clause, ended.things(clause) & gone))]
    for run in dict.fromkeys(first):
        out.append({"named": run, "value": None, "claim": c.id if c.kind == "claim" else None,
                    "turn": c.id if c.kind == "turn" else None, "valid_until": said, "superseded_by": None})
    return out


def _enders(head: list[Cand], texts: dict[str, str], now: echo.State, ledger: list[dict[str, Any]], at: str,
            user_id: str) -> dict[str, tuple[str, int, frozenset[str]]]:
    """The user's turns and own claims among ``head`` said by ``at`` that say something is over
    (``ended.enders``: "Clove didn't make it through the winter"): id -> (when, order, the words of what
    is over, less those a claim valid at ``at`` took up at or after then)."""
    turns = {c.id: (t, str(c.row.get("valid_at") or ""), int(c.row.get("rowid") or 0), "user") for c in head
             if c.kind == "turn" and c.row.get("role") in (None, "user") and (t := _text(c))
             and not ended._SPEAKER.match(t) and str(c.row.get("valid_at") or "~") <= at}
    claims = {c.id: (t, since) for c in head if c.kind == "claim"
              and str(c.row.get("subject") or user_id) in (user_id, "user") and (t := _text(c) or texts.get(c.id, ""))
              and (since := str(c.row.get("valid_from") or "")) and since <= at}
    if not any(ended.things(t) for t, *_ in (*turns.values(), *claims.values())):
        return {}
    held: dict[str, str] | None = now.__dict__.get("_held_since")
    if held is None:
        held = now.__dict__["_held_since"] = ended.held_since(
            (str(r.get("value") or ""), str(r.get("valid_from") or "")) for r in ledger if echo.active(r, at))
    return ended.enders(turns, claims, held)


def _ended_later(c: Cand, text: str, later: dict[str, tuple[str, int, frozenset[str]]], at: str,
                 have: set[str], claim_ids: set[str]) -> list[dict[str, Any]]:
    """The things ``text`` names that a LATER user turn or claim among the candidates says are over
    ("we've got two rabbits, Pepper and Clove", then "Clove didn't make it through the winter": Clove, ended
    then; Pepper still holds): as written, each run of such words once, with the ending's time. A slot of
    many values keeps the hit (it still holds the rest); only the value that ended is listed."""
    said = str(c.row.get("valid_at") or c.row.get("valid_from") or "")
    if not said or ended._SPEAKER.match(text):
        return []
    mine = ended.words(text)
    out: list[dict[str, Any]] = []
    for eid, (when, _order, gone) in later.items():
        if eid == c.id or when <= said or when > at or not (gone & mine):
            continue
        for run in ended.runs(text, gone & mine):
            if run.casefold() not in have:
                have.add(run.casefold())
                out.append({"named": run, "value": None, "claim": eid if eid in claim_ids else None,
                            "turn": None if eid in claim_ids else eid, "valid_until": when,
                            "superseded_by": None})
    return out


def _once(found: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """Each claim once, and no entry whose words are all among an earlier one's ("Westbrook" after
    "Westbrook Academy", "iPhone" after "iPhone 11")."""
    out: list[dict[str, Any]] = []
    for f in found:
        words = set(str(f["named"]).casefold().split())
        if any((f.get("claim") and f.get("claim") == o.get("claim") and not o.get("turn"))
               or words <= set(str(o["named"]).casefold().split()) for o in out):
            continue
        out.append(f)
    return tuple(out)


def _text(c: Cand) -> str:
    return str(c.row.get("content") or c.row.get("text") or "")


NAMES_CLOSED = True  # False: a hit that holds names no closed value it mentions (``Hit.stale`` stays empty)
OWN_ENDINGS = True  # False: ``Hit.stale`` leaves out what the text itself says is over ("went from EDF to Ovo")
REPLACED_STALE = True  # False: ``Hit.stale`` lists only the ledger's closed values, not the names a turn
# marked replaced gave ("our internet is with Virgin Media", marked replaced by "... Community Fibre")
LATER_ENDINGS = True  # False: ``Hit.stale`` leaves out a value a later user turn among the candidates says is
# over ("we've got two rabbits, Pepper and Clove", then "Clove didn't make it"): the hit is shown unmarked
LATER_WORD = True  # False: a first turn no claim cites keeps its place over the user's later word on it
RESTATED = True  # False: a claim or turn a later statement of the user moved on from is shown unmarked
TURNS_RESTATED = True  # False: only claims (not turns no claim cites) are read as moved on from
WHAT_HOLDS = True  # False: a first turn that only tells of something over stays first for "what/which ..." questions
STALE_WITHIN = 30
PLANS = True  # False: a plan no claim holds ("i start there in april") is not marked in an as_of search
LAPSED = True  # False: a stay "for the week" said long ago is not marked ended
OLDER_NAMED = True  # False: no older turn is marked replaced by the fact a question about the user found
REPLACED_NAMES = True  # False: no turn is marked for naming what a replaced turn named (before h-stale3)
SWAP_WITHIN = 5  # a marked first turn is swapped only with a claim or turn of the first five: the set of
# the top five stays what it was (LongMemEval's and LoCoMo's any@5 count turns there)


