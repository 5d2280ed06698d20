"""The gate's prefilters change no verdict. The regex gate skips a rule when the text lacks what the
rule cannot match without (digits, an ``@``, a dot or colon): the findings must be exactly those of
running every rule. The injection guard's foreign lexicon rejects a text none of whose words a
trigger concept looks up: the totals must be those of asking every concept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from markmem.ports import PiiFinding
from markmem.write import injection_fold, injection_text, regex_pii
from markmem.write.regex_pii import RegexScanner


def every_rule(text: str) -> list[PiiFinding]:
    """The scan before the prefilter: every rule on every text."""
    found: list[PiiFinding] = []
    for entity, pattern, score, valid in regex_pii._RULES:
        found += [PiiFinding(entity, m.start(), m.end(), score) for m in pattern.finditer(text) if valid(m.group())]
    for m in regex_pii._BARE_SSN.finditer(text):
        before = text[max(0, m.start() - regex_pii._CONTEXT_WINDOW): m.start()]
        if regex_pii.ssn_ok(m.group()) and regex_pii._SSN_CONTEXT.search(before):
            found.append(PiiFinding("US_SSN", m.start(), m.end(), 0.85))
    streets = [PiiFinding("STREET_ADDRESS", m.start(), m.end(), 0.95)
               for rx in regex_pii._STREET_RULES for m in rx.finditer(text)]
    return regex_pii.resolve_overlaps(found + streets)


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


PIECES = ["4111", " ", "-", ".", ":", "@", "1", "12", "123", "9", "0", "a", "ab", "Street", "St", "Main", "ssn ",
          "GB82", "WEST", "+44", "(", ")", "\n", "٣", "５", "Rua ", "rue ", "example.com", "ff", "::", "straße"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=24).map("".join))
def test_glued_pieces_find_what_every_rule_finds(text: str) -> None:
    assert RegexScanner().analyze(text) == every_rule(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789 .-:@+()aZ\n٣５"), max_size=40))
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
