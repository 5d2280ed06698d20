"""The PII gate and the embedding model, loaded when first needed (not when a repo is opened).

Loading Presidio and its spaCy model costs seconds; a read-only command (``search``, ``stats``,
``doctor``) never scans a byte, so it should not pay for it. At open, :func:`probe` checks
cheaply (package metadata only, nothing imported) whether Presidio and the model are installed:
that answers which gate will run, so a policy the gate cannot honour still refuses at open.
:class:`DeferredScanner` builds the real scanner on its first ``analyze_batch``, under a lock.
If the real load then fails although the probe found the packages (a broken install), ``auto``
falls back to the regex gate with a warning, and ``presidio`` raises GateUnavailable before
anything is written, exactly as at open. :class:`DeferredEmbedder` does the same for the vector
model (0.6 s), which only search and compile need, and :class:`DeferredExtractor` for the
heuristic extractor, whose rule table compiles ~0.1 s of regular expressions that only a compile
reads (``add()`` never extracts).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from ..model import RawEntry
from ..ports import Embedder, Extraction, Extractor, PiiFinding, PiiScanner
from .presidio import SM_MODEL, SM_MODEL_PYPI  # importing the adapter imports neither Presidio nor spaCy


def probe(spacy_model: str) -> str | None:
    """Why Presidio cannot run here (a missing package or model), or None when it looks installed."""
    for module, extra in (("presidio_analyzer", "presidio-analyzer"), ("spacy", "spacy")):
        if importlib.util.find_spec(module) is None:
            return f"{extra} is not installed; pip install 'markmem[pii]'"
    if Path(spacy_model).is_dir() or _installed(spacy_model):
        return None
    if spacy_model == SM_MODEL and _installed(SM_MODEL_PYPI):
        return None
    return f"spaCy model {spacy_model!r} is not installed"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class DeferredScanner:
    """A PiiScanner that loads ``load()``'s scanner on first use; ``name`` is known before that."""

    def __init__(self, name: str, load: Callable[[], PiiScanner]) -> None:
        self.name = name
        self._load = load
        self._real: PiiScanner | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._real is not None

    def scanner(self) -> PiiScanner:
        """The real scanner, loading it now if needed (raises GateUnavailable if it cannot run)."""
        with self._lock:
            if self._real is None:
                self._real = self._load()
                self.name = self._real.name  # a late fallback (broken install) shows in doctor
            return self._real

    def analyze_batch(self, texts: Sequence[str]) -> list[list[PiiFinding]]:
        if not texts:
            return []
        return self.scanner().analyze_batch(texts)


class DeferredEmbedder:
    """An Embedder that loads ``load()``'s model on first ``embed`` or ``dim`` (a search, a compile);
    ``name`` (what the index records) is known before that."""

    def __init__(self, name: str, load: Callable[[], Embedder]) -> None:
        self.name = name
        self._load = load
        self._real: Embedder | None = None
        self._lock = threading.Lock()

    def embedder(self) -> Embedder:
        with self._lock:
            if self._real is None:
                self._real = self._load()
            return self._real

    @property
    def dim(self) -> int:
        return self.embedder().dim

    def embed(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]  # -> numpy.ndarray
        return self.embedder().embed(texts)

    def embed_each(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]  # -> numpy.ndarray
        """One row per text, as ``embed([text])`` (the real embedder's ``embed_each`` when it has one)."""
        real = self.embedder()
        each = getattr(real, "embed_each", None)
        if each is not None:
            return each(texts)
        import numpy as np

        return np.vstack([np.asarray(real.embed([t]), dtype=np.float32) for t in texts])


class DeferredExtractor:
    """An Extractor that builds ``load()``'s extractor on its first ``extract`` (a compile)."""

    def __init__(self, name: str, load: Callable[[], Extractor]) -> None:
        self.name = name
        self._load = load
        self._real: Extractor | None = None
        self._lock = threading.Lock()

    def extractor(self) -> Extractor:
        with self._lock:
            if self._real is None:
                self._real = self._load()
            return self._real

    def extract(self, entries: Sequence[RawEntry]) -> Extraction:
        return self.extractor().extract(entries)


__all__ = ["DeferredEmbedder", "DeferredExtractor", "DeferredScanner", "probe"]
