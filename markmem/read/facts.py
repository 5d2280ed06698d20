"""Fact-first ranking for current searches: what is true now comes before what was said.

After fusion, in a current search (no ``as_of``/``known_at``):

* a turn whose every extracted claim has since been closed is **stale**: it is marked
  (``valid_until``, ``superseded_by``: the claim that replaced it, if any) and moved after
  every turn that is not, and the active claim that replaced it is brought in at its place.
  "Where do I live?" matches "I live in Lisbon" (said last year); the answer is the claim that
  superseded it ("I moved to Porto");
* a low-content turn ("ok sounds good", "haha yes"), a question, a hypothetical ("what if we moved
  to Brussels") and the assistant's turn are moved after the turns that state something, and left
  out when only the cosine relates them to the question (no word of it);
* claims come before the turns they were extracted from (fusion already keeps one of the two);
  a claim about someone else ("my dad lives in Aberdeen") comes after the turns, unless the
  question names that person (and is left out when only the cosine found it).

Two SQL statements find the stale turns among the candidates (see ``_citing``); a successor is read
by id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..ids import now as utc_now
from ..index.cache import Cache
from .fts import CLAIM_COLS, hydrate_turns
from .fuse import Cand

_CHAT = re.compile(
    r"^(?:(?:ok(?:ay)?|k|sure|yes|yeah|yep|yup|no|nope|nah|thanks|thank you|thx|ty|cool|nice|great|awesome|"
    r"perfect|lol|haha+|hehe|hmm+|oh|ah|wow|right|exactly|totally|true|same|agreed|got it|sounds good|"
    r"sounds great|makes sense|fair enough|good|fine|alright|all right|will do|of course|no problem|np|"
    r"you too|bye|goodbye|see you|good night|morning|hi|hello|hey|me too|for sure|definitely|absolutely|"
    r"i see|i know|that's (?:great|nice|cool|fair|true|right|funny|awesome)|haha yes|sounds good to me|"
    r"good to know|love it|i agree|yes please|no thanks|not really|maybe|cheers)[\s!.,?:)(]*)+$",
    re.IGNORECASE,
)


def low_content(text: str) -> bool:
    """Chit-chat that holds no fact: "ok sounds good", "haha yes exactly!"."""
    t = text.strip()
    return len(t) < 60 and bool(_CHAT.match(t))


def rerank(cache: Cache, user_id: str, ranked: list[Cand], query: str = "") -> list[Cand]:
    """Fused candidates, fact first (see the module docstring). Marks go in ``Cand.row``."""
    present = utc_now()
    light = [c for c in ranked if c.kind == "turn" and "content" not in c.row and "rowid" in c.row]
    if light:  # the lexicon's light rows hold no text; search hydrates them for its hits anyway
        full = hydrate_turns(cache, [c.row["rowid"] for c in light], user_id)
        for c in light:
            if c.id in full:
                c.row = {**c.row, **full[c.id]}
    stale = _citing(cache, user_id, [c.id for c in ranked if c.kind == "turn"], present)
    have = {c.id for c in ranked if c.kind == "claim"}
    successors: dict[str, Cand] = {}
    facts: list[Cand] = []
    said: list[Cand] = []
    late: list[Cand] = []
    for c in ranked:
        if c.kind != "turn":
            facts.append(c)
            continue
        if c.id in stale:
            closed = max(stale[c.id], key=lambda r: r["valid_until"] or "")
            c.row = {**c.row, "valid_until": closed["valid_until"], "superseded_by": closed["superseded_by"]}
            nxt = closed["superseded_by"]
            if nxt and nxt not in have and nxt not in successors:
                successors[nxt] = c
            late.append(c)
        elif low_content(str(c.row.get("content") or "")) or _not_a_statement(c):
            if _lexical(c):
                late.append(c)  # else: only the cosine relates it, and it states nothing: left out
        else:
            said.append(c)
    found = _successors(cache, user_id, successors, present)
    for start, row in found.items():
        if row["id"] in have:
            continue
        old = successors[start]
        new = Cand("claim", row["id"], row, dict(old.ranks), bm25=old.bm25, cos=old.cos)
        new.score = old.score
        new.weights = {**old.weights, "replaces": 1.0}
        facts.append(new)
        have.add(row["id"])
    facts.sort(key=lambda c: -c.score)
    asked = query.casefold()
    own = [c for c in facts if _about(c, user_id, asked)]
    others = [c for c in facts if not _about(c, user_id, asked) and _lexical(c)]
    return own + said + others + late


_HYPOTHETICAL = re.compile(r"^\W*(?:what if|if i|if we|maybe|perhaps|should i|should we|would|could i|could we|"
                           r"might|i wonder|wondering)\b", re.IGNORECASE)


def _not_a_statement(c: Cand) -> bool:
    """A question, a hypothetical, or the assistant's turn: none states the user's fact."""
    text = str(c.row.get("content") or "")
    return bool(c.row.get("question")) or c.row.get("role") == "assistant" or bool(_HYPOTHETICAL.match(text))


def _lexical(c: Cand) -> bool:
    """Found by the words of the question (a BM25 or exact lane), not by the cosine alone."""
    return any(lane in c.ranks for lane in ("turns", "claims", "exact")) or not c.ranks


def _about(c: Cand, user_id: str, asked: str) -> bool:
    """A claim about the user, or about the person the question names ("Where does Kai work?")."""
    subject = str(c.row.get("subject") or user_id)
    return subject == user_id or subject.casefold() in asked


def _current(row: dict[str, Any], present: str) -> bool:
    return (row["valid_until"] is None or row["valid_until"] > present) and \
        (row["valid_from"] is None or row["valid_from"] <= present)


def _citing(cache: Cache, user_id: str, turn_ids: Sequence[str], present: str) -> dict[str, list[dict[str, Any]]]:
    """The closed claims that cite each turn, for the turns no current claim cites, by turn id.
    Two statements over the user's closed claims (few), then its current ones for those turns only."""
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


def _successors(cache: Cache, user_id: str, wanted: dict[str, Cand], present: str) -> dict[str, dict[str, Any]]:
    """The claim now current at the end of each supersession chain (a few hops at most)."""
    out: dict[str, dict[str, Any]] = {}
    for start in wanted:
        cid: str | None = start
        for _ in range(8):
            if cid is None:
                break
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
