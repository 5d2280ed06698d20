"""Clauses, not sentences: "I'm a nurse and I prefer window seats" holds two facts.

:class:`SpacySplitter` reads spaCy's dependency parse (the ``en_core_web_sm`` model the PII gate
uses, loaded here with the tagger and parser only): every verb that heads a coordinated,
adverbial or complement clause with a subject of its own (or a verb coordinated with the main
one: "I moved to Porto and started at Ostara") starts a clause; the clause is that verb's
subtree without the nested clauses, its leading "and"/"but"/commas dropped, and a shared
subject restored ("I started at Ostara"). A sentence without a coordinator, comma or
subordinator, or without a pronoun or possessive that could start a fact ("thanks, that helps"),
is one clause and is not parsed at all (most chat turns): that keeps compile fast.

Without spaCy (``clause_parser="regex"``, or the pii extra not installed) :func:`regex_clauses`
splits at ";" and at "and/but/so/because/..." or a comma followed by a first-person subject.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

log = logging.getLogger("markmem")

Splitter = Callable[[str], list[str]]

_WHO = r"(?:(?:now|also|then|currently|recently|just|finally|actually) )*(?:i|i'm|i've|i'd|my|we|we're|we've)\b"
_REGEX = re.compile(
    r"\s*;\s*"
    rf"|,?\s+(?:and|but|so|then|because|although|though|while|whereas|plus)\s+(?={_WHO}|(?:work|live|moved|started|joined|got|became|have)\b)"  # noqa: E501
    rf"|,\s+(?={_WHO}|(?:she|he|they)\b)",
    re.IGNORECASE,
)
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|‘[^’\n]*’')
_MAY_SPLIT = re.compile(r"[,;]|\b(?:and|but|so|because|while|whereas|although|though|plus|since|then|when)\b",
                        re.IGNORECASE)
# (and "mum", "dad" without "my": "mum sold the house and moved to Gozo")
_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|we|we're|my|our|me|us|she|he|they|her|his|their|mum|mom|dad)\b",
                     re.IGNORECASE)
_CLAUSE_DEPS = frozenset({"conj", "advcl", "ccomp", "parataxis"})
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl"})
_CONDITIONS = frozenset({"if", "provided", "assuming", "supposing"})
_MERIDIEM = frozenset({"am", "pm", "a.m.", "p.m."})
_DROP_LEAD = frozenset({"cc", "punct", "prep"})  # "if"/"because" (mark) stay: "if we moved" is no fact


def regex_clauses(sentence: str) -> list[str]:
    return [c.strip() for c in _REGEX.split(_QUOTED.sub(" ", sentence)) if c and c.strip()]


class SpacySplitter:
    """Clause splitting over spaCy's parse; loads the model on first use (thread-safe). The pipeline and the
    parse caches are per process and model, not per splitter: every ``Memory`` opened in one process shares one
    loaded model (a splitter per repo used to keep its own ~28 MB pipeline alive in the caches' keys)."""

    name = "spacy"

    def __init__(self, model: str) -> None:
        self.model = model
        self.broken = False

    def __call__(self, sentence: str) -> list[str]:
        text = _QUOTED.sub(" ", sentence)
        if not _MAY_SPLIT.search(text) or not _PERSON.search(text):
            return [text.strip()] if text.strip() else []
        if self.broken:
            return regex_clauses(sentence)
        try:
            return list(self._split(text))
        except (OSError, ImportError, ValueError) as exc:  # a model that cannot load: the regex fallback
            log.warning("spaCy model %s could not be loaded (%s); clauses are split by the regex fallback",
                        self.model, exc)
            self.broken = True
            return regex_clauses(sentence)

    def _load(self) -> Any:
        return _pipeline(self.model)

    def _split(self, text: str) -> tuple[str, ...]:
        return _split_cached(self.model, text)

    def parse(self, text: str) -> Any:
        """spaCy's parse of one clause (cached): the open-vocabulary path reads it (``extract_open``)."""
        return _parse_cached(self.model, text)


_PIPELINES: dict[str, Any] = {}
_PIPELINES_LOCK = threading.Lock()  # one load per model; spaCy pipelines are not guaranteed thread-safe, so
_PARSE_LOCK = threading.Lock()  # one parse at a time (cached, and the GIL serialises most of it anyway)


def _pipeline(model: str) -> Any:
    with _PIPELINES_LOCK:
        nlp = _PIPELINES.get(model)
        if nlp is None:
            import spacy

            nlp = _PIPELINES[model] = spacy.load(model, exclude=["ner", "lemmatizer", "senter"])
        return nlp


@lru_cache(maxsize=4096)
def _parse_cached(model: str, text: str) -> Any:
    nlp = _pipeline(model)
    with _PARSE_LOCK:
        return nlp(text)


@lru_cache(maxsize=4096)
def _split_cached(model: str, text: str) -> tuple[str, ...]:
    doc = _parse_cached(model, text)  # one parse per text: the extractor may read the same one
    heads = [t for t in doc if t.dep_ == "ROOT" or (t.dep_ in _CLAUSE_DEPS and t.pos_ in ("VERB", "AUX")
                                                  and _own_clause(t) and not _condition(t))]
    if len(heads) < 2:
        return (text.strip(),)
    head_ids = {t.i for t in heads}
    spans = [_span(head, head_ids) for head in heads]
    for t in doc:  # "i start at 10am now": the parse may hang "am" on another clause; it stays with its hour
        if t.i and t.lower_ in _MERIDIEM and doc[t.i - 1].like_num:
            for span in spans:
                if doc[t.i - 1].i in span:
                    span.add(t.i)
                else:
                    span.discard(t.i)
    out: list[str] = []
    for head, span in zip(heads, spans, strict=False):
        idx = sorted(span)
        tokens = [doc[i] for i in idx]
        while tokens and (tokens[0].dep_ in _DROP_LEAD or tokens[0].is_punct) and tokens[0].i != head.i:
            tokens.pop(0)
        while tokens and tokens[-1].is_punct:
            tokens.pop()
        if not tokens:
            continue
        clause = "".join(t.text_with_ws for t in tokens).strip()
        if head.dep_ == "conj" and not any(c.dep_ in _SUBJECTS for c in head.children):
            subject = _subject_of(head)
            if subject:
                clause = f"{subject} {clause}"
        out.append(clause)
    return tuple(c for c in out if c) or (text.strip(),)


def _own_clause(token: Any) -> bool:
    """A clause head: it has its own subject, or it is a verb coordinated with a verb."""
    if any(c.dep_ in _SUBJECTS for c in token.children):
        return True
    return token.dep_ == "conj" and token.head.pos_ in ("VERB", "AUX")


def _condition(token: Any) -> bool:
    """An "if" clause: it stays with the clause it conditions ("if I get the job, I'm moving to
    Oslo" is one clause, no fact), or the consequence would be read as a plain statement."""
    return token.dep_ == "advcl" and any(c.dep_ == "mark" and c.lower_ in _CONDITIONS for c in token.children)


def _span(head: Any, heads: set[int]) -> set[int]:
    out = {head.i}
    stack = list(head.children)
    while stack:
        t = stack.pop()
        if t.i in heads:
            continue
        if t.dep_ == "cc" and t.head.i == head.i and any(s.i in heads for s in t.head.children if s.i > t.i):
            continue  # "and" that joins the next clause belongs to neither
        out.add(t.i)
        stack.extend(t.children)
    return out


def _subject_of(token: Any) -> str | None:
    while token.dep_ == "conj":
        token = token.head
        for child in token.children:
            if child.dep_ in _SUBJECTS:
                return "".join(t.text_with_ws for t in child.subtree).strip()
    return None


def load_splitter(kind: str, model: str) -> tuple[Splitter, str]:
    """The splitter for ``clause_parser`` ("auto" | "spacy" | "regex") and its name. Nothing is
    imported here (package metadata only): spaCy and its model load on the first clause to parse."""
    if kind == "regex":
        return regex_clauses, "regex"
    import importlib.util
    from pathlib import Path

    from ..adapters.presidio import SM_MODEL, SM_MODEL_PYPI

    def installed(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            return False

    name = model if Path(model).is_dir() or installed(model) else \
        SM_MODEL_PYPI if model == SM_MODEL and installed(SM_MODEL_PYPI) else None
    if not installed("spacy") or name is None:
        why = "spaCy is not installed" if not installed("spacy") else f"spaCy model {model!r} is not installed"
        if kind == "spacy":
            raise ImportError(why)
        log.info("clause parser: regex (%s)", why)
        return regex_clauses, "regex"
    return SpacySplitter(name), "spacy"
