"""The fallback PII scanner: regular expressions plus checksums, no model needed.

Used when Presidio or its spaCy model is unavailable (``markmem doctor`` reports it). It finds
street addresses by pattern but cannot find names or places; ``block`` policy therefore refuses
PERSON/LOCATION-sensitive setups loudly.

Every candidate is validated where a checksum or a parser exists (Luhn for cards, mod-97 for
IBANs, :mod:`ipaddress` for IPs, SSN area/group/serial rules), scored, and overlapping spans are
resolved to the highest-scoring one, as the Presidio scanner does. Nine bare digits count as an
SSN only after a context word ("my SSN is 123456789").
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Sequence

from ..ports import PiiFinding

_SSN_CONTEXT = re.compile(r"(?i)(?:\bssns?|\bssid|\bsocial\s+security|\bss#)")
_CONTEXT_WINDOW = 40  # characters before a bare nine-digit number searched for a context word


def luhn_ok(digits: str) -> bool:
    nums = [int(d) for d in digits if d.isdigit()]
    if not 13 <= len(nums) <= 19:
        return False
    total = 0
    for i, n in enumerate(reversed(nums)):
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def iban_ok(text: str) -> bool:
    """ISO 13616 mod-97 check on an IBAN, spaces allowed."""
    iban = re.sub(r"\s", "", text).upper()
    if not 15 <= len(iban) <= 34 or not iban.isalnum() or not iban.isascii():  # "İ" and "K" pass the pattern
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def ssn_ok(text: str) -> bool:
    digits = re.sub(r"\D", "", text)
    return (
        len(digits) == 9
        and digits[:3] not in ("000", "666")
        and digits[0] != "9"
        and digits[3:5] != "00"
        and digits[5:] != "0000"
        and len(set(digits)) > 1
    )


def ip_ok(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def phone_ok(text: str) -> bool:
    digits = sum(c.isdigit() for c in text)
    return 10 <= digits <= 15 or (text.startswith("+") and 8 <= digits <= 15)


def _always(_text: str) -> bool:
    return True


# (entity, pattern, score, validator). Scores only rank overlapping candidates. A pattern that
# began ``\b\d`` begins ``\d(?<!\w\d)`` instead: the same matches (a digit is a word character, so
# the boundary means "no word character before it"), but a pattern that starts with a character
# class is scanned for that class in C rather than tried at every position (2-3x faster here);
# ``tests/test_gate_speed.py`` checks them against the ``\b`` forms.
_NUMBER_START = r"\d(?<!\w\d)"  # a digit with no word character before it
# [A-Z] under re.IGNORECASE: ASCII letters, dotted and dotless i, long s and the Kelvin sign
_LETTER_I = "A-Za-z\u0130\u0131\u017f\u212a"
_RULES: list[tuple[str, re.Pattern[str], float, Callable[[str], bool]]] = [
    ("EMAIL_ADDRESS", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), 1.0, _always),
    ("CREDIT_CARD", re.compile(rf"{_NUMBER_START}[ -]?(?:\d[ -]?){{11,17}}\d\b"), 1.0, luhn_ok),
    (
        "IBAN_CODE",
        re.compile(
            r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b",
            re.IGNORECASE,
        ),
        1.0,
        iban_ok,
    ),
    (
        "IP_ADDRESS",
        re.compile(r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b"),
        0.9,
        _always,
    ),
    (
        "IP_ADDRESS",
        re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?![\w:])"),
        0.9,
        ip_ok,
    ),
    ("US_SSN", re.compile(rf"{_NUMBER_START}\d{{2}}([- .])\d{{2}}\1\d{{4}}\b"), 0.85, ssn_ok),
    (
        "PHONE_NUMBER",
        re.compile(  # not a slice of a longer digit run (a card failing Luhn, say)
            r"(?<![\w+])(?<!\d[ .-])\+?\(?\d{1,3}\)?[ .-]?\(?\d{2,4}\)?[ .-]?"
            r"\d{3,4}[ .-]?\d{3,4}\b(?![ .-]?\d)"
        ),
        0.6,
        phone_ok,
    ),
]
_BARE_SSN = re.compile(rf"{_NUMBER_START}\d{{8}}\b")
# What each rule above cannot match without, in the same order: (decimal digits, a character, how
# many times, a pattern that must be found). A chat turn rarely holds a digit, so most skip every
# rule; the verdicts do not change (tests/test_gate_speed.py compares with running every rule).
# _LONG_NUMBER: a card, an SSN and a phone number are each a run of 9+ digits and separators.
_LONG_NUMBER = re.compile(r"\d[\d ().-]{7,}\d")
_IBAN_START = re.compile(rf"[{_LETTER_I}]{{2}}\d\d")  # two letters, two digits (no IGNORECASE: fast)
_NEEDS: list[tuple[int, str, int, re.Pattern[str] | None]] = [
    (0, "@", 1, None),  # email
    (13, "", 0, _LONG_NUMBER),  # card: 13-19 digits
    (2, "", 0, _IBAN_START),  # IBAN: country code, two check digits
    (4, ".", 3, None),  # IPv4: four numbers, three dots
    (0, ":", 2, None),  # IPv6: two or more colons
    (9, "", 0, _LONG_NUMBER),  # SSN
    (9, "", 0, _LONG_NUMBER),  # phone: 1-3 + 2-4 + 3-4 + 3-4 digits
]
assert len(_NEEDS) == len(_RULES)
_DIGIT = re.compile(r"\d")  # the same \d (any Unicode decimal digit) the rules use

# Street addresses: the street part ("742 Evergreen Terrace", "Hauptstraße 5", "Rua Augusta 120");
# the city after it is a place, which the default policy keeps. Names are capitalised: "walked
# 5 miles down the road" is no address.
_WORD = r"[A-Z][\w'.-]*"
_SUFFIX = (r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Terrace|Ter|Place|Pl"
           r"|Way|Parkway|Pkwy|Highway|Hwy|Square|Sq|Circle|Cir|Close|Crescent|Row|Alley|Trail|Gardens|Grove|Mews)")
_UNIT = r"(?:,?\s+(?:Apt|Apartment|Suite|Unit|Flat|Fl|Floor|#)\.?\s*#?\w{1,6})?"
_STREET_RULES = [
    re.compile(rf"{_NUMBER_START}\d{{0,5}}[A-Za-z]?(?:-\d{{1,6}})?\s+(?:{_WORD}\s+){{1,4}}{_SUFFIX}\b\.?{_UNIT}"),
    re.compile(r"\b[A-ZÄÖÜ][\wäöüß-]*(?:straße|strasse|str\.|gasse|weg|platz|allee|damm|ring|laan|straat|gracht|vej|gatan|gata)"
               r"\s+\d{1,5}[a-z]?\b"),
    re.compile(rf"\b(?:Rua|Calle|Carrer|Avenida|Av\.|Via|Viale|Corso|Piazza|Plaza|Praça|Travessa|Largo)\s+"
               rf"(?:(?:de|da|do|dos|das|del|de la|di|della|dei)\s+)?{_WORD}(?:\s+{_WORD}){{0,3}},?\s+"
               r"(?:n[º°o.]\s*)?\d{1,5}[A-Za-z]?\b"),
    re.compile(rf"{_NUMBER_START}\d{{0,4}}(?:bis|ter)?,?\s+(?i:rue|avenue|boulevard|place|chemin|impasse|allée|quai)\s+"
               rf"(?:(?:de la|de|du|des|d')\s*)?{_WORD}(?:\s+{_WORD}){{0,3}}"),
]
# Words the second and third street rules cannot match without (plain substring tests).
_STREET_WORDS = [
    None,
    ("straße", "strasse", "str.", "gasse", "weg", "platz", "allee", "damm", "ring", "laan", "straat", "gracht",
     "vej", "gatan", "gata"),
    ("Rua", "Calle", "Carrer", "Avenida", "Av.", "Via", "Viale", "Corso", "Piazza", "Plaza", "Praça", "Travessa",
     "Largo"),
    None,
]


def street_addresses(text: str) -> list[PiiFinding]:
    """Street-address spans (score 0.95: they win over a NER place inside them). Every rule needs
    a house number."""
    if not _DIGIT.search(text):
        return []
    return [PiiFinding("STREET_ADDRESS", m.start(), m.end(), 0.95)
            for rx, words in zip(_STREET_RULES, _STREET_WORDS, strict=True)
            if words is None or any(map(text.__contains__, words))
            for m in rx.finditer(text)]


def resolve_overlaps(findings: Iterable[PiiFinding]) -> list[PiiFinding]:
    """Keep the best of each group of overlapping spans (score, then length); sort by start."""
    kept: list[PiiFinding] = []
    ranked = sorted(findings, key=lambda f: (-f.score, -(f.end - f.start), f.start, f.entity))
    for f in ranked:
        if all(f.end <= k.start or k.end <= f.start for k in kept):
            kept.append(f)
    return sorted(kept, key=lambda f: (f.start, f.end))


class RegexScanner:
    name = "regex"

    def analyze(self, text: str) -> list[PiiFinding]:
        digits = len(_DIGIT.findall(text)) if _DIGIT.search(text) else 0
        hints: dict[re.Pattern[str], bool] = {}
        found: list[PiiFinding] = []
        for (entity, pattern, score, valid), (least, char, times, hint) in zip(_RULES, _NEEDS, strict=True):
            if digits < least or (char and text.count(char) < times):
                continue
            if hint is not None:
                if hint not in hints:
                    hints[hint] = hint.search(text) is not None
                if not hints[hint]:
                    continue
            for m in pattern.finditer(text):
                if valid(m.group()):
                    found.append(PiiFinding(entity, m.start(), m.end(), score))
        long_number = hints.get(_LONG_NUMBER)
        if digits >= 9 and (long_number or (long_number is None and _LONG_NUMBER.search(text))):
            for m in _BARE_SSN.finditer(text):
                before = text[max(0, m.start() - _CONTEXT_WINDOW) : m.start()]
                if ssn_ok(m.group()) and _SSN_CONTEXT.search(before):
                    found.append(PiiFinding("US_SSN", m.start(), m.end(), 0.85))
        streets = street_addresses(text) if digits else []
        return resolve_overlaps(found + streets) if found or streets else []

    def analyze_batch(self, texts: Sequence[str]) -> list[list[PiiFinding]]:
        return [self.analyze(t) for t in texts]
