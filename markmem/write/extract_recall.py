"""What the extractor remembers of each user: the latest facts, and the third party lately named.

A correction ("sorry, I meant Tuesday") or a change stated against an earlier fact ("replaced the
leaf with a hyundai ioniq", "back to turin", "climbing moved to saturdays") names no predicate:
:class:`Recall` finds the fact it refers to among the user's recent facts (by the value it
names, by the slot's name, or the latest fact of the last two days) and turns it into a
candidate for that fact's predicate and subject. It is per process and bounded (32 facts for
each of 4,096 users); a correction of a fact compiled by another process finds nothing and makes
no claim, rather than a wrong one.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import timedelta

from ..ids import format_time
from ..model import Candidate, RawEntry
from .extract_change import DAYTIME, norm_value, singular, slot_name
from .extract_change import changes as find_changes
from .extract_fix import opens_correction
from .extract_rules import KIN_WORD, tech_talk
from .extract_service import SERVICES, service_slot
from .extract_subject import correction as find_correction
from .extract_time import parse_when
from .extract_topic import on_topic, shape, topic_words
from .extract_topic import values as shaped_values

_RECENT_FACTS = 32
# the named slots: their wordings are known, so no open slot is folded into them by its head noun
CORE = frozenset("lives_in hometown employer job partner diet car phone_model laptop studies school pet speaks "
                 "learning likes dislikes prefers hobby allergy name preferred_name age marital_status children "
                 "work_pattern staying_in".split())
_RECENT_USERS = 4096


@dataclass(frozen=True)
class Recent:
    subject: str
    predicate: str
    value: str
    type: str
    multi: bool
    valid_from: str
    said: str
    text: str = ""


class Recall:
    def __init__(self) -> None:
        self._recent: OrderedDict[str, list[Recent]] = OrderedDict()
        self._others: dict[str, tuple[str, str]] = {}
        self._turns: OrderedDict[str, str] = OrderedDict()  # each user's latest turn's time

    def other(self, entry: RawEntry) -> str | None:
        """The third party this user spoke of lately ("she starts at ..." a few days later)."""
        last = self._others.get(entry.user_id)
        return last[0] if last and last[1] >= _days_before(entry.when, 10) else None

    def named(self, entry: RawEntry, who: str) -> None:
        self._others[entry.user_id] = (who, entry.when)

    # -- corrections: "sorry, I meant Tuesday" --------------------------------------------------
    def correction(self, entry: RawEntry, text: str) -> list[Candidate] | None:
        found = find_correction(text)
        if found is None:
            return None
        new, old = found
        # "I mean a Polo, I always mix those up": a short turn that opens with the correction may correct
        # the previous turn, however long ago ("my new GP, Dr Okafor, actually listens" is no correction)
        bare = len(new.split()) <= 3 and not _PERSONAL.search(new)  # "call me Robert" is a statement
        target = self._target(entry, old, bare and opens_correction(entry.content))
        if target is None:
            return None
        value = replace_value(target.value, new, old)
        base = dict(type=target.type, multi=target.multi, valid_from=target.valid_from)
        text = next((p for p in text.split(", ") if new.casefold() in p.casefold()), text)  # the clause naming it
        out = []
        if target.multi:  # each value has its own page: end the wrong one, add the right one
            out.append(Candidate(entry.id, target.subject, target.predicate, target.value, text, 0.9,
                                 negated=True, **base))  # type: ignore[arg-type]
        cand = Candidate(entry.id, target.subject, target.predicate, value, text, 0.9, **base)  # type: ignore[arg-type]
        out.append(cand)
        self.remember(entry, cand)
        return out

    # -- changes stated against an earlier fact: "replaced the leaf with an ioniq", "back to turin"
    def changes(self, entry: RawEntry, subject: str, clause: str, text: str, start: str | None) -> list[Candidate]:
        # only the speaker's own facts: "Ahmed from my team just left Nimbus" never ends the user's job
        recent = [r for r in self._recent.get(entry.user_id, []) if r.subject == subject]
        took = _SUCCESSOR.fullmatch(clause) if start else None
        if took is not None:  # "Hyperoptic takes over on the 15th" (extract_time._takeover): the user's service
            return self._successor(entry, subject, took.group(1), text, start, recent)
        for ch in find_changes(clause):
            if ch.kind == "slot":
                target = _by_slot(recent, ch.key)
                if target is None:
                    if not DAYTIME.search(ch.new):
                        continue
                    pred = f"routine_{slot_name(ch.key)}"
                    same = _same_routine(recent, subject, pred, text)  # "therapist moved me to ...": that routine
                    cand = Candidate(entry.id, subject, same.predicate if same else pred,
                                     re.sub(r"\s+from$", "", ch.new), text, 0.75, type="fact", valid_from=start)
                    self.remember(entry, cand)
                    return [cand]
            elif ch.kind == "swap":
                target = _by_head(recent, ch.new, ch.key)
            else:
                target = _by_value(recent, ch.old if ch.kind in ("replace", "close") else ch.new)
                if target is None and ch.kind == "close":  # "I quit smoking" -> smokes
                    target = _by_slot(recent, ch.old)
            if target is None:
                continue
            if ch.kind == "close":
                return [Candidate(entry.id, target.subject, target.predicate, target.value, text, 0.85,
                                  type=target.type, multi=target.multi, negated=True)]
            value = target.value if ch.kind == "back" else ch.new
            out = _replaced(recent, target, text, entry.id) if ch.kind == "back" and target.multi else []
            if target.multi and ch.kind in ("replace", "swap"):
                out.append(Candidate(entry.id, target.subject, target.predicate, target.value, text, 0.85,
                                     type=target.type, multi=True, negated=True))
            cand = Candidate(entry.id, target.subject, target.predicate, value, text, 0.85, type=target.type,
                             multi=target.multi, valid_from=start)
            self.remember(entry, cand)
            return [*out, cand]
        return []

    def _successor(self, entry: RawEntry, subject: str, name: str, text: str, start: str | None,
                   recent: list[Recent]) -> list[Candidate]:
        """A named successor taking over on a date: the service slot the sentence speaks of, else the one
        service the user has told of (none or two: no claim); the old value holds until the start."""
        held = {r.predicate: r for r in recent if not r.multi and r.predicate in SERVICES}
        slot = service_slot(text)
        target = held.get(slot) if slot else (next(iter(held.values())) if len(held) == 1 else None)
        if target is None or norm_value(target.value) == norm_value(name):
            return []
        cand = Candidate(entry.id, subject, target.predicate, name, text, 0.75, type=target.type, valid_from=start)
        self.remember(entry, cand)
        return [cand]

    def resolve_open(self, entry: RawEntry, facts: list[tuple[str, str, str, bool, float, bool]]
                     ) -> list[tuple[str, str, str, bool, float, bool]]:
        """Open-vocabulary facts whose slot is the one of a value said before ("sold the Vespa",
        predicate "?"; "traded the Fiesta in for a Niro", predicate "?fiesta") get that slot; with
        no such earlier fact they are dropped (no claim rather than a wrong one)."""
        out = []
        recent = self._recent.get(entry.user_id, [])
        for p, v, k, mu, conf, neg in facts:
            if not p.startswith("?"):
                out.append((p, v, k, mu, conf, neg))
                continue
            target = _by_value(recent, p[1:] or v)
            if target is None:
                continue
            if neg and not target.multi:
                v = ""  # the slot holds one value: close it whatever its wording
            elif neg:
                v = target.value
            elif not target.multi and any(o[0] == target.predicate and o[5] for o in out):
                out = [o for o in out if not (o[0] == target.predicate and o[5])]  # superseded, not closed
            out.append((target.predicate, v, target.type, target.multi, conf, neg))
        return out

    def unify(self, entry: RawEntry, who: str, facts: list[tuple[str, str, str, bool, float, bool]]
              ) -> list[tuple[str, str, str, bool, float, bool]]:
        """An open slot named by its head noun lands on the user's earlier slot with that head: "oat
        cortado is my order" after "my go-to coffee order is a flat white" (go_to_coffee_order),
        "mustard is my colour now" after "fav colour: teal" (favorite_colour)."""
        recent = self._recent.get(entry.user_id, [])
        if not recent:
            return facts
        out = []
        for p, v, k, mu, conf, neg in facts:
            known = next((r for r in reversed(recent) if r.predicate == p and r.subject == who), None)
            if known is not None:
                k = known.type  # one slot, one page: "my favourite pizza is ..." and "... as my favourite pizza"
            elif not mu and p not in CORE:
                same = next((r for r in reversed(recent) if r.subject == who and not r.multi and r.predicate not in CORE
                             and _suffix(r.predicate, p)), None)
                same = same or _same_routine(recent, who, p, entry.content)
                if same is not None:
                    p, k = same.predicate, same.type
            out.append((p, v, k, mu, conf, neg))
        return out

    def topical(self, entry: RawEntry, who: str, clause: str, text: str, start: str | None) -> list[Candidate]:
        """A clause no rule read, on the topic of one of the user's one-valued slots, naming one new value
        of that slot's shape ("home's Utrecht these days" after "i live in zwolle"): the slot's new value
        (see :mod:`.extract_topic`)."""
        recent = self._recent.get(entry.user_id, [])
        met = _meets(entry, who, clause, text, start)
        if met is not None:
            self.remember(entry, met)
            return [met]
        if not recent or _KINS_OWN.search(clause):
            return []  # "my sister's husband is Ivan": the sister's, not the user's partner
        # the whole clause, else (a routine's day or time only) its first comma segment: "gym on tuesdays now,
        # mondays were too busy" (spaCy makes "gym" the subject of "were": one clause)
        parts = [clause] + ([clause.split(",")[0]] if "," in clause else [])
        for i, part in enumerate(parts):
            if _NOT_MINE_NOW.search(part):
                continue
            cand = self._topical(entry, who, part, part if i else text, start, recent, i > 0) \
                or self._moved_routine(entry, who, part, part if i else text, start, recent)
            if cand is not None:
                self.remember(entry, cand)
                return [cand]
        return []

    def _moved_routine(self, entry: RawEntry, who: str, clause: str, text: str, start: str | None,
                       recent: list[Recent]) -> Candidate | None:
        """ "from february the league moves us to fridays": a routine moved to a new day or time, with no
        word of the routine's own, is the user's only routine of that shape (none, or two: no claim)."""
        m = _MOVED_TO.search(clause)
        if not m:
            return None
        kind = "time" if SHAPES_TIME.search(m.group("to")) else "day"
        slots = {r.predicate: r for r in recent if r.subject == who and not r.multi
                 and r.predicate.startswith("routine") and shape(r.value, r.predicate) == kind}
        if len(slots) != 1:
            return None
        r = next(iter(slots.values()))
        found = [v for v in shaped_values(m.group("to"), kind) if norm_value(v) not in norm_value(r.value)]
        if len(found) != 1:
            return None
        return Candidate(entry.id, who, r.predicate, replace_value(r.value, found[0], None), text, 0.6, type=r.type,
                         valid_from=start)

    def _topical(self, entry: RawEntry, who: str, clause: str, text: str, start: str | None, recent: list[Recent],
                 when_only: bool) -> Candidate | None:
        words = set(re.findall(r"[a-z']+", clause.casefold()))
        seen: set[str] = set()
        for r in reversed(recent):
            if r.predicate in seen or r.subject != who or r.multi:
                continue
            seen.add(r.predicate)
            kind = shape(r.value, r.predicate)
            if not kind or (when_only and kind not in ("time", "day")) or \
                    not on_topic(words, topic_words(r.predicate) | _routine_words(r)):
                continue
            if r.predicate == "lives_in" and tech_talk(clause):
                continue  # "moved over to Brave browser": no new home
            old = norm_value(r.value)
            if old and old in norm_value(clause):
                continue  # the old value named again: a repeat, or a change the rules read
            found = [v for v in shaped_values(clause, kind) if norm_value(v) and norm_value(v) not in old]
            if len(found) != 1:
                continue
            value = replace_value(r.value, found[0], None) if kind in ("time", "day") else found[0]
            return Candidate(entry.id, who, r.predicate, value, text, 0.7, type=r.type, valid_from=start)
        return None

    def role_ended(self, entry: RawEntry, cands: list[Candidate], text: str) -> list[Candidate]:
        """A new or ended employer ends the job the user named with the old one ("I'm a data analyst
        at Fernhill" -> "today was my last day at Fernhill"), unless this turn names the new job."""
        jobs = {c.subject for c in cands if c.predicate == "job"}
        out: list[Candidate] = []
        recent = self._recent.get(entry.user_id, [])
        for c in cands:
            if c.predicate != "employer" or c.subject in jobs:
                continue
            same = norm_value(c.value) if c.value else None
            old = next((r for r in reversed(recent) if r.predicate == "employer" and r.subject == c.subject
                        and r.said < entry.when and (norm_value(r.value) == same if c.negated
                                                     else norm_value(r.value) != same)), None)
            job = old and next((r for r in reversed(recent) if r.predicate == "job" and r.subject == c.subject
                                and r.said == old.said), None)
            if job is not None:
                out.append(Candidate(entry.id, c.subject, "job", job.value, text, 0.8, type=job.type, negated=True,
                                     valid_from=c.valid_from))
                jobs.add(c.subject)
        return out

    def known(self, entry: RawEntry, who: str, fact: tuple[str, str, str, bool, float, bool]
              ) -> tuple[str, str, str, bool, float, bool]:
        """The fact with the wording the user gave its value before ("Fiesta" after "ford fiesta"), so
        that naming it again reinforces instead of replacing."""
        p, v, k, mu, conf, neg = fact
        for r in reversed(self._recent.get(entry.user_id, [])):
            if r.subject == who and r.predicate == p:
                if _by_value([r], v) is not None:
                    return p, r.value, r.type, r.multi, conf, neg
                if not r.multi:
                    break
        return fact

    def companions(self, entry: RawEntry, cands: list[Candidate]) -> list[Candidate]:
        """Facts said in one clause with a fact that now ends, and naming its value, end with it: "I'm
        married to Tom" (partner, marital_status) when Tom is gone; "I'm a copywriter at Inkwell" (job,
        employer) when Inkwell is. A slot this turn restates stays as the turn says."""
        when = entry.when  # a property: read once, not per remembered fact
        recent = [r for r in self._recent.get(entry.user_id, []) if r.said < when]
        restated = {(c.subject, c.predicate) for c in cands}
        out: list[Candidate] = []
        done: set[tuple[str, str, str]] = set()
        for old in _ended(recent, cands):
            for r in recent:
                key = (r.subject, r.predicate, r.value)
                if (r.text != old.text or r.said != old.said or r.predicate == old.predicate or key in done
                        or (r.subject, r.predicate) in restated or not _named_in(old.value, r.text)):
                    continue
                done.add(key)
                out.append(Candidate(entry.id, r.subject, r.predicate, r.value if r.multi else "",
                                     next(c.text for c in cands if c.subject == old.subject), 0.8, type=r.type,
                                     multi=r.multi, negated=True))
        return out

    def _target(self, entry: RawEntry, old: str | None, short: bool = False) -> Recent | None:
        recent = self._recent.get(entry.user_id, [])
        if old:
            o = norm_value(old)
            for r in reversed(recent):
                if o and o in norm_value(r.value):
                    return r
            return None
        last = self._turns.get(entry.user_id) if short else None  # "I mean a Polo": the previous turn's
        for r in reversed(recent):  # the latest fact, if it was said lately (same conversation)
            if r.said >= _days_before(entry.when, 2) or r.said == last:
                return r
            break
        return None

    def own(self, entry: RawEntry) -> list[Recent]:
        """The user's own facts remembered before this turn, oldest first."""
        user, when = entry.user_id, entry.when
        return [r for r in self._recent.get(entry.user_id, []) if r.subject == user and r.said < when]

    def lately(self, entry: RawEntry, terse: bool = False) -> list[Recent]:
        """The facts the user gave in this conversation (said within a day before this turn), oldest
        first: their own and those of the people they spoke of ("my sister lives in Ghent" -> "no
        sorry, Bruges"). For a ``terse`` correction ("typo, Odense*") also those of the user's previous
        turn, however long ago: such a turn can mean nothing else."""
        since = _days_before(entry.when, 1)
        recent = self._recent.get(entry.user_id, [])
        last = self._turns.get(entry.user_id)
        if terse and last is not None and last < since and any(r.said == last for r in recent):
            since = last
        when = entry.when
        return [r for r in recent if since <= r.said <= when]

    def trimmed(self, entry: RawEntry, turn: list[Candidate]) -> list[Candidate]:
        """ "got a Corsa last week, the Fiesta failed its MOT": a claim's text is its clause, so a
        comma-joined piece naming the value this claim replaces (the user's earlier value of the same
        slot) is cut from it; the new value must not be shown beside the old one as if both held."""
        recent = self._recent.get(entry.user_id)
        if not recent or not any(", " in c.text for c in turn):
            return turn
        out = []
        for c in turn:
            if c.negated or ", " not in c.text or not c.value:
                out.append(c)
                continue
            olds = {r.value for r in recent if r.subject == c.subject and r.predicate == c.predicate
                    and r.said < entry.when and norm_value(r.value) != norm_value(c.value)
                    and not _named_in(r.value, c.value)}
            pieces = c.text.split(", ")
            keep = [p for p in pieces if not any(_named_in(o, p) for o in olds)]
            if olds and 0 < len(keep) < len(pieces) and any(_named_in(c.value, p) for p in keep):
                c = replace(c, text=", ".join(keep))
            out.append(c)
        return out

    def saw(self, entry: RawEntry) -> None:
        """Note the user's turn (its time): the previous turn a terse correction refers to."""
        self._turns[entry.user_id] = entry.when
        self._turns.move_to_end(entry.user_id)
        while len(self._turns) > _RECENT_USERS:
            self._turns.popitem(last=False)

    def fixed(self, entry: RawEntry, fixes: list[tuple[Recent, str, str | None]],
              found: list[Candidate]) -> list[Candidate]:
        """Corrections found by alignment (:mod:`.extract_fix`): each fact now holds its new word in
        the old one's place; what this turn's clauses misread from the new word (a "teaches physics"
        beside the corrected job) is dropped. A slot the turn restated itself keeps the turn's value."""
        restated = {(c.subject, c.predicate) for c in found}
        fixes = [f for f in fixes if (f[0].subject, f[0].predicate) not in restated]
        if not fixes:
            return found
        new = fixes[0][1]
        out = [c for c in found if new.casefold() not in c.value.casefold()]
        text = next((p for p in re.split(r"(?<=[.!?;,])\s+", entry.content) if new.casefold() in p.casefold()),
                    entry.content).strip()[:300]
        for fact, word, old in fixes:
            base = dict(type=fact.type, multi=fact.multi, valid_from=fact.valid_from)
            if fact.multi:  # each value has its own page: end the wrong one
                out.append(Candidate(entry.id, fact.subject, fact.predicate, fact.value, text, 0.85,
                                     negated=True, **base))  # type: ignore[arg-type]
            cand = Candidate(entry.id, fact.subject, fact.predicate, replace_value(fact.value, word, old), text,
                             0.85, **base)  # type: ignore[arg-type]
            self.remember(entry, cand)
            out.append(cand)
        return out

    def remember_all(self, entry: RawEntry, cands: list[Candidate]) -> None:
        """Remember this turn's candidates not remembered yet (the members a coordination added)."""
        when = entry.when
        have = {(r.subject, r.predicate, r.value.casefold()) for r in self._recent.get(entry.user_id, [])
                if r.said == when}
        for c in cands:
            if (c.subject, c.predicate, c.value.casefold()) not in have:
                have.add((c.subject, c.predicate, c.value.casefold()))
                self.remember(entry, c)

    def remember(self, entry: RawEntry, cand: Candidate) -> None:
        if cand.negated:
            return
        recent = self._recent.setdefault(entry.user_id, [])
        self._recent.move_to_end(entry.user_id)
        recent.append(Recent(cand.subject, cand.predicate, cand.value, cand.type, cand.multi,
                             cand.valid_from or entry.when, entry.when, cand.text))
        del recent[:-_RECENT_FACTS]
        while len(self._recent) > _RECENT_USERS:
            self._recent.popitem(last=False)


# someone else's, or the user's past: "You live in Dublin, right?", "I lived in Ghent for two years"
_KINS_OWN = re.compile(rf"\b(?:my|our) (?:[a-z]+ )?{KIN_WORD}'s\b", re.IGNORECASE)
_NOT_MINE_NOW = re.compile(r"\b(?:you|your|he|she|they|his|her|their|lived|worked|was|were|did|used to|studied|"
                           r"would|could|might|if|when i was|(?:my|our) (?:old|former|previous|ex))\b",
                           re.IGNORECASE)  # "my old boss at Siemens called": a passing mention of the past


_MOVED_TO = re.compile(r"\b(?:moved?|moving|moves|switch(?:ed|es|ing)?|push(?:ed|es|ing)?|chang(?:ed|es|ing)|"
                       r"shift(?:ed|s|ing)?|bump(?:ed|s|ing)?|reschedul(?:ed|es|ing)|brought forward) "
                       r"(?:\w+ )?to (?P<to>(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|"
                       r"\d{1,2}(?::\d\d)?\s*(?:am|pm))\b)",
                       re.IGNORECASE)
SHAPES_TIME = re.compile(r"\d")
_ROUTINE_NOUN = re.compile(r"\b([a-z]{4,})\s+(?:lessons?|class(?:es)?|practice|sessions?|training|club|group|"
                           r"appointments?)\b", re.IGNORECASE)
_NOT_ROUTINE_NOUN = frozenset("have with every each weekly my the our this that some".split())


# "my book club meets on the last thursday of the month", "the quiz runs every other tuesday": a routine of a
# group or event of the user's, by its name (the rules read routines the user does: "I swim on mondays")
_MEETS = re.compile(
    r"^(?:(?:my|our|the)\s+)?(?P<what>[a-z][a-z'-]+(?:\s+[a-z][a-z'-]+)?)\s+(?:meets|meet|runs|happens|takes place|"
    r"is on|are on|is every|are every)\s+(?P<when>(?:on\s+)?(?:every\s+|each\s+|the\s+)?(?:(?:other|first|second|third|"
    r"fourth|last)\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b(?:\s+of (?:the|each|every) month)?"
    r"(?:\s+(?:mornings?|afternoons?|evenings?|nights?))?(?:\s+at\s+\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm)?)?)",
    re.IGNORECASE)
_NOT_MEETS = frozenset("it that this which what who he she they there everyone nobody bin bins".split())


def _meets(entry: RawEntry, who: str, clause: str, text: str, start: str | None) -> Candidate | None:
    """ "book club meets first monday now": ``routine_book_club`` = "first monday" (a clause no rule read)."""
    m = _MEETS.match(clause.strip())
    if not m or m.group("what").split()[0].casefold() in _NOT_MEETS:
        return None
    when = re.sub(r"^on\s+", "", m.group("when"), flags=re.IGNORECASE)
    return Candidate(entry.id, who, f"routine_{slot_name(m.group('what'))}", when, text, 0.7, type="fact",
                     valid_from=start)


# a routine said as changed ("I ring nan on saturday mornings now"; "therapist moved me to every other thursday")
_CHANGED = re.compile(r"\b(?:now|these days|nowadays|anymore|any more|from now on|instead|moved|switched|changed|"
                      r"pushed|shifted)\b", re.IGNORECASE)
_PLAIN = frozenset("i me my we us our you it they them he she his her the a an on at in to of and or but so every each "
                   "other first last is are was be do does did go goes going have has had get got now these days "
                   "from with for before after then this that just also usually normally always".split())
_WHENISH = re.compile(r"^(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|mornings?|afternoons?|evenings?|nights?|"
                      r"weekends?|weekdays?|daily|weekly|fortnightly|monthly|week|month|am|pm|\d.*)$")


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z']+", text.casefold()) if w not in _PLAIN and not _WHENISH.match(w)}


def _same_routine(recent: list[Recent], who: str, predicate: str, turn: str) -> Recent | None:
    """The user's one earlier routine a routine said as changed is about, by a word of its own ("nan", "therapy"
    and "therapist" share their first five letters): "I call my nan every sunday" then "I ring nan on saturday
    mornings now" is one routine; none or two such routines: None."""
    if not predicate.startswith("routine_") or not _CHANGED.search(turn):
        return None
    words = _content_words(turn)
    found = {r.predicate: r for r in recent if r.subject == who and not r.multi and r.predicate.startswith("routine_")
             and r.predicate != predicate and any(a[:5] == b[:5] and min(len(a), len(b)) >= 3 and
                                                  (a == b or min(len(a), len(b)) >= 5)
                                                  for a in _content_words(r.text) for b in words)}
    return next(iter(found.values())) if len(found) == 1 else None


_SUCCESSOR = re.compile(r"I switched to (.+)")  # extract_time._takeover's plain statement


def _routine_words(r: Recent) -> frozenset[str]:
    """A routine's own noun in the sentence that gave it ("I have piano lessons at 5pm" made
    ``routine_lessons``): "piano got pushed to 6pm" is on its topic too."""
    if not r.predicate.startswith("routine"):
        return frozenset()
    return frozenset(w.casefold() for w in _ROUTINE_NOUN.findall(r.text) if w.casefold() not in _NOT_ROUTINE_NOUN)


def _ended(recent: list[Recent], cands: list[Candidate]) -> list[Recent]:
    """The remembered facts these candidates end: the ones a negation names, and the one-valued fact a
    new value of its slot replaces."""
    out = []
    for c in cands:
        same = [r for r in recent if r.subject == c.subject and r.predicate == c.predicate and r.text]
        if c.negated:
            out += [r for r in same if not c.value or norm_value(c.value) == norm_value(r.value)]
        elif not c.multi and same and norm_value(same[-1].value) != norm_value(c.value) and not c.valid_from:
            out.append(same[-1])
    return out


_PERSONAL = re.compile(r"\b(?:i|me|my|we|us|our)\b", re.IGNORECASE)


def _named_in(value: str, text: str) -> bool:
    v = norm_value(value)
    return bool(v) and re.search(rf"(?<!\w){re.escape(v)}(?!\w)", norm_value(text)) is not None


def _suffix(a: str, b: str) -> bool:
    """One slot name ends with the other, at a word: go_to_coffee_order / order, favorite_colour / colour."""
    a, b = singular(a), singular(b)
    return len(min(a, b, key=len)) >= 3 and (a.endswith("_" + b) or b.endswith("_" + a))


def replace_value(value: str, new: str, old: str | None) -> str:
    if old and len(new.split()) == 1:  # "7:40 not 6:40": the token changes, the rest of the value stays
        replaced = re.sub(re.escape(old), new, value, flags=re.IGNORECASE)
        if replaced != value:
            return replaced
    days = re.compile(r"\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?s?\b", re.IGNORECASE)
    if days.search(value) and days.fullmatch(new.strip()):
        return days.sub(new.strip(), value, count=1)
    times = re.compile(r"\b\d{1,2}(?::\d\d)?\s*(?:am|pm)?\b", re.IGNORECASE)
    if times.search(value) and times.fullmatch(new.strip()):
        return times.sub(new.strip(), value, count=1)
    return new


_STOP = frozenset("a an the my our his her their to of in on at for with and or is are was be it thing things stuff "
                  "whole".split())


def _words(text: str) -> set[str]:
    return {singular(w) for w in norm_value(text).split() if w not in _STOP}


def _by_value(recent: list[Recent], value: str) -> Recent | None:
    """The latest fact whose value names ``value`` (or is named by it): "leaf" -> "nissan leaf"."""
    want = _words(value)
    if not want:
        return None
    for r in reversed(recent):
        have = _words(r.value)
        if have and (want <= have or have <= want):
            return r
    return None


_GENERIC = frozenset("day days time times thing things one lesson lessons class session".split())


def _by_slot(recent: list[Recent], key: str) -> Recent | None:
    """The latest fact whose slot the user names: "climbing" -> routine_climbing, "bins" -> bin_day,
    "smoking" -> smokes."""
    want = {_stem(w) for w in _words(key) - _GENERIC}
    for r in reversed(recent):
        if want & {_stem(w) for w in r.predicate.split("_")}:
            return r
    heads = {_stem(w) for w in _words(key)}
    for r in reversed(recent):  # "my sessions" after "my gym sessions are on Mondays": the text's own noun
        if any(_stem(w.casefold()) in heads for w in _OWNED_NOUN.findall(r.text)):
            return r
    return None


_OWNED_NOUN = re.compile(r"\b(?:my|our) (?:[a-z]+ ){0,2}?([a-z]+)\b(?= (?:is|are|was|were|'s|on|at)\b)",
                         re.IGNORECASE)


def _stem(word: str) -> str:
    for end in ("ing", "es", "ed", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            word = word[: -len(end)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word  # "smoke" / "smokes" / "smoking"


def _replaced(recent: list[Recent], back: Recent, text: str, entry_id: str) -> list[Candidate]:
    """Back to an earlier value of a many-valued slot ("back on oat milk"): the value of the same
    kind said since ("almond milk") ends."""
    head = singular((norm_value(back.value).split() or [""])[-1])
    return [Candidate(entry_id, r.subject, r.predicate, r.value, text, 0.85, type=r.type, multi=True, negated=True)
            for r in recent if r.predicate == back.predicate and r.subject == back.subject and r.said > back.said
            and norm_value(r.value) != norm_value(back.value) and head
            and singular((norm_value(r.value).split() or [""])[-1]) == head]


_HEAD_STOPS = frozenset("on in at for with from of to via".split())


def _by_head(recent: list[Recent], new: str, key: str) -> Recent | None:
    """The latest one-valued fact of the same kind as ``new``: its value ends with the same noun
    ("almond milk" replaces "oat milk", "the night shift" "the early shift"), or its slot is named
    ("got a new phone, an iPhone 15" replaces phone_model)."""
    words = norm_value(new).split()
    if not words or len(words) > 5:
        return None
    cut = next((i for i, w in enumerate(words) if i and w in _HEAD_STOPS), len(words))
    head = singular(words[cut - 1])  # "Brave browser on my phone": a browser, not a phone
    for r in reversed(recent):
        if norm_value(r.value) == norm_value(new):
            continue
        have = norm_value(r.value).split()
        if (len(have) > 1 and singular(have[-1]) == head and len(words) > 1) or not r.multi and \
                any(k and _by_slot([r], k) is not None for k in (key, head if len(words) > 1 else "")):
            return r
    return None


def _days_before(when: str, days: int) -> str:
    return format_time(parse_when(when) - timedelta(days=days))
