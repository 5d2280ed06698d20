"""The gate's prefilters change no verdict. The regex gate skips a rule when the text lacks what the
rule cannot match without (digits, an ``@``, a dot or colon): the findings must be exactly those of
running every rule. The injection guard's foreign lexicon rejects a text none of whose words a
trigger concept looks up: the totals must be those of asking every concept."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from markmem.ports import PiiFinding
from markmem.write import injection_fold, injection_model, injection_text, regex_pii
from markmem.write.regex_pii import RegexScanner

# The rules as written before their prefilters and fast starts: ``\b\d`` where regex_pii now has
# ``\d(?<!\w\d)``, every rule on every text. What the scanner finds must be exactly this.
_W, _S, _U = regex_pii._WORD, regex_pii._SUFFIX, regex_pii._UNIT
REFERENCE_RULES = [
    ("EMAIL_ADDRESS", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), 1.0, regex_pii._always),
    ("CREDIT_CARD", re.compile(r"\b(?:\d[ -]?){12,18}\d\b"), 1.0, regex_pii.luhn_ok),
    ("IBAN_CODE", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b", re.IGNORECASE), 1.0,
     regex_pii.iban_ok),
    ("IP_ADDRESS", re.compile(r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b"), 0.9,
     regex_pii._always),
    ("IP_ADDRESS", re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?![\w:])"), 0.9, regex_pii.ip_ok),
    ("US_SSN", re.compile(r"\b\d{3}([- .])\d{2}\1\d{4}\b"), 0.85, regex_pii.ssn_ok),
    ("PHONE_NUMBER", re.compile(r"(?<![\w+])(?<!\d[ .-])\+?\(?\d{1,3}\)?[ .-]?\(?\d{2,4}\)?[ .-]?"
                                r"\d{3,4}[ .-]?\d{3,4}\b(?![ .-]?\d)"), 0.6, regex_pii.phone_ok),
]
REFERENCE_BARE_SSN = re.compile(r"\b\d{9}\b")
REFERENCE_STREETS = [
    re.compile(rf"\b\d{{1,6}}[A-Za-z]?(?:-\d{{1,6}})?\s+(?:{_W}\s+){{1,4}}{_S}\b\.?{_U}"),
    regex_pii._STREET_RULES[1],
    regex_pii._STREET_RULES[2],
    re.compile(rf"\b\d{{1,5}}(?:bis|ter)?,?\s+(?i:rue|avenue|boulevard|place|chemin|impasse|allée|quai)\s+"
               rf"(?:(?:de la|de|du|des|d')\s*)?{_W}(?:\s+{_W}){{0,3}}"),
]


def every_rule(text: str) -> list[PiiFinding]:
    """The scan before the prefilters: every reference rule on every text."""
    found: list[PiiFinding] = []
    for entity, pattern, score, valid in REFERENCE_RULES:
        found += [PiiFinding(entity, m.start(), m.end(), score) for m in pattern.finditer(text) if valid(m.group())]
    for m in REFERENCE_BARE_SSN.finditer(text):
        before = text[max(0, m.start() - regex_pii._CONTEXT_WINDOW): m.start()]
        if regex_pii.ssn_ok(m.group()) and regex_pii._SSN_CONTEXT.search(before):
            found.append(PiiFinding("US_SSN", m.start(), m.end(), 0.85))
    streets = [PiiFinding("STREET_ADDRESS", m.start(), m.end(), 0.95)
               for rx in REFERENCE_STREETS for m in rx.finditer(text)]
    return regex_pii.resolve_overlaps(found + streets)


def test_the_case_blind_letter_class_is_what_ignorecase_matches() -> None:
    """``_IBAN_START`` spells out [A-Z] under re.IGNORECASE; every code point agrees."""
    folded = re.compile("[A-Z]", re.IGNORECASE)
    spelled = re.compile(f"[{regex_pii._LETTER_I}]")
    assert [c for c in range(sys.maxunicode + 1) if bool(folded.match(chr(c))) != bool(spelled.match(chr(c)))] == []


SAMPLES = [
    "", "hi", "I prefer aisle seats", "mail ann@example.com", "call 415-555-0199 or +44 20 7946 0958",
    "card 4111 1111 1111 1111", "my ssn is 123456789", "SSN 123-45-6789", "IBAN GB82 WEST 1234 5698 7654 32",
    "server 192.168.0.1 and ::1 and fe80::1ff:fe23:4567:890a", "742 Evergreen Terrace, Apt 3", "Hauptstraße 5",
    "Rua Augusta 120", "12 rue de la Paix", "I have 3 cats", "at 10:30 on 2024-05-01", "a::b", "x@y",
    "٣٤٥-٦٧-٨٩٠١", "４１１１ １１１１ １１１１ １１１１", "1.2.3.4", "ssn: 078-05-1120",
    "+1 23 456 789", "4222222222222", "DE44500105175407324931", "call +1 (23) 456-789 now",  # the fewest digits
]


@pytest.mark.parametrize("text", SAMPLES)
def test_samples_find_what_every_rule_finds(text: str) -> None:
    assert RegexScanner().analyze(text) == every_rule(text)


def test_an_iban_shaped_run_with_a_non_ascii_letter_is_no_finding() -> None:
    """[A-Z] under re.IGNORECASE matches "İ", "ı", "ſ" and the Kelvin sign, which the mod-97 check
    could not read (it raised ValueError, failing the add())."""
    texts = ("GB82 WEST 1234 5698 7654 3\u0130", "\u212aB82 WEST 1234 5698 7654 32", "GB82 \u017fEST 1234 5698 7654 32")
    for text in texts:
        assert [f.entity for f in RegexScanner().analyze(text)] != ["IBAN_CODE"]
        assert not regex_pii.iban_ok(text)


PIECES = ["4111", " ", "-", ".", ":", "@", "1", "12", "123", "9", "0", "a", "ab", "Street", "St", "Main", "ssn ",
          "GB82", "WEST", "+44", "(", ")", "\n", "٣", "５", "Rua ", "rue ", "example.com", "ff", "::", "straße",
          "_", "x1", "Apt 4", "ring ", "Via ", "bis ", "Place", "\u0130", "\u017f", "\u212a", "Av.", "str. ", "#"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=24).map("".join))
def test_glued_pieces_find_what_every_rule_finds(text: str) -> None:
    assert RegexScanner().analyze(text) == every_rule(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789 .-:@+()aZ\n٣５_x"), max_size=40))
def test_digit_soup_finds_what_every_rule_finds(text: str) -> None:
    assert RegexScanner().analyze(text) == every_rule(text)


# --- the injection guard's foreign-language lexicon: one set lookup rejects most texts ----------

ROOT = Path(__file__).resolve().parent.parent


def _injection_texts() -> list[str]:
    cases = yaml.safe_load((ROOT / "tests" / "data" / "injection_cases.yaml").read_text("utf-8"))
    texts = [c if isinstance(c, str) else c.get("text", "") for group in cases.values() for c in group]
    lines = (ROOT / "tests" / "data" / "injection_tuning.jsonl").read_text("utf-8").splitlines()
    return [t for t in texts if t] + [json.loads(line)["text"] for line in lines if line.strip()]


def every_concept(norm: str) -> dict[str, float]:
    """The lexicon's verdict before the fast reject: every trigger concept asked."""
    words = set(injection_text._WORD.findall(norm))
    cjk = bool(injection_text._CJK.search(norm))
    if not any(injection_text._CONCEPTS[name].found(norm, words, cjk) for name in injection_text._TRIGGERS):
        return {}
    totals: dict[str, float] = {}
    for sentence in injection_text._SENTENCE.split(norm):
        here = set(injection_text._WORD.findall(sentence))
        present = {n for n, c in injection_text._CONCEPTS.items() if c.found(sentence, here, cjk)}
        for label, weight, needs in injection_text._FOREIGN_RULES:
            if present.issuperset(needs):
                totals[label] = max(totals.get(label, 0.0), weight)
    return totals


def test_the_foreign_lexicon_rejects_only_what_every_concept_rejects() -> None:
    texts = _injection_texts()
    assert len(texts) > 300
    flagged = 0
    for text in texts:
        norm = injection_fold.prepare(text)[0]
        fast = injection_text.foreign_matches(norm, injection_fold.fold)
        assert fast == every_concept(norm), text
        flagged += bool(fast)
    assert flagged >= 10  # the multilingual orders are in there


# --- the guard's shared tokenising and leetspeak: the same words and text as before -----------

FOLD_PIECES = ["ignore", " ", "previous", "1gn0r3", "pa55w0rd", "415-555-0199", "ops1@example.org", "_", "x_1",
               "ai2", "don't", "AI's", "\n", "Я", "é", "\U000E0041", "ѕystem", "İ", "ſ", "u", "ur", "a s s i s t",
               "$", "€", "3", "rules", "people", "2024", "ﬁ", "ASSISTANT"]


def _every_word_leet(text: str) -> str:
    """The leetspeak step as it was: every word with a letter translated."""
    return re.sub(r"[a-z0-9@$\u20ac]*[a-z][a-z0-9@$\u20ac]*", lambda m: m.group().translate(injection_fold._LEET), text)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(FOLD_PIECES), max_size=20).map("".join))
def test_shared_words_and_leet_match_their_regex_forms(text: str) -> None:
    norm, lined, tokens = injection_fold.prepare(text)
    assert injection_text.letter_words(norm, tokens) == set(injection_text._WORD.findall(norm))
    letters = injection_text.letter_words(norm, tokens)
    assert injection_model.may_read(lined, letters) == injection_model.may_read(lined)
    low = text.casefold()
    assert injection_fold._LEET_TOKEN.sub(injection_fold._unleet, low) == _every_word_leet(low)


def test_shared_words_match_on_the_injection_cases() -> None:
    for text in _injection_texts():
        norm, lined, tokens = injection_fold.prepare(text)
        letters = injection_text.letter_words(norm, tokens)
        assert letters == set(injection_text._WORD.findall(norm)), text
        assert injection_model.may_read(lined, letters) == injection_model.may_read(lined), text
