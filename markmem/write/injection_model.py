"""The injection guard's second opinion: logistic regression over the built-in sentence embeddings.

The rules in ``injection.py`` catch the phrasings they were written for; this catches paraphrases
("the guidance you started with has expired", "note for whichever bot summarises this: ...").
The text is unwrapped and folded as for the rules, cut into windows of a few sentences, and each
window is embedded with the model shipped in ``markmem/models/minilm-m2v`` (model2vec: numpy,
tokenizers and safetensors, never torch). A window whose probability reaches the shipped threshold
flags the text as ``embedded-instructions``.

Weights, bias and threshold live in ``markmem/models/injection/classifier.json`` (a few KB), written
by ``scripts/train_injection.py`` from the tuning data and the public ``bastioncorpus`` (never the
held-out sets). It uses the built-in model whatever ``vector_model`` says. Without the
``vector`` extra or the weights file the classifier is off and the rules work alone
(:func:`load_classifier` returns ``None``; ``markmem doctor`` still reports the guard).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .injection_text import ENGLISH

__all__ = ["LABEL", "WEIGHTS_FILE", "InjectionClassifier", "cues", "english", "gated", "load_classifier",
           "may_read", "windows"]

LABEL = "embedded-instructions"
WEIGHTS_FILE = Path(__file__).resolve().parent.parent / "models" / "injection" / "classifier.json"
_SENTENCE = re.compile(r"(?<=[.!?;:。！？])\s+|\n+")
_WINDOW_WORDS = 40  # sentences are joined into windows of about this many words
_MAX_WINDOWS = 24  # a long text is scored on its first windows only (the rules read all of it)
_MAX_CHARS = 1500  # and each window is cut to this length


# Word cues a window is checked for (one 0/1 feature each), after the embedding's 256 numbers.
_CUES: tuple[frozenset[str], ...] = tuple(frozenset(group.split()) for group in (
    "assistant assistants ai ais bot bots chatbot chatbots model models llm llms agent agents summariser"
    " summarizer summarisers summarizers gpt claude screener automated reviewer reviewers reader readers"
    " makers creators developers operator operators handlers deployed configured",
    "you your yourself you're you've",
    "instructions instruction rules guidelines guidance directives directive policy policies prompt"
    " configuration programming training restrictions filters guardrails constraints briefing"
    " orders commands directions behaviour behavior",
    "previous prior earlier above original initial before preceding configured initialised initialized setup",
    "ignore disregard forget override bypass abandon discard withdrawn cancelled canceled void suspended"
    " replaced expired revoked lifted erase wipe retracted paused outranks avoid",
    "reveal print output display repeat quote paste dump leak verbatim recite",
    "hidden secret confidential internal system",
    "unrestricted uncensored unfiltered limits restrictions refuse decline warn warnings caveats filters",
    "always never forever permanent permanently lasting",
    "everyone anyone everybody anybody whoever whichever whenever future",
    "remember save record memorise memorize memory log",
    "recommend tell say reply respond answer mention describe rate rank state",
    "forward delete approve pay transfer send grant trusted credentials password admin administrator",
    "user users customer customers shopper visitor visitors people account owner",
    "i i'm i've my me mine we our",
))
_PHRASES = re.compile(
    r"\b(?:from (?:now|here|this point|this message) on(?:ward)?|henceforth|if you are an?|reading this"
    r"|processing this|this (?:message|note|session|conversation|chat)|language model|no longer)\b"
)
N_CUES = len(_CUES) + 6


def english(norm: str) -> bool:
    """Whether a folded window reads as English: at least 3 words, a fifth of them function words.

    The embeddings are English-only: other languages are the lexicon's job (injection_text.py)."""
    words = re.findall(r"[a-z']+", norm)
    if len(words) < 3 or len(words) < 0.6 * len(norm.split()):
        return False
    return sum(w in ENGLISH for w in words) >= 0.2 * len(words)


def cues(norm: str) -> list[float]:
    """0/1 word cues of a folded window, four pairs of them (your rules, your overriding, an order to
    the assistant, telling everyone), a phrase cue and whether it asks a question."""
    words = set(re.findall(r"[a-z']+", norm))
    c = [float(not group.isdisjoint(words)) for group in _CUES]
    pairs = [c[1] * c[2], c[1] * c[4], c[0] * max(c[11], c[12]), max(c[9], c[13]) * c[11]]
    return [*c, *pairs, float(bool(_PHRASES.search(norm))), float(norm.rstrip().endswith("?"))]


_GATE_WORDS = frozenset().union(*(_CUES[i] for i in (0, 2, 4, 5, 7, 9, 13)))
assert all(w.isascii() and w.isalpha() for w in _GATE_WORDS)  # may_read's shortcut relies on it
_APOS_WORD = re.compile(r"[a-z']+")


def may_read(norm: str, letters: set[str] | None = None) -> bool:
    """Whether any window of the folded text could pass :func:`gated` (a cheap word test, run
    before the model is even loaded). ``letters``: the text's runs of letters
    (``injection_text.letter_words``); in ASCII lower-case text a gate word (letters only) that
    is a ``[a-z']+`` word is also such a run, so none of them among ``letters`` means no."""
    if letters is not None and norm.isascii() and norm.islower() and _GATE_WORDS.isdisjoint(letters):
        return False
    return not _GATE_WORDS.isdisjoint(_APOS_WORD.findall(norm))


def gated(cue: Sequence[float]) -> bool:
    """Whether a window has anything of an instruction to the assistant at all (from its cues):
    it names the assistant, rules or instructions, overriding, revealing or limits, or it asks to
    remember something for everyone. Other windows (most chat) are never scored."""
    return bool(
        cue[0] or cue[2] or cue[4] or cue[5] or cue[7]
        or ((cue[9] or cue[13]) and (cue[8] or cue[10] or (cue[9] and cue[13] and cue[11])))
    )


def windows(norm: str) -> list[str]:
    """The folded text ``norm`` cut into windows of whole sentences, about 40 words each.

    A one-window text is scored as a whole; a longer one window by window, so an order hidden
    in a long e-mail is not averaged away by the rest of it.
    """
    out: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in _SENTENCE.split(norm):
        n = len(sentence.split())
        if not n:
            continue
        if current and size + n > _WINDOW_WORDS:
            out.append(" ".join(current)[:_MAX_CHARS])
            current, size = [], 0
            if len(out) == _MAX_WINDOWS:
                return out
        current.append(sentence)
        size += n
    if current:
        out.append(" ".join(current)[:_MAX_CHARS])
    return out


class InjectionClassifier:
    """``probability(norm)``: the highest window probability that ``norm`` addresses the assistant."""

    def __init__(self, embedder: Any, weights: Sequence[float], bias: float, threshold: float) -> None:
        import numpy as np

        self._np = np
        self._embedder = embedder
        self._w = np.asarray(weights, dtype=np.float32)
        self._b = float(bias)
        self.threshold = float(threshold)
        if self._w.shape != (embedder.dim + N_CUES,):
            raise ValueError(f"classifier has {self._w.shape} weights for a {embedder.dim}-dim model")

    def logits(self, texts: Sequence[str], cue_rows: Sequence[Sequence[float]]) -> Any:
        """Logits of folded windows ``texts`` with their :func:`cues`, one per window."""
        np = self._np
        features = np.hstack([self._embedder.embed(list(texts)), np.asarray(cue_rows, dtype=np.float32)])
        return features @ self._w + self._b

    def probability(self, norm: str) -> float:
        if not may_read(norm):
            return 0.0
        parts: list[str] = []
        cue_rows: list[list[float]] = []
        for part in windows(norm):
            cue = cues(part)
            if gated(cue) and english(part):
                parts.append(part)
                cue_rows.append(cue)
        if not parts:
            return 0.0
        logit = float(self.logits(parts, cue_rows).max())
        return float(1.0 / (1.0 + self._np.exp(-logit)))


_LOCK = threading.Lock()
_LOADED: list[InjectionClassifier | None] = []


def load_classifier() -> InjectionClassifier | None:
    """The shipped classifier, loaded once per process; ``None`` when it cannot run here."""
    if _LOADED:
        return _LOADED[0]
    with _LOCK:
        if not _LOADED:
            _LOADED.append(_load())
    return _LOADED[0]


def _load() -> InjectionClassifier | None:
    try:
        from ..adapters.vectors import BUILTIN, load_embedder
        from ..errors import RepoError

        data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
        embedder = load_embedder(BUILTIN)
    except (ImportError, OSError, ValueError):
        return None
    except RepoError:
        return None
    if embedder is None or data.get("model") != getattr(embedder, "name", None):
        return None
    return InjectionClassifier(embedder, data["weights"], data["bias"], data["threshold"])
