"""bench/locomo.py's conversation choice can't rot silently: ``--split`` names the halves the recall rounds
tune on and hold out, ``--conversations`` wins over it, and a choice matching no file is a clear exit."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))  # locomo imports its sibling baselines.py
_spec = importlib.util.spec_from_file_location("bench_locomo", BENCH / "locomo.py")
locomo = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules["bench_locomo"] = locomo
_spec.loader.exec_module(locomo)  # type: ignore[union-attr]


def test_splits_are_the_recall_rounds_halves() -> None:
    assert locomo.SPLITS == {"tune": "26,30,41", "held": "42,43"}
    assert not set(locomo.SPLITS["tune"].split(",")) & set(locomo.SPLITS["held"].split(","))


@pytest.mark.parametrize("argv", [["--split", "held"], ["--split", "tune", "--conversations", "99"]])
def test_a_choice_matching_no_file_exits_with_a_message(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "26.json").write_text("{}")  # a tune conversation: neither choice above takes it
    with pytest.raises(SystemExit, match="no LoCoMo conversations"):
        locomo.main(["--data", str(tmp_path), "--repo", str(tmp_path / "repo"), *argv])


def test_an_unknown_split_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        locomo.main(["--data", str(tmp_path), "--split", "all"])
