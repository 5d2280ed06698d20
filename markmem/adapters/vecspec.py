"""The ``vector_model`` setting resolved and probed without importing numpy or model2vec.

Opening a repo only needs to know which model a search will use (its name goes in the index) and
that it can load; the model itself loads on the first search or compile that embeds
(``adapters.deferred``). :mod:`markmem.adapters.vectors` imports numpy (~0.1 s of CPU), so what
``Memory()`` calls lives here and imports it only in :func:`load_embedder`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import RepoError

if TYPE_CHECKING:
    from ..ports import Embedder

BUILTIN = "builtin"
BUILTIN_DIR = Path(__file__).parent.parent / "models" / "minilm-m2v"
BUILTIN_NAME = "markmem/minilm-m2v"  # what the index records; change it if the model changes


def load_embedder(spec: str | None) -> Embedder | None:
    """:func:`markmem.adapters.vectors.load_embedder` (numpy is imported here, on first use)."""
    from .vectors import load_embedder as load

    return load(spec)


def probe_embedder(spec: str) -> str:
    """The name ``load_embedder(spec)`` will give its embedder, checked without loading anything
    (raises RepoError as ``load_embedder`` would for a missing model or model2vec)."""
    _key, _source, name = resolve(spec.strip())
    if importlib.util.find_spec("model2vec") is None:
        raise RepoError(f"embedding model {spec!r} needs model2vec: pip install 'markmem[vector]'")
    return name


def resolve(spec: str) -> tuple[str, str, str]:
    """``(cache key, what to hand model2vec, embedder name)`` for a spec."""
    if spec == BUILTIN:
        if not (BUILTIN_DIR / "model.safetensors").is_file():
            raise RepoError(
                f"the built-in embedding model is missing from {BUILTIN_DIR} "
                "(an install without markmem's package data?); reinstall markmem"
            )
        return BUILTIN, str(BUILTIN_DIR), BUILTIN_NAME
    path = Path(spec).expanduser()
    if path.exists() and path.resolve() == BUILTIN_DIR.resolve():
        return resolve(BUILTIN)
    if path.exists():
        if not path.is_dir():
            raise RepoError(
                f"embedding model {spec!r} is a file; expected a model2vec model directory"
            )
        resolved = str(path.resolve())
        return resolved, resolved, resolved
    if spec.startswith(("/", ".", "~", "\\")) or spec.count("/") > 1:
        raise RepoError(
            f"embedding model {spec!r}: no such directory (and not a hub id like 'org/name')"
        )
    return spec, spec, spec
