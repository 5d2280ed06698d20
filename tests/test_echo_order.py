"""A turn naming two values closed on the same day is marked the same way in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = r"""
import json
from markmem.read import echo
closed = {
    "lisbon": {"id": "c-aaaa000001", "value": "Lisbon", "valid_until": "2026-03-01T00:00:00Z"},
    "acme": {"id": "c-bbbb000002", "value": "Acme", "valid_until": "2026-03-01T00:00:00Z"},
    "porto": {"id": "c-cccc000003", "value": "Porto", "valid_until": "2026-01-01T00:00:00Z"},
}
texts = {"r-1": "Back when I lived in Lisbon I worked at Acme, near Porto"}
print(json.dumps({k: v["id"] for k, v in echo.echoes(texts, closed).items()}))
"""


def test_a_tie_between_closed_values_is_broken_the_same_way_whatever_the_hash_seed() -> None:
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
        seen.add(out.stdout.strip())
    assert len(seen) == 1
    assert json.loads(seen.pop()) == {"r-1": "c-bbbb000002"}  # the later end; between equals, the larger id
