"""Deterministic fakes for every port, shipped in the package for users' tests (like httpx's MockTransport)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from .model import Candidate, RawEntry
from .ports import Extraction, PiiFinding


class FakeScanner:
    """Finds the literal words given at construction, as the entity type given."""

    name = "fake"

    def __init__(self, words: dict[str, str] | None = None) -> None:
        self.words = words or {}

    def analyze_batch(self, texts: Sequence[str]) -> list[list[PiiFinding]]:
        out = []
        for text in texts:
            found = []
            for word, entity in self.words.items():
                for m in re.finditer(re.escape(word), text):
                    found.append(PiiFinding(entity, m.start(), m.end()))
            out.append(sorted(found, key=lambda f: f.start))
        return out


class FakeExtractor:
    """Turns every user turn of the form ``key=value`` into a claim (predicate ``key``)."""

    name = "fake"

    def extract(self, entries: Sequence[RawEntry]) -> Extraction:
        out = []
        for e in entries:
            if e.role != "user":
                continue
            for key, value in re.findall(r"(\w+)=(\S+)", e.content):
                out.append(Candidate(e.id, e.user_id, key.lower(), value, e.content, 0.9))
        return Extraction(out)


class FakeEmbedder:
    """Hashes words into a fixed-size vector: same text, same vector; shared words, closer vectors."""

    name = "fake-hash"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def embed(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
            norm = float(np.linalg.norm(out[i]))
            if norm:
                out[i] /= norm
        return out
