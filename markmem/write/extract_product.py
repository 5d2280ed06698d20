"""Named products: a phone, car, laptop or e-reader model names its own slot, whatever the verb.

People rarely say "my phone is a Pixel 6"; they say "my Pixel 6 overheats", "I'm on a Fairphone 5
now", "got an iPhone 14 from work", "swapped my Pixel 8 for an iPhone 16", "the Pixel finally died".
The value's class (:data:`PRODUCTS`: brands and model shapes) tells the slot, so one mechanism reads
all of these:

* **possession**: "my <product>" is the user's, even inside a question or a plan ("how do I back up
  my Pixel 9?", "what would it cost to lease a Model Y vs keeping my Octavia?": the Octavia, not
  the Model Y); "my old <product>" is not (that one is past), nor "my dad's <product>";
* **acquisition or use**: got / bought / have / use / drive / am on / switched to / added + a
  product, in a clause that states something (the caller refuses questions, plans and wishes);
* **swap**: "swapped / traded / replaced <product> for / with <product>", "went from X to Y":
  the first ends, the second holds;
* **end**: "<product> died / broke / was stolen", "sold / got rid of my <product>".

Phones, cars, laptops, tablets and e-readers hold one value (a new one replaces the old); consoles
and watches are many-valued, so "added a Steam Deck" never closes the PS5.
"""

from __future__ import annotations

import re

Fact = tuple[str, str, str, bool, float, bool]  # (predicate, value, type, multi, confidence, negated)

_CAR_MAKE = (r"toyota|honda|ford|tesla|subaru|bmw|audi|mercedes|volkswagen|vw|kia|hyundai|nissan|mazda|volvo|"
             r"jeep|chevy|chevrolet|porsche|fiat|peugeot|renault|skoda|škoda|lexus|mini|jaguar|land rover|"
             r"range rover|dodge|polestar|rivian|byd|mg|citroen|citroën|opel|vauxhall|seat|cupra|dacia|suzuki|"
             r"mitsubishi")
# model names that are also plain words ("golf", "focus", "leaf") count only capitalised or after the make
_CAR_MODEL = (r"Civic|Corolla|Camry|Prius|Yaris|RAV4|Fiesta|Focus|Puma|Kuga|Mustang|Golf|Polo|Passat|Tiguan|"
              r"ID\.?[34]|Octavia|Fabia|Superb|Kamiq|Karoq|Kodiaq|Leaf|Micra|Qashqai|Juke|Clio|Megane|Zoe|Corsa|"
              r"Astra|Mokka|Model [3SXY]|Ioniq(?: ?\d)?|Kona|Tucson|Niro|Sportage|Ceed|Picanto|MX-?5|CX-?\d+|"
              r"Outback|Forester|Impreza|Crosstrek|Wrangler|Jazz|Swift|Sandero|Duster|Octavia Estate|MG4|MG ZS|"
              r"Polestar \d|e-?208|Berlingo|Transit|Defender|Discovery|Evoque|Panda|Punto|Cooper|Mondeo|Insignia")
_MODEL_NO = r"(?: ?(?:\d+[a-z]?|[a-z]\d+))"
PRODUCTS: list[tuple[str, re.Pattern[str], bool]] = [  # (slot, pattern, many-valued)
    ("phone_model", re.compile(
        r"\b(?:iphone(?: ?\d+| se| x[rs]?)?(?: pro| max| mini| plus)*|(?:google )?pixel ?\d+[a]?(?: pro| xl| fold)*|"
        r"(?-i:Pixel)|"
        r"(?:samsung )?galaxy (?:s|a|note|z ?fold|z ?flip) ?\d+(?: ?ultra| ?plus| ?fe|\+)?|oneplus ?\d+[rt]?|"
        r"fairphone ?\d|nothing phone(?: ?\(?\d\)?)?|xperia \w+|moto ?g\d*|razr|redmi(?: note)? \d+)\b",
        re.IGNORECASE), False),
    ("car", re.compile(rf"\b(?:(?i:{_CAR_MAKE}) (?i:{_CAR_MODEL})|(?:{_CAR_MODEL}))\b"), False),
    ("laptop", re.compile(r"\b(?:macbook(?: pro| air)?|thinkpad(?: [a-z]\d+\w*)?|chromebook|dell xps(?: \d+)?|"
                          r"surface (?:pro|laptop)(?: \d+)?|framework laptop)\b", re.IGNORECASE), False),
    ("tablet", re.compile(r"\b(?:ipad(?: pro| air| mini)?|galaxy tab(?: \w+)?)\b", re.IGNORECASE), False),
    ("e_reader", re.compile(r"\b(?:kindle(?: paperwhite| oasis| scribe)?|kobo(?: [A-Z]\w+)?|remarkable ?\d?)\b",
                            re.IGNORECASE), False),
    ("games_console", re.compile(r"\b(?:steam deck|ps[345]|playstation ?[345]|xbox(?: series [xs]| one)?|"
                                 r"nintendo switch(?: oled| lite)?)\b", re.IGNORECASE), True),
    ("watch", re.compile(r"\b(?:apple watch(?: \w+)?|garmin \w+|fitbit(?: \w+)?)\b", re.IGNORECASE), True),
]
_MINE = re.compile(r"\bmy (?:(?:new|current|trusty|beloved|little|shiny|precious) )?$", re.IGNORECASE)
_HAVE = re.compile(
    r"\b(?:(?:i|we)(?:'ve|'m| have| am)? )?(?:just |finally |now |also |currently )*(?:got|get|bought|buy|have|"
    r"own|use|using|drive|driving|picked up|ordered|added|switched to|moved to|upgraded to|went for|went with|"
    r"on|stuck on|back on|back to|rocking|treated myself to)(?: (?:a|an|the|my|our|myself|another))?"
    r"(?: (?:new|used|second-?hand|refurbished|old|little|shiny))?\s+$", re.IGNORECASE)
_SWAP = re.compile(r"\b(?:swapped|traded|exchanged|replaced|switched|went|changed|upgraded)(?: in)? (?:from )?"
                   r"(?:my |our |the |a |an )?(?:old )?(?P<old>.{2,40}?) (?:in )?(?:for|with|to) (?:a |an |the |my )?"
                   r"(?:new |shiny )?(?P<new>.{2,40}?)(?=[,.;!?]|\s+(?:and|but|because|last|this|yesterday|today|"
                   r"now|lol|haha)\b|$)", re.IGNORECASE)
_DIED = re.compile(r"(?P<x>\S.{0,40}?)(?:'s| has| had| is)? (?:finally |just |officially )?(?:died|is dead|"
                   r"broke|got stolen|was stolen|gave up|packed in|packed up)\b", re.IGNORECASE)
_SOLD = re.compile(r"\b(?:sold|got rid of|gave away|returned|ditched|scrapped|wrote off|totall?ed) (?:my |our |the )?"
                   r"(?:old )?$", re.IGNORECASE)
_NOT = re.compile(r"\b(?:not|never|don't|didn't|no longer|isn't|wasn't)\b[^,;.!?]*$", re.IGNORECASE)


# every product pattern in one: most clauses name none, and one search says so (13 scans did, per clause)
_ANY = re.compile("|".join(f"(?i:{p.pattern})" if p.flags & re.IGNORECASE else f"(?:{p.pattern})"
                           for _s, p, _m in PRODUCTS))


def find(text: str) -> list[tuple[str, str, bool, int, int]]:
    """Every product named in ``text``: (slot, value as written, many-valued, start, end)."""
    out: list[tuple[str, str, bool, int, int]] = []
    if not _ANY.search(text):
        return out
    for slot, pattern, many in PRODUCTS:
        for m in pattern.finditer(text):
            if not any(s <= m.start() < e for _sl, _v, _mu, s, e in out):
                out.append((slot, m.group(0).strip(), many, m.start(), m.end()))
    return sorted(out, key=lambda x: x[3])


def owned(sentence: str) -> list[Fact]:
    """ "my <product>" in any sentence, asked or stated: the user has it (not "my old ...", not "my
    dad's ...")."""
    return [(slot, value, "profile", many, 0.7, False) for slot, value, many, start, _end in find(sentence)
            if _MINE.search(sentence[:start])]


def stated(clause: str) -> list[Fact]:
    """Products a stating clause gives the user, or takes away."""
    swap = _SWAP.search(clause)
    if swap:
        old, new = find(swap.group("old")), find(swap.group("new"))
        if new and (old or _SWAP_VERB_ALONE.match(swap.group(0))):
            slot, value, many = new[0][:3]
            out: list[Fact] = []
            if old and (old[0][0] != slot or many):  # one value of one slot: the new one supersedes it
                out.append((old[0][0], old[0][1], "profile", old[0][2], 0.85, True))
            return out + [(slot, value, "profile", many, 0.85, False)]
    out = []
    last = -1  # where the last product this clause gives ended: "an iPad and a Kindle" gives both
    for slot, value, many, start, end in find(clause):
        before, after = clause[:start], clause[end:]
        if last >= 0 and _AND.match(clause[last:start]):
            out.append((slot, value, "profile", many, 0.75, False))
            last = end
            continue
        if _DIED.match(clause[start:]) and re.match(r"^(?:'s| has| had| is)? ?(?:finally |just |officially )?"
                                                    r"(?:died|is dead|broke|got stolen|was stolen|gave up|packed)",
                                                    after.strip(), re.IGNORECASE):
            out.append((slot, value, "profile", many, 0.8, True))
        elif _SOLD.search(before):
            out.append((slot, value, "profile", many, 0.85, True))
        elif _NOT.search(before):
            continue
        elif _HAVE.search(before) or _MINE.search(before):
            out.append((slot, value, "profile", many, 0.75, False))
            last = end
    return out


_BARE_MAKE = re.compile(r"\b(?:the|our) (?:brand )?new (?P<v>(?-i:[A-Z][a-z]+|[A-Z]{2,3}))"
                        r"(?=\s*(?:[,.;!?]|$)|\s+(?:is|was|has|had|'s|needs|drives|goes|does|gets|handles|feels|"
                        r"runs|charges|arrived|came)\b)")


def the_new(clause: str, held: set[str] | frozenset[str]) -> list[Fact]:
    """ "the new Polestar is so quiet", "our new Yaris": the user's car (or phone) when the user has one
    already (``held``: the user's one-valued slots) and this clause names a new one; a bare make counts
    ("the new Tesla"). Without a car of the user's on record "the new Tesla" may be news, so nothing."""
    out: list[Fact] = []
    for slot, _value, many, start, _end in find(clause):
        if slot in held and re.search(r"\b(?:the|our) (?:brand )?new $", clause[:start], re.IGNORECASE):
            out.append((slot, _value, "profile", many, 0.75, False))
    if not out and "car" in held and (m := _BARE_MAKE.search(clause)) and re.fullmatch(
            rf"(?:{_CAR_MAKE})", m.group("v"), re.IGNORECASE):
        out.append(("car", m.group("v"), "profile", False, 0.7, False))
    return out


_AND = re.compile(r"^\s*(?:,|,? and|&|\+)\s*(?:a |an |the |my )?$", re.IGNORECASE)
_SWAP_VERB_ALONE = re.compile(r"(?:switched|went|changed|upgraded) (?:from )?", re.IGNORECASE)
