"""Small Protocols for the pluggable parts: gates, extractors, embedders.

Adapters in ``markmem.adapters`` implement them with lazy imports; ``markmem.testing`` ships
deterministic fakes. The core only ever talks to these shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from .model import Candidate, RawEntry

GateAction = Literal["tag", "mask", "block"]


@dataclass(frozen=True)
class PiiFinding:
    entity: str  # e.g. EMAIL_ADDRESS, US_SSN, CREDIT_CARD, PERSON
    start: int
    end: int
    score: float = 1.0


@dataclass(frozen=True)
class PiiPolicy:
    """Default action plus per-entity overrides, e.g. ``PiiPolicy("mask", {"PERSON": "tag"})``."""

    default: GateAction = "mask"
    per_entity: dict[str, GateAction] = field(default_factory=dict)

    def action(self, entity: str) -> GateAction:
        return self.per_entity.get(entity, self.default)


class PiiScanner(Protocol):
    """Finds PII spans. ``analyze_batch`` must return one list per input text, in order."""

    name: str

    def analyze_batch(self, texts: Sequence[str]) -> list[list[PiiFinding]]: ...


@dataclass
class Extraction:
    candidates: list[Candidate]
    flagged: bool = False  # e.g. LLM output was malformed and a fallback ran
    note: str = ""
    tokens_in: int = 0
    tokens_out: int = 0


class Extractor(Protocol):
    """Turns raw entries (only the user's own turns matter) into candidate claims."""

    name: str

    def extract(self, entries: Sequence[RawEntry]) -> Extraction: ...


class Embedder(Protocol):
    """Text -> L2-normalised float32 vectors (n, dim)."""

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]):  # -> numpy.ndarray
        ...
