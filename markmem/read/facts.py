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

import json
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from ..index import claimbook
from ..index.cache import Cache
from . import echo, ended, live
from .fts import CLAIM_COLS, hydrate_turns
from .fuse import Cand
from .said import asks_assistant

_CHAT = re.compile(
    r"^(?:(?:ok(?:ay)?|k|sure|yes|yeah|yep|yup|no|nope|nah|thanks|thank you|thx|ty|cool|nice|great|awesome|"
    r"perfect|lol|haha+|hehe|hmm+|oh|ah|wow|right|exactly|totally|true|same|agreed|got it|sounds good|"
    r"sounds great|makes sense|fair enough|good|fine|alright|all right|will do|of course|no problem|np|"
    r"you too|bye|goodbye|see you|good night|morning|hi|hello|hey|me too|for sure|definitely|absolutely|"
    r"i see|i know|that's (?:great|nice|cool|fair|true|right|funny|awesome)|haha yes|sounds good to me|"
    r"good to know|love it|i agree|yes please|no thanks|not really|maybe|cheers)[\s!.,?:)(]*)+$",
    re.IGNORECASE,
)


def utc_now() -> str:
    """``ids.now()``'s string (``ids.format_time`` of the present), formatted without ``strftime``."""
    d = datetime.now(timezone.utc)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}.{d.microsecond:06d}Z"


def low_content(text: str) -> bool:
    """Chit-chat that holds no fact: "ok sounds good", "haha yes exactly!"."""
    t = text.strip()
    return len(t) < 60 and bool(_CHAT.match(t))


def rerank(cache: Cache, user_id: str, ranked: list[Cand], query: str = "",
           stamp: claimbook.Stamp | None = None) -> list[Cand]:
    """Fused candidates, fact first (see the module docstring). Marks go in ``Cand.row``. ``stamp``:
    the user's stamp as the search read it (``fts.Snapshot.vectors``), for the claim book."""
    present = utc_now()
    # not lazy: the ledger below reads every live claim anyway, so the first search loads the book
    # for about what reading the ledger with SQL costs, and the next ones find it
    book = claimbook.book(cache, user_id, stamp) if claimbook.ENABLED else None
    _hydrate(cache, user_id, ranked, book)
    stale = _citing(cache, user_id, [c.id for c in ranked if c.kind == "turn"], present, book)
    ledger = echo.ledger(cache, user_id, book)
    echoed = _echoed(ranked, stale, ledger, present, book)
    echoed.update(_topical(cache, user_id, ranked, stale, echoed, ledger, present, book))
    echoed.update(ended.marks(cache, ranked, stale, echoed, ledger, present, user_id, book))
    _mark(ranked, stale, echoed)
    have = {c.id for c in ranked if c.kind == "claim"}
    marked = set(echoed)
    found = _successors(cache, user_id, {c.row["superseded_by"]: c for c in ranked if (c.id in stale or c.id in marked)
                                         and c.row.get("superseded_by")}, present, book,
                       None if book is None else echo.state(ledger, present, book).__dict__.setdefault("_succ", {}))
    others_said = _said_by_others(ranked)
    echoed = {k: v for k, v in echoed.items() if k in others_said}  # a user's own turn: marked in place
    asked = query.casefold()
    drop = bool(_ABOUT_USER.search(asked))
    asked_back = asks_assistant(query)
    others_asked = None if not drop else bool(_ASKS_FAMILY.search(asked))  # False: about the user alone
    others = _others(cache, user_id, [c.row for c in ranked if c.kind == "claim"], asked, book)
    others |= _others_turns(cache, user_id, ranked, ledger, asked, present, book)
    claims = {c.id: c for c in ranked if c.kind == "claim"}
    out: list[Cand] = []
    past: list[Cand] = []
    late: list[Cand] = []
    for c in ranked:
        if c.kind == "claim":
            if c.id not in claims:
                continue  # already moved up, before the turn it replaced
            claims.pop(c.id)
        if others_asked is False and c.kind == "turn" and _about_another(c, asked):
            continue  # "my boyfriend Marco went on a carnivore diet" for "what is the user's diet?"
        if c.id in stale or c.id in marked:  # its successor first, then the turn itself (marked)
            out += _successor(c, found, claims, have, bring=c.id in stale or c.id in echoed)
            (past if c.id in echoed else out).append(c)  # another's turn naming an old value: after the facts
        elif c.id in others:
            if _lexical(c) and not drop:
                late.append(c)  # else: left out (a question about the user leaves other people's facts out)
        elif c.kind == "turn" and low_content(str(c.row.get("content") or "")):
            if _lexical(c):
                late.append(c)  # else: only the cosine relates it: left out
        elif c.kind == "turn" and _not_a_statement(c) and not _lexical(c):
            continue  # a question, a hypothetical or the assistant's turn that shares no word with the question
        elif drop and not asked_back and _suggestion(c):
            continue  # the assistant's suggestion ("How about Miso?") states no fact of the user
        else:
            out.append(c)
    if drop:  # "where does the user's wife work?": the wife's facts before the user's own
        named = [c for c in out if c.kind == "claim" and _names(asked, c.row.get("subject"), user_id)]
        out = named + [c for c in out if c not in named]
    return _unmarked_first(out, SWAP_WITHIN) + past + late


def _unmarked_first(out: list[Cand], within: int | None = None) -> list[Cand]:
    """What was said and has since changed, or is not yet true, is never the first answer: when the
    first candidate is such a marked turn, the next claim or unmarked statement (not a question, a
    hypothetical, the assistant's turn or chit-chat) among the first ``within`` (all: None) goes
    first; the rest keep their order."""
    if not out or out[0].kind != "turn" or not (out[0].row.get("valid_until") or out[0].row.get("starts")):
        return out
    head = out[:within] if within else out
    pick = next((c for c in head if c.kind == "claim" or not (
        c.row.get("valid_until") or c.row.get("starts") or _not_a_statement(c)
        or low_content(str(c.row.get("content") or "")))), None)
    return out if pick is None else [pick, *(c for c in out if c is not pick)]


def _names(asked: str, subject: object, user_id: str) -> bool:
    who = str(subject or user_id).casefold()
    return who != user_id.casefold() and bool(re.search(rf"(?<!\w){re.escape(who)}(?!\w)", asked))


_ABOUT_USER = re.compile(r"\b(?:the user|user's|i|i'm|i've|me|my|mine|myself)\b")  # a question about the user


def _said_by_others(ranked: list[Cand]) -> set[str]:
    return {c.id for c in ranked if c.kind == "turn" and c.row.get("role") not in (None, "user")}


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
    _hydrate(cache, user_id, ranked, book)
    stale = _citing(cache, user_id, [c.id for c in ranked if c.kind == "turn"], at, book)
    ledger = echo.ledger(cache, user_id, book)
    echoed = _echoed(ranked, stale, ledger, at, book)
    echoed.update(_topical(cache, user_id, ranked, stale, echoed, ledger, at, book))
    _mark(ranked, stale, echoed)
    planned = _planned(cache, user_id, ranked, ledger, at)
    for c in ranked:
        if c.id in planned:
            c.row = {**c.row, "starts": planned[c.id]}
    return _unmarked_first(ranked, SWAP_WITHIN)


SWAP_WITHIN = 5  # a marked first turn is swapped only with a claim or turn of the first five: the set of
# the top five stays what it was (LongMemEval's and LoCoMo's any@5 count turns there)


def _planned(cache: Cache, user_id: str, ranked: list[Cand], ledger: list[dict[str, Any]], at: str) -> dict[str, str]:
    """Turn id -> when its facts start, for the turns every claim citing them starts after ``at``."""
    wanted = {c.id for c in ranked if c.kind == "turn"}
    starts: dict[str, list[str]] = {}
    for r in ledger:
        for ref in r["_refs"]:
            if ref in wanted:
                starts.setdefault(ref, []).append(str(r["valid_from"] or ""))
    out = {rid: min(s) for rid, s in starts.items() if all(x > at for x in s)}
    later = {t: r for r in ledger if str(r["valid_from"] or "") > at for t in r["_terms"]}
    if later:  # "Good luck at Cedar Clinic!": a turn that only names a planned value
        held = {t for r in ledger if echo.active(r, at) for t in r["_terms"]}
        said = {c.id: str(c.row.get("valid_at") or "") for c in ranked
                if c.kind == "turn" and c.id not in starts and c.id not in out}
        planned_at = _stated(cache, user_id, [r for t, r in later.items() if t not in held])
        texts = {c.id: str(c.row.get("content") or "") for c in ranked if c.id in said}
        for rid, row in echo.echoes(texts, {t: {**r, "valid_until": r["valid_from"]} for t, r in later.items()
                                            if t not in held}).items():
            stated = planned_at.get(str(row["id"]))
            if stated is not None and said[rid] >= stated:  # said once the plan was known
                out[rid] = str(row["valid_from"])
    return out


def _stated(cache: Cache, user_id: str, claims: list[dict[str, Any]]) -> dict[str, str]:
    """Claim id -> when the plan was first said, for the claims said before they start: a change said
    when it happened ("Actually I prefer aisle seats now") was never a plan, so a turn naming its
    value before then (the assistant's own "I prefer aisle seats myself") is not "not yet true"."""
    refs = sorted({ref for r in claims for ref in r["_refs"]})
    if not refs:
        return {}
    marks = ",".join("?" * len(refs))
    when = {r["id"]: str(r["valid_at"] or "") for r in cache.user(user_id).rows(
        f"SELECT id, valid_at FROM raw WHERE id IN ({marks}) AND +user_id = ?", [*refs, user_id])}
    out = {}
    for r in claims:
        first = min((when[ref] for ref in r["_refs"] if ref in when), default=None)
        if first is not None and first < str(r["valid_from"] or ""):
            out[str(r["id"])] = first
    return out


def _hydrate(cache: Cache, user_id: str, ranked: list[Cand], book: claimbook.Book | None = None) -> None:
    light = [c for c in ranked if c.kind == "turn" and "content" not in c.row and "rowid" in c.row]
    if not light:
        return
    # the lexicon's light rows hold no text; search hydrates them for its hits anyway. The rows read
    # are kept on the claim book (its stamp changes with any change to the user's turns), a few
    # thousand at most: a turn found again is not read again
    kept: dict[int, dict[str, Any]] = {} if book is None or not KEEP_TURNS else \
        book.__dict__.setdefault("_turn_rows", {})
    rows = {c.row["rowid"]: kept[c.row["rowid"]] for c in light if c.row["rowid"] in kept}
    need = [c.row["rowid"] for c in light if c.row["rowid"] not in rows]
    if need:
        full = hydrate_turns(cache, need, user_id)
        read = {c.row["rowid"]: full[c.id] for c in light if c.id in full}
        if len(kept) + len(read) > KEEP_TURNS:  # the older half out
            for rowid in list(kept)[: len(kept) // 2]:
                kept.pop(rowid, None)
        kept.update(read)
        rows.update(read)
    for c in light:
        row = rows.get(c.row["rowid"])
        if row is not None and row["id"] == c.id:  # a rowid that now holds another turn: not this one
            c.row = {**c.row, **row}


KEEP_TURNS = 2048  # turn rows kept per claim book (0: read each search)


def _mark(ranked: list[Cand], stale: dict[str, list[dict[str, Any]]], echoed: dict[str, dict[str, Any]]) -> None:
    for c in ranked:
        if c.id in stale:
            closed = max(stale[c.id], key=lambda r: (r["valid_until"] or "", bool(r["superseded_by"])))
        elif c.id in echoed:
            closed = echoed[c.id]
        else:
            continue
        c.row = {**c.row, "valid_until": closed["valid_until"], "superseded_by": closed["superseded_by"]}


def _successor(c: Cand, found: dict[str, dict[str, Any]], claims: dict[str, Cand], have: set[str],
               bring: bool = True) -> list[Cand]:
    """The claim now current in place of what turn ``c`` said, when not already listed: moved up from
    further down, or (``bring``: a stale turn, another's turn naming an old value) brought in. A user's
    own turn marked by its words only moves up a claim the search found (on LoCoMo's transcripts
    bringing one in pushed evidence out of the top five)."""
    row = found.get(str(c.row.get("superseded_by")))
    if row is not None and row["id"] in claims:
        return [claims.pop(row["id"])]
    if row is None or row["id"] in have or not bring:
        return []
    new = Cand("claim", row["id"], row, dict(c.ranks), bm25=c.bm25, cos=c.cos)
    new.score, new.weights = c.score, {**c.weights, "replaces": 1.0}
    have.add(row["id"])
    return [new]


def _echoed(ranked: list[Cand], stale: dict[str, Any], ledger: list[dict[str, Any]], at: str,
            book: claimbook.Book | None = None) -> dict[str, Any]:
    """Turns no claim valid at ``at`` cites (nor ended a claim: "I'm not vegan anymore" names the old
    value because it tells of the change) that name a value closed by ``at`` (``read.echo``)."""
    now = echo.state(ledger, at, book)
    texts = {c.id: str(c.row.get("content") or "") for c in ranked
             if c.kind == "turn" and c.id not in stale and c.id not in now.cited}
    if not texts or not now.closed:
        return {}
    names = now.subjects | {str(c.row.get("speaker") or "") for c in ranked} | \
        {t.split(":", 1)[0] for t in texts.values() if 0 < t.find(":") < 40}  # a transcript's "Caroline: ..."
    closed, firsts, seen = _closed_without(now, frozenset(names))
    new = {rid: t for rid, t in texts.items() if rid not in seen}
    if new:
        found = echo.echoes(new, closed, firsts)
        if len(seen) + len(new) > KEEP_TURNS:
            seen.clear()
        seen.update({rid: found.get(rid) for rid in new})
    return {rid: row for rid in texts if (row := seen.get(rid)) is not None}


_Without = tuple[dict[str, Any], dict[str, list[str]], dict[str, Any]]


def _closed_without(now: echo.State, names: frozenset[str]) -> _Without:
    """``echo.without(now.closed, names)``, its ``echo.first_words`` and the turns' answers (turn id ->
    the closed claim it names, or None), kept on the state (a state kept on the claim book lives as
    long as its window and the book; a turn's text does not change under the book's stamp)."""
    kept: dict[frozenset[str], _Without] = now.__dict__.setdefault("_without", {})
    got = kept.get(names)
    if got is None:
        closed = echo.without(now.closed, names)
        got = (closed, echo.first_words(closed), {})
        if len(kept) >= 64:
            kept.clear()
        kept[names] = got
    return got


def _topical(cache: Cache, user_id: str, ranked: list[Cand], stale: dict[str, Any], echoed: dict[str, Any],
             ledger: list[dict[str, Any]], at: str, book: claimbook.Book | None) -> dict[str, Any]:
    """Turns no claim cites, said before a one-valued fact the user holds at ``at`` began, on its topic
    and not naming its value: that fact replaced what they said (``echo.newer_on_topic``)."""
    now = echo.state(ledger, at, book)
    turns = [c for c in ranked if c.kind == "turn" and c.id not in stale and c.id not in echoed
             and c.id not in now.cited and not c.row.get("question") and c.row.get("valid_at")]
    if not turns:
        return {}
    facts = echo.one_valued(ledger, _predicates(cache, user_id, book), user_id, at)
    if not facts:
        return {}
    said = {c.id: (str(c.row.get("content") or ""), str(c.row["valid_at"]), int(c.row.get("rowid") or 0))
            for c in turns if not low_content(str(c.row.get("content") or ""))}
    rowids = {c.id: int(c.row.get("rowid") or 0) for c in ranked if c.kind == "turn"}
    return echo.newer_on_topic(said, facts, rowids)


def _predicates(cache: Cache, user_id: str, book: claimbook.Book | None) -> dict[str, str]:
    """Claim id -> predicate of the user's live claims (kept on the claim book while it is unchanged)."""
    kept: dict[str, str] | None = getattr(book, "_echo_preds", None)
    if kept is not None:
        return kept
    rows = cache.user(user_id).rows("SELECT id, predicate FROM claims WHERE user_id = ? AND archived = 0", [user_id])
    got = {str(r["id"]): str(r["predicate"] or "") for r in rows}
    if book is not None:
        book._echo_preds = got  # type: ignore[attr-defined]
    return got


def _others_turns(cache: Cache, user_id: str, ranked: list[Cand], ledger: list[dict[str, Any]], asked: str,
                  present: str, book: claimbook.Book | None = None) -> set[str]:
    """Turns about someone the question does not name: every claim citing them is about that person
    (``_others``), or, said by the assistant, they name a value of such a claim ("Swindon is famous
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
    theirs = _others(cache, user_id, list(near.values()), asked, book)
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


_HYPOTHETICAL = re.compile(r"^\W*(?:what if|if i|if we|maybe|perhaps|should i|should we|would|could i|could we|"
                           r"might|i wonder|wondering)\b", re.IGNORECASE)


_SUGGESTS = re.compile(r"^\W*(?:if you|how about|what about|you could|you might|you can|maybe|perhaps|why not|"
                       r"have you (?:considered|thought|tried)|consider|i(?:'d| would)? (?:usually |always |really )?"
                       r"(?:recommend|suggest)|(?:many|most|some|a lot of|lots of) (?:people|folks))\b", re.IGNORECASE)


def _suggestion(c: Cand) -> bool:
    """The assistant's suggestion or hypothetical: "How about Miso or Juniper?", "If you moved to Milan
    you'd ...", "Many people in your field move to Roche": a value the user never stated."""
    return c.kind == "turn" and c.row.get("role") == "assistant" and \
        bool(_SUGGESTS.match(str(c.row.get("content") or "")))


_REL = (r"(?:wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|mum|mom|mother|dad|father|parents|brother|sister|"
        r"son|daughter|kids?|child|children|friend|mate|flatmate|roommate|housemate|colleague|coworker|boss|"
        r"neighbou?r|cousin|aunt|uncle|gran|grandma|grandpa|nan|niece|nephew|in-laws)")
_ANOTHER = re.compile(rf"^\W*(?:(?:my|our)\s+(?:best\s+|older\s+|younger\s+|little\s+|big\s+)?({_REL})\b"
                      rf"(?:\s+(\w+))?|(\w+),?\s+(?:my|our)\s+({_REL})\b|({_REL})['’]s\b)", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|i'll|me|my|myself|we|we're|we've|us|our)\b", re.IGNORECASE)
_ASKS_FAMILY = re.compile(rf"\b{_REL}|\b(?:family|relatives|people)\b", re.IGNORECASE)


def _about_another(c: Cand, asked: str) -> bool:
    """A user's turn about someone else and not the user: it opens on them ("my boyfriend Marco went
    ...", "Priya my flatmate went vegan", "Dad's finally retired!") and says nothing in the first
    person after that; the question names not that person (the caller asks only when the question
    names no relation of the user's: "what diet is the user's boyfriend on?")."""
    if c.kind != "turn" or c.row.get("role") not in (None, "user"):
        return False
    text = str(c.row.get("content") or "").replace("’", "'")
    m = _ANOTHER.match(text)
    if m is None or _FIRST_PERSON.search(text[m.end():]):
        return False
    named = {w.casefold() for w in m.groups() if w}
    return not any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", asked) for w in named)


def _not_a_statement(c: Cand) -> bool:
    """A question, a hypothetical, or the assistant's turn: none states the user's fact."""
    text = str(c.row.get("content") or "")
    return bool(c.row.get("question")) or c.row.get("role") == "assistant" or bool(_HYPOTHETICAL.match(text))


def _lexical(c: Cand) -> bool:
    """Found by the words of the question (a BM25 or exact lane), not by the cosine alone."""
    return any(lane in c.ranks for lane in ("turns", "claims", "exact")) or not c.ranks


def _others(cache: Cache, user_id: str, claims: list[dict[str, Any]], asked: str,
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


def _current(row: dict[str, Any], present: str) -> bool:
    return (row["valid_until"] is None or row["valid_until"] > present) and \
        (row["valid_from"] is None or row["valid_from"] <= present)


def _citing(cache: Cache, user_id: str, turn_ids: Sequence[str], present: str,
            book: claimbook.Book | None = None) -> dict[str, list[dict[str, Any]]]:
    """The closed claims that cite each turn, for the turns no current claim cites, by turn id:
    from the user's claim book (``index.claimbook``), or with SQL."""
    if book is not None:
        stale: dict[str, list[dict[str, Any]]] = {}
        for rid in turn_ids:
            rows = book.cite(rid)
            if rows and not any(r["valid_until"] is None or r["valid_until"] > present for r in rows):
                stale[rid] = [r for r in rows if r["valid_until"] is not None and r["valid_until"] <= present]
        return stale
    closed = _sources(cache, user_id, turn_ids, "c.valid_until IS NOT NULL AND c.valid_until <= ?", [present])
    if not closed:
        return {}
    live = _sources(cache, user_id, sorted(closed), "(c.valid_until IS NULL OR c.valid_until > ?)", [present])
    return {rid: rows for rid, rows in closed.items() if rid not in live}


def _sources(cache: Cache, user_id: str, turn_ids: Sequence[str], when: str,
             params: list[str]) -> dict[str, list[dict[str, Any]]]:
    if not turn_ids:
        return {}
    rows = cache.user(user_id).rows(
        "SELECT c.sources, c.valid_from, c.valid_until, c.superseded_by FROM claims c "
        f"WHERE c.user_id = ? AND {when} AND c.archived = 0 "
        f"AND ({' OR '.join('instr(c.sources, ?) > 0' for _ in turn_ids)})",
        [user_id, *params, *(f"#{i}\"" for i in turn_ids)],
    )
    wanted = set(turn_ids)
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        for ref in json.loads(r["sources"] or "[]"):
            rid = ref.rsplit("#", 1)[-1]
            if rid in wanted:
                out.setdefault(rid, []).append(r)
    return out


def _successors(cache: Cache, user_id: str, wanted: dict[str, Cand], present: str,
                book: claimbook.Book | None = None,
                memo: dict[str, dict[str, Any] | None] | None = None) -> dict[str, dict[str, Any]]:
    """The claim now current at the end of each supersession chain (a few hops at most). ``memo``:
    answers kept on the book's ``echo.State`` for ``present``'s window (whether a claim is current
    changes only where ``present`` crosses one of the claims' bounds, and every claim's bounds are
    the window's)."""
    out: dict[str, dict[str, Any]] = {}
    if memo is not None and book is not None:
        for start in wanted:
            if start not in memo:
                memo[start] = _successors(cache, user_id, {start: wanted[start]}, present, book).get(start)
            row = memo[start]
            if row is not None:
                out[start] = dict(row)
        return out
    for start in wanted:
        cid: str | None = start
        for _ in range(8):
            if cid is None:
                break
            if book is not None:
                found = book.by_id.get(cid)
                rows = [] if found is None else [dict(found)]
            else:
                rows = cache.user(user_id).rows(
                    f"SELECT {CLAIM_COLS}, c.valid_until AS valid_until, c.superseded_by AS superseded_by "
                    "FROM claims c WHERE c.id = ? AND +c.user_id = ? AND c.archived = 0", [cid, user_id])
            if not rows:
                break
            row = rows[0]
            if _current(row, present):
                out[start] = row
                break
            cid = row["superseded_by"]
    return out
