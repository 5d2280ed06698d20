"""Questions that gather several memories: "how many ...", "the total ...", "what X has NAME done?".

An aggregating question is answered by *all* the memories of one kind, not by the best one: "how
many fitness classes do I attend?" needs every class the user mentioned, told in different
conversations and usually wrapped in other words ("I'm looking for a playlist for my Zumba class").
The question's own ranking is pulled towards its scaffolding ("a typical week", "from a store"), so
the thing being counted or listed (its *focus*: "fitness classes") gets a search of its own, whose
ranking takes turns with the question's (see ``read.search``).

Only the wording decides, so a question that does not gather costs one regex search:

* counting: "how many X", "the total/number/amount of X", "the average X", "how much ... in total";
* listing: "what/which X has/have NAME ...", "what kinds of X does NAME ...".

The focus is the noun phrase after the cue, up to the first verb or pronoun ("items of clothing",
"online courses", "martial arts"); a cue without a noun phrase ("what is the total I spent") has none.
"""

from __future__ import annotations

import re
from functools import lru_cache

_STOP = frozenset(
    "i i'm i've i'd me my we our you your he she they them his her their it its is am are was were be been being "
    "do does did have has had having will would can could should shall may might must that which who whom whose "
    "when where why how what than then there here in on at for from since during with by to into across over "
    "about after before per so far currently ever already still this these those all total".split()
)
_LEAD = frozenset("the a an my our different separate various distinct unique kinds kind types type sorts sort "
                  "of".split())
_COUNT = re.compile(r"\bhow many\b|\b(?:total|average|overall|combined)\b(?: (?:number|amount|count|cost|price|"
                    r"distance|time|sum) of| (?:number|amount|distance|cost))?|\b(?:the|a) number of\b", re.IGNORECASE)
# "how many days passed between ..." (a span: read.when) and "how many times did I ..." name no thing
_UNITS = frozenset("times time days day weeks week months month years year hours hour minutes".split())
# a list: "what martial arts has John done?", "what kinds of art does Caroline make?" (a plural or a kind of)
_LIST = re.compile(r"^\s*(?:what|which)\s+((?:kinds? of |types? of |sorts? of )(?:[\w'-]+ ){1,3}?|"
                   r"(?:[\w'-]+ ){0,2}?[\w'-]+[^s\W]s )(?:has|have|does|do)\s+(?!I\b|you\b|we\b)([A-Z]\w*)",
                   re.IGNORECASE)
_WORD = re.compile(r"[\w'-]+")


def focus(question: str) -> str | None:
    """The thing an aggregating question counts or lists, with whose for a list (``"books Melanie"``), else None."""
    found, whose = _match(question)
    return f"{found} {whose}" if found and whose else found


def kind(question: str) -> str | None:
    """The kind an aggregating question counts or lists (``"fitness classes"``, ``"books"``), else None."""
    return _match(question)[0]


@lru_cache(maxsize=1024)
def _match(question: str) -> tuple[str | None, str | None]:
    m = _LIST.search(question)
    if m:
        return _phrase(m.group(1)), m.group(2)
    m = _COUNT.search(question)
    if m:
        found = _phrase(question[m.end():])
        return (None if found is None or found.split()[0].casefold() in _UNITS else found), None
    return None, None


def parts(question: str) -> tuple[str, ...]:
    """The sub-queries an aggregating question adds to its own search: ``(focus,)``, else ``()``."""
    found = focus(question)
    return (found,) if found else ()


def _phrase(text: str) -> str | None:
    words = _WORD.findall(text)
    while words and words[0].casefold() in _LEAD:
        words.pop(0)
    out: list[str] = []
    for w in words:
        low = w.casefold()
        if low in _STOP:
            break
        if low == "of" and out:  # "items of clothing", "sessions of the support group"
            out.append(w)
            continue
        if low in _LEAD and out and out[-1].casefold() == "of":
            continue
        out.append(w)
        if len(out) >= 5:
            break
    while out and out[-1].casefold() == "of":
        out.pop()
    return " ".join(out) or None
