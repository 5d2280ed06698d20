"""Slot topics and value shapes: a later statement on a slot's topic with a new value of the same shape.

The rules read a change only in wordings they know. Chat says the same in many more ("home's Utrecht
these days", "Work relocated me to Singapore", "three jobs later, I'm at H&M now"). Two general
signs tell that a clause restates a one-valued slot the user gave before:

* its **topic**: a word of the slot's name (``routine_piano_lesson``: piano, lesson) or, for the
  common slots, one of their usual words (:data:`TOPIC`: lives_in: live, home, moved, rent, ...);
* a value of the **same shape** as the slot's value: a name (capitalised words), a day, a clock
  time or a number, and only one such value, different from the old one.

The read side uses the topic alone (``read.echo``): an older turn on the topic of a newer fact is
marked as replaced by it.
"""

from __future__ import annotations

import re
from functools import lru_cache

TOPIC = {
    "lives_in": "live living livin lived home based moved relocated flat apartment house place rent renting city",
    "hometown": "from grew hometown",
    "employer": "work working job gig company employer office",
    "job": "work working job gig",
    "car": "car drive driving",
    "phone_model": "phone",
    "diet": "diet eat eating meat vegan vegetarian",
    "partner": "partner boyfriend girlfriend wife husband dating married seeing",
    "studies": "study studying degree course uni university transferred",
    "school": "school uni university transferred",
}
_NAMED = frozenset({"lives_in", "hometown", "employer", "school"})  # slots whose values are names
_NOT_TOPIC = frozenset("in at on of for to the a an is now for_now routine favorite fav thing user my".split())
_DAY = r"(?:mon|tues|tue|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?s?"
_MONTHS = frozenset("january february march april may june july august september october november december "
                    "jan feb mar apr jun jul aug sep sept oct nov dec".split())
_NOT_NAME = frozenset("i i'm i've i'd i'll mum mom dad monday tuesday wednesday thursday friday saturday sunday "
                      "ok okay lol omg btw tbh the a an my our it it's this that".split()) | _MONTHS
SHAPES = {
    "time": re.compile(r"\b\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|\b\d{1,2}:\d\d\b|\bmidnight\b|\bnoon\b", re.IGNORECASE),
    "day": re.compile(rf"\b{_DAY}\b", re.IGNORECASE),
    "num": re.compile(r"\b\d+(?:st|nd|rd|th)?\b"),
}
_NAME = re.compile(r"(?<![\w'])(?:[A-Z][\w&'.+-]*|[A-Z]{2,})(?:\s+(?:of|de|la|van|von|&)?\s*(?:[A-Z][\w&'.+-]*|\d+))*")
# the words a value follows; not "with": "lunch with Tom at work"
_BEFORE_NAME = frozenset("in to at near outside for 's is now joined by seeing dating".split())


@lru_cache(maxsize=2048)
def topic_words(predicate: str) -> frozenset[str]:
    """The words a clause on a slot's topic is likely to hold: the slot name's own words and, for the
    common slots, their usual verbs and nouns."""
    words = {w for w in predicate.casefold().split("_") if len(w) >= 3 and w not in _NOT_TOPIC}
    return frozenset(words | set(TOPIC.get(predicate, "").split()))


def on_topic(words: set[str], topic: frozenset[str]) -> bool:
    """A word of the clause is a topic word (or shares its stem: "lessons", "livin")."""
    pattern = _topic_pattern(topic)
    return any(pattern.fullmatch(w) for w in words)


@lru_cache(maxsize=2048)
def _topic_pattern(topic: frozenset[str]) -> re.Pattern[str]:
    """One regex per topic: a topic word with any ending (one letter for a short word), or a cut of
    a topic word at least four letters long."""
    alts = [re.escape(k) + (r"[\w']*" if len(k) >= 4 else r"\w?(?:'s)?") for k in sorted(topic)]
    alts += [re.escape(k[:n]) for k in sorted(topic) for n in range(4, len(k))]
    return re.compile("|".join(alts) or r"(?!)")


def shape(value: str, predicate: str = "") -> str:
    """ "time", "day", "num", "name" or "" (a plain phrase: no shape to match). A place or a company
    typed in lower case ("i live in zwolle") is still a name."""
    for name, pattern in SHAPES.items():
        if pattern.search(value):
            return name
    return "name" if _names(value, anywhere=True) or predicate in _NAMED else ""


def values(clause: str, kind: str) -> list[str]:
    """The values of shape ``kind`` in ``clause``, in order, without repeats."""
    if kind == "name":
        found = _names(clause, anywhere=False)
    else:
        found = [m.group(0) for m in SHAPES[kind].finditer(clause)]
    return list(dict.fromkeys(found))


def _names(text: str, anywhere: bool) -> list[str]:
    out = []
    for m in _NAME.finditer(text):
        name = m.group(0).strip()
        if name.casefold() in _NOT_NAME or name.split()[0].casefold() in _NOT_NAME:
            continue
        before = text[: m.start()].split()
        if not anywhere and (not before or before[-1].casefold().rstrip(",") not in _BEFORE_NAME
                             and not before[-1].casefold().endswith("'s")):
            continue  # a name the clause starts with is its subject ("Work relocated me"); a value follows a link word
        out.append(name)
    return out
