"""Open vocabulary: a first-person clause that no rule read becomes a predicate and a value.

The rules of :mod:`.extract_rules` know common slots by their wording; ordinary chat states many
more facts in plain verbs ("I drive a Corolla", "I've started doing pilates", "I swim twice a
week", "I cut out coffee"). Here spaCy's dependency parse (the model the clause splitter already
loads) reads such a clause: its main verb (with its particle or preposition) and that verb's
object or complement become the predicate and the value.

* **One slot for many wordings.** :data:`SLOTS` maps verb lemmas to a canonical predicate, so
  paraphrases land on one page ("live in", "settle in", "relocate to", "call X home" -> lives_in;
  "drive", "get around in" -> car). A verb not in the table keeps its own name (``volunteers_at``)
  as a multi-valued slot, so it only ever adds, never closes.
* **Habits, not events.** A verb in the present ("I swim"), a perfect ("I've settled in") or a
  progressive ("I've been doing karate") states something that holds; a plain past ("I watched a
  film") is an event and makes no claim, unless the verb changes a state (moved, took up, sold).
* **Change verbs close.** "quit", "stopped", "gave up", "cut out", "sold", "cancelled", "no
  longer", "don't ... anymore" close the slot they name: the object's value among the user's
  recent facts (:class:`~.extract_recall.Recall`), else the verb's own slot ("I don't smoke").
  "traded the Fiesta in for a Niro" gives the slot of the old value the new one.
* **No guess is a claim.** A modal ("would", "could"), an "if"/"whether", a question or a future
  makes nothing; a verb outside the table gets a confidence under the resolver's review
  threshold, so it waits for review instead of entering the ledger.

Without spaCy (``clause_parser="regex"``) this path is off: the rules alone run. A cheap word test
(:func:`may_state`) keeps most chat turns from being parsed at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .extract_role import as_role

Parse = Callable[[str], Any]
Slot = tuple[str, str, bool]  # (predicate, page type, multi-valued)
Open = tuple[str, str, str, bool, float, bool]  # (predicate, value, type, multi, confidence, negated)

_LIVES: Slot = ("lives_in", "profile", False)
_CAR: Slot = ("car", "profile", False)
_HOBBY: Slot = ("hobby", "preference", True)
_EMPLOYER: Slot = ("employer", "profile", False)
SLOTS: dict[str, Slot] = {
    "live_in": _LIVES, "settle_in": _LIVES, "relocate_to": _LIVES, "move_to": _LIVES, "base_in": _LIVES,
    "call_home": _LIVES, "rent_in": _LIVES, "shift_to": _LIVES, "stay_in": ("staying_in", "fact", False),
    "work_at": _EMPLOYER, "work_for": _EMPLOYER, "teach_at": _EMPLOYER, "start_at": _EMPLOYER, "join": _EMPLOYER,
    "work_as": ("job", "profile", False), "retrain_as": ("job", "profile", False),
    "requalify_as": ("job", "profile", False), "qualify_as": ("job", "profile", False),
    "drive": _CAR, "get_around_in": _CAR, "ride": _CAR,
    "smoke": ("smokes", "fact", False), "vape": ("smokes", "fact", False),
    "drink": ("drinks", "preference", True),
    "do": _HOBBY, "practise": _HOBBY, "practice": _HOBBY, "take_up": _HOBBY, "pick_up": _HOBBY,
    "play": ("plays", "preference", True), "collect": ("collects", "preference", True),
    "speak": ("speaks", "fact", True), "learn": ("learning", "fact", True), "study": ("studies", "profile", False),
    "wake_up": ("routine_wake", "fact", False), "get_up": ("routine_wake", "fact", False),
    "use": ("uses", "fact", True), "own": ("owns", "fact", True),
    "support": ("team", "fact", False), "attend": ("attends", "fact", True),
    "volunteer_at": ("volunteers_at", "fact", True), "listen_to": ("listens_to", "preference", True),
    "read": ("reads", "preference", True), "watch": ("watches", "preference", True),
}
_ROUTINE = frozenset("swim run jog cycle walk train climb row skate surf hike box dance lift bike".split())
_CLOSE = frozenset("quit stop give_up cut_out sell cancel leave drop ditch end lose".split())
_SWAP = frozenset("trade trade_in swap exchange replace switch".split())
_STATE_PAST = frozenset("move relocate shift settle join start take_up pick_up sell quit stop give_up cut_out cancel "
                        "leave drop ditch trade trade_in swap exchange replace switch retrain requalify qualify "
                        "buy adopt get_around_in".split())
# verbs that say nothing lasting on their own ("I had a long day", "I think", "I went")
_LIGHT = frozenset("be have get make go think know want need like love hate feel say tell see hope wish try mean "
                   "guess reckon wonder remember forget take let give put keep come look find seem ask hear "
                   "thank agree believe suppose realise realize notice plan decide start begin continue "
                   "enjoy prefer miss".split())
_IRREGULAR = {"drove": "drive", "driven": "drive", "ran": "run", "swam": "swim", "sold": "sell", "left": "leave",
              "spoke": "speak", "spoken": "speak", "rode": "ride", "ridden": "ride", "did": "do", "done": "do",
              "does": "do", "took": "take", "taken": "take", "got": "get", "gotten": "get", "bought": "buy",
              "quit": "quit", "read": "read", "woke": "wake", "learnt": "learn", "studies": "study",
              "studied": "study", "lives": "live", "has": "have", "had": "have", "was": "be", "were": "be",
              "is": "be", "am": "be", "are": "be", "went": "go", "gone": "go", "made": "make", "said": "say",
              "felt": "feel", "thought": "think", "knew": "know", "saw": "see", "came": "come", "kept": "keep",
              "found": "find", "gave": "give", "put": "put", "let": "let", "lost": "lose", "'m": "be",
              "'re": "be", "'s": "be", "'ve": "have", "'d": "have", "m": "be", "re": "be", "ve": "have"}
_KNOWN = frozenset({k.split("_")[0] for k in SLOTS} | _ROUTINE | _CLOSE | _SWAP | _LIGHT
                   | {k.split("_")[0] for k in _STATE_PAST})
_MODAL = frozenset("would could might should may must can will shall 'll 'd wo ca".split())
_FIRST = re.compile(r"^(?:(?:\w+ly|just|also|now|still|then|so|and|but|finally|actually|these days|lately)[, ]+)*"
                    r"(?:i|we)(?:'ve| have|'m| am|'re| are)?(?: (?:\w+ly|just|also|now|still|finally|been|"
                    r"actually|no longer|never|don't|do not|didn't|not))* (?P<verb>[a-z]+)", re.IGNORECASE)
_MY = re.compile(r"^\W*(?:my|our) \w+ (?!is\b|are\b|was\b)\w+", re.IGNORECASE)
_FIRST_ANY = re.compile(r"\b(?:i|we)\b", re.IGNORECASE)
_GATE_LIGHT = (_LIGHT - {"start", "take", "get", "stop"}) | {"be", "have"}  # "I get up", "I stopped smoking"
_DET = frozenset("a an the my our their his her its this that these those some".split())
_TIME_DEPS = frozenset({"npadvmod", "advmod", "prep", "tmod", "obl"})
_TIMEISH = re.compile(r"\b(?:\d|every|each|once|twice|times?|daily|weekly|morning|evening|night|week|"
                      r"weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday|am|pm|o'clock|midnight|noon)",
                      re.I)


def lemma(word: str) -> str:
    """A verb's base form, good enough to look it up in the tables above."""
    w = word.casefold()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    for cut, add in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"),
                     ("es", ""), ("s", ""), ("d", "")):
        if w.endswith(cut) and len(w) - len(cut) >= 2:
            base = w[: -len(cut)] + add
            if base in _KNOWN:
                return base
            if len(base) > 2 and base[-1] == base[-2] and base[:-1] in _KNOWN:  # "stopped", "swimming"
                return base[:-1]
    return w


def may_state(clause: str) -> bool:
    """A first-person clause whose verb is not a light one, or that says when it happens: worth a parse
    (most chat is not)."""
    m = _FIRST.match(clause.strip())
    if m is not None and lemma(m.group("verb")) not in _GATE_LIGHT:
        return True
    if _MOVE_MADE.search(clause):
        return True  # "we made the jump to Denver": a light verb, but a move
    if _MY.match(clause) and _CLOCK.search(clause):
        return True  # "my shift starts at 7:15"
    return _FIRST_ANY.search(clause) is not None and _CLOCK.search(clause) is not None


_DROPPED = re.compile(r"^(?:(?:\w+ly|just|also|now|then|so|and|but|finally)[, ]+)*(?:[a-z]+ed|sold|quit|took|gave|"
                      r"left|swapped|traded|dropped|stopped)\b(?! (?:from|and|&|'s|is|was|has|had|said|says|told|who|"
                      r"of)\b)", re.IGNORECASE)  # "Ahmed from my team left ...": a name, not "I ...ed"


def read_clause(clause: str, parse: Parse, conf_cap: float | None = None) -> list[Open]:
    """The open-vocabulary facts of one first-person clause (its closes flagged as negations); a
    dropped subject is the speaker's ("finally traded the fiesta in for a niro")."""
    if not _FIRST.match(clause.strip()) and _DROPPED.match(clause.strip()):
        clause = "I " + clause.strip()
    if not may_state(clause):
        return []
    doc = parse(clause)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ != "VERB" or _unreal(root):
        return []
    if not _first_person(root):
        mine = _my_subject(root)  # "my shift starts at 7:15": the shift's routine
        return _habit(root, mine, named=mine) if mine else []
    out = _facts(root)
    if conf_cap is not None:
        out = [(p, v, k, mu, min(conf, conf_cap), neg) for p, v, k, mu, conf, neg in out]
    return out


def _first_person(root: Any) -> bool:
    subj = [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")]
    return bool(subj) and subj[0].lower_ in ("i", "we")


def _unreal(root: Any) -> bool:
    """A modal, a condition, a question or a plan: nothing holds yet."""
    for c in root.children:
        if c.dep_ == "aux" and (c.tag_ == "MD" or c.lower_ in _MODAL):
            return True
        if c.dep_ == "mark" and c.lower_ in ("if", "whether", "unless"):
            return True
    return root.tag_ == "VB" and not any(c.dep_ == "aux" for c in root.children) and root.i == 0


def _key(verb: Any) -> str:
    base = lemma(verb.text)
    prt = [c.lower_ for c in verb.children if c.dep_ == "prt"]
    return f"{base}_{prt[0]}" if prt else base


def _negated(root: Any) -> bool:
    if any(c.dep_ == "neg" for c in root.children):
        return True
    return any(c.lower_ == "longer" and any(g.lower_ == "no" for g in c.children) for c in root.children)


def _facts(root: Any) -> list[Open]:
    key = _key(root)
    neg = _negated(root)
    moved = _made_move(root)
    if moved:
        return [("lives_in", moved, "profile", False, 0.8, False)]
    role = as_role(root, neg)
    if role:
        return role
    if root.tag_ == "VBD" and key not in _STATE_PAST and lemma(root.text) not in _STATE_PAST and not neg:
        return []  # an event in the past, not a standing fact
    xcomp = next((c for c in root.children if c.dep_ == "xcomp" and c.pos_ == "VERB"), None)
    if key in ("start", "begin", "stop", "quit", "give_up", "keep", "continue") and xcomp is not None:
        closing = key in ("stop", "quit", "give_up") or neg
        inner = _facts_of(xcomp, neg=closing)
        return inner or ([] if not closing else _slot_close(xcomp))
    if key in _SWAP:
        return _swap(root)
    home = _new_home(root)
    if home:
        return [("lives_in", home, "profile", False, 0.8, False)]
    if key in _CLOSE or (neg and key not in _LIGHT):
        return _close(root, key)
    habit = _habit(root, key)
    if habit:
        return habit
    if key in _LIGHT and key not in SLOTS or _moved_other(root):
        return []
    return _facts_of(root, neg=False)


def _moved_other(verb: Any) -> bool:
    """ "we moved him to Oakfield primary": someone or something else moved, not the user."""
    return lemma(verb.text) in ("move", "relocate", "transfer") and any(
        c.dep_ in ("dobj", "obj") and c.lower_ not in ("me", "us", "myself", "ourselves") for c in verb.children)


_D = r"(?:mon|tues|wednes|thurs|fri|satur|sun)"
_CLOCK = re.compile(  # a habit's time: a clock time, or a repeat ("every Sunday", "on Sunday nights", "daily")
    rf"(?:\b(?:at|around|by|from|before|after|until|till|for)\s+)?(?:\b\d{{1,2}}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)"
    rf"|\b\d{{1,2}}:\d\d\b|\bmidnight\b|\bnoon\b|\b\d{{1,2}} o'clock\b)"
    # a bare hour after "at"/"around"/"by" at the clause's end: "I go to bed at 10 now" (not "at 10 Downing St")
    rf"|\b(?:at|around|by)\s+(?:1[0-2]|[1-9])(?=\s*(?:$|[,.;!?]|\b(?:now|these days|nowadays|every|each|on|most|"
    rf"usually|ish)\b))"
    rf"|\b(?:every|each)\s+(?:other\s+)?\w+(?:\s+(?:morning|evening|night|afternoon)s?)?"
    rf"|\b(?:on\s+)?(?:{_D}days|{_D}day (?:morning|evening|night|afternoon)s)\b(?:\s+and\s+{_D}days\b)?"
    rf"|\b(?:daily|weekly|twice a \w+|once a \w+|\d+ times a \w+)\b", re.IGNORECASE)
_REPEAT = re.compile(r"\b(?:every|each|daily|weekly|usually|always|normally|\w+days)\b", re.IGNORECASE)
_HABIT_OBJECT = {"start": "work", "begin": "work", "finish": "work"}  # "I start at 7:30": work, unless named


def _my_subject(root: Any) -> str:
    subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
    if subj is None or subj.pos_ != "NOUN" or not any(c.dep_ == "poss" and c.lower_ in ("my", "our")
                                                      for c in subj.children):
        return ""
    return str(subj.lemma_ or subj.lower_)


def _habit(verb: Any, key: str, named: str = "") -> list[Open]:
    """A habit at a time: "I start work at 9am", "I call my gran every Sunday", "i go to bed around midnight".
    The slot is the verb (``routine_call``) or, for a light verb, what it is done to (``routine_bed``)."""
    if verb.tag_ not in ("VBP", "VBZ") or _negated(verb) or key in ("be", "have") and not _objects(verb):
        return []
    found = [m.group(0) for m in _CLOCK.finditer(verb.doc.text)]
    if not found:
        return []
    when = " ".join(found)
    base = lemma(verb.text)
    if base == "have" and not _REPEAT.search(verb.doc.text):
        return []  # "I have a meeting at 3pm": once, not a habit
    if base in ("wake", "get") and key in ("wake", "wake_up", "get_up"):
        return [("routine_wake", when, "fact", False, 0.8, False)]
    if named:
        name = named
    elif key in SLOTS or base in _ROUTINE:
        return []  # a slot of its own ("I drink two coffees every morning": drinks), or a routine verb's
    elif base in _LIGHT or base in ("do", "have"):
        nouns = _objects(verb)
        name = nouns[0] if nouns else _HABIT_OBJECT.get(base, "")
    else:
        name = base
    name = re.sub(r"[^a-z]+", "_", name.casefold()).strip("_")
    return [(f"routine_{name}", when, "fact", False, 0.75, False)] if name else []


def _objects(verb: Any) -> list[str]:
    """The lemmas of a verb's object nouns, direct or through a preposition ("go to bed": bed)."""
    out = [c.lemma_ or c.lower_ for c in verb.children if c.dep_ in ("dobj", "obj") and c.pos_ in ("NOUN", "PROPN")]
    for prep in verb.children:
        if prep.dep_ == "prep" and not _TIMEISH.search(prep.lower_):
            out += [g.lower_ for g in prep.children if g.dep_ == "pobj" and g.pos_ == "NOUN"
                    and not _CLOCK.search(g.lower_) and not _TIMEISH.search(g.lower_)]
    return out


_HOMES = frozenset("apartment flat house place home studio condo bungalow cottage room".split())


def _new_home(root: Any) -> str:
    """ "we've got our own apartment in Bordeaux", "bought a house in Ghent": where the user lives."""
    if lemma(root.text) not in ("get", "buy", "rent", "find") or _negated(root):
        return ""
    obj = next((c for c in root.children if c.dep_ in ("dobj", "obj")), None)
    if obj is None or obj.lower_ not in _HOMES:
        return ""
    for holder in (obj, root):
        for prep in holder.children:
            if prep.dep_ == "prep" and prep.lower_ in ("in", "near"):
                pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                if pobj is not None and pobj.text[:1].isupper():
                    return _phrase(pobj)
    return ""


_MOVE_NOUNS = frozenset("move jump leap".split())
_MOVE_MADE = re.compile(r"\b(?:made|make|making|took|take|taken) (?:the|a|our|my) (?:big |final )?(?:move|jump|leap) "
                        r"(?:to|into)\b", re.IGNORECASE)


def _made_move(root: Any) -> str:
    """A light verb with a noun of moving: "we made the jump to Denver", "made the move to Leeds" are
    "moved to"; the place is a name (capitalised), else nothing."""
    if lemma(root.text) not in ("make", "do", "take") or _negated(root):
        return ""
    obj = next((c for c in root.children if c.dep_ in ("dobj", "obj") and c.lower_ in _MOVE_NOUNS), None)
    for prep in obj.children if obj is not None else ():
        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
        if prep.dep_ == "prep" and prep.lower_ in ("to", "into") and pobj is not None and pobj.pos_ == "PROPN":
            return _phrase(pobj)
    return ""


_WITH_PREPS = frozenset("with for at through via".split())


def _named_with(verb: Any, key: str, preps: list[tuple[str, str]]) -> Open | None:
    """ "I bank with Monzo", "I ride for Deliveroo": a verb in the present with a proper name after
    "with"/"for"/"at" is a standing tie to that name; one value per verb and preposition
    (``banks_with``), so a later one replaces it."""
    if verb.tag_ not in ("VBP", "VBZ") or key in _LIGHT or lemma(verb.text) in _ROUTINE:
        return None
    for c in verb.children:
        pobj = next((g for g in c.children if g.dep_ == "pobj"), None) if c.dep_ == "prep" else None
        if pobj is not None and c.lower_ in _WITH_PREPS and pobj.pos_ == "PROPN" and not _CLOCK.search(pobj.text):
            value = next((v for p, v in preps if p == c.lower_), "")
            if value:
                return (f"{_third(lemma(verb.text))}_{c.lower_}", value, "fact", False, 0.6, False)
    return None


def _facts_of(verb: Any, neg: bool) -> list[Open]:
    key = _key(verb)
    base = lemma(verb.text)
    obj = _child_text(verb, ("dobj", "obj", "attr"))
    preps = _preps(verb)
    if base in _ROUTINE:  # "I swim twice a week", "I walk the dog every morning"
        when = _when(verb)
        if when:
            return [(f"routine_{base}", f"{base} {obj} {when}" if obj else when, "fact", False, 0.75, neg)]
        if not obj:
            return [("hobby", _ing(base), "preference", True, 0.6, neg)]
    if base == "call" and obj and any(c.lower_ == "home" for c in verb.subtree):
        return [("lives_in", obj.removesuffix(" home"), "profile", False, 0.8, neg)]
    if key in ("wake_up", "get_up"):
        when = _when(verb)
        return [("routine_wake", when, "fact", False, 0.8, neg)] if when else []
    for prep, value in preps:  # "work at", "settle in", "get around in", "volunteer at"
        slot = SLOTS.get(f"{key}_{prep}")
        if slot and value:
            return [(slot[0], value, slot[1], slot[2], 0.8, neg)]
    slot = SLOTS.get(key)
    if slot and obj and not _owned_by_other(verb):
        return [(slot[0], obj, slot[1], slot[2], 0.75, neg)]
    named = _named_with(verb, key, preps)
    if named and not slot and not obj:
        return [named if not neg else (*named[:5], True)]
    if slot or key in _LIGHT or not obj:
        return []
    # a verb outside the table: its own multi-valued slot, under the review threshold
    verb_s = _third(base) + key[len(base):]
    return [(verb_s, obj, "fact", True, 0.45, neg)]


def _close(root: Any, key: str) -> list[Open]:
    """ "I quit Orbital", "sold the Vespa", "I don't smoke anymore": the slot the object or verb names."""
    obj = _child_text(root, ("dobj", "obj"))
    if key in _CLOSE:
        xcomp = next((c for c in root.children if c.dep_ in ("xcomp", "pcomp") and c.pos_ == "VERB"), None)
        if xcomp is not None and not obj:
            return _slot_close(xcomp)
        return [("?", obj, "fact", True, 0.85, True)] if obj else []
    slot = SLOTS.get(key)
    base = lemma(root.text)
    if slot is None and base in _ROUTINE:
        slot = (f"routine_{base}", "fact", False)
    if slot is None:
        return [("?", obj, "fact", True, 0.85, True)] if obj else []
    return [(slot[0], obj if slot[2] else "", slot[1], slot[2], 0.85, True)]


def _slot_close(verb: Any) -> list[Open]:
    slot = SLOTS.get(_key(verb))
    base = lemma(verb.text)
    if slot is None and base in _ROUTINE:
        slot = (f"routine_{base}", "fact", False)
    if slot is None:
        return []
    obj = _child_text(verb, ("dobj", "obj")) if slot[2] else ""
    return [(slot[0], obj, slot[1], slot[2], 0.85, True)]


def _swap(root: Any) -> list[Open]:
    """ "traded the Fiesta in for a Kia Niro": the old value's slot gets the new value ("?" = find it)."""
    old = _child_text(root, ("dobj", "obj"))
    new = next((v for p, v in _preps(root) if p in ("for", "with", "to")), "")
    if not old or not new:
        return []
    return [("?", old, "fact", True, 0.85, True), ("?" + old, new, "fact", False, 0.85, False)]


def _owned_by_other(verb: Any) -> bool:
    """ "I do their payroll": someone else's thing is no slot of the user's."""
    obj = next((c for c in verb.children if c.dep_ in ("dobj", "obj")), None)
    return obj is not None and any(c.dep_ == "poss" and c.lower_ in ("their", "his", "her", "its", "your")
                                   for c in obj.children)


_PREP = {"into": "in", "onto": "on", "inside": "in"}  # "settling into Wroclaw" is "settle in"


def _preps(verb: Any) -> list[tuple[str, str]]:
    out = []
    for c in verb.children:
        if c.dep_ == "prep":
            pobj = next((g for g in c.children if g.dep_ == "pobj"), None)
            if pobj is not None:
                out.append((_PREP.get(c.lower_, c.lower_), _phrase(pobj)))
        elif c.dep_ == "prt":  # "get around in": the particle's own preposition
            for g in c.children:
                pobj = next((x for x in g.children if x.dep_ == "pobj"), None)
                if g.dep_ == "prep" and pobj is not None:
                    out.append((f"{c.lower_}_{g.lower_}", _phrase(pobj)))
    return out


def _child_text(verb: Any, deps: tuple[str, ...]) -> str:
    child = next((c for c in verb.children if c.dep_ in deps), None)
    return _phrase(child) if child is not None else ""


def _phrase(token: Any) -> str:
    """A noun phrase without its leading determiner and without relative or clausal tails."""
    skip = {"relcl", "acl", "advcl", "punct", "cc", "conj", "appos"}
    keep = sorted(_sub(token, skip), key=lambda t: t.i)
    words = [t for t in keep]
    while words and (words[0].lower_ in _DET or words[0].dep_ in ("det", "poss", "predet")):
        words.pop(0)
    text = "".join(t.text_with_ws for t in words).strip(" ,.!?")
    return text if 0 < len(text) <= 60 else ""


def _sub(token: Any, skip: set[str]) -> list[Any]:
    out = [token]
    for c in token.children:
        if c.dep_ not in skip:
            out.extend(_sub(c, skip))
    return out


def _when(verb: Any) -> str:
    """The schedule a routine verb carries: "twice a week", "every Sunday morning", "at 5:45"."""
    parts = []
    for c in verb.children:
        if c.dep_ in _TIME_DEPS:
            text = "".join(t.text_with_ws for t in c.subtree).strip(" ,.!?")
            if _TIMEISH.search(text):
                parts.append((c.i, text))
    return " ".join(t for _i, t in sorted(parts))


def _third(base: str) -> str:
    """ "sketch" -> "sketches", "fly" -> "flies", "bake" -> "bakes": the predicate's name."""
    if re.search(r"(?:s|x|z|ch|sh)$", base):
        return base + "es"
    if re.search(r"[^aeiou]y$", base):
        return base[:-1] + "ies"
    return base + "s"


def _ing(base: str) -> str:
    if base.endswith("e") and not base.endswith("ee"):
        return base[:-1] + "ing"
    if re.fullmatch(r"[a-z]*[^aeiou][aeiou][bdgmnpt]", base):
        return base + base[-1] + "ing"
    return base + "ing"
