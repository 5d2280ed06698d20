"""The heuristic extractor: first-person facts from the user's own turns, no model needed.

Only turns whose role is ``user`` are read; a statement by the assistant, a tool or the system is
never the user's fact. Each named speaker (a message ``name``, or a transcript label such as
``"Caroline: I moved to Boston"``) is its own subject; an ``Assistant:`` label is skipped.

A turn is cut into lines, sentences and clauses ("I used to live in Paris but I moved to Rome"
is two clauses). Per clause: quoted speech is dropped; questions, past habits, plans and wishes
are skipped; a dropped subject is restored ("Just moved to Porto!"); then closers ("I quit my
job"), negations ("I'm not vegan anymore") and the positive rules of :mod:`.extract_rules` run.
Hedged sentences ("I think...") get a low confidence, so their candidates go to review.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from ..ids import format_time
from ..model import Candidate, RawEntry
from ..ports import Extraction
from .clauses import Splitter
from .clauses import regex_clauses as clauses
from .extract_change import norm_value, singular, slot_name
from .extract_fix import Restated, aligned, terse
from .extract_kin import is_member_slot, kin_names, may_name
from .extract_kind import bare_clause, job_place, kind_of, shortened, with_kind
from .extract_names import conjoined, member_names
from .extract_open import read_clause
from .extract_product import owned, stated, the_new
from .extract_recall import Recall
from .extract_rules import (
    ASSISTANT_LABELS,
    CLOSERS,
    ELLIPTICAL,
    FUTURE,
    HEDGE,
    LEAD,
    NEGATIONS,
    NOT_SPEAKERS,
    QUESTION_START,
    RULE_NEEDS,
    RULES,
    SINGLE_REL,
    SKIP,
    TEMP_PLACE,
    VALUE_CLOSERS,
    looks_like_job,
    looks_like_name,
    looks_like_place,
    present_needs,
)
from .extract_rules import REL as _REL
from .extract_service import by_history, is_time_value, reslot, tied
from .extract_slotkey import keyed
from .extract_subject import third_party
from .extract_time import _SCHEDULE, scheduled, temporary
from .revise import settle

__all__ = ["RULES", "HeuristicExtractor", "_REL", "clean_value", "facts_in", "norm_value", "sentences"]

Fact = tuple[str, str, str, bool, float]  # (predicate, value, page type, multi-valued, confidence)

_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_LABEL = re.compile(r"^\s*(?P<label>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2})\s*:\s+(?P<rest>\S.*)$")
_CONTRACTIONS = [
    (re.compile(r"[’`´]"), "'"),
    (re.compile(r"\bi m\b|\bim\b", re.IGNORECASE), "I'm"),
    (re.compile(r"\bive\b", re.IGNORECASE), "I've"),
    (re.compile(r"\bdont\b", re.IGNORECASE), "don't"),
    (re.compile(r"\bdoesnt\b", re.IGNORECASE), "doesn't"),
    (re.compile(r"\bcant\b", re.IGNORECASE), "can't"),
    (re.compile(r"\b(?:upped sticks|packed up|pulled up roots|sold up)(?: and)? (?:went|moved|headed|relocated|"
                r"went off)(?: (?:north|south|east|west|up|down|over|out|back|home))? to\b", re.IGNORECASE),
     "moved to"),
]
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_WHEN = (
    rf"(?:last|next|this|these|every) \w+|(?:in|on|since|from|until|by|around|over) (?:(?:early|late|mid)[- ])?"
    rf"(?:{_MONTHS}|{_DAYS}|spring|summer|fall|autumn|winter|\d{{4}}|the (?:spring|summer|fall|autumn|winter|"
    rf"past|end|beginning|middle|weekend|holidays?|break|christmas)\b)|"
    rf"(?:a few|a couple of|several|\d+|one|two|three|four|five|six|seven|eight|nine|ten) \w+ ago|\w+ ago|"
    rf"for (?:a while|years|months|ages|good|now|\w+ (?:years|months|weeks))"
)
_CALLED = re.compile(r"^(?:a|an|the|our|my)\s+(?:[\w-]+\s+){0,3}?(?:called|named|in)\s+(?=\S)"
                     r"|^(?:a|an|the|our|my)\s+(?:new\s+)?(?:[\w-]+\s+){0,2}(?:place|flat|apartment|house|home|room|"
                     r"studio)\s+(?:in|on)\s+", re.IGNORECASE)
_TAILS = {
    "place": re.compile(rf"\s+(?:{_WHEN}|(?:for|since|because|with|after|before|until|when|while|as|to|from|on|at|by|"
                        r"during|so|where|which|near|right|now|is|its|it's|any|anyone|but|lol|haha|in (?:the|a|our|my)|"
                        r"can't|cant|cannot|can|won't|will|was|were|has|have|had|does|did|doesn't|isn't)\b"
                        r"|\s*\(|\s*[^\w\s,.'&+-]).*$", re.IGNORECASE),  # "glasgow (west end)", "utrecht 🏡"
    "job": re.compile(rf"\s+(?:{_WHEN}|(?:at|for|in|of|since|with|because|after|before|until|when|while|on|by|"
                      r"from|and|who|which|now)\b).*$", re.IGNORECASE),
    "name": re.compile(rf"\s+(?:{_WHEN}|(?:and|but|from|at|in|for|since|who|which|to|now|lol|haha|again|yesterday|"
                       r"today|last|this|after|because|so)\b).*$", re.IGNORECASE),
    "text": re.compile(rf"\s+(?:(?:{_WHEN})$|(?:if|because|unless|although|though|whenever) \S.*$)", re.IGNORECASE),
}
_KIND = {
    "lives_in": "place", "hometown": "place", "employer": "place", "job": "job", "partner": "name",
    "name": "name", "preferred_name": "name", "relationship": "name",
}
_TRAIL = re.compile(
    r"\s+(?:now|these days|nowadays|anymore|any more|too|as well|again|lately|recently|currently|at the moment|"
    r"right now|instead|actually|though|really|a lot|so much|very much|yesterday|today|for good|for now|finally|"
    r"already|officially|haha|lol|by the way|btw|hands down|of course|remember|either|for work|full[- ]time|"
    r"fluently|well|a little|a bit|every day|these days|this season|apparently|obviously|tbh|ngl|lmao|"
    r"part[- ]time|" + _WHEN + r")$",
    re.IGNORECASE,
)
_NOT_VALUES = frozenset("it that this them you there here someone somebody nobody one me him her us".split())
_PREFER_SPLIT = re.compile(r"\s+(?:over|to|rather than|instead of|more than|than)\s+", re.IGNORECASE)
_CONTEXT = re.compile(r"\s+(?:on|for|during|when|while|at|in|if|because|whenever)\s+", re.IGNORECASE)
_QUALIFIER = re.compile(r"\s+(?:with|of|that|which|who|from|without)\s+", re.IGNORECASE)
_ARTICLE = re.compile(r"\b(?:a|an)\s+$", re.IGNORECASE)
_NAMEISH = re.compile(r"^(?:[A-Z<]|[^\W\d_]*[A-Z])")
_APPOSITIVE = re.compile(r"\s*,\s*([A-Z][\w'-]+(?: [A-Z][\w'-]+)?)(?=\s*(?:[,.;!?]|$))")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s.strip()]


_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF]+\ufe0f?")


_SHORT = 400  # texts up to this long are cached by the pure string steps below (a clause is <= 300)


def normalise(text: str) -> str:
    return _normalise_short(text) if len(text) <= _SHORT else _normalise(text)


def strip_lead(text: str) -> str:
    return _strip_lead_short(text) if len(text) <= _SHORT else _strip_lead(text)


def _normalise(text: str) -> str:
    text = _EMOJI.sub(",", text)  # an emoji ends a phrase: "a freelance illustrator now 🎨 scary but fun"
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return text


def _strip_lead(text: str) -> str:
    for _ in range(4):
        stripped = LEAD.sub("", text.strip())
        if stripped == text.strip():
            break
        text = stripped
    return text.strip()


# the same clause is normalised and stripped many times per turn (~8 strip_lead calls a clause), and
# chat repeats short turns: a bounded cache of pure functions of the text (no user, no time)
_normalise_short = lru_cache(maxsize=8192)(_normalise)
_strip_lead_short = lru_cache(maxsize=16384)(_strip_lead)


def _owned_in(sentence: str) -> tuple[tuple[str, str, str, bool, float, bool], ...]:
    return _owned_short(sentence) if len(sentence) <= _SHORT else tuple(owned(sentence))


def _stated_in(clause: str) -> tuple[tuple[str, str, str, bool, float, bool], ...]:
    return _stated_short(clause) if len(clause) <= _SHORT else tuple(stated(clause))


# the product finders are pure functions of the text (13 product patterns per call): cached likewise
_owned_short = lru_cache(maxsize=8192)(lambda text: tuple(owned(text)))
_stated_short = lru_cache(maxsize=8192)(lambda text: tuple(stated(text)))


@lru_cache(maxsize=8192)
def _may_date(clause: str) -> bool:
    """False when ``extract_time.scheduled`` must return None: it needs its date pattern to match
    (the turn's time only resolves the date found); a pure function of the clause, so cached."""
    return _SCHEDULE.search(clause) is not None


def clean_value(value: str, predicate: str = "") -> str:
    value = " ".join(value.split()).strip(" \"'`-:")
    if predicate.startswith("routine"):  # the schedule is the value: "every Tuesday at 6"
        return value
    value = re.sub(r"^(?:named|called)\s+", "", value, flags=re.IGNORECASE)
    value = _CALLED.sub("", value)  # "a little place called Copper Kettle", "our new house in Utrecht"
    tail = _TAILS.get(_KIND.get(predicate, "text"))
    if tail is not None:
        value = tail.sub("", value)
    for _ in range(4):
        stripped = _TRAIL.sub("", value)
        if stripped == value:
            break
        value = stripped
    return value.strip(" \"'`-:")


def _predicate(base: str, match: re.Match[str], value: str, multi: bool) -> tuple[str, str, bool]:
    if base == "prefers":
        value = _CONTEXT.split(_PREFER_SPLIT.split(value)[0])[0]
        parts = _QUALIFIER.split(value)
        words = re.findall(r"[a-z]+", parts[0].casefold())
        if not words or words[0] == "to" or (len(words) < 2 and len(parts) < 2):
            return "prefers", value, True  # "I prefer tea": the category is unknown, so it only adds
        return f"{singular(words[-1])}_preference", value, False
    if base == "service":
        return slot_name(match.group("k").replace("landlady", "landlord").replace("boss", "manager")), value, False
    # "set up on my own", "I work for myself": no name to keep, the slot's value is the state
    if base == "self_employed" or (base == "employer" and value.casefold() in ("myself", "ourselves")):
        return "employer", "self-employed", False
    if base == "own_business":  # "I run my own food truck": the business is where the user works now
        return "employer", f"own {value}", False
    if base == "pet_named":
        return "pet", f"{match.group('k').casefold()} named {value}", True
    if base == "diet_avoid":
        return "diet", f"no {value}", False
    if base == "routine":
        kind = slot_name(match.group("k") or "exercise")
        return f"routine_{kind}", value, False
    if base == "slot":
        home = _HOME_KEY.fullmatch(match.group("k").strip())
        if home and home.group("place") and looks_like_place(home.group("place")):
            return "lives_in", home.group("place"), False  # "my apartment in Quito is at altitude"
        if home and value.casefold().startswith(("in ", "now in ")):
            return "lives_in", value.split(" in ", 1)[-1] if " in " in value else value[3:], False  # "address is in X"
        return slot_name(match.group("k")), value, False
    if base == "favorite":
        kind = re.sub(r"[^a-z]+", "_", match.group("k").casefold()).strip("_")
        return f"favorite_{kind}", value, multi
    if base == "relationship":
        kind = re.sub(r"[^a-z]+", "_", match.group("k").casefold()).strip("_")
        kind = {"mom": "mother", "mum": "mother", "dad": "father"}.get(kind, kind)
        return f"relationship_{kind}", value, multi and match.group("k").casefold() not in SINGLE_REL
    return base, value, multi


def _value(match: re.Match[str], base: str, text: str) -> str | None:
    """The cleaned value of a rule's match, or None when it is not an acceptable value."""
    value = clean_value(match.group("v") or match.groupdict().get("w") or "", base)
    if not value or len(value) > 120 or value.casefold() in _NOT_VALUES:
        return None
    groups = match.re.groupindex
    if "bare" in groups and not looks_like_job(value) and not (_ARTICLE.search(text[:match.start("v")])
                                                              and kind_of(value) == "job"):
        return None  # an unlisted title after "a"/"an" is a job when model2vec says so ("made me a team lead")
    if base in ("lives_in", "hometown") and not looks_like_place(value):
        return None
    if "iam" in groups and not looks_like_name(value):
        return None
    if "name" in groups and not _is_name(value, text):  # "my high school sweetheart, Jenna"
        appositive = _APPOSITIVE.match(text, match.end("v"))
        return appositive.group(1) if appositive else None
    return value


def _is_name(value: str, text: str) -> bool:
    """A person: "Jake", "<PERSON>"; lower case only when the whole text is lower case."""
    return len(value.split()) <= 4 and (bool(_NAMEISH.match(value)) or text == text.lower())


def _each(fact: Fact) -> list[Fact]:
    """A slot of many values gets one fact per value: "netflix and disney+", "english and polish"."""
    predicate, value, kind, multi, conf = fact
    parts = [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*", value) if p.strip()]
    if not multi or len(parts) < 2 or any(len(p.split()) > 4 for p in parts):
        return [fact]
    return [(predicate, p, kind, multi, conf) for p in parts]


def facts_in(sentence: str) -> list[Fact]:
    """(predicate, value, type, multi, confidence) for every rule that matches one clause."""
    s = strip_lead(normalise(sentence))
    out: list[Fact] = []
    seen: set[str] = set()
    low = s.lower()
    present = present_needs(low)  # every rule's literals, looked up once per clause
    for (pattern, base, kind, multi, conf), need in zip(RULES, RULE_NEEDS, strict=True):
        if need is not None and need.isdisjoint(present):
            continue  # the rule's required words are absent: it cannot match (see extract_rules.needs)
        if base == "slot" and out:
            continue  # the open "my X is Y" slot is the fallback for what no named slot read
        m = pattern.search(s)
        if not m:
            continue
        value = _value(m, base, s)
        if value is None:
            continue
        predicate, value, many = _predicate(base, m, value, multi)
        value = clean_value(value, base)
        if predicate in seen or not value:
            continue
        seen.add(predicate)
        out.append((predicate, value, kind, many, conf))
    if not out:
        out = bare_clause(s)  # "I'm a solicitor now", "I'm a social smoker" (extract_kind)
    out += job_place(s, out)
    out = [part for f in out for part in _each(f)]
    schools = {v for p, v, *_ in out if p == "school"}
    if schools:  # "started at Hollins Park Academy" is a school, not an employer
        out = [f for f in out if not (f[0] == "employer" and f[1] in schools)]
    return out


class HeuristicExtractor:
    """Facts from the user's own turns. ``splitter`` cuts a sentence into clauses (spaCy's parse or
    the regex fallback, see :mod:`.clauses`). The extractor remembers each user's latest facts and
    the third parties' names it has seen (per process, bounded), so that a correction in a later
    turn ("sorry, I meant Tuesday") finds the fact it corrects."""

    name = "heuristic"

    def __init__(self, splitter: Splitter | None = None) -> None:
        self.split: Splitter = splitter or clauses
        self.parse = getattr(self.split, "parse", None)  # spaCy's parse: the open-vocabulary path
        self.recall = Recall()
        self.restated = Restated()  # h-ledger9: "So you're in Newcastle?" / "no, Sunderland"

    def extract(self, entries: Sequence[RawEntry]) -> Extraction:
        out: list[Candidate] = []
        for entry in entries:
            if entry.role != "user" or entry.quarantined:
                self.restated.heard(entry, facts_in)
                continue
            lately = self.recall.lately(entry)  # before this turn: what a correction in it may correct
            # a terse correction with no fact of its own ("typo, Odense*") may correct the previous turn's
            wide = self.recall.lately(entry, True) if not lately and terse(entry.content) else lately
            turn: list[Candidate] = []
            for line in entry.content.splitlines():
                subject, text = _speaker(line, entry)
                if subject is None:
                    continue
                other: str | None = None
                for sentence in sentences(text):
                    found, other = self._sentence(entry, subject, sentence, other)
                    turn.extend(found)
            turn = self._kin(entry, self._named(entry, turn))
            turn = settle(entry, turn, self.parse, self.recall)  # h-revise (revise.py)
            lately = lately or ([] if turn else wide)
            if lately and _subject(entry) == entry.user_id:
                fixes = aligned(normalise(entry.content), lately, self.parse)
                turn = self.recall.fixed(entry, fixes, turn) if fixes else turn  # type: ignore[arg-type]
            turn = self.recall.trimmed(entry, self.restated.answered(entry, turn, _subject(entry)))
            self.recall.saw(entry)
            out.extend(turn)
        return Extraction(out)

    def _named(self, entry: RawEntry, turn: list[Candidate]) -> list[Candidate]:
        """ "we have two cats, Salt and Pepper": one value per named member (:mod:`.extract_names`)."""
        if self.parse is None or not any(c.multi and not c.negated for c in turn):
            return turn
        have = {(c.predicate, c.value.casefold()) for c in turn}
        for c in list(turn):
            if c.multi and not c.negated and _COORDINATED.search(c.text):
                extra = [v for v in conjoined(self.parse(c.text), c.value) if (c.predicate, v.casefold()) not in have]
                turn += [replace(c, value=v) for v in extra]
                have |= {(c.predicate, v.casefold()) for v in extra}
        if not _NAMING.search(entry.content):
            return turn  # no name given: no parse needed
        doc = self.parse(normalise(entry.content)[:600])
        out: list[Candidate] = []
        for c in turn:
            names = member_names(doc, c.value) if c.multi and not c.negated and _UNNAMED.fullmatch(c.value) else []
            for name in names:
                cand = replace(c, value=f"{singular(c.value.split()[-1].casefold())} named {name}")
                self.recall.remember(entry, cand)
                out.append(cand)
            if not names:
                out.append(c)
        return out

    def _kin(self, entry: RawEntry, turn: list[Candidate]) -> list[Candidate]:
        """ "my kids are Leo and Maya", "a goat named Gerald": the user's family and pets by name
        (:mod:`.extract_kin`), besides what the rules read; not in a labelled transcript."""
        text = normalise(entry.content)
        if self.parse is None or not may_name(text) or any(_LABEL.match(ln) for ln in text.splitlines()):
            return turn
        subject = _subject(entry)
        found = kin_names(self.parse(text[:600]))
        given = {f[1].casefold().rsplit(" named ", 1)[-1] for f, _clause in found}
        kinds = {f[1].casefold().split(" named ", 1)[0] for f, _clause in found if " named " in f[1]}
        turn = [c for c in turn if not (is_member_slot(c.predicate) and c.value.casefold() in given)
                and not (c.predicate == "pet" and singular(c.value.casefold()) in kinds)]  # "a kitten, Tofu"
        named = {c.value.casefold().rsplit(" named ", 1)[-1] for c in turn
                 if c.predicate in ("pet", "partner") or c.predicate.startswith("relationship")}
        closed = {c.predicate for c in turn if c.negated}  # "my cat Tiger passed away": no new member
        for (p, v, k, mu, conf, _neg), clause in found:
            name = v.casefold().rsplit(" named ", 1)[-1]
            if name in named or p in closed:
                continue
            named.add(name)
            cand = Candidate(entry.id, subject, p, v, clause, conf, type=k, multi=mu)
            self.recall.remember(entry, cand)
            turn.append(cand)
        return turn

    def _sentence(self, entry: RawEntry, subject: str, sentence: str,
                  other: str | None) -> tuple[list[Candidate], str | None]:
        s = normalise(sentence)
        whole = self.recall.correction(entry, s.strip())  # "wait sorry i said whitmore, hes at Ashgrove"
        if whole is not None:
            return whole, other
        out: list[Candidate] = []
        texts = _statements(_spliced(self.split(s), self.parse), s.rstrip().endswith("?"))
        # a hedge holds its own clause and those after it ("my star sign is Leo, not that I believe in it"
        # is not hedged); one in no kept clause holds the whole sentence
        hedged = bool(HEDGE.search(s)) and not any(HEDGE.search(t) for t in texts)
        for text in texts:
            hedged = hedged or bool(HEDGE.search(text))
            fixed = self.recall.correction(entry, text)
            if fixed is not None:
                out.extend(fixed)
                continue
            who, c = subject, text
            lead = strip_lead(text)
            third = third_party(lead, other or (self.recall.other(entry) if _PRONOUN_START.match(lead) else None))
            if third is not None and _DONE_TO_ME.search(lead):
                third = None  # "my doctor took me off sertraline", "they made me head chef": the user changes
            if third is not None:
                who, c = third
                other = who
                self.recall.named(entry, who)
            for cand in self._clause(entry, who, c, text, 0.4 if hedged else None, s):
                out.append(cand)
                self.recall.remember(entry, cand)
        out = _start_dates(out, s, entry.when)
        out += self._owned(entry, subject, s, out)
        out += self.recall.role_ended(entry, out, s.strip())
        return out + self.recall.companions(entry, out), other

    def _owned(self, entry: RawEntry, subject: str, sentence: str, out: list[Candidate]) -> list[Candidate]:
        """ "my Pixel 9" in any sentence, a question too: the user has it, unless the sentence said more."""
        slots = {c.predicate.removesuffix("_for_now") for c in out}
        found = []
        for fact in _owned_in(sentence):
            if fact[0] in slots:
                continue
            slots.add(fact[0])
            p, v, k, mu, conf, _neg = self.recall.known(entry, subject, fact)
            cand = Candidate(entry.id, subject, p, v, sentence.strip(), conf, type=k, multi=mu)
            self.recall.remember(entry, cand)
            found.append(cand)
        return found

    def _clause(self, entry: RawEntry, who: str, c: str, text: str, conf_cap: float | None,
                sentence: str = "") -> list[Candidate]:
        when: dict[str, str] = {}
        sched = scheduled(c, entry.when) if _may_date(c) else None  # no date phrase: None at once
        temp = None if sched else temporary(c, entry.when)
        if sched is not None:
            c, when["valid_from"] = sched
        elif temp is not None:
            rest, end, segment = temp
            if _clause_facts(segment) or _temp_place(segment) or not _clause_facts(rest):
                c, when["valid_until"] = rest, end  # the period is about this fact ("X, visiting him
                #                                      this weekend" is not: the fact stays lasting)
        facts = _clause_facts(c)
        if not _refused(c):  # a named product gives its slot, whatever the verb ("I'm on a Fairphone 5 now")
            have = {f[0] for f in facts}
            facts += [self.recall.known(entry, who, f) for f in _stated_in(strip_lead(c)) if f[0] not in have]
        if not facts and "new " in c and not _refused(c):  # "the new Polestar is so quiet": a car of the user's
            facts = the_new(strip_lead(c), {r.predicate for r in self.recall.own(entry) if r.subject == who})
        if not facts and "valid_until" in when and (place := _temp_place(c)):
            facts = [("staying_in", place, "fact", False, 0.8, False)]
        if not facts:
            changed = self.recall.changes(entry, who, strip_lead(c), text, when.get("valid_from"))
            if changed and ("valid_until" not in when or all(x.negated for x in changed)):
                return changed  # "sold the Vespa, too cold for winter": an ending is not temporary
        if not facts and "valid_until" not in when:
            if self.parse is not None and not _refused(c):
                lead = strip_lead(c)
                lead = "I " + lead if ELLIPTICAL.match(lead) else lead  # "finally traded the fiesta in"
                facts = self.recall.resolve_open(entry, read_clause(lead, self.parse, conf_cap))
            if not facts and conf_cap is None and not _refused(c):
                topical = self.recall.topical(entry, who, c, text, when.get("valid_from"))
                if topical:
                    return topical
        held = [(r.predicate, r.value) for r in self.recall.own(entry) if r.subject == who and not r.multi]
        mine = [p for p, _v in held]
        if self.parse is not None and not _refused(c):
            around = sentence.replace(c, " ")  # the rest of the sentence may name the slot: "switched gyms, ..."
            facts = by_history(reslot(keyed(facts, c, self.parse), c, set(mine)), strip_lead(c), held) if facts \
                else tied(strip_lead(c), self.parse, c, around, held)
        facts = shortened(with_kind(facts, c, set(mine)), mine)
        facts = self.recall.unify(entry, who, facts)
        out = []
        for p, v, k, mu, conf, neg in facts:
            if "valid_until" in when and not neg:  # "we divorced this summer" ends the fact for good
                p, k, mu = temporary_predicate(p), "fact", False
            out.append(Candidate(entry.id, who, p, v, text, conf if conf_cap is None else conf_cap, type=k,
                                 multi=mu, negated=neg, valid_from=when.get("valid_from"),
                                 valid_until=None if neg else when.get("valid_until")))
        return out


_HOME_KEY = re.compile(r"(?:new |old |little |tiny |own |current )?(?:apartment|flat|house|place|home|address|condo|"
                       r"studio)(?: (?:in|near) (?P<place>.+))?", re.IGNORECASE)
_COORDINATED = re.compile(r"\s(?:and|&)\s", re.IGNORECASE)
_NAMING = re.compile(r"\b(?:named|called|names? (?:is|are|was))\b|,\s+(?-i:[A-Z])[a-z]", re.IGNORECASE)
_UNNAMED = re.compile(r"(?:[a-z-]+ )?[a-z-]+")  # "cat", "baby girl": a kind with no name yet
_DONE_TO_ME = re.compile(r"\b(?:made|promoted|appointed|relocated|transferred|moved|posted|took|taken|put|switched|"
                         r"hired|fired|dropped|signed|kicked|let) (?:me|us)\b(?! (?:know|think|wonder|feel|laugh)\b)",
                         re.IGNORECASE)
_PRONOUN_START = re.compile(r"^(?:(?:and|but|so|also|then)[, ]+)*(?:she|he|they)\b", re.IGNORECASE)
_SPLICE = re.compile(r",\s+(?=(?:(?:and|but|so|now|anyway)\s+)?(?:i|we)(?:'m|'re|'ve| am| are| have)?\s+[a-z])",
                     re.IGNORECASE)
_SUBORDINATE = re.compile(r"^\W*(?:if|when|whenever|once|unless|because|since|although|though|as soon as|after|"
                          r"before|while|until|whether|even if|in case)\b", re.IGNORECASE)


def _spliced(parts: list[str], parse: Callable[[str], Any] | None) -> list[str]:
    """A comma splice is two clauses: "said goodbye to Krakow, we're settling into Wroclaw" (the part
    before has a verb in spaCy's parse); not after a subordinate clause ("if I get the job, I'm
    moving": the condition stays with what it conditions), nor after a phrase ("three jobs later,
    I'm at H&M")."""
    if parse is None:
        return parts
    out: list[str] = []
    for part in parts:
        pieces = _SPLICE.split(part)
        if len(pieces) > 1 and not _SUBORDINATE.match(part) and _verb_before(parse(part), len(pieces[0])):
            out += [p for p in pieces if p.strip()]
        else:
            out.append(part)
    return out


def _verb_before(doc: Any, end: int) -> bool:
    """A verb in the first piece of a comma splice (its first ``end`` characters)."""
    return any(t.pos_ == "VERB" for t in doc if t.idx < end)


def _statements(parts: list[str], asked: bool) -> list[str]:
    """The clauses that state something: a sentence ending in "?" keeps only the clauses before its
    last one that do not ask ("in salzburg for a few days, any cafe tips?")."""
    texts = [p.strip(" ,")[:300] for p in parts if p.strip(" ,")]
    if not asked:
        return texts
    if len(texts) == 1 and ", " in texts[0]:
        texts = [t.strip() for t in texts[0].rsplit(", ", 1)]
    return [t for t in texts[:-1] if not QUESTION_START.match(strip_lead(t)) and not SKIP.search(t)]


_START = re.compile(
    r"\b(?:start(?:ing)? date is|(?:i |we )?start(?:s|ing)? (?:on |in |from )?|from|beginning|effective)\s+"
    r"(?P<date>(?:the )?(?:\d{1,2}(?:st|nd|rd|th)? )?(?:of )?[a-z]+(?: \d{1,2}(?:st|nd|rd|th)?)?|"
    r"next (?:week|month|year|[a-z]+day))\b", re.IGNORECASE)


def _start_dates(cands: list[Candidate], sentence: str, when: str) -> list[Candidate]:
    """ "accepted an offer at Northwind, start date is april 1st": the new job starts then."""
    m = _START.search(sentence)
    if not m or not any(not c.valid_from and not c.negated for c in cands):
        return cands
    from .extract_time import parse_when, resolve_date

    base = parse_when(when)
    start = resolve_date(m.group("date"), base)
    if start is None or start <= base:
        return cands
    stamp = format_time(start)
    return [replace(c, valid_from=stamp) if not c.valid_from and not c.negated else c for c in cands]


@lru_cache(maxsize=8192)
def _refused(clause: str) -> bool:
    """A question, a plan, a hypothetical or a wish: the open-vocabulary path reads none of them
    (cached: a pure function of the clause, asked up to four times per clause)."""
    c = strip_lead(clause)
    return not c or bool(QUESTION_START.match(c) or SKIP.search(c) or FUTURE.search(c))


def _temp_place(clause: str) -> str | None:
    m = TEMP_PLACE.search(strip_lead(clause))
    if not m:
        return None
    value = clean_value(m.group("x") or m.group("v") or m.group("w") or "", "lives_in")
    return value if value and len(value) <= 60 else None


def temporary_predicate(predicate: str) -> str:
    """Where a temporary state is kept: beside the lasting fact, never closing it."""
    return "staying_in" if predicate in ("lives_in", "staying_in") else f"{predicate}_for_now"


def _clause_facts(clause: str) -> list[tuple[str, str, str, bool, float, bool]]:
    """Facts of one clause; the last flag marks a negation (it closes instead of adding). A fresh
    list each call (callers extend it) over :func:`_facts_of`'s cached tuple."""
    return list(_facts_of(clause))


@lru_cache(maxsize=8192)
def _facts_of(clause: str) -> tuple[tuple[str, str, str, bool, float, bool], ...]:
    """The rules' reading of one clause, cached by its text: it depends on the text alone (the rule
    table, the word lists and the shipped model2vec prototypes are fixed per process; no user, turn
    time or memory state reaches it), and chat repeats its short clauses ("ok sounds good", "I live
    in Lisbon"); the rules run ~125 regular expressions per clause."""
    return tuple(_read_facts(clause))


def _read_facts(clause: str) -> list[tuple[str, str, str, bool, float, bool]]:
    c = strip_lead(clause)
    if not c or QUESTION_START.match(c) or SKIP.search(c) or FUTURE.search(c):
        return []
    if ELLIPTICAL.match(c):
        c = "I " + c
    for pattern, predicates in CLOSERS:
        if pattern.search(c):
            return [(p, "", "profile", False, 0.9, True) for p in predicates]
    for pattern, predicates, multi in VALUE_CLOSERS:
        m = pattern.search(c)
        if m and (value := clean_value(m.group("v"), predicates[0])) and not is_time_value(value):
            closed = [(p, value, "profile", multi, 0.85, True) for p in predicates]
            rest = c[m.end():].strip(" ,;")  # "left saltbox, i'm sous chef at Ember & Rye now"
            return closed + (_read_facts(rest) if rest and rest != c else [])
    for pattern, prefix in NEGATIONS:
        m = pattern.search(c)
        if m:
            facts = facts_in(prefix + m.group("rest"))
            if facts:
                return [(p, v, k, mu, conf, True) for p, v, k, mu, conf in facts if p != "dislikes"]
            break
    return [(p, v, k, mu, conf, False) for p, v, k, mu, conf in facts_in(c)]


def _speaker(line: str, entry: RawEntry) -> tuple[str | None, str]:
    """Who says this line: a transcript label ("Caroline: ...") wins over the message's speaker.
    None for an assistant/system label: that line is never the user's fact."""
    own = _subject(entry)
    m = _LABEL.match(line)
    if not m:
        return own, line
    label = m.group("label").strip()
    words = label.casefold().replace(".", "").split()
    if any(w in ASSISTANT_LABELS for w in words):
        return None, ""
    if any(w in NOT_SPEAKERS for w in words):
        return own, line
    if label.casefold() in (entry.user_id, (entry.speaker or "").casefold()):
        return own, m.group("rest")
    return label, m.group("rest")


def _subject(entry: RawEntry) -> str:
    if entry.speaker and entry.speaker.casefold() != entry.user_id:
        return entry.speaker.strip()
    return entry.user_id
