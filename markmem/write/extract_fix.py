"""Corrections by alignment: a turn that says a fact was wrong, with a new value in the old one's place.

The correction patterns of :mod:`.extract_subject` read the usual wordings ("I meant X", "X, not
Y"). Chat corrects in many more, often across sentences: "wait, I said chemistry? I teach physics",
"hmm I misspoke, it's hazelnuts I'm allergic to", "ugh autocorrect, her name is Pria", "let me
correct myself, the club meets on Wednesdays". Two general signs make such a turn a correction:

* a **correction cue** (:data:`CUE`: "meant", "misspoke", "typo", "autocorrect", "correct myself",
  "oops", "sorry", "I said", ...), and a fact the user gave lately (the same conversation, within a
  day), the latest first;
* a word in the turn **aligned** with that fact's value: of the same shape (a clock time, a day, a
  number, a capitalised name after a link word: :mod:`.extract_topic`), else of the same part of
  speech in spaCy's parse (and, preferably, the same grammatical role: the object of "teach" for the
  object of "teach"), that the earlier clause did not say.

The aligned word takes the old value's place in that fact's slot (:func:`replace_value`: "every
Tuesday with a club" -> "every Wednesdays with a club"). Without spaCy's parse only the shapes
align. A turn with no cue, or with no aligned word, is no correction (no claim rather than a wrong
one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .extract_topic import shape
from .extract_topic import values as shaped_values

CUE = re.compile(
    r"\b(?:i meant|meant to say|mis-?spoke|misspeak|mis-?typed|typo|auto-?correct(?:ed)?|correction|correct myself|"
    r"(?:let me|to) correct|scratch that|i said|mixed (?:it|them) up|mixing (?:it|them) up|not what i meant|"
    r"(?:got|had) (?:that|it|this) wrong|i was wrong|did i (?:say|write|type)|"
    # h-correct2: "wrong, it's Altrincham", "that was wrong, it's on Sunday", "I told you Yaris, it's ...",
    # "it's spelled Kaitlyn", "John, with an h"
    r"^\W*(?:(?:no|nope|sorry|oh|ugh|hmm+)\W+)*(?:that'?s |that was |that is )?wrong|"
    r"(?:that'?s|that was|that is) wrong|(?:told|gave) you (?:the wrong \w+|[\w'-]+(?=,| earlier| before| but))|"
    r"spel(?:led|t|ling)|(?<=\w, )with an? [a-z](?=\W|$)|"
    # a mid-turn "actually" ("his name is Peanut actually, Nibbles was ..."): only with the old value named
    r"(?P<soft>(?<=\w )actually)|"
    r"(?P<weak>oops|whoops|my bad|no no|^\W*(?:(?:hmm+|umm*|uh+|ah+|er+|well|oh)\W+)*no(?=\s*[,!.]|\s+wait\b)|"
    r"(?P<lead>^\W*(?:(?:hmm+|umm*|uh+|ah+|er+|well|oh|no|ugh)\W+)*(?:sorry|wait|hang on|hold on|actually))))\b",
    re.IGNORECASE)
# a turn-initial "sorry", "wait", "hang on", "actually" is a correction's cue only in a short turn
# (corrections are short: "no sorry, Bruges"; "sorry for the late reply, ..." opens a long one)
_SHORT = 15
# "hang on, it's amoxicillin ...": the corrected value restated as the turn's copular subject
_RESTATED = re.compile(r"^\W*(?:[\w']+\W+){0,4}?(?:it'?s|it is|that'?s|that is)\b", re.IGNORECASE)
_CONTENT = frozenset({"NOUN", "PROPN", "NUM", "ADJ"})
_NOT_VALUES = frozenset("wait hmm ugh oops whoops sorry typo autocorrect correction bad day time thing way lol haha "
                        "fine right wrong sure ok okay yeah".split())
_WORD = re.compile(r"[\w']+")
_CAPS = re.compile(r"\b[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*")
# chat's own correction mark: "*Bosch", "Odense*" (a starred word, not an emphasised "*so*")
_STAR = re.compile(r"(?:^|(?<=\s))\*[A-Za-z][\w'-]*(?![\w'*-])|(?<![*\w'-])[A-Za-z][\w'-]*\*(?![\w*])")
# a correction this short refers to the user's previous turn, however long ago it was sent
TERSE = 10


_OPENS = re.compile(r"^\W*(?:(?:no|oh|ugh|hmm+|lol|ah)\W+)*(?:i mean|i meant|sorry|oops|whoops|wait|typo|scratch that|"
                    r"correction|my bad|actually)\b|^\s*\*\w", re.IGNORECASE)


def opens_correction(turn: str) -> bool:
    """A short turn that opens as a correction: "I mean a Polo, I always mix those up"."""
    return len(turn) <= 120 and len(_WORD.findall(turn)) <= TERSE and _OPENS.match(turn) is not None


def terse(turn: str) -> bool:
    """A short turn that is all correction: "typo, Odense*", "scratch that, Thursday", "*Dean, autocorrect
    hates me". It can only mean the user's previous message, whatever the gap since (a session's turns
    may be stamped days apart), so its facts are the ones it may correct."""
    return len(turn) <= 120 and len(_WORD.findall(turn)) <= TERSE and bool(CUE.search(turn) or _STAR.search(turn))


class Fact(Protocol):
    @property
    def predicate(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def text(self) -> str: ...


def aligned(turn: str, facts: Sequence[Fact], parse: Callable[[str], Any] | None
            ) -> list[tuple[Fact, str, str | None]]:
    """[(a corrected fact, the new word, the old word it replaces or None)] for a correction turn,
    else []. ``facts``: the user's facts of the same conversation, oldest first. A fact the turn
    names ("..., peanuts are fine") is the one corrected; else the latest a word of the turn aligns
    with. Every fact with the corrected value changes ("my manager is called Priya": manager and
    relationship_manager)."""
    cue = CUE.search(turn)
    star = _STAR.search(turn) if cue is None and len(_WORD.findall(turn)) <= TERSE else None
    if not facts or (cue is None and star is None):
        return []
    if cue is not None and cue.group("lead") and len(_WORD.findall(turn)) > _SHORT:
        return []
    low = set(_WORD.findall(turn.casefold()))
    named = [f for f in facts if set(_WORD.findall(_name_part(f.value))) <= low and f.value.strip()]
    cues = list(CUE.finditer(turn))
    soft = bool(cues) and all(m.group("soft") for m in cues)
    if soft and not named:
        return []
    # "oops"/"my bad" alone: only a value of the same shape
    # (any strong cue of the turn: "sorry misspoke, she's called Mango" is strong by its "misspoke")
    strong = not soft and (cue is None or any(m.group("weak") is None for m in cues) or bool(named) or bool(
        _RESTATED.match(turn)))
    rest = turn[cue.end():] if cue is not None else turn[star.start():].replace("*", "") if star else ""
    if any(_confirmed(turn, f.value, rest) for f in named):  # "did I say Unilever? yes, Unilever": no correction
        return []
    for fact in reversed(named[-3:] or facts[-3:]):
        new = _new_value(turn.replace("*", " "), fact, parse if strong else None, rest)
        if new:
            new = (new[0].strip(".,!?;: "), new[1])  # "wrong, it's Altrincham." holds no full stop
            return [(f, *new) for f in facts if f.value.casefold() == fact.value.casefold()]
    return []


def _name_part(value: str) -> str:
    """ "hamster named Nibbles" -> "nibbles": the words a turn names the fact by."""
    return value.casefold().rsplit(" named ", 1)[-1]


def _confirmed(turn: str, value: str, rest: str = "") -> bool:
    """The turn affirms the value it names: "yes, Unilever", "Monday is right", "yep it's Monday", or says
    it again right after its "no" ("no no, Aldi! easy mistake" to the assistant's "So you work at Lidl?"):
    the user holds to their value, the "no" is the assistant's."""
    v = re.escape(value.strip())
    if not v:
        return False
    first = _fragment_names(rest)
    if first and first[0].casefold() == _name_part(value).strip():
        return True
    return re.search(rf"\b(?:yes|yep|yeah|definitely)\W+(?:it'?s\s+|it is\s+)?{v}\b|\b{v}\s+(?:is|was)\s+"
                     rf"(?:right|correct)\b", turn, re.IGNORECASE) is not None


def _new_value(turn: str, fact: Fact, parse: Callable[[str], Any] | None, rest: str = ""
               ) -> tuple[str, str | None] | None:
    said = set(_WORD.findall(f"{fact.text} {fact.value}".casefold()))
    kind = shape(fact.value, fact.predicate)
    if kind:
        shaped = shaped_values(turn, kind) or (_fragment_names(rest) if kind == "name" else [])
        found = [v for v in shaped
                 if not set(_WORD.findall(v.casefold())) <= said and v.casefold() not in _NOT_VALUES]
        if len(found) == 1:
            named = fact.value.rsplit(" named ", 1)[-1] if " named " in fact.value else None  # "hamster named X"
            return found[0], next(iter(shaped_values(fact.value, kind)), named)
        if kind != "name" or found:
            return None
    if parse is None or not fact.text:
        return None
    # "parrot named Kiwi": the name is the value's word to align, not the kind
    value_words = set(_WORD.findall(_name_part(fact.value)))
    anchor = next((t for t in parse(fact.text) if t.lower_ in value_words and t.pos_ in _CONTENT), None)
    if anchor is None:
        return None
    doc = parse(turn)
    fresh = [t for t in doc if _class(t.pos_) == _class(anchor.pos_) and t.lower_ not in said
             and t.lower_ not in _NOT_VALUES and len(t.text) > 1 and not CUE.fullmatch(t.text)]
    if anchor.text[:1].isupper():  # a name replaces a name: "she's called Mango" before "my friend's bird"
        fresh = [t for t in fresh if t.text[:1].isupper()] or fresh
    # the new value follows the cue: "mostly year 9. oh wait I told you maths, it's chemistry"
    start = len(turn) - len(rest) if rest and turn.endswith(rest) else 0
    fresh = [t for t in fresh if t.idx >= start] or fresh
    best = [t for t in fresh if t.dep_ == anchor.dep_] or fresh
    if not best:
        return None
    return _phrase(best[0]), anchor.text


def _class(pos: str) -> str:
    """A part of speech, with a name and a common noun as one class (a tagger reads an unseen drug, shop or
    town either way: "penicillin"/PROPN, "amoxicillin"/NOUN)."""
    return "NOUN" if pos == "PROPN" else pos


def _fragment_names(rest: str) -> list[str]:
    """The capitalised words opening what follows a cue ("no sorry, Bruges. she moved ..."): a value said
    as a bare fragment, with no link word before it."""
    first = re.split(r"[.!?;]|,\s", rest.strip(" ,"), maxsplit=1)[0]  # "sorry, Bradford, she moved ..."
    if len(_WORD.findall(first)) > 4:
        return []
    return [m.group(0) for m in _CAPS.finditer(first) if m.group(0).casefold() not in _NOT_VALUES]


def _phrase(token: Any) -> str:
    """The word with its compound and flat modifiers: "Lund University", "Pixel 8"."""
    words = [t for t in token.subtree if t is token or (t.head is token and t.dep_ in ("compound", "nummod", "flat"))]
    return " ".join(t.text for t in sorted(words, key=lambda t: t.i))


_NOMINAL = frozenset({"NOUN", "PROPN", "NUM", "ADJ"})
_FUNCTION = frozenset({"PRON", "AUX", "ADP", "CCONJ", "SCONJ", "DET", "PART", "PUNCT", "ADV", "INTJ", "SPACE"})


def may_contrast(turn: str, parse: Callable[[str], Any] | None) -> bool:
    """Whether :func:`contrasted` can find anything in ``turn`` (a caller skips gathering its facts if not)."""
    return parse is not None and " not " in f" {turn.casefold()} "


def contrasted(turn: str, facts: Sequence[Fact], parse: Callable[[str], Any] | None
               ) -> list[tuple[Fact, str, str | None]]:
    """ "I'm at KPMG, not Deloitte", "Porto not Lisbon", "it's a Fabia not an Octavia": a value, a
    ``neg`` and the value it replaces, read from the parse (the words around "not", not a phrase
    list). When the replaced value is one the user gave (any time before), the new one takes its
    place in that fact's slot, as a correction: [(fact, new, old)] like :func:`aligned`."""
    if not facts or not may_contrast(turn, parse):
        return []
    doc = parse(turn[:600])
    for neg in (t for t in doc if t.dep_ == "neg" and t.lower_ == "not"):
        after = [t for t in doc[neg.i + 1:neg.i + 3] if t.pos_ != "DET"]
        before = [t for t in reversed(doc[max(0, neg.i - 3):neg.i]) if t.pos_ not in ("PUNCT", "DET")]
        if not after or not before or after[0].pos_ not in _NOMINAL or before[0].pos_ in _FUNCTION:
            continue
        new, old = _run_of(before[0], -1), _run_of(after[0], 1)
        old_words = set(_WORD.findall(old.casefold()))
        hit = [f for f in facts if old_words and old_words <= set(_WORD.findall(f.value.casefold()))
               and not set(_WORD.findall(new.casefold())) <= set(_WORD.findall(f.value.casefold()))]
        if hit:
            latest = hit[-1]
            return [(f, new, old) for f in hit if f.value.casefold() == latest.value.casefold()]
    return []


def _run_of(token: Any, step: int) -> str:
    """The token with its neighbouring nominal words on one side ("tree nuts", "Honda Jazz")."""
    doc, i = token.doc, token.i
    words = [token]
    j = i - 1 if step < 0 else i + 1
    while 0 <= j < len(doc) and doc[j].pos_ in _NOMINAL | {"VERB"} and doc[j].tag_ in ("NN", "NNS", "NNP", "NNPS",
                                                                                       "CD", "JJ", "VBZ"):
        words.append(doc[j])
        j += -1 if step < 0 else 1
    return " ".join(t.text for t in sorted(words, key=lambda t: t.i))


# -- the assistant's restatement, answered "no, <value>" (h-ledger9) ------------------------------------------
# A reply in chat often corrects what the assistant just said back, not what the user said: "I've just moved up
# north" / "So you're in Newcastle now?" / "no, Sunderland". The assistant's words never make a claim; they only
# name the slot the user's "no, <Name>" fills.
_ASKED_BACK = re.compile(r"\byou(?:'re| are|'ve| have| live| work| drive| teach| go| use| bank| moved| started)\b",
                         re.IGNORECASE)
_TAG = re.compile(r",?\s+(?:right|yeah|correct|then|is that right|isn't it|aren't you|don't you)\s*$", re.IGNORECASE)
_SECOND = [(re.compile(p, re.IGNORECASE), r) for p, r in (
    (r"\byou're\b", "I'm"), (r"\byou are\b", "I am"), (r"\byou've\b", "I've"), (r"\byour\b", "my"),
    (r"\byou\b", "I"))]
_LEADS = re.compile(r"^\W*(?:so|oh|ah|and|wait|sorry)\W+", re.IGNORECASE)
_ANSWER_NO = re.compile(r"^\W*(?:(?:no|nope|nah|not quite|not exactly|close|almost)\b\W*)+(?P<rest>.*)$",
                        re.IGNORECASE | re.DOTALL)
_KEEP = 512  # users whose last assistant restatement is remembered


class Restated:
    """The slot and value the assistant last asked back to each user ("So you work at Lidl now?"), and the
    user's "no, <Name>" that follows it as that slot's value. Bounded; an answer must be the user's next turn."""

    def __init__(self) -> None:
        from collections import OrderedDict
        self._asked: OrderedDict[str, tuple[str, str, str, bool]] = OrderedDict()

    def heard(self, entry: Any, read: Callable[[str], list[Any]]) -> None:
        """An assistant turn: remember the (predicate, value, type, multi) of its last yes/no restatement."""
        if entry.role != "assistant":
            return
        self._asked.pop(entry.user_id, None)
        asks = [q for q in re.split(r"(?<=[.!?])\s+", entry.content.strip()) if q.endswith("?")]
        if not asks or len(asks[-1]) > 120 or not _ASKED_BACK.search(asks[-1]):
            return
        said = _TAG.sub("", _LEADS.sub("", asks[-1].rstrip("?").strip()))
        for pat, rep in _SECOND:
            said = pat.sub(rep, said)
        found = [f for f in read(said) if f[1] and len(f) >= 4]
        if len(found) == 1:
            p, v, k, mu = found[0][:4]
            self._asked[entry.user_id] = (p, v, k, mu)
            while len(self._asked) > _KEEP:
                self._asked.popitem(last=False)

    def answered(self, entry: Any, turn: list[Any], subject: str) -> list[Any]:
        """The user's turn right after a restatement: "no, Sunderland. close though" holds the slot's value
        Sunderland (unless the turn already read that slot, or names no other value than the asked one)."""
        asked = self._asked.pop(entry.user_id, None)
        if asked is None or entry.role != "user" or subject != entry.user_id:
            return turn
        m = _ANSWER_NO.match(entry.content)
        if m is None or len(_WORD.findall(entry.content)) > _SHORT:
            return turn
        p, v, k, mu = asked
        names = _fragment_names(m.group("rest"))
        if not names or names[0].casefold() == v.casefold() or any(c.predicate == p for c in turn):
            return turn
        from ..model import Candidate
        text = re.split(r"(?<=[.!?])\s+", entry.content.strip())[0][:300]
        return [*turn, Candidate(entry.id, subject, p, names[0], text, 0.85, type=k, multi=mu)]
