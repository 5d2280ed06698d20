"""What kind of slot a clause speaks of when the rules alone cannot tell.

What a bare "I'm a <noun phrase>" says when the noun is not a known job title.

"I'm a solicitor now", "I'm a social smoker", "I'm a night owl": the rules read a job only from a
curated list of titles and job suffixes, so an unlisted title made no claim, and neither did a
habit or a trait. Two general readings, no list of phrasings:

* an agent noun whose verb has a slot ("smoker" -> smoke -> ``smokes``, "drinker" -> ``drinks``):
  that slot, the whole phrase its value ("social smoker"); "I quit smoking" later closes it;
* else the model2vec model markmem ships compares the phrase with two prototype texts, an
  occupation and a habit or trait (prototype words are not from any bench set). A clearly nearer
  occupation is a ``job``; a clearly nearer trait a many-valued ``trait`` ("night owl", "introvert");
  anything unclear makes no claim, as before.

And by what the user has said before (a value of the type it replaces): "I'm with Starling now" is
an employer when the user told of an employer and of no partner; "my go-to is an oat latte" is the
user's ``go_to_drink``; the named place right after a job is its employer.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from .extract_open import SLOTS, lemma
from .extract_recall import CORE
from .extract_service import is_time_value, shipped_embedder

Fact5 = tuple[str, str, str, bool, float]  # (predicate, value, type, multi, confidence)

PROTOTYPES = {
    "job": "an occupation or profession someone is paid for: engineer, teacher, lawyer, plumber, cashier, "
           "manager, doctor, electrician",
    "trait": "a habit, taste or personality: introvert, early riser, heavy sleeper, worrier, foodie, bookworm, "
             "couch potato, big fan",
}
JOB_FLOOR, JOB_MARGIN = 0.15, 0.08  # cosine of the occupation prototype, and its lead over the trait one
TRAIT_FLOOR, TRAIT_MARGIN = 0.18, 0.05
_NOT_PHRASE = re.compile(r"^(?:bit|little|lot|few|couple|while|total|complete|bit of|kind of|sort of)\b|"
                         r"\b(?:of|to|for|in|at|with|about|than)\b", re.IGNORECASE)
_PERSONAL = frozenset("person type guy girl gal lady man woman kind".split())  # "a cat person", "a beach guy"
# a praising or blaming word first says how someone is at it, not what they are: "he's been a great partner"
_JUDGING = frozenset("great good amazing awesome fantastic excellent wonderful brilliant terrible awful bad "
                     "perfect lovely nice incredible huge real true".split())
_lock = threading.Lock()
_table: dict[str, Any] = {}


def agent_slot(phrase: str) -> tuple[str, str, bool] | None:
    """The slot of an agent noun's verb: "social smoker" -> ("smokes", "fact", False)."""
    words = phrase.casefold().split()
    if not words:
        return None
    head = words[-1]
    for cut in ("er", "r"):
        if head.endswith(cut) and len(head) > len(cut) + 2:
            base = lemma(head[: -len(cut)])
            stem = head[: -len(cut)]
            for verb in (stem, base, stem[:-1] if len(stem) > 3 and stem[-1] == stem[-2] else ""):
                if verb and verb in SLOTS:
                    return SLOTS[verb]
    return None


def kind_of(phrase: str) -> str | None:
    """ "job", "trait" or None (unclear, or no model here)."""
    words = phrase.casefold().split()
    if not words or len(words) > 4 or _NOT_PHRASE.search(phrase) or (len(words) > 1 and words[0] in _JUDGING):
        return None
    if words[-1] in _PERSONAL and len(words) > 1:
        return "trait"
    vectors = _prototypes()
    if vectors is None:
        return None
    embedder, table = vectors
    job, trait = (float(x) for x in table @ embedder.embed([phrase])[0])
    if job >= JOB_FLOOR and job - trait >= JOB_MARGIN:
        return "job"
    if trait >= TRAIT_FLOOR and trait - job >= TRAIT_MARGIN:
        return "trait"
    return None


def bare_fact(phrase: str) -> tuple[str, str, str, bool, float] | None:
    """(predicate, value, type, multi, confidence) for a non-listed "I'm a <phrase>", else None."""
    slot = agent_slot(phrase)
    if slot is not None:
        return slot[0], phrase, slot[1], slot[2], 0.75
    kind = kind_of(phrase)
    if kind == "job":
        return "job", phrase, "profile", False, 0.75
    if kind == "trait":
        return "trait", phrase, "fact", True, 0.7
    return None


def _prototypes() -> tuple[Any, Any] | None:
    with _lock:
        if "v" not in _table:
            embedder = shipped_embedder()
            _table["v"] = None if embedder is None else (embedder, embedder.embed(list(PROTOTYPES.values())))
        return _table["v"]  # type: ignore[no-any-return]


_BARE = re.compile(
    r"^i(?:'m| am|'ve been| have been) (?:(?:now|currently|still|also|just|really|basically|definitely|actually|"
    r"officially) )*(?:a|an) (?P<v>[a-z][\w-]*(?: [a-z][\w-]*){0,3}?)(?=\s*(?:[,;!?.]|$|\b(?:now|these days|"
    r"by (?:trade|profession)|really|and|but|lol|haha|tbh|anyway|though|at heart|at the moment|mostly|on|in)\b))",
    re.IGNORECASE)
_BY_TRADE = re.compile(r"(?:^|,\s*)(?:an? )?(?P<v>[a-z][\w-]*(?: [a-z][\w-]*)?) by (?:trade|profession)\b",
                       re.IGNORECASE)


def bare_clause(clause: str) -> list[tuple[str, str, str, bool, float]]:
    """The fact of a clause "I'm a <phrase>" or "<job> by trade" that no rule read."""
    m = _BY_TRADE.search(clause)
    if m:
        return [("job", m.group("v"), "profile", False, 0.75)]
    m = _BARE.match(clause.strip())
    if not m:
        return []
    fact = bare_fact(m.group("v"))
    return [fact] if fact else []


# -- which slot a read value belongs to, by what the user has said before -------------------------

_AT_NAME = re.compile(r"\s+(?:at|for|with) (?:the )?(?P<v>(?-i:[A-Z])[\w&'.-]*(?: (?-i:[A-Z])[\w&'.-]*){0,3})")


def job_place(clause: str, facts: list[Fact5]) -> list[Fact5]:
    """ "my job is accountant at Deloitte": the named place right after the job is the employer."""
    job = next((f for f in facts if f[0] == "job"), None)
    if job is None or any(f[0] == "employer" for f in facts):
        return []
    at = clause.find(job[1])
    m = _AT_NAME.match(clause, at + len(job[1])) if at >= 0 else None
    if m is None or is_time_value(m.group("v")):
        return []
    return [("employer", m.group("v"), "profile", False, min(job[4], 0.8))]


Open = tuple[str, str, str, bool, float, bool]  # (predicate, value, type, multi, confidence, negated)


def with_kind(facts: list[Open], clause: str, known: set[str]) -> list[Open]:
    """ "I'm with Starling now" changes the slot of that kind the user already has: an employer,
    when the user has told of an employer and of no partner (a value of the type it replaces)."""
    if "employer" not in known or "partner" in known:
        return facts
    return [("employer", v, "profile", False, conf, neg) if p == "partner" and not neg and _with(v, clause)
            else (p, v, k, mu, conf, neg) for p, v, k, mu, conf, neg in facts]


def shortened(facts: list[Open], known: list[str]) -> list[Open]:
    """ "my go-to is an oat latte" after "my go-to drink is a flat white", "meal prep" after "meal": an
    open slot whose name is one the user has, one word shorter or longer, is that slot."""
    out = []
    for p, v, k, mu, conf, neg in facts:
        near = [q for q in known if q not in CORE and _one_word_more(q, p) or _one_word_more(p, q) and q not in CORE]
        if not mu and p not in CORE and near:
            p = near[-1]
        out.append((p, v, k, mu, conf, neg))
    return out


def _one_word_more(longer: str, shorter: str) -> bool:
    return longer.startswith(shorter + "_") and "_" not in longer[len(shorter) + 1:]


def _with(value: str, clause: str) -> bool:
    return re.search(rf"\bwith {re.escape(value)}\b", clause) is not None
