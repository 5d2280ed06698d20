"""Turns no claim cites that the ledger still tells about, for ``read.facts``: a turn naming a value
closed since (``read.echo``), a turn on the topic of a one-valued fact that began after it, and (for
an ``as_of`` search) a turn telling of a plan not yet true then."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from ..ids import format_time
from ..index import claimbook
from ..index.cache import Cache
from . import echo, ended, kinds
from .cited import KEEP_TURNS
from .fuse import Cand
from .kinds import low_content


def naming_closed(ranked: list[Cand], stale: dict[str, Any], ledger: list[dict[str, Any]], at: str,
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
    closed, firsts, seen = closed_without(now, frozenset(names))
    new = {rid: t for rid, t in texts.items() if rid not in seen}
    if new:
        found = echo.echoes(new, closed, firsts)
        if len(seen) + len(new) > KEEP_TURNS:
            seen.clear()
        seen.update({rid: found.get(rid) for rid in new})
    return {rid: row for rid in texts if (row := seen.get(rid)) is not None}


_Without = tuple[dict[str, Any], dict[str, list[str]], dict[str, Any]]


def closed_without(now: echo.State, names: frozenset[str]) -> _Without:
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


def topical(cache: Cache, user_id: str, ranked: list[Cand], stale: dict[str, Any], echoed: dict[str, Any],
             ledger: list[dict[str, Any]], at: str, book: claimbook.Book | None) -> dict[str, Any]:
    """Turns no claim cites, said before a one-valued fact the user holds at ``at`` began, on its topic
    and not naming its value: that fact replaced what they said (``echo.newer_on_topic``)."""
    now = echo.state(ledger, at, book)
    turns = [c for c in ranked if c.kind == "turn" and c.id not in stale and c.id not in echoed
             and c.id not in now.cited and c.row.get("valid_at")]
    if not turns:
        return {}
    facts = echo.one_valued(ledger, predicates(cache, user_id, book), user_id, at)
    if not facts:
        return {}
    said = {c.id: (str(c.row.get("content") or ""), str(c.row["valid_at"]), int(c.row.get("rowid") or 0))
            for c in turns if not low_content(str(c.row.get("content") or ""))}
    rowids = {c.id: int(c.row.get("rowid") or 0) for c in ranked if c.kind == "turn"}
    return echo.newer_on_topic(said, facts, rowids)


def predicates(cache: Cache, user_id: str, book: claimbook.Book | None) -> dict[str, str]:
    """Claim id -> predicate of the user's live claims (kept on the claim book while it is unchanged)."""
    kept: dict[str, str] | None = getattr(book, "_echo_preds", None)
    if kept is not None:
        return kept
    rows = cache.user(user_id).rows("SELECT id, predicate FROM claims WHERE user_id = ? AND archived = 0", [user_id])
    got = {str(r["id"]): str(r["predicate"] or "") for r in rows}
    if book is not None:
        book._echo_preds = got  # type: ignore[attr-defined]
    return got


def planned(cache: Cache, user_id: str, ranked: list[Cand], ledger: list[dict[str, Any]], at: str) -> dict[str, str]:
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




# -- turns naming what a replaced turn named ------------------------------------------------------
# A turn marked replaced by its topic (``topical``: "my apartment in Lyon is so noisy" before "we signed
# a lease in Grenoble") or cited only by closed claims names the old value, but the ledger never held
# it as a value, so a later "the Lyon flat's deposit still hasn't come back" or the assistant's "Octopus
# has good tariffs" is shown as if it still held. The names the replaced turn gives a place, a firm or a
# provider ("in Lyon", "with Octopus", "at Marlow's") are the old values; another candidate turn that no
# claim valid now cites and that names one of them is marked like the replaced turn.
_PLACE = re.compile(r"\b(?:in|at|with|from|near|for|to|on|of|into|outside|around)\s+(?:(?:a|an|the|my|our)\s+)?"
                    r"((?:[A-Z][\w'’&-]*)(?:\s+[A-Z][\w'’&-]*){0,2})")
_NOT_NAMES = frozenset(
    "i i'm i've i'll i'd monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december christmas easter the my our a an".split())


@lru_cache(maxsize=8192)
def place_names(text: str) -> tuple[str, ...]:
    """The names ``text`` gives after a preposition ("in Lyon", "with Octopus", "at Marlow's Bistro"):
    each capitalised word (casefolded, without a possessive 's), months, days and "I" left out."""
    out: list[str] = []
    for m in _PLACE.finditer(text):
        for w in m.group(1).split():
            k = w.casefold().replace("’", "'")
            k = k[:-2] if k.endswith("'s") else k
            if len(k) >= 3 and k not in _NOT_NAMES:
                out.append(k)
    return tuple(dict.fromkeys(out))


def known(ledger: list[dict[str, Any]], ranked: list[Cand], at: str,
          book: claimbook.Book | None) -> tuple[set[str], set[str], set[str]]:
    """For ``naming_replaced``: the turns a claim valid at ``at`` cites (or that ended a claim), the
    words of the values of the claims valid at ``at`` and the people named (claims' subjects, speakers),
    casefolded; the first two kept on the ledger's state."""
    now = echo.state(ledger, at, book)
    held: set[str] | None = now.__dict__.get("_held_words")
    if held is None:
        held = now.__dict__["_held_words"] = {w for r in ledger if echo.active(r, at)
                                              for w in echo.value_words(str(r.get("value") or ""))}
    names = {s.casefold() for s in now.subjects} | {str(c.row.get("speaker") or "").casefold() for c in ranked}
    return now.cited, held, names


def naming_replaced(ranked: list[Cand], stale: dict[str, Any], echoed: dict[str, Any], cited: set[str],
                    held: set[str], names: set[str]) -> dict[str, Any]:
    """Candidate turns, not yet marked and cited by no claim valid now, naming a place name
    (``place_names``) of a user's turn marked replaced (``echoed``, or ``stale``: cited only by closed
    claims): id -> that turn's mark. ``held``: the words of the values of claims valid now (a name
    one of them holds is current); ``names``: people (claims' subjects, speakers), never old values."""
    old: dict[str, dict[str, Any]] = {}
    for c in ranked:
        if c.kind != "turn" or c.row.get("role") not in (None, "user") or not c.row.get("valid_until"):
            continue
        if c.id not in echoed and c.id not in stale:
            continue
        mark = {"valid_until": c.row["valid_until"], "superseded_by": c.row.get("superseded_by")}
        for name in place_names(str(c.row.get("content") or "")):
            if name not in held and name not in names and (
                    name not in old or str(old[name]["valid_until"]) < str(mark["valid_until"])):
                old[name] = mark
    if not old:
        return {}
    out: dict[str, Any] = {}
    for c in ranked:
        if c.kind != "turn" or c.id in stale or c.id in echoed or c.id in cited or c.row.get("valid_until"):
            continue
        low = str(c.row.get("content") or "").casefold().replace("’", "'")
        if ":" in low[:40] and 0 < low.find(":") < 40:
            continue  # a transcript's "Caroline: ..." line: its speakers change topics, not facts
        found = [old[n] for n in old if n in low and echo.named(low, n)]  # a substring first: most are not
        if found and OWN_ENDING_KEPT and c.row.get("role") in (None, "user"):  # the turn ending it is the change
            gone = ended.things(str(c.row.get("content") or ""))
            found = [old[n] for n in old if n in low and echo.named(low, n) and not (gone and ended.words(n) & gone)]
        if found:
            out[c.id] = max(found, key=lambda m: str(m["valid_until"]))
    return out


OWN_ENDING_KEPT = True  # False: a user's turn saying a replaced name is over ("closed my Lloyds account,
# everything is on Starling now") is marked replaced for naming it, like an old statement


# -- older turns naming another name than the fact the question found ------------------------------
# "im at Oriel Systems on the backend team" (January), then "joined fennick & co as their first
# engineer" (March): the ledger read the second as the employer and never the first, whose words are
# not the slot's ("at", no "work"), so ``topical`` cannot tell it is the same fact. A question about
# the user that finds the one-valued fact now held finds the older turn beside it: a user's statement
# said before that fact began, naming a different name where a value goes ("at Oriel", "on a Vespa",
# "in Bergen"), is marked replaced by it.
def older_named(ranked: list[Cand], stale: dict[str, Any], echoed: dict[str, Any], cited: set[str],
                held: set[str], names: set[str], facts: list[dict[str, Any]]) -> dict[str, Any]:
    """Candidate user turns said before the start of the first one-valued fact of the user's among
    the candidate claims (``facts``: ``echo.one_valued``), cited by no claim valid now, naming a place
    name (``place_names``) that no claim valid now holds and no person bears, and not naming the fact's
    value: id -> the fact's mark (replaced when it began)."""
    one = {str(f["id"]): f for f in facts}
    fact = next((one[c.id] for c in ranked if c.kind == "claim" and c.id in one), None)
    if fact is None or not fact.get("valid_from"):
        return {}
    start = str(fact["valid_from"])
    value = echo.value_words(str(fact.get("value") or ""))
    whole = " ".join(str(fact.get("value") or "").casefold().split())
    out: dict[str, Any] = {}
    for c in ranked:
        if c.kind != "turn" or c.row.get("role") not in (None, "user") or c.id in stale or c.id in echoed \
                or c.id in cited or c.row.get("valid_until") or not str(c.row.get("valid_at") or "") < start:
            continue
        text = str(c.row.get("content") or "")
        if (":" in text[:40] and 0 < text.find(":") < 40) or kinds.states_nothing(c) or low_content(text):
            continue
        found = [n for n in place_names(text) if n not in held and n not in names and n not in value]
        if found and not echo.named(text.casefold().replace("’", "'"), whole):
            out[c.id] = {**fact, "valid_until": start, "superseded_by": fact["id"]}
    return out


# -- a stay or a stand-in for a while, over by now ---------------------------------------------------
# "I'm house-sitting in Brighton till the 20th", "hire car for the week, a fiat 500", "it's the bus for
# the next month or so": the user said it would last a while; no claim valid now cites it (the ledger
# read no lasting fact from it, or bounded the fact it read). Once that while is certainly over (its
# longest reading: "a week" is 8 days, "a month" 35), the turn is marked ended then. A "been ... for a
# month" tells how long something has lasted, not how long it will: never marked.
_SPAN = re.compile(
    r"\b(?:(?P<w>(?:for|this|for the next|over the) (?:the )?(?:week|7 days)|"
    r"(?:for|till|until|til) (?:the )?end of (?:the |this )?week)|"
    r"(?P<nw>next week)|(?P<we>(?:this|for the|over the) weekend)|"
    r"(?P<d>for (?:a |the )?(?:few|couple of|couple|2|two|3|three) (?:days|nights)|for (?:the )?(?:day|night)|"
    r"(?:till|until|til) (?:mon|tues|wednes|thurs|fri|satur|sun)day)|"
    r"(?P<f>for (?:a |the next )?(?:fortnight|couple of weeks|few weeks|two weeks|2 weeks|three weeks|3 weeks)|"
    r"this fortnight|(?:till|until|til) the \d{1,2}(?:st|nd|rd|th)?\b)|"
    r"(?P<m>for (?:a|the|the next|one) month|this month|for (?:the rest of )?(?:this|the) month)|"
    r"(?P<s>for the (?:summer|winter|spring|autumn|season|term|semester)))\b", re.IGNORECASE)
_LASTED = re.compile(r"\b(?:been|for the (?:past|last)|already|since|ago|every|each|usually|always|"
                     r"mov(?:e|ed|ing)|relocat\w*|start\w*|switch\w*|join\w*|from now|permanent\w*|for good)\b",
                     re.IGNORECASE)  # how long it has lasted, or a lasting change ("moving to Leiden this month")
_DAYS = {"w": 8, "nw": 15, "we": 4, "d": 8, "f": 32, "m": 35, "s": 125}


@lru_cache(maxsize=8192)
def span_days(text: str) -> int | None:
    """How many days at most ``text`` says its state lasts from when it was said (``_SPAN``), or None."""
    if _LASTED.search(text) or "?" in text:
        return None
    m = _SPAN.search(text)
    if m is None:
        return None
    return max(_DAYS[k] for k, v in m.groupdict().items() if v)


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_UNTIL_MONTH = re.compile(r"\b(?:until|till|til|through|thru|to) (?:the )?(?:end of )?(?P<m>" +
                          "|".join(_MONTHS) + r")\b", re.IGNORECASE)


@lru_cache(maxsize=8192)
def span_end(text: str, said: str) -> str | None:
    """When a state ``text`` says lasts a while is over at the latest: ``span_days`` after ``said``, or
    the end of the month it says it lasts until or through ("covering for someone until the end of
    October", "closed for refurb through october"); None when it says neither."""
    try:
        base = datetime.fromisoformat(said.replace("Z", "+00:00"))
    except ValueError:
        return None
    m = _UNTIL_MONTH.search(text)
    if m is not None and not _LASTED.search(text) and "?" not in text:
        month = _MONTHS.index(m.group("m").casefold()) + 1
        year = base.year + (month < base.month)
        return format_time(datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=base.tzinfo))
    days = span_days(text)
    return None if days is None else format_time(base + timedelta(days=days))


def lapsed(ranked: list[Cand], stale: dict[str, Any], echoed: dict[str, Any], cited: set[str],
           at: str) -> dict[str, Any]:
    """User turns no claim valid at ``at`` cites, telling of a state for a while (``span_days``) that
    is over by ``at``: id -> their mark (``valid_until``: the end of that while; no successor)."""
    out: dict[str, Any] = {}
    for c in ranked:
        if c.kind != "turn" or c.row.get("role") not in (None, "user") or c.id in stale or c.id in echoed \
                or c.id in cited or c.row.get("valid_until") or not c.row.get("valid_at"):
            continue
        text = str(c.row.get("content") or "")
        if ":" in text[:40] and 0 < text.find(":") < 40:
            continue  # a transcript's line
        end = span_end(text, str(c.row["valid_at"]))
        if end is not None and end <= at:
            out[c.id] = {"valid_until": end, "superseded_by": None}
    return out


# -- a plan no claim holds, in an ``as_of`` search ----------------------------------------------------
# "got the ICU job!! i start there in april", "I'll be store manager after christmas", "next year we'll
# be relocating to Glasgow": the ledger read no claim from the turn (else ``planned`` finds it), so an
# ``as_of`` search between the turn and that date shows the plan as if it held. A user's turn telling
# of what will be, with a date phrase the write side's resolver (``write.extract_time.resolve_date``)
# reads as after the search's time, is marked "not yet true" from that date (its ``starts``).
_WILL = re.compile(r"\b(?:i'?ll|i will|we'?ll|we will|(?:i'?m|we'?re|i am|we are) (?:going to|gonna)|gonna|"
                   r"start(?:s|ing)?|begin(?:s|ning)?|from next|as of)\b", re.IGNORECASE)
_WHEN = re.compile(
    r"\b(?:next (?:week|month|year)|after christmas|christmas|new year|"
    r"(?:in |early |mid[- ]?|late )?(?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)|"
    r"(?:on )?the \d{1,2}(?:st|nd|rd|th)|(?:in |next )?(?:spring|summer|autumn|fall|winter))\b", re.IGNORECASE)


@lru_cache(maxsize=8192)
def plan_start(text: str, said: str) -> str | None:
    """When the plan ``text`` (said at ``said``) tells of begins: the earliest date phrase after
    ``said`` in a turn saying what will be (``_WILL``), or None (no plan, or a question)."""
    if "?" in text or not _WILL.search(text) or kinds._HYPOTHETICAL.match(text):
        return None
    from ..write.extract_time import resolve_date  # the write side's reading of "in april", "next year"

    try:
        base = datetime.fromisoformat(said.replace("Z", "+00:00"))
    except ValueError:
        return None
    found = []
    for m in _WHEN.finditer(text):
        phrase = m.group(0).casefold().removeprefix("after ")
        if phrase in ("may", "mar", "sep", "sept", "dec", "jan", "jun", "jul", "aug", "oct", "nov", "feb", "apr") \
                and not m.group(0)[:1].isupper() and not text[:m.start()].casefold().rstrip().endswith("in"):
            continue  # "may" the verb, "mar" the word: only "in may" or a capital
        day = resolve_date(phrase, base)
        if day is not None and day > base:
            found.append(format_time(day))
    return min(found) if found else None


def plans(ranked: list[Cand], ledger: list[dict[str, Any]], done: set[str] | dict[str, Any],
          at: str) -> dict[str, str]:
    """User turns said by ``at`` that no claim cites, telling of a plan (``plan_start``) that begins
    after ``at``: id -> when it begins. ``done``: turns already marked."""
    refs = {ref for r in ledger for ref in r["_refs"]}
    out: dict[str, str] = {}
    for c in ranked:
        if c.kind != "turn" or c.row.get("role") not in (None, "user") or c.id in done or c.id in refs:
            continue
        said = str(c.row.get("valid_at") or "")
        text = str(c.row.get("content") or "")
        if not said or said > at or (":" in text[:40] and 0 < text.find(":") < 40):
            continue
        start = plan_start(text, said)
        if start is not None and start > at:
            out[c.id] = start
    return out


def replaced_phrases(ranked: list[Cand], at: str, held: set[str], names: set[str],
                     memo: dict[str, list[tuple[list[str], list[str]]]] | None = None) -> dict[str, dict[str, Any]]:
    """For ``Hit.stale``: the names (``place_names``' phrases, whole: "Virgin Media") that a user's candidate
    turn marked past by ``at`` ("our internet is with Virgin Media", replaced on 2025-06-24) gives, less
    any holding a word of a value valid now (``held``) or a person's name (``names``): casefolded phrase
    -> {"named", "turn", "valid_until", "superseded_by"} (the latest such turn)."""
    out: dict[str, dict[str, Any]] = {}
    for c in ranked:
        until = c.row.get("valid_until")
        if c.kind != "turn" or c.row.get("role") not in (None, "user") or not until or str(until) > at:
            continue
        found = None if memo is None else memo.get(c.id)
        if found is None:
            found = _phrases(str(c.row.get("content") or ""))
            if memo is not None:
                if len(memo) > KEEP_TURNS:
                    memo.clear()
                memo[c.id] = found
        for words, keys in found:
            if not keys or any(k in _NOT_NAMES or k in held or k in names or len(k) < 3 for k in keys):
                continue
            phrase = " ".join(keys)
            if phrase not in out or str(out[phrase]["valid_until"]) < str(until):
                out[phrase] = {"named": " ".join(words), "turn": c.id, "valid_until": until,
                               "superseded_by": c.row.get("superseded_by")}
    return out


def _phrases(text: str) -> list[tuple[list[str], list[str]]]:
    """``text``'s names after a preposition, each (words as written, casefolded words without a
    possessive 's), leading non-names dropped."""
    out = []
    for m in _PLACE.finditer(text):
        words = m.group(1).split()
        keys = [w.casefold().replace("’", "'") for w in words]
        keys = [k[:-2] if k.endswith("'s") else k for k in keys]
        while keys and keys[0] in _NOT_NAMES:
            words, keys = words[1:], keys[1:]
        out.append((words, keys))
    return out
