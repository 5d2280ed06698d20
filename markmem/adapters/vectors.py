"""model2vec static embeddings behind the :class:`~markmem.ports.Embedder` port.

:func:`load_embedder` turns the ``vector_model`` setting into an embedder:

* ``None`` -> ``None`` (the vector lane is off; search is BM25 only);
* ``"builtin"`` -> the model shipped in ``markmem/models/minilm-m2v`` (all-MiniLM-L6-v2
  distilled by model2vec: 256 dims, int8, ~8 MB; see ``scripts/build_model.py`` and NOTICE);
* an existing local directory -> that model2vec model;
* anything else -> a model2vec id on the Hugging Face hub (``minishlab/potion-base-8M``),
  fetched by model2vec once and then read from the hub cache.

model2vec is imported lazily and needs only numpy, tokenizers and safetensors: this module
never imports torch. Anything that stops a model from loading (the ``vector`` extra missing, a
bad path, no network for a hub id) is a :class:`~markmem.errors.RepoError`; callers turn it
into a warning and fall back to BM25. Models are cached per spec: one load per process.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import RepoError
from ..ports import Embedder

# the setting's names and resolution live where ``Memory()`` imports them without numpy
from .vecspec import BUILTIN, BUILTIN_DIR, BUILTIN_NAME, probe_embedder  # noqa: F401
from .vecspec import resolve as _resolve

if TYPE_CHECKING:
    from model2vec import StaticModel

    from .wordpiece import WordPiece


# Up to this many texts of up to this many characters skip StaticModel.encode's batching
# machinery: one short query takes ~45 µs that way instead of ~80 µs (the search hot path).
_FAST_MAX_TEXTS = 16
_FAST_MAX_CHARS = 2000

_CACHE: dict[str, Model2VecEmbedder] = {}
_LOCK = threading.Lock()


class Model2VecEmbedder:
    """Mean of static token vectors: float32 ``(n, dim)``, rows L2-normalised.

    A text with no known token (``""``, only whitespace) embeds to the zero vector.
    """

    def __init__(self, model: StaticModel | _Builtin, name: str) -> None:
        self.name = name
        self.dim = int(model.dim)
        self._model = model
        # The direct lookup reproduces encode() only for plain models (no vocabulary
        # quantisation) whose internals look as expected; anything else always uses encode().
        self._direct = (
            getattr(model, "token_mapping", None) is None
            and getattr(model, "weights", None) is None
            and (isinstance(model, _Builtin) or hasattr(model, "tokenizer"))
            and hasattr(model, "embedding")
        )
        self._unk_id: int | None = getattr(model, "unk_token_id", None)
        # encode() cuts texts at max_length * median token length characters; stay below that.
        max_tokens = getattr(model, "max_length", None)
        cut = (
            max_tokens * getattr(model, "median_token_length", 1) if max_tokens else _FAST_MAX_CHARS
        )
        self._fast_chars = min(_FAST_MAX_CHARS, cut)

    def __repr__(self) -> str:
        return f"Model2VecEmbedder(name={self.name!r}, dim={self.dim})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):  # a str is a Sequence[str] too: one text, not one per char
            texts = [texts]
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if (
            self._direct
            and len(texts) <= _FAST_MAX_TEXTS
            and all(len(t) <= self._fast_chars for t in texts)
        ):
            vectors = self._lookup(texts)
        else:
            vectors = np.asarray(self._model.encode(texts, normalize=False), dtype=np.float32)
        return _normalise(vectors.reshape(len(texts), self.dim))

    def embed_each(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, each bit for bit the row ``embed([text])`` gives (a turn's sentences,
        read.passage), the plain texts' rows in one pass: their integer token rows summed by
        ``np.add.reduceat`` (exact in int64, as ``_mean_rows``), divided and normalised together."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        model = self._model
        table = getattr(model, "embedding", None)
        if not (self._direct and isinstance(model, _Builtin) and table is not None and table.dtype.kind in "iub"):
            for row, text in enumerate(texts):
                out[row] = self.embed([text])[0]
            return out
        flat: list[int] = []
        starts, counts, rows, alone = [], [], [], []
        for row, text in enumerate(texts):
            got = model.fast_ids(text) if len(text) <= self._fast_chars else None
            if got is None:  # outside the fast path: embed() itself
                alone.append(row)
                continue
            ids = [i for i in got if i != self._unk_id]
            if ids:
                starts.append(len(flat))
                counts.append(len(ids))
                rows.append(row)
                flat += ids
        if rows:
            total = np.add.reduceat(table.take(flat, axis=0), starts, axis=0, dtype=np.int64).astype(np.float64)
            np.true_divide(total, np.array(counts, np.intp)[:, None], out=total, casting="unsafe")
            out[rows] = total
        out = _normalise(out)
        for row in alone:
            out[row] = self.embed([texts[row]])[0]
        return out

    def _lookup(self, texts: list[str]) -> np.ndarray:
        model = self._model
        fast = model.fast_ids(texts[0]) if len(texts) == 1 and isinstance(model, _Builtin) else None
        if fast is not None:  # a plain ASCII question: no tokenizers to load (adapters/wordpiece)
            encoded = [fast]
        elif len(texts) == 1:  # the search hot path: no batch, so no tokenizer thread pool to wake
            encoded = [model.tokenizer.encode(texts[0], add_special_tokens=False).ids]
        else:
            encoded = [e.ids for e in model.tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, got in enumerate(encoded):
            ids = [i for i in got if i != self._unk_id]
            if ids:
                out[row] = _mean_rows(model.embedding, ids)
        return out


def _mean_rows(table: np.ndarray, ids: list[int]) -> np.ndarray:
    """``table[ids].mean(axis=0)`` without its Python wrapper, bit for bit: numpy's ``_mean`` sums
    integers in float64 (floats in their own type) and divides by the count as an intp."""
    kind = table.dtype.kind
    if kind in "iub":  # an integer sum is exact in int64 and in float64 alike: the same numbers, faster
        total = np.add.reduce(table.take(ids, axis=0), axis=0, dtype=np.int64).astype(np.float64)
    elif table.dtype in (np.float32, np.float64):
        total = np.add.reduce(table[ids], axis=0)
    else:  # float16 and the rest: numpy's own rules
        return np.asarray(table[ids].mean(axis=0))
    return np.true_divide(total, np.intp(len(ids)), out=total, casting="unsafe")


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    # ``np.linalg.norm(vectors, axis=1, keepdims=True)``'s own expression for real input, minus its checks
    norms = np.sqrt(np.add.reduce(vectors * vectors, axis=1, keepdims=True))
    np.divide(vectors, norms, out=vectors, where=norms > 0)
    return vectors


def load_embedder(spec: str | None) -> Embedder | None:
    """The embedder for a ``vector_model`` setting, loaded once per process (see module doc).

    Raises :class:`RepoError` when the model cannot be loaded.
    """
    if spec is None or not spec.strip():
        return None
    key, source, name = _resolve(spec.strip())
    with _LOCK:
        embedder = _CACHE.get(key)
        if embedder is None:
            model = _Builtin.load(source, spec) if key == BUILTIN and LIGHT and _installed() else None
            embedder = Model2VecEmbedder(model or _load_static_model(source, spec), name)
            _CACHE[key] = embedder
    return embedder


LIGHT = True  # False: the built-in model loads through model2vec too (tests compare the two)
BUILTIN_MEDIAN_TOKEN_LENGTH = 6  # StaticModel's median_token_length of the built-in model (a test checks)


def _installed() -> bool:
    """model2vec is installed (the vector extra), found without importing it."""
    return _has("model2vec")


def _has(package: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(package) is not None
    except ValueError:  # sys.modules[package] is None: as good as missing
        return False


class _Builtin:
    """The built-in model as ``StaticModel`` holds it, read without importing model2vec: that import
    pulls in huggingface_hub (~0.4 s of CPU, most of a fresh process's first search), while a query
    needs only the tokenizer and the token table (``Model2VecEmbedder._lookup``). The same files,
    read by the same calls model2vec makes (``Tokenizer.from_file``, padding disabled as
    ``StaticModel`` does; the table is ``safetensors``' ``embeddings`` tensor, memory-mapped from the
    file), so vectors are bit for bit model2vec's (tests/test_vectors.py). A plain ASCII question is
    tokenized without loading ``tokenizers`` at all (``adapters/wordpiece``, id for id the same);
    ``tokenizer`` loads on first use. ``encode`` (long texts, big batches: a compile) loads the real
    ``StaticModel`` on its first call."""

    token_mapping = None
    weights = None

    def __init__(self, source: str, spec: str, embedding: np.ndarray, fast: WordPiece | None,
                 config: dict[str, Any]) -> None:
        self._source, self._spec = source, spec
        self.embedding = embedding
        self._fast = fast
        self._tokenizer: Any = None
        self._tok_lock = threading.Lock()
        self.dim = int(embedding.shape[1])
        self.max_length = config.get("max_length", 512)
        self.median_token_length = BUILTIN_MEDIAN_TOKEN_LENGTH  # reading the vocabulary costs 40 ms
        self.unk_token_id = fast.unk_id if fast is not None else self._unk_of(self.tokenizer)
        self._full: StaticModel | None = None

    @staticmethod
    def _unk_of(tokenizer: Any) -> int | None:
        unk = getattr(tokenizer.model, "unk_token", None)
        return None if unk is None else tokenizer.token_to_id(unk)

    @property
    def tokenizer(self) -> Any:
        """``tokenizers``' own, loaded on first use (a text the fast path does not take, a batch)."""
        with self._tok_lock:
            if self._tokenizer is None:
                self._tokenizer = _tokenizer(Path(self._source))
            return self._tokenizer

    def fast_ids(self, text: str) -> list[int] | None:
        return None if self._fast is None else self._fast.ids(text)

    @classmethod
    def load(cls, source: str, spec: str) -> _Builtin | None:
        """None when the folder is not the plain layout expected (model2vec then loads it)."""
        import json

        from .wordpiece import WordPiece

        folder = Path(source)
        if not (_has("tokenizers") and _has("safetensors")):  # found, not imported: ~0.1 s saved
            return None
        try:
            embedding = _table(folder / "model.safetensors")
            config = json.loads((folder / "config.json").read_text())
            fast = WordPiece.from_file(folder / "tokenizer.json")
            size = len(fast.vocab) if fast is not None else _tokenizer(folder).get_vocab_size()
        except Exception:  # noqa: BLE001 - anything odd: model2vec loads it (and raises its own error)
            return None
        if embedding is None or len(embedding) != size or embedding.ndim != 2:
            return None
        return cls(source, spec, embedding, fast, config)

    def encode(self, texts: list[str], normalize: bool = False) -> np.ndarray:
        if self._full is None:
            self._full = _load_static_model(self._source, self._spec)
        return np.asarray(self._full.encode(texts, normalize=normalize))


def _tokenizer(folder: Path) -> Any:
    """The model's tokenizer as ``StaticModel`` loads it (padding disabled: ``_disable_padding``)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    padding = tokenizer.padding
    if padding is not None:
        tokenizer.enable_padding(pad_id=padding["pad_id"], pad_token=padding["pad_token"],
                                 pad_type_id=padding["pad_type_id"], length=0)
    return tokenizer


def _table(path: Path) -> np.ndarray | None:
    """The ``embeddings`` tensor of a safetensors file holding only it, memory-mapped read-only
    (the layout: an 8-byte little-endian header size, a JSON header, the raw tensor); None when
    the file holds anything else."""
    import json
    import mmap
    import struct

    dtypes = {"I8": np.int8, "U8": np.uint8, "F16": np.float16, "F32": np.float32, "F64": np.float64,
              "I16": np.int16, "I32": np.int32, "I64": np.int64}
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        header.pop("__metadata__", None)
        if set(header) != {"embeddings"} or header["embeddings"]["dtype"] not in dtypes:
            return None
        meta = header["embeddings"]
        shape = tuple(int(s) for s in meta["shape"])
        start, end = (int(x) for x in meta["data_offsets"])
        dtype = np.dtype(dtypes[meta["dtype"]]).newbyteorder("<")
        if end - start != int(np.prod(shape)) * dtype.itemsize:
            return None
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if 8 + size + end > len(mapped):
        return None
    return np.frombuffer(mapped, dtype=dtype, count=int(np.prod(shape)), offset=8 + size + start).reshape(shape)


def _load_static_model(source: str, spec: str) -> StaticModel:
    try:
        from model2vec import StaticModel
    except ImportError as exc:
        raise RepoError(
            f"embedding model {spec!r} needs model2vec: pip install 'markmem[vector]' ({exc})"
        ) from exc
    kwargs: dict[str, Any] = {}
    if "force_download" in inspect.signature(StaticModel.from_pretrained).parameters:
        kwargs["force_download"] = False  # else newer model2vec re-fetches a hub id on every load
    try:
        return StaticModel.from_pretrained(source, **kwargs)
    except (
        Exception
    ) as exc:  # OSError, ValueError, hub and safetensors errors: all mean "cannot load"
        raise RepoError(
            f"cannot load embedding model {spec!r}: {type(exc).__name__}: {exc}"
        ) from exc
