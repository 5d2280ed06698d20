"""The model2vec adapter, on the real built-in model (no fakes)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from markmem.adapters.vectors import BUILTIN_DIR, Model2VecEmbedder, load_embedder
from markmem.errors import RepoError
from markmem.ports import Embedder

pytestmark = pytest.mark.skipif(
    find_spec("model2vec") is None, reason="the vector extra (model2vec) is not installed"
)

ROOT = Path(__file__).resolve().parent.parent
SENTENCES = [
    "I prefer aisle seats on long flights",
    "I am vegetarian and never eat meat",
    "My daughter's name is Mia",
    "The quarterly report is due on Friday",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    loaded = load_embedder("builtin")
    assert loaded is not None
    return loaded


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_builtin_shape_dtype_and_normalisation(embedder: Embedder) -> None:
    assert isinstance(embedder, Model2VecEmbedder)
    assert embedder.name == "markmem/minilm-m2v"
    assert embedder.dim == 256
    vectors = embedder.embed(SENTENCES)
    assert vectors.dtype == np.float32
    assert vectors.shape == (len(SENTENCES), 256)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_different_texts_give_different_vectors(embedder: Embedder) -> None:
    vectors = embedder.embed(SENTENCES)
    sims = vectors @ vectors.T
    off_diagonal = sims[~np.eye(len(SENTENCES), dtype=bool)]
    assert off_diagonal.max() < 0.95


def test_same_text_same_vector_and_deterministic(embedder: Embedder) -> None:
    a = embedder.embed(["I prefer aisle seats"])
    b = embedder.embed(["I prefer aisle seats"])
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        ("I prefer aisle seats", "I like sitting by the aisle on planes", "The cat sat on the mat"),
        ("I am vegetarian", "I don't eat meat", "The server restarts at midnight"),
        ("My flight to Paris leaves Monday", "I fly to France next week", "I love chocolate cake"),
        ("I work as a nurse", "My job is in a hospital", "The stock market fell today"),
    ],
)
def test_similar_sentences_are_closer_than_unrelated(
    embedder: Embedder, anchor: str, similar: str, unrelated: str
) -> None:
    a, s, u = embedder.embed([anchor, similar, unrelated])
    assert cos(a, s) > cos(a, u) + 0.1


def test_empty_and_blank_texts_embed_to_zero(embedder: Embedder) -> None:
    vectors = embedder.embed(["", "   ", "hello"])
    assert not np.isnan(vectors).any()
    assert not vectors[0].any() and not vectors[1].any()
    assert np.linalg.norm(vectors[2]) == pytest.approx(1.0, abs=1e-5)


def test_empty_batch(embedder: Embedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 256) and vectors.dtype == np.float32


def test_small_and_large_batches_agree(embedder: Embedder) -> None:
    """One query (direct lookup) and a big batch (model2vec's encode) give the same vectors."""
    long_text = "I prefer aisle seats. " * 400  # beyond the direct path's length limit
    texts = SENTENCES + ["", long_text]
    one_by_one = np.vstack([embedder.embed([t]) for t in texts])
    batched = embedder.embed(texts * 10)[: len(texts)]
    np.testing.assert_allclose(one_by_one, batched, atol=1e-6)


def test_unicode_and_unknown_characters(embedder: Embedder) -> None:
    vectors = embedder.embed(["Ich mag Gänge — 通路側 🙂", "\x00\ufffd"])
    assert vectors.shape == (2, 256) and np.isfinite(vectors).all()


def test_loaded_once_per_process() -> None:
    first = load_embedder("builtin")
    assert load_embedder("builtin") is first
    assert load_embedder(str(BUILTIN_DIR)) is first  # the same model by path


def test_none_disables() -> None:
    assert load_embedder(None) is None
    assert load_embedder("  ") is None


def test_local_directory_spec(tmp_path: Path) -> None:
    copy = shutil.copytree(BUILTIN_DIR, tmp_path / "my-model")
    loaded = load_embedder(str(copy))
    assert loaded is not None and loaded.dim == 256
    assert loaded.name == str(copy)
    assert loaded is not load_embedder("builtin")


@pytest.mark.parametrize("spec", ["/no/such/model/dir", "./missing-model", "a/b/c"])
def test_missing_path_raises_repo_error(spec: str) -> None:
    with pytest.raises(RepoError, match="no such directory"):
        load_embedder(spec)


def test_file_or_empty_directory_raises_repo_error(tmp_path: Path) -> None:
    a_file = tmp_path / "model.bin"
    a_file.write_bytes(b"not a model")
    with pytest.raises(RepoError, match="is a file"):
        load_embedder(str(a_file))
    with pytest.raises(RepoError, match="cannot load embedding model"):
        load_embedder(str(tmp_path))


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        cwd=ROOT,
        check=False,
    )


def test_unknown_hub_id_raises_repo_error_offline() -> None:
    """A hub id that is not cached fails with RepoError (offline: never touches the network)."""
    code = (
        "from markmem.adapters.vectors import load_embedder\n"
        "from markmem.errors import RepoError\n"
        "try:\n"
        "    load_embedder('markmem-tests/no-such-model')\n"
        "except RepoError as exc:\n"
        "    print('RepoError', exc)\n"
    )
    proc = run_python(code, HF_HUB_OFFLINE="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RepoError cannot load embedding model 'markmem-tests/no-such")


def test_torch_is_never_imported() -> None:
    code = (
        "import sys\n"
        "from markmem.adapters.vectors import load_embedder\n"
        "e = load_embedder('builtin')\n"
        "e.embed(['hi'])\n"
        "e.embed(['sentence %d' % i for i in range(200)])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print('ok')\n"
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_missing_model2vec_raises_repo_error() -> None:
    code = (
        "import sys\n"
        "sys.modules['model2vec'] = None  # as if the vector extra were not installed\n"
        "from markmem.adapters.vectors import load_embedder\n"
        "from markmem.errors import RepoError\n"
        "try:\n"
        "    load_embedder('builtin')\n"
        "except RepoError as exc:\n"
        "    print(exc)\n"
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert "pip install 'markmem[vector]'" in proc.stdout


def test_the_builtin_read_without_model2vec_embeds_as_model2vec_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in model's light loader (no model2vec import on a search) gives the same vectors,
    bit for bit, short and long texts, small and big batches alike."""
    from markmem.adapters import vectors as adapter

    light = adapter._Builtin.load(str(BUILTIN_DIR), "builtin")
    assert light is not None
    full = adapter._load_static_model(str(BUILTIN_DIR), "builtin")
    assert full.median_token_length == adapter.BUILTIN_MEDIAN_TOKEN_LENGTH
    assert light.unk_token_id == full.unk_token_id and light.max_length == full.max_length
    a, b = Model2VecEmbedder(light, "x"), Model2VecEmbedder(full, "x")  # type: ignore[arg-type]
    texts = [*SENTENCES, "", "   ", "Zürich café naïve 東京 🎉", "x" * 5000, "Where does the user live?"]
    for batch in ([t] for t in texts):
        assert np.array_equal(a.embed(batch), b.embed(batch))
    many = [f"{SENTENCES[i % 4]} number {i}" for i in range(40)]
    assert np.array_equal(a.embed(many), b.embed(many))
    assert np.array_equal(a.embed(texts), b.embed(texts))


def test_a_search_in_a_fresh_process_does_not_import_model2vec(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from markmem import Memory\n"
        f"m = Memory({str(tmp_path / 'repo')!r}, pii_engine='regex', vector_model='builtin', background=False)\n"
        "m.add('I live in Lisbon', user_id='a')\n"
        "m.search('where do I live', user_id='a')\n"
        "print('model2vec' in sys.modules)\n"
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_embed_each_gives_embed_of_each_text_bit_for_bit(embedder: Embedder) -> None:
    """read.passage embeds a turn's sentences with ``embed_each``: each row must be the row ``embed([text])``
    gives, bit for bit (plain ASCII, accents, unknown words, blanks, a text past the fast path's length)."""
    texts = [*SENTENCES, "Café au lait à Zürich, naïve résumé.", "", "   ", "zzqxjw vbnmkl qwpoiu",
             "??? !!!", "I moved to Lisbon in 2019. Before that I lived in Porto.", "word " * 700,
             "Ünïcödé only", "the the the the", "x"]
    from markmem.adapters.deferred import DeferredEmbedder

    for each in (embedder.embed_each, DeferredEmbedder("builtin", lambda: embedder).embed_each):  # type: ignore[attr-defined]
        got = np.asarray(each(texts))
        want = np.vstack([np.asarray(embedder.embed([t]), dtype=np.float32) for t in texts])
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    assert float(np.abs(want[0]).sum()) > 0  # a real vector, not zeros on both sides
