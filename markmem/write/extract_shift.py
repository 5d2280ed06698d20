"""Changes of a known fact said without its slot's wording, read from the parse and entity types.

Chat often changes a fact without restating it: "jumped ship to Three", "finally moved everything
over to Monzo", "we get everything from Aldi these days" (the bank, network, shop said before), or
ends one in a negated clause that names it: "not doing keto anymore", "had to stop volunteering
at the food bank", "never take the bus now", "Marco and I called off the engagement". Two rules,
over the user's own facts remembered before the turn (:class:`.extract_recall.Recall`):

* **An end names the fact in its scope** (:func:`ends`). A verb negated in spaCy's parse (``neg``,
  "never", "no more") with a sign that the state is over ("anymore", "no longer", "now", "these
  days"), or a verb of the ending lemma class (stop, quit, cancel, call off, get rid of, ...) not
  itself negated: a remembered fact whose value, or slot name, or most of whose clause's content
  words, lie in that verb's subtree is closed. Word forms meet by a crude shared stem
  ("engagement" / "engaged", "volunteering" / "volunteer").
* **A new value of the same entity type replaces** (:func:`replacements`). A turn with a change
  sign (a verb of the change lemma class, or "now", "these days", "instead", "nowadays") naming an
  entity (spaCy NER: ORG, GPE, PERSON, PRODUCT, ...) that no remembered fact holds: the one-valued
  fact whose value holds an entity of the same type takes it in that entity's place ("weekly shop
  at Tesco" -> "weekly shop at Aldi"). Several such facts: the one sharing the most words with the
  turn, then the latest. A question, a hypothetical or an undated plan changes nothing; a dated
  one ("switching to EDF from july") starts at its date.

Both make candidates the resolver already knows (a negated one closes, a one-valued one
supersedes), so the ledger's rules are unchanged. Without spaCy's parse neither rule runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from ..model import Candidate, RawEntry
from .extract_rules import NOT_MINE_RE, software_talk, tech_talk
from .extract_time import _SCHEDULE, scheduled, temporary

# verbs that end a state when used (not negated): lemma class
ENDING = frozenset("stop quit cancel drop ditch leave sell rehome retire resign abandon unsubscribe".split())
_ENDING_PARTICLE = {("give", "up"), ("call", "off"), ("break", "up"), ("pack", "in"), ("move", "out")}
# states that say a bond or a thing is over, as the complement of "be": "Tom and I are divorced now"
ENDED_STATE = frozenset("divorced separated over finished dead".split())
# verbs that change a value when used: lemma class
CHANGING = frozenset("switch move jump transfer swap change join sign upgrade convert replace".split())
_OVER = re.compile(r"\b(?:any ?more|no longer|now|these days|nowadays|no more|since)\b", re.IGNORECASE)
_NOW = re.compile(r"\b(?:now|these days|nowadays|instead|any ?more|from now on)\b", re.IGNORECASE)
# a stay with an end in sight: not a new lasting value ("in Tokyo right now, back on the 26th")
_BOUNDED = re.compile(r"\b(?:right now|at the moment|for now|back (?:on|in|by|next)|until|till?|for (?:a|the|\w+) "
                      r"(?:few |couple of )?(?:days?|weeks?|fortnight|month)|this (?:week|weekend|month))\b",
                      re.IGNORECASE)
_HYPOTHETICAL = re.compile(r"\b(?:if|maybe|might|could|should|would|thinking about|thinking of|considering|"
                           r"wondering|want to|wanna|plan to|planning|hop(?:e|es|ed|ing)|wish|'d (?:like|love)|"
                           r"looking to|trying to|aim(?:ing)? to|intend|keen to|dream(?:ing)? of|hopefully)\b",
                           re.IGNORECASE)
_IRREGULAR = {"left": "leave", "sold": "sell", "gave": "give", "given": "give", "broke": "break", "broken": "break",
              "went": "go", "gone": "go", "got": "get", "gotten": "get", "quit": "quit", "swapped": "swap",
              "swapping": "swap", "stopped": "stop", "stopping": "stop", "dropped": "drop", "dropping": "drop",
              "signed": "sign", "jumped": "jump", "moving": "move", "leaving": "leave", "giving": "give",
              "changing": "change", "retiring": "retire", "rehoming": "rehome", "moved": "move", "changed": "change",
              "retired": "retire", "rehomed": "rehome", "upgraded": "upgrade", "upgrading": "upgrade",
              "am": "be", "is": "be", "are": "be", "was": "be", "were": "be", "'m": "be", "'s": "be", "'re": "be",
              "been": "be", "being": "be"}
_CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM"})
_STOP = frozenset("a an the my our his her their to of in on at for with and or is are be do get have go make "
                  "take every day time part week".split())
_NOT_NAMES = frozenset("i i'm i've i'll i'd mum mom dad monday tuesday wednesday thursday friday saturday sunday "
                       "january february march april may june july august september october november december "
                       "christmas easter ok okay lol omg".split())
_DAYS = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", re.IGNORECASE)
_PEOPLE = frozenset("sister brother mum mom dad mother father wife husband partner son daughter friend boss "
                     "manager colleague flatmate roommate girlfriend boyfriend kid kids child children".split())
_LINK = re.compile(r"\s+(?:on|at|in|with|for|from|via|through)\s+", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9']+")


def lemma(token: Any) -> str:
    """The token's lemma: spaCy's when its pipeline has a lemmatizer, else the word's base form by
    English inflection (-s, -ed, -ing) and the few irregular forms of the lemma classes here."""
    if token.lemma_ and token.lemma_ != token.text:
        return str(token.lemma_).casefold()
    w = token.lower_
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) > len(suffix) + 2:
            return w[: -len(suffix)]
    return w


def _stem(word: str) -> str:
    word = word.casefold().strip("'")
    return word[:5] if len(word) > 5 else word


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.casefold()) if w not in _STOP}


def ends(entry: RawEntry, doc: Any, facts: Sequence[Any], turn: Sequence[Candidate]) -> list[Candidate]:
    """Negated candidates for the remembered facts an ending clause of ``doc`` names."""
    have = {(c.subject, c.predicate, c.value.casefold()) for c in turn}
    out: list[Candidate] = []
    for verb in _ending_verbs(doc):
        words = list(verb.subtree)
        if verb.dep_ == "conj" and verb.head.pos_ in ("PROPN", "NOUN", "PRON"):
            words += list(verb.head.subtree)  # "Marco and I called off ...": the parser hangs the verb on "Marco"
        stems = {_stem(t.text) for t in words}
        text = " ".join(t.text for t in words)
        actors = _actors(verb)
        for f in facts:
            key = (f.subject, f.predicate, f.value.casefold())
            if key in have or not _named(f, stems) or not _own_end(actors, f):
                continue
            have.add(key)
            out.append(Candidate(entry.id, f.subject, f.predicate, f.value, text[:300], 0.8, type=f.type,
                                 multi=f.multi, negated=True))
    return out


def _actors(verb: Any) -> list[str]:
    """The subjects of the ending verb, or of the verb it hangs from ("had to stop": none said)."""
    out: list[str] = []
    for t in (verb, *verb.ancestors):
        for c in t.children:
            if c.dep_ in ("nsubj", "nsubjpass"):
                out += [w.lower_ for w in (c, *c.conjuncts)]
        if out or t.dep_ not in ("xcomp", "conj", "aux"):
            break
    if verb.dep_ == "conj" and verb.head.pos_ in ("PROPN", "NOUN"):
        out.append(verb.head.lower_)  # "Marco and I called off ...", misparsed
    return out


def _mine(token: Any) -> bool:
    """The clause holding ``token`` is the user's: its verb's subject is "I"/"we", "my/our X", or unsaid
    ("jumped ship to Three"); "my sister Maria moved to Oslo" names no new value of the user's."""
    verb = next((t for t in token.ancestors if t.pos_ in ("VERB", "AUX")), token.head)
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    return all(c.lower_ in ("i", "we") or _my_thing(c) for c in subjects)


def _my_thing(subject: Any) -> bool:
    """ "my phone('s a Galaxy S24)": a subject the user owns, not a person of theirs ("my sister Maria")."""
    words = list(subject.subtree)
    return any(k.dep_ == "poss" and k.lower_ in ("my", "our") for k in words) and \
        not any(k.lower_ in _PEOPLE for k in words)


def _own_end(actors: list[str], fact: Any) -> bool:
    """The user ended it ("I", "we", no subject said), or the thing itself did ("Biscuit passed away");
    never someone else ("Ahmed from my team just left Nimbus" keeps the user's Nimbus)."""
    value = fact.value.casefold()
    return any(a in ("i", "we") for a in actors) or all(a in value for a in actors)


def _ending_verbs(doc: Any) -> list[Any]:
    verbs = []
    for t in doc:
        if t.pos_ not in ("VERB", "AUX") and t.dep_ != "ROOT":
            continue
        negated = any(c.dep_ == "neg" or c.lower_ in ("never",) for c in t.children)
        sentence = t.sent.text
        base = lemma(t)
        if negated and _OVER.search(sentence) and base not in ENDING:
            verbs.append(t)
        elif not negated and t.pos_ == "VERB" and (
                base in ENDING or any((base, c.lower_) in _ENDING_PARTICLE for c in t.children
                                      if c.dep_ == "prt") or (base == "get" and "rid" in
                                                              {c.lower_ for c in t.children})):
            if base == "leave" and not any(c.dep_ == "dobj" for c in t.children):
                continue
            if not _done(t):
                continue  # "Dr Adeyemi is retiring", "I'll quit in june": a plan, not an end yet
            verbs.append(t)
        elif t.lower_ in ENDED_STATE and _ended_state(t) and not _BOUNDED.search(sentence):
            verbs.append(t if t.pos_ == "VERB" else t.head)
        elif t.lower_ == "more" and t.i > 0 and doc[t.i - 1].lower_ == "no":  # "so no more bass for me"
            verbs.append(t.head if t.head.i != t.i else t)
    return verbs


def _ended_state(t: Any) -> bool:
    """ "are divorced now", "it's over": a state of "be", not negated, not a plan ("will be divorced")."""
    verb = t if t.pos_ == "VERB" else t.head
    kids = [*verb.children, *t.children]
    return any(lemma(c) == "be" for c in [verb, *kids]) and not any(
        c.dep_ == "neg" or c.lower_ in ("will", "'ll", "if", "when") for c in kids)


def _done(verb: Any) -> bool:
    """The verb, or the verb it hangs from ("had to stop", "stopped going"), is in the past tense."""
    for t in (verb, *verb.ancestors):
        if t.tag_ in ("VBD", "VBN") and not any(c.lower_ in ("will", "'ll", "is", "'s", "are", "'re", "am", "'m")
                                                 and c.dep_ in ("aux", "auxpass") for c in t.children):
            return True
        if t.dep_ not in ("xcomp", "ccomp", "conj"):
            break
    return False


def _named(fact: Any, stems: set[str]) -> bool:
    value = _stems(fact.value)
    core = _stems(_LINK.split(fact.value, maxsplit=1)[0])  # "Spanish on duolingo": the value before its link word
    if (value and value <= stems) or (core and core <= stems and len(core) < len(value)):
        return True
    slot = _stems(fact.predicate.replace("routine_", "").replace("_", " "))
    if fact.predicate.startswith("routine_") and slot and len(slot & stems) * 2 >= len(slot):
        return True  # "never take the tram now" ends routine_tram_to_work
    said = _stems(fact.text)
    return len(said) >= 3 and len(said & stems) * 2 >= len(said) and len(said & stems) >= 3


def replacements(entry: RawEntry, doc: Any, facts: Sequence[Any], turn: Sequence[Candidate],
                 parse: Callable[[str], Any]) -> list[Candidate]:
    """Candidates giving a remembered one-valued fact the turn's new entity of the same type."""
    if not (_NOW.search(doc.text) or any(lemma(t) in CHANGING for t in doc if t.pos_ == "VERB")
            or any(scheduled(sent.text, entry.when) for sent in doc.sents)):  # a dated plan is a change too
        return []
    known = " ".join(f"{f.value} {f.text}" for f in facts).casefold()
    restated = {(c.subject, c.predicate) for c in turn if not c.negated}
    for ent in names(doc):
        sent = ent.sent.text
        if ent.text.casefold() in known or "?" in sent or _HYPOTHETICAL.search(sent) or _BOUNDED.search(sent) \
                or temporary(sent, entry.when):
            continue
        if any(ent.text.casefold() in c.value.casefold() for c in turn if not c.negated) or not _mine(ent.root):
            continue  # the turn's own clauses placed it already; someone else's change is not the user's
        if _negated(ent.root) or _quoted(ent):
            continue  # "I don't live in Cologne anymore" ends Cologne; a quote is someone else's words
        if not _changes(ent.sent, entry):
            continue  # the change sign must stand in the name's own sentence, not anywhere in a long turn
        target = _target(facts, doc.text, restated, parse)
        if target is None:
            continue
        fact, old = target
        if (fact.predicate == "lives_in" and tech_talk(sent)) or \
                (fact.predicate in ("phone_model", "laptop", "car") and software_talk(sent)):
            continue  # "moved over to Brave, Chrome was too slow": an app, not a home nor a phone
        kind = ent.root.head.lower_ if ent.root.dep_ == "compound" else ""
        if kind in _SOFT_KINDS and kind not in f"{fact.predicate} {fact.value}".casefold():
            continue  # "Brave browser on my phone" is a browser: it does not replace the phone
        ok, start = _start(sent, entry)
        if not ok:
            continue  # an undated plan is no fact yet
        value = re.sub(re.escape(old), ent.text, fact.value, flags=re.IGNORECASE)
        return [Candidate(entry.id, fact.subject, fact.predicate, value, sent.strip()[:300], 0.75,
                          type=fact.type, multi=False, valid_from=start)]
    return _new_day(entry, doc, facts, restated)


_SOFT_KINDS = frozenset("browser app extension plugin game website site channel podcast show playlist".split())


def _changes(sent: Any, entry: RawEntry) -> bool:
    """The sentence says a change: "now", "these days", "instead", a verb of the change class, a dated plan."""
    return bool(_NOW.search(sent.text) or any(lemma(t) in CHANGING for t in sent if t.pos_ == "VERB")
                or scheduled(sent.text, entry.when))


def _negated(token: Any) -> bool:
    """A verb above the name, within its clause, is negated ("don't live in Cologne", "no longer with EE")."""
    for t in [token, *token.ancestors]:
        if any(c.dep_ == "neg" or c.lower_ in ("never", "longer") for c in t.children):
            return True
        if t.dep_ in ("ROOT", "ccomp", "advcl", "conj", "relcl"):
            return False
    return False


def _quoted(span: Any) -> bool:
    """The name stands inside quotation marks in its sentence (reported words, not the user's own)."""
    before = span.doc.text[span.sent.start_char:span.start_char]
    return sum(before.count(q) for q in ('"', "\u201c", "\u201d")) % 2 == 1


def _start(sent: str, entry: RawEntry) -> tuple[bool, str | None]:
    """(may change now or later, the start of a dated plan): an undated plan changes nothing."""
    if re.search(r"\b(?:will|'ll|going to|gonna)\b|\bfrom\b|\bstarting\b|\bnext\b", sent, re.IGNORECASE):
        dated = scheduled(sent, entry.when)
        return (dated is not None, dated[1] if dated else None)
    return True, None


def _new_day(entry: RawEntry, doc: Any, facts: Sequence[Any], restated: set[tuple[str, str]]) -> list[Candidate]:
    """ "from next month yoga moves to thursdays" after "my yoga class is on mondays": the routine whose
    words the turn names takes the new weekday in the old one's place."""
    for sent in doc.sents:
        text = sent.text
        days = _DAYS.findall(text)
        if len(days) != 1 or "?" in text or _HYPOTHETICAL.search(text):
            continue
        words = _stems(_DAYS.sub(" ", text))
        for f in reversed(facts):
            old = _DAYS.search(f.value)
            if f.multi or old is None or (f.subject, f.predicate) in restated or \
                    old.group(0).casefold() == days[0].casefold():
                continue
            topic = _stems(f"{f.predicate.replace('routine_', '').replace('_', ' ')} {_DAYS.sub(' ', f.text)}")
            if not words & topic:
                continue
            ok, start = _start(text, entry)
            if not ok:
                return []
            value = f.value[:old.start()] + days[0] + f.value[old.end():]
            return [Candidate(entry.id, f.subject, f.predicate, value, text.strip()[:300], 0.75, type=f.type,
                              multi=False, valid_from=start)]
    return []


def _target(facts: Sequence[Any], text: str, restated: set[tuple[str, str]],
            parse: Callable[[str], Any]) -> tuple[Any, str] | None:
    words = _stems(text)
    best: tuple[int, int, Any, str] | None = None
    for n, f in enumerate(facts):
        if f.multi or (f.subject, f.predicate) in restated or not f.value:
            continue
        old = _entity_of(f, parse)
        if old is None:
            continue
        score = (len(words & (_stems(f.text) - _stems(f.value))), n)
        if best is None or score > best[:2]:
            best = (*score, f, old)
    return (best[2], best[3]) if best else None


def _entity_of(fact: Any, parse: Callable[[str], Any]) -> str | None:
    """The name inside the fact's value (by the parse of its clause)."""
    for ent in names(parse(fact.text or fact.value)):
        if ent.text.casefold() in fact.value.casefold():
            return str(ent.text)
    return None


def names(doc: Any) -> list[Any]:
    """The runs of capitalised words of a parse ("Virgin Media", "Monzo"), by shape rather than the
    tagger's PROPN (which reads an unseen name as a verb or an adverb: "to Starling", "with
    Nationwide"). A sentence's first word counts only when the tagger says PROPN; "I", weekdays and
    months are no names."""
    out = []
    i = 0
    while i < len(doc):
        if _name_word(doc[i]):
            j = i
            while j + 1 < len(doc) and _name_word(doc[j + 1], follows=True):
                j += 1
            out.append(doc[i:j + 1])
            i = j + 1
        else:
            i += 1
    return out


def _name_word(t: Any, follows: bool = False) -> bool:
    """A capitalised word ("Monzo"), a product's inner capital ("iPhone"), or a model number after
    a name ("Pixel 8", "iPhone 11")."""
    if follows and t.like_num:
        return True
    if not any(ch.isupper() for ch in t.text[:2]) or t.lower_ in _NOT_NAMES or not t.text[:1].isalpha():
        return False
    return not t.is_sent_start or t.pos_ == "PROPN" or not t.text[:1].isupper()


# a comma segment that only dates a move or a start: "..., moving in january", "..., starting in april"
_DATED_MOVE = re.compile(r"^(?:and |so )?(?:(?:i|we)(?:'m|'re| am| are) )?(?:moving|starting|relocating|joining|"
                         r"moving in|moving there|starting there)\b", re.IGNORECASE)


def dated(entry: RawEntry, turn: list[Candidate], parse: Callable[[str], Any]) -> list[Candidate]:
    """ "we got the keys to a house in Walthamstow, moving in january": a value a past event gave (got,
    bought, accepted) holds from the date the next comma segment gives a move or a start, not from now."""
    out = []
    for c in turn:
        segments = [p.strip() for p in re.split(r",\s*|\s+-\s+", c.text)]
        start = None
        if not c.negated and c.valid_from is None and c.valid_until is None and len(segments) > 1 and \
                any(t.tag_ == "VBD" for t in parse(segments[0])):
            start = next((d[1] for seg in segments[1:] if _DATED_MOVE.match(seg)
                          for d in [scheduled(seg, entry.when)] if d), None)
        out.append(replace(c, valid_from=start) if start else c)
    return out


def shifted(entry: RawEntry, turn: list[Candidate], facts: Sequence[Any],
            parse: Callable[[str], Any] | None) -> list[Candidate]:
    """``turn`` plus the ends and replacements of remembered facts this turn states without their wording."""
    if parse is None:
        return turn
    turn = dated(entry, turn, parse)
    if not facts:
        return turn
    text = entry.content[:600]
    if not may_shift(text):
        return turn  # no word that ends() or replacements() could act on: the same result, no parse
    if NOT_MINE_RE.search(text):
        return turn  # someone else's idea: "my mate keeps telling me to move to Ipswich, no chance" (h-ledger9)
    doc = parse(text)
    return [*turn, *ends(entry, doc, facts, turn), *replacements(entry, doc, facts, turn, parse)]


def _shift_words() -> re.Pattern[str]:
    """Every word form whose token :func:`_ending_verbs` or :func:`replacements` can act on, as bare
    substrings (a lemma is its word less a suffix, or an irregular form's entry): built from the
    lemma classes themselves, so a word added to them is gated too."""
    lemmas = ENDING | CHANGING | {verb for verb, _prt in _ENDING_PARTICLE}
    words = lemmas | {w for w, base in _IRREGULAR.items() if base in lemmas} | ENDED_STATE | {"more", "rid"}
    return re.compile("|".join(sorted(map(re.escape, words))))


_SHIFT_WORDS = _shift_words()


@lru_cache(maxsize=4096)
def may_shift(text: str) -> bool:
    """False only when neither rule of :func:`shifted` can fire on ``text``, so its parse is skipped
    (most chat turns: "ok sounds good"): no word of an ending or changing lemma class, of an ended
    state or "no more"/"get rid" (:data:`_SHIFT_WORDS`), no "now"-like sign (:data:`_OVER`,
    :data:`_NOW`) and no date a plan could start at (``extract_time._SCHEDULE``). Non-ASCII text is
    always parsed (a case-insensitive regex may match what ``str.lower`` does not fold). Cached: a
    pure function of the text (at most 600 characters), and chat repeats its turns."""
    if not text.isascii():
        return True
    return bool(_SHIFT_WORDS.search(text.lower()) or _OVER.search(text) or _NOW.search(text)
                or _SCHEDULE.search(text))
