"""Who provides a service to the user: "I'm with Vodafone now, got a sim only deal", "moved all my money
over to Monzo", "our broadband is Virgin Media", "I'm doing deliveries for DHL now".

No list of brands or of phrasings. A clause that ties the user to a proper name (a preposition
"with"/"to"/"at"/"for" before it in spaCy's parse, or an open "my <thing> is <Name>" slot) is
compared, as a whole, with a short prototype text per service slot (phone network, bank, gym,
broadband, energy, insurer, doctor, groceries) using the model2vec model markmem ships (the one
the injection guard has already loaded in a writing process; ~0.1 ms a clause). The slot is taken
only when its prototype is clearly nearest (:data:`FLOOR`, :data:`MARGIN`); else nothing changes.
So "switched to Three, way cheaper for the same data" and "my phone contract is with EE" land on
one slot, ``phone_network``, and the later one replaces the earlier.

A present-tense first-person verb with "for <Name>" ("I drive for Uber", "doing deliveries for
DHL") is an employer: a structural reading, no similarity needed. "I'm with <Name>" read as a
partner by the rules is not one when the name is an acronym or camel-cased (EE, BT, PureGym) or
the clause is clearly about a service.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

Open = tuple[str, str, str, bool, float, bool]  # (predicate, value, type, multi, confidence, negated)

PROTOTYPES = {
    "phone_network": "my mobile phone network, sim card, phone contract, data plan",
    "bank": "my bank, bank account, banking app, current account, savings",
    "gym": "my gym membership, fitness classes, workout",
    "internet_provider": "broadband internet provider, wifi connection at home",
    "energy_supplier": "energy supplier, electricity and gas bills",
    "insurer": "insurance company, car insurance, home insurance policy",
    "doctor": "my doctor, GP surgery, registered with a practice",
    "groceries": "grocery shopping, supermarket, weekly food shop delivery",
}
FLOOR = 0.3  # cosine of the nearest prototype, at least
MARGIN = 0.05  # over the second nearest
_TIES = frozenset({"with", "to", "at", "for", "through", "via"})
_NOT_WORK = frozenset("volunteer volunteers volunteering vote votes voting root rooting cheer cheering pray praying "
                      "wait waiting look looking care caring shop shopping go going pay paying".split())
_PERSONISH = re.compile(r"^[A-Z][a-z]+$")
_ORGISH = re.compile(r"^(?:[A-Z]{2,}\w*|[A-Z][a-z]+[A-Z]\w*|\w*\d\w*)$")  # "EE", "BT", "PureGym", "O2"
_GATE = re.compile(r"\b(?:with|to|at|for|is|are)\s+(?:the\s+)?(?:[A-Z]|[a-z]+[A-Z])", re.MULTILINE)
_FOR_NAME = re.compile(r"\bfor ((?:[A-Z][\w&'-]*)(?: [A-Z][\w&'-]*){0,2})$")
_lock = threading.Lock()
_table: dict[str, Any] = {}


def may_tie(clause: str) -> bool:
    """A capitalised word after a tying preposition or "is": worth a parse and an embedding."""
    return _GATE.search(clause) is not None


def service_slot(text: str) -> str | None:
    """The service slot the text clearly speaks of, else None (also without the model)."""
    vectors = _prototypes()
    if vectors is None:
        return None
    embedder, names, table = vectors
    scores = table @ embedder.embed([text])[0]
    order = scores.argsort()[::-1]
    best, second = float(scores[order[0]]), float(scores[order[1]])
    return names[order[0]] if best >= FLOOR and best - second >= MARGIN else None


_model_lock = threading.Lock()


def shipped_embedder() -> Any | None:
    """The shipped model2vec model, loaded once for the extractor's prototype tables; None without it
    (no model, no numpy: the rules alone)."""
    with _model_lock:
        if "model" not in _table:
            try:
                from ..adapters.vectors import BUILTIN, load_embedder

                _table["model"] = load_embedder(BUILTIN)
            except Exception:  # noqa: BLE001 - no model, no numpy: the rules alone
                _table["model"] = None
        return _table["model"]


def _prototypes() -> tuple[Any, list[str], Any] | None:
    with _lock:
        if "v" not in _table:
            embedder = shipped_embedder()
            names = list(PROTOTYPES)
            _table["v"] = None if embedder is None else (embedder, names,
                                                         embedder.embed([PROTOTYPES[n] for n in names]))
        return _table["v"]  # type: ignore[no-any-return]


def tied(clause: str, parse: Callable[[str], Any], said: str = "", around: str = "",
         held: Held = ()) -> list[Open]:
    """The service or employer a first-person clause ties the user to, from the parse (``said``:
    the clause before its lead words were stripped, "these days I'm at ..."; ``around``: the rest of
    its sentence, which may name the service the clause does not: "switched gyms, I go to PureGym now";
    ``held``: the user's earlier one-valued facts, (slot, value): "went over to Octopus" after "my energy
    supplier is British Gas" is the one service slot the user has)."""
    if (m := _ACCOUNT.search(clause)) and (m.group(2) or "bank" in dict(held) or _MONEY.search(around)):
        return [("bank", m.group(1), "profile", False, 0.75, False)]  # "opened a Chase account"
    if not may_tie(clause):
        return []
    doc = parse(clause)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or any(c.dep_ == "neg" for c in root.children) or not _mine(root):
        return []
    for prep in [c for c in root.children if c.dep_ == "prep" and c.lower_ in _TIES] + _particle_preps(root):
        org = next((g for g in prep.children if g.dep_ == "pobj" and g.pos_ in ("PROPN", "NUM", "NOUN")), None)
        if org is None or not (org.text[:1].isupper() or _ORGISH.match(org.text) or _named_noun(org)) \
                or org.i == org.sent.start:
            continue  # a name: capitalised inside the clause ("switched to Three"), or "giffgaff"-like
        name = _name(org)
        if any(c.dep_ == "case" for c in org.children):
            continue  # "went over to Sarah's": a visit
        if prep.lower_ == "for" and root.tag_ in ("VBP", "VBZ", "VBG") and root.lower_ not in _NOT_WORK:
            return [("employer", name, "profile", False, 0.75, False)]
        if prep.lower_ == "at" and root.lemma_ == "be" and (_lasting(root) or _NOWADAYS.search(said)):
            # "these days I'm at Capgemini", "I've been at Aldi since the spring": a standing place of work
            return [("employer", name, "profile", False, 0.7, False)]
        job = _as_job(root)
        if job and prep.lower_ in ("with", "at", "for"):  # "been with Siemens for 8 years as an electrician"
            return [("employer", name, "profile", False, 0.75, False), ("job", job, "profile", False, 0.75, False)]
        slot = service_slot(clause) or (service_slot(around) if around.strip(" ,.;") else None) \
            or _said_slot(name, clause) or (_only_service(held) if _switching(root) else None)
        if slot:
            return [(slot, name, "profile", False, 0.75, False)]
    return []


Held = "list[tuple[str, str]] | tuple[()]"
SERVICES = frozenset(PROTOTYPES) | {"internet_provider"}
# "opened a Chase account", "got a Nationwide current account": a bank when the account is one (or the
# user already has a bank, or the sentence speaks of money: "my salary goes in there now")
_ACCOUNT = re.compile(r"\b(?:opened|opening|open|got|set up|switched to|moved to|went with)\s+(?:a|an|my)\s+"
                      r"(?:new\s+)?((?:[A-Z][\w&'-]*|[a-z]+[A-Z]\w*)(?: [A-Z][\w&'-]*)?)\s+"
                      r"(?:(current|savings|bank|joint)\s+)?account\b")
_MONEY = re.compile(r"\b(?:salary|wages|pay|paid|savings|money|direct debits?|bills|overdraft)\b", re.IGNORECASE)
_SWITCH = frozenset("switch switched switching port ported swap swapped".split())  # the parse has no lemmas
_OVER = frozenset("go goes went gone going move moves moved moving change changed changing".split())


def _switching(root: Any) -> bool:
    """ "switched to Octopus", "went over to Smarty", "moved over to Monzo": the user changed provider
    (not "went to Sarah's", not "moved to Leeds": those have no "over")."""
    return root.lower_ in _SWITCH or (
        root.lower_ in _OVER and any(c.dep_ == "prt" and c.lower_ == "over"
                                                                 for c in root.children))


def _only_service(held: Any) -> str | None:
    """The one service slot the user has told of, else None (two: which one is unknown)."""
    slots = {p for p, _v in held if p in SERVICES}
    return next(iter(slots)) if len(slots) == 1 else None


_LOOSE = frozenset({"lives_in", "partner", "employer"})
_WITH_ME = re.compile(r"^(?:i'm|i am|we're|we are|i've been|we've been|im)\s+(?:now\s+)?with\s+", re.IGNORECASE)
_COUPLE = re.compile(r"\b(?:dating|together|seeing|married|engaged|love|boyfriend|girlfriend|husband|wife|partner|"
                     r"relationship|moved in)\b", re.IGNORECASE)


_KINDS = ("a person, first name, boyfriend, girlfriend, partner",
          "a company, brand, provider, network, bank, supplier")
ORG_MARGIN = 0.08  # a company's name is nearer the company text by this much (names: <= 0.01 on a sample)


def org_name(name: str) -> bool:
    """Whether a bare name reads as a company's rather than a person's ("Nationwide", "Vodafone", "Barclays"
    vs "Priya", "Dan"), by the shipped model2vec model; False without it."""
    with _lock:
        if "kinds" not in _table:
            embedder = shipped_embedder()
            _table["kinds"] = None if embedder is None else (embedder, embedder.embed(list(_KINDS)))
        kinds = _table["kinds"]
    if kinds is None:
        return False
    embedder, table = kinds
    person, org = (table @ embedder.embed([name])[0]).tolist()
    return bool(org - person >= ORG_MARGIN)


def by_history(facts: list[Open], clause: str, held: Any) -> list[Open]:
    """A value the user earlier gave a service slot is that service again ("moved back to Octopus after
    EDF hiked the price" is no home: Octopus was the user's energy supplier), and "I'm with Nationwide
    these days" after "my bank is Halifax" is the bank, not a partner (the user's one service slot; not
    when the user has told of a partner, or the clause speaks of a couple)."""
    if not held:
        return facts
    was = {v.casefold(): p for p, v in held if p in SERVICES}
    own = {p for p, _v in held}
    out: list[Open] = []
    for f in facts:
        p, v, _k, _mu, conf, neg = f
        if p in _LOOSE and not neg:
            slot = was.get(v.casefold())
            if slot is None and p == "partner" and "partner" not in own and _WITH_ME.match(clause) \
                    and not _COUPLE.search(clause) and org_name(v):
                slot = _only_service(held)
            if slot is not None:
                f = (slot, v, "profile", False, conf, neg)
        out.append(f)
    return out


_SLOT_WORDS = {"energy_supplier": "energy|electricity|gas and electric(?:ity)?", "gym": "gym",
               "internet_provider": "broadband|internet|wi-?fi|fibre", "bank": "bank(?:ing)?|current account",
               "phone_network": "sim|mobile network|phone contract|mobile contract", "insurer": "insurance|insurer"}


def _said_slot(name: str, clause: str) -> str | None:
    """The slot the clause names itself beside the name: "I'm with Octopus for energy", "I go to PureGym"
    (the service's own word in its name); not a word elsewhere in the clause ("the gym with Sarah")."""
    for slot, words in _SLOT_WORDS.items():
        beside = rf"\b{re.escape(name)} for (?:my |our |the |all (?:my |our |the )?)?(?:{words})\b"
        if re.search(rf"(?:{words})\b", name, re.IGNORECASE) or re.search(beside, clause, re.IGNORECASE):
            return slot
    return None


def _named_noun(token: Any) -> bool:
    """ "the Nuffield gym": a common noun with a capitalised proper name before it."""
    return token.pos_ == "NOUN" and any(c.dep_ == "compound" and c.pos_ == "PROPN" and c.text[:1].isupper()
                                        for c in token.lefts)


def reslot(facts: list[Open], clause: str, known: frozenset[str] | set[str] = frozenset()) -> list[Open]:
    """An open "my <thing> is <Name>" slot that is clearly a service takes the service's name
    ("our broadband is Virgin Media": internet_provider), unless the user already has that open slot
    (``known``: "my dentist is now Dr Lind" after "my dentist is Dr Okafor" stays ``dentist``); a
    partner "with <Name>" that is a service or not a person's name ("I'm with EE") is no partner."""
    out: list[Open] = []
    for p, v, k, mu, conf, neg in facts:
        if p == "partner" and not neg and re.search(rf"\bwith {re.escape(v)}\b", clause):
            slot = service_slot(clause)
            if slot or _ORGISH.match(v) or not _PERSONISH.match(v) or org_name(v):
                if slot:
                    out.append((slot, v, "profile", False, conf, neg))
                continue
        elif p == "employer" and not neg and _GYM_NAME.search(v) and not _AT_WORK.search(clause):
            out.append(("gym", v, "profile", False, conf, neg))  # "joined The Gym Group instead": no job there
            continue
        elif p == "hobby" and not neg and (m := _FOR_NAME.search(v)):  # "doing deliveries for DHL"
            out.append(("employer", m.group(1), "profile", False, conf, neg))
            continue
        elif k == "fact" and p.count("_") <= 2 and p not in known and _open_value(v) and not is_time_value(v) \
                and (slot := service_slot(clause)):
            out.append((slot, re.sub(r"^(?:with|at) ", "", v), "profile", False, conf, neg))
            continue
        out.append((p, v, k, mu, conf, neg))
    return out


_GYM_NAME = re.compile(r"\b(?:gym|fitness)\b", re.IGNORECASE)
_AT_WORK = re.compile(r"\b(?:work|working|works|worked|job|hired|role|position|shifts?|staff|team|manager|trainer|"
                      r"instructor|receptionist|colleagues?)\b", re.IGNORECASE)
_NOWADAYS = re.compile(r"\b(?:these days|nowadays|currently)\b", re.IGNORECASE)
_LASTING = frozenset("now nowadays currently since".split())


def _lasting(root: Any) -> bool:
    """A standing state, not a visit: "now", "these days", "since ...", "for years" on the verb."""
    for c in root.children:
        if c.lower_ in _LASTING or (c.dep_ == "npadvmod" and c.lower_ == "days"
                                    and any(d.lower_ == "these" for d in c.children)):
            return True
        if c.dep_ == "prep" and c.lower_ == "for" and any(g.lower_ in ("years", "months", "ages") for g in c.subtree):
            return True
    return False


_TIME_VALUE = re.compile(r"^(?:(?:on|in|at|from|every|each|next|last|this) )?(?:(?:early|mid|late)[- ])?"
                         r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|january|february|march|april|may|june|july|august|september|"
                         r"october|november|december|spring|summer|autumn|fall|winter|weekends?|mornings?|evenings?|"
                         r"nights?|\d{1,2}(?::\d\d)?\s*(?:am|pm)?)\b", re.IGNORECASE)


def is_time_value(value: str) -> bool:
    """ "March", "Monday nights", "at 7pm": a time, never a place, an employer or a service's name."""
    return _TIME_VALUE.match(value.strip()) is not None


def _open_value(value: str) -> bool:
    """ "Virgin Media", "with EE", "at Chase": a name, maybe after a preposition."""
    name = re.sub(r"^(?:with|at) ", "", value)
    return bool(name) and name[:1].isupper() and len(name.split()) <= 4


def _mine(root: Any) -> bool:
    subj = [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")]
    if subj:
        return subj[0].lower_ in ("i", "we")
    before = [t for t in root.sent if t.i < root.i]  # no subject: "switched to Three", "been driving for Uber"
    return all(t.dep_ in ("aux", "auxpass") for t in before)


def _as_job(root: Any) -> str:
    """The job of an "as <job>" phrase on the verb ("... as an electrician"), else ""."""
    from .extract_rules import looks_like_job

    for prep in root.subtree:  # on the verb or on its time phrase ("for 8 years as an electrician")
        noun = next((t for t in prep.children if t.dep_ == "pobj" and t.pos_ == "NOUN"), None)
        if prep.dep_ == "prep" and prep.lower_ == "as" and noun is not None:
            job = " ".join(t.text for t in [*[t for t in noun.lefts if t.dep_ in ("compound", "amod")], noun])
            return job if looks_like_job(job) else ""
    return ""


def _particle_preps(root: Any) -> list[Any]:
    """ "moved all my money over to Monzo": the preposition under a particle or an adverb."""
    return [g for c in root.children if c.dep_ in ("prt", "advmod") for g in c.children
            if g.dep_ == "prep" and g.lower_ in _TIES]


def _name(token: Any) -> str:
    parts = [t for t in token.lefts if t.dep_ == "compound" and t.pos_ == "PROPN"]
    return " ".join(t.text for t in [*parts, token])
