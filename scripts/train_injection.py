"""Train the injection guard's classifier (``markmem/models/injection/classifier.json``).

Logistic regression (L2, Newton steps, numpy only) over the built-in model2vec embeddings of the
unwrapped, folded text, window by window as :mod:`markmem.write.injection_model` scores it.

Training data, all written for this project (never the held-out sets):

* ``tests/data/injection_tuning.jsonl``   injections and benign look-alikes (the tuning set);
* ``tests/data/injection_cases.yaml``      the cases without ``holdout: true``;
* ``bench/data/supersession_cases.yaml``   every user turn: ordinary chat, all benign;
* the public corpus of the PyPI package ``bastioncorpus`` 0.6.0 (MIT; in the ``dev`` extra):
  118 injections and 63 benign traps in five languages, ``{canary}`` filled in.

Never read here: ``bench/data/injection_holdout2.jsonl`` and the ``holdout: true`` cases.
The threshold is the lowest one at which 5-fold cross-validation flags at most ``--max-fpr`` of
the benign texts the classifier reads (those passing its gate: most chat never reaches it);
cross-validated precision and recall at it are printed and stored.

    PYTHONPATH=. python scripts/train_injection.py [--l2 0.01] [--max-fpr 0.03] [--dry-run | --check]
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from markmem.adapters.vectors import BUILTIN, load_embedder
from markmem.write.injection import _matches, normalize
from markmem.write.injection_model import WEIGHTS_FILE, cues, english, gated, windows

ROOT = Path(__file__).resolve().parent.parent


def load_texts() -> tuple[list[str], list[int]]:
    texts: list[str] = []
    labels: list[int] = []
    for line in (ROOT / "tests/data/injection_tuning.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        texts.append(row["text"])
        labels.append(int(row["injection"]))
    cases = yaml.safe_load((ROOT / "tests/data/injection_cases.yaml").read_text(encoding="utf-8"))
    for kind, label in (("positive", 1), ("benign", 0)):
        for case in cases[kind]:
            if not case.get("holdout"):
                texts.append(case["text"])
                labels.append(label)
    corpus = resources.files("bastioncorpus").joinpath("corpus/injections.jsonl").read_text(encoding="utf-8")
    for line in corpus.splitlines():
        if line.strip():
            row = json.loads(line)
            texts.append(row["text"].replace("{canary}", "ZX-4471-QK"))
            labels.append(int(row["label"] == "malicious"))
    supersession = yaml.safe_load((ROOT / "bench/data/supersession_cases.yaml").read_text(encoding="utf-8"))
    for case in supersession["cases"]:
        for turn in case["turns"]:
            for say in [turn.get("say")] + [m.get("content") for m in turn.get("msgs", [])]:
                if isinstance(say, str) and say.strip():
                    texts.append(say)
                    labels.append(0)
    return texts, labels


def samples(texts: list[str], labels: list[int]) -> tuple[list[str], list[int], list[int]]:
    """(window, label, text index): an injection as one window, a benign text as all its windows."""
    out: list[str] = []
    ys: list[int] = []
    owner: list[int] = []
    for i, (text, label) in enumerate(zip(texts, labels, strict=True)):
        norm = normalize(text)
        parts = [" ".join(norm.split())] if label else windows(norm)
        for part in parts:
            if not (english(part) and gated(cues(part))):
                continue
            out.append(part)
            ys.append(label)
            owner.append(i)
    return out, ys, owner


def fit(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 30) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method; the bias is not penalised."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    penalty = np.full(xb.shape[1], l2)
    penalty[-1] = 0.0
    pos_weight = (len(y) - y.sum()) / max(y.sum(), 1)  # balance the classes
    weight = np.where(y == 1, pos_weight, 1.0)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (weight * (p - y)) + penalty * w
        hess = (xb * (weight * p * (1 - p))[:, None]).T @ xb + np.diag(penalty) + 1e-6 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w[:-1], float(w[-1])


def text_scores(logits: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    best = np.full(n, -np.inf)
    np.maximum.at(best, owner, logits)
    return best


def cross_validate(x: np.ndarray, y: np.ndarray, owner: np.ndarray, labels: np.ndarray, l2: float) -> np.ndarray:
    """Out-of-fold text scores (max over windows), folds by text."""
    rng = np.random.default_rng(13)
    fold_of = rng.integers(0, 5, size=len(labels))
    scores = np.full(len(labels), -np.inf)
    for fold in range(5):
        train = fold_of[owner] != fold
        w, b = fit(x[train], y[train], l2)
        held = ~train
        logits = x[held] @ w + b
        fold_scores = text_scores(logits, owner[held], len(labels))
        scores = np.where(fold_of == fold, fold_scores, scores)
    return scores


def pick_threshold(scores: np.ndarray, labels: np.ndarray, max_fpr: float) -> dict[str, Any]:
    benign = np.sort(scores[(labels == 0) & np.isfinite(scores)])  # benign texts the classifier reads
    allowed = int(np.floor(max_fpr * len(benign)))
    cut = benign[len(benign) - allowed - 1] if allowed < len(benign) else benign[0]
    logit = float(np.nextafter(cut, np.inf))
    flagged = scores >= logit
    tp = int((flagged & (labels == 1)).sum())
    fp = int((flagged & (labels == 0)).sum())
    return {
        "threshold": float(1.0 / (1.0 + np.exp(-logit))),
        "cv_precision": round(tp / max(tp + fp, 1), 4),
        "cv_recall": round(tp / int((labels == 1).sum()), 4),
        "cv_false_positive_rate_scored": round(fp / len(benign), 4),
        "benign_scored": len(benign),
    }


def report_with_rules(texts: list[str], labels: np.ndarray, scores: np.ndarray, threshold: float) -> None:
    """Cross-validated figures of the whole guard: the rules, or the classifier out of fold."""
    rules = np.asarray([sum(_matches(t).values()) >= 1.0 for t in texts])
    model = scores >= np.log(threshold / (1 - threshold))
    for name, flagged in (("rules", rules), ("classifier", model), ("either", rules | model)):
        tp = int((flagged & (labels == 1)).sum())
        fp = int((flagged & (labels == 0)).sum())
        print(f"  cv {name:<10} TP={tp} FP={fp} precision={tp / max(tp + fp, 1):.3f} "
              f"recall={tp / int(labels.sum()):.3f}")
    for i in np.flatnonzero(model & ~rules & (labels == 0)):
        print(f"  cv false positive: {texts[i][:120]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--max-fpr", type=float, default=0.03)
    parser.add_argument("--dry-run", action="store_true", help="print the figures, write nothing")
    parser.add_argument("--check", action="store_true", help="exit 1 unless the shipped file is what this trains")
    args = parser.parse_args()
    embedder = load_embedder(BUILTIN)
    assert embedder is not None
    texts, text_labels = load_texts()
    parts, ys, owners = samples(texts, text_labels)
    x = np.hstack([embedder.embed(parts), np.asarray([cues(p) for p in parts])]).astype(np.float64)
    y, owner, labels = np.asarray(ys, float), np.asarray(owners), np.asarray(text_labels)
    print(f"texts: {len(texts)} ({labels.sum()} injections), windows: {len(parts)}")
    scores = cross_validate(x, y, owner, labels, args.l2)
    figures = pick_threshold(scores, labels, args.max_fpr)
    print(json.dumps(figures))
    report_with_rules(texts, labels, scores, figures["threshold"])
    w, b = fit(x, y, args.l2)
    if args.check:
        shipped = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
        same = np.allclose(shipped["weights"], w, atol=1e-4) and abs(shipped["bias"] - b) < 1e-4
        same = same and abs(shipped["threshold"] - figures["threshold"]) < 1e-4
        print("shipped classifier matches" if same else "shipped classifier DIFFERS from this training run")
        raise SystemExit(0 if same else 1)
    if args.dry_run:
        return
    out = {
        "model": embedder.name,
        "l2": args.l2,
        "trained_on": ["tests/data/injection_tuning.jsonl", "tests/data/injection_cases.yaml (no holdout)",
                       "bench/data/supersession_cases.yaml (user turns, benign)", "bastioncorpus 0.6.0 (MIT)"],
        "texts": len(texts),
        **figures,
        "bias": round(b, 6),
        "weights": [round(float(v), 6) for v in w],
    }
    WEIGHTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    WEIGHTS_FILE.write_text(json.dumps(out) + "\n", encoding="utf-8")
    print(f"wrote {WEIGHTS_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
