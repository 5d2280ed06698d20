"""Changes stated against what the user said before: the earlier fact names the slot.

Ordinary chat often changes a fact without repeating its predicate: "replaced the leaf with a
hyundai ioniq", "been drinking matcha instead of coffee", "back to turin!", "rejoined red lions",
"climbing moved to saturdays", "they moved standup to 10:15", "got rid of amazon prime",
"nibbles died last week". Each pattern here yields a :class:`Change`; the extractor finds the
user's recent fact it refers to (by the old value, or by the slot's name) and turns the change
into a candidate for that fact's predicate and subject, so the resolver supersedes or closes it.
A change that refers to nothing the extractor has seen makes no claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .extract_rules import NOT_MINE_RE

_V = r"[^,;!?]+?"
_END = r"(?=\s*(?:[,;!?]|\.(?:\s|$)|\b(?:and|but|because|so|since|as|now|again|instead|too|last (?:week|month|year|"\
    r"night|\w+day)|yesterday|earlier|recently|back in)\b|$))"
_LEAD = r"^(?:(?:oh|ok|okay|so|well|and|but|also|btw|update|news|quick update|yeah|yep|anyway|finally|phew|yay)"\
    r"[,!:]*\s+)*"


@dataclass(frozen=True)
class Change:
    kind: str  # "replace": new value for the slot of ``old``; "back": an earlier value again;
    #            "close": the fact naming ``old`` ended; "slot": the slot named ``key`` has value ``new``;
    #            "swap": ``new`` replaces the fact of the same kind ("switched to almond milk": a milk)
    new: str = ""
    old: str = ""
    key: str = ""


_REPLACE = [
    re.compile(rf"{_LEAD}(?:i |we )?(?:'ve |have )?(?:replaced|swapped|traded|exchanged) (?:my |our |the )?"
               rf"(?P<old>{_V}) (?:with|for) (?:a |an |the |my )?(?P<new>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:i |we )?(?:'ve |have )?(?:switched|changed|moved|went|gone) from (?:a |an |the |my )?"
               rf"(?P<old>{_V}) to (?:a |an |the )?(?P<new>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:i'?ve |i |we )?(?:been |now |started )?(?:drinking|eating|using|playing|reading|"
               rf"watching|driving|wearing|listening to|doing|having) (?P<new>{_V}) instead of (?:the |my )?"
               rf"(?P<old>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?P<new>{_V}) instead of (?:the |my )?(?P<old>{_V}) now{_END}", re.IGNORECASE),
    # "packed up and left Cork for Galway", "left Boots for Lloyds": a name after "for" ("left Paris for the
    # weekend" names none)
    re.compile(rf"{_LEAD}(?:i |we )?(?:'ve |have )?(?:just |finally )?(?:left|quit|ditched|dropped) (?:my |our |the )?"
               rf"(?P<old>{_V}) for (?P<new>(?-i:[A-Z]){_V}){_END}", re.IGNORECASE),
]
_BACK = re.compile(
    rf"{_LEAD}(?:i'?m |we'?re |i'?ve |we'?ve |i |we )?(?:'ve |have )?(?:moved |went |gone |come |came |am |are |now )?"
    rf"(?:back (?:to|on|in|at|into|with)|boomeranged back to|rejoined|returned to|re-?joined) (?:the |my |a )?"
    rf"(?P<new>{_V}){_END}",
    re.IGNORECASE,
)
_CLOSE = [
    re.compile(rf"{_LEAD}(?:i |we )?(?:'ve |have |just |finally )*(?:got rid of|cancell?ed|cancelling|ditched|dropped|"
               rf"sold|gave away|gave up|quit|stopped|stopped taking|left|ended|closed|deleted|unsubscribed from|"
               rf"came off|come off|weaned off|got off) "
               rf"(?:my |our |the |a |an )?(?P<old>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:my |our |poor |little |old |sadly |unfortunately |so sad,? |rip |r\.i\.p\.? )*"
               rf"(?P<old>(?:[a-z]+ ){{0,2}}[a-z]+) (?:has |had )?"
               rf"(?:died|passed away|passed|ran away|is gone|was put down|crossed the rainbow bridge)\b",
               re.IGNORECASE),
    re.compile(rf"{_LEAD}i(?:'m| am) not (?:doing |on |into |using |with |at )?(?:the |a |an )?(?P<old>{_V}) "
               rf"any ?more\b", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:today|yesterday|friday|it|this) (?:was|is) my last day (?:at|with|in|on) (?:the )?"
               rf"(?P<old>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:i've |i have |i )?(?:handed in my notice|resigned|walked out|got (?:laid off|fired|"
               rf"let go|made redundant)) (?:at|from) (?:the )?(?P<old>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}no more (?P<old>(?-i:[A-Z])[\w&'-]*(?: (?-i:[A-Z])[\w&'-]*)*){_END}", re.IGNORECASE),
    # endings by shape; each closes only a fact the user gave before (by its value or slot name)
    re.compile(rf"(?:^|[,;] ?|\bso )(?:my |the )?(?P<old>[a-z][\w+' -]{{1,30}}?)(?:'s| is| are) (?:all |totally |"
               rf"officially |well and truly )?(?:done|over|finished|a thing of the past)(?: for (?:me|us))?"
               rf"(?: now)?{_END}", re.IGNORECASE),
    re.compile(r"\b(?P<old>[a-z]+)[- ]free\b", re.IGNORECASE),
    re.compile(r"\bnon-?(?P<old>smoker|drinker|vaper|driver|member)\b", re.IGNORECASE),  # "officially a non-smoker"
    re.compile(rf"\b(?:took|taken|take|got|get|came|come|went|weaned|been) (?:me |us |myself )?off (?:the |my |of )?"
               rf"(?P<old>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"(?:^|[.,;!] ?){_LEAD}no more (?P<old>[a-z][\w+' -]{{1,30}}?){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:i |we )?(?:no longer|don't|do not) (?:have|own|use|do|play|drive|go to|attend) "
               rf"(?:my |our |the |a |an )?(?P<old>{_V})(?: any ?more)?{_END}", re.IGNORECASE),
]
_SWAP = [  # no old value named: the new one shares its head word (or the slot's name) with an earlier fact
    re.compile(rf"{_LEAD}(?:(?:i|we)(?:'ve|'m|'re| have| am| are)? )?(?:just |now |also )*(?:switched|changed|"
               rf"moved|gone|went|converted|switching|moving|changing) (?:over )?to (?:a |an |the |my )?"
               rf"(?P<new>{_V}){_END}",
               re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:i'm|i am|we're|we are) (?:now )?on (?:a |an |the )?(?P<new>{_V}) now{_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:i |we )?(?:'ve |have )?(?:just )?got (?:a |an )?new (?P<key>[a-z]+),? (?:a |an |the )?"
               rf"(?P<new>{_V}){_END}", re.IGNORECASE),
]
_DAYTIME = (r"(?:(?:on |every |at |in the )?(?:mon|tues|tue|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?s?\b"
            r"|(?:at )?\d{1,2}(?::\d\d)?\s*(?:am|pm)?\b|(?:in the )?(?:mornings?|afternoons?|evenings?|nights?)\b)")
_SLOT = [
    re.compile(rf"{_LEAD}(?:[a-z]+ )?(?:'ve |have )?(?:moved|changed|switched|rescheduled|shifted|"
               rf"pushed|brought) (?:my |our |the |his |her )?(?P<key>[a-z][a-z ]{{1,30}}?) to "
               rf"(?P<new>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:my |our |the )?(?P<key>[a-z][a-z ]{{1,30}}?) (?:has |have )?(?:moved|changed|switched|"
               rf"shifted|got moved) to (?P<new>{_V}){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:my |our |the )?(?P<key>[a-z][a-z ]{{1,30}}?) (?:is|are|will be|'s|'ll be) (?:now |"
               rf"going to be )?(?P<new>{_DAYTIME}[^,;!?.]*?){_END}", re.IGNORECASE),
    re.compile(rf"{_LEAD}(?:my |our |the )?(?P<key>[a-z][a-z ]{{1,30}}?) (?:go|goes|happen|happens|is|are) "
               rf"(?:out )?(?P<new>on {_V}) now{_END}", re.IGNORECASE),
]
DAYTIME = re.compile(_DAYTIME, re.IGNORECASE)
_NOT_KEYS = frozenset("i we it that this they he she you everything nothing something which what who".split())


def changes(clause: str) -> list[Change]:
    """Every change this clause may state, most specific first; else those of the part after a
    comma ("took your advice, cancelled netflix"). Someone else's idea states none ("my mate keeps telling me to
    move to Ipswich, no chance")."""
    if NOT_MINE_RE.search(clause):
        return []
    found = _changes(clause)
    parts = clause.split(", ")
    for i in range(1, len(parts)):
        if found:
            break
        found = _changes(", ".join(parts[i:]))
    return found


def _changes(clause: str) -> list[Change]:
    out: list[Change] = []
    for pattern in _REPLACE:
        m = pattern.search(clause)
        if m:
            out.append(Change("replace", _clean(m.group("new")), _clean(m.group("old"))))
    m = _BACK.search(clause)
    if m:
        out.append(Change("back", _clean(m.group("new"))))
    for pattern in _SWAP:
        m = pattern.search(clause)
        if m and not out and not re.match(r"(?:back|from)\b", m.group("new"), re.IGNORECASE):
            out.append(Change("swap", _clean(m.group("new")), key=_clean(m.groupdict().get("key") or "")))
    for pattern in _SLOT:
        m = pattern.search(clause)
        if m and m.group("key").split()[0].casefold() not in _NOT_KEYS:
            out.append(Change("slot", _clean(m.group("new")), key=_clean(m.group("key"))))
    for pattern in _CLOSE:
        m = pattern.search(clause)
        if m:
            out.append(Change("close", old=_clean(m.group("old"))))
    return [c for c in out if (c.new or c.old) and len(c.new) <= 60 and len(c.old) <= 60]


def _clean(value: str) -> str:
    v = " ".join(value.split()).strip(" .,'\"!")
    v = re.sub(r"\s+(?:again|now|too|as well|instead|lol|haha|tbh|ngl|rn|honestly|this season|this year|for good|"
               r"for me|for us)$", "", v,
               flags=re.IGNORECASE)
    v = _WHEN_TAIL.sub("", v)  # "Melbourne over the holidays": when it changed is not the value
    return v.strip()


_WHEN_TAIL = re.compile(r"\s+(?:over|during|in|at|on|by|last|this|before|after) (?:the )?(?:holidays?|summer|winter|"
                        r"spring|autumn|fall|weekend|break|christmas|week|month|year|end of \w+(?: \w+)?)$",
                        re.IGNORECASE)


def norm_value(value: str) -> str:
    v = re.sub(r"^(?:a|an|the|my)\s+", "", value.casefold().strip())
    return re.sub(r"[^\w<> ]+", "", v).strip()


def singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def slot_name(words: str) -> str:
    """A slot name from the user's words: "favourite colour" -> favorite_colour, "yoga" -> yoga."""
    w = re.sub(r"^(?:my|our|the|a|an)\s+", "", words.casefold().strip())
    w = re.sub(r"\s+(?:these days|now|at the moment|currently|lately)$", "", w)
    w = re.sub(r"\bfavou?rite\b|\bfave?\b", "favorite", w)
    w = " ".join(singular(x) for x in w.split())
    w = re.sub(r"[^a-z0-9]+", "_", w).strip("_")[:40] or "thing"
    return _SAME_SLOT.get(w, w)


# one slot said two ways: "my new GP is Dr Hughes" replaces "my doctor is Dr Patel"
_SAME_SLOT = {"gp": "doctor", "general_practitioner": "doctor", "family_doctor": "doctor"}
