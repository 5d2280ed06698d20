"""Lifecycle settings, read from the repo's ``.markmem/config.yaml`` (committed, so every clone agrees).

.. code-block:: yaml

    half_life_days:            # confidence half-life per page type; null or 0 = no decay
      preference: 180
      fact: 365
    retention_days:            # maximum age per kind; absent = kept forever
      raw: 365                 #   raw episodes (turns) older than this are dropped from raw/
      note: 730                #   active claims of this page type not re-told for this long are closed
    decay_floor: 0.1           # decay never takes confidence below this
    decay_min_step: 0.01       # a decay smaller than this is not written yet (each write is a page diff)
    near_duplicate_similarity: 0.92   # cosine similarity for near-duplicate merging (vector extra)

The keys may also sit under a ``maintenance:`` mapping. Missing keys take the defaults below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import RepoError

DEFAULT_HALF_LIFE: dict[str, float] = {
    "profile": 730, "preference": 180, "relationship": 365, "fact": 365, "note": 90, "default": 365,
}


@dataclass(frozen=True)
class LifecycleConfig:
    half_life_days: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_HALF_LIFE))
    retention_days: Mapping[str, int] = field(default_factory=dict)
    decay_floor: float = 0.1
    near_duplicate_similarity: float = 0.92
    decay_min_step: float = 0.01

    def half_life(self, page_type: str) -> float:
        return float(self.half_life_days.get(page_type, self.half_life_days.get("default", 0)) or 0)

    def to_json(self) -> dict[str, Any]:
        return {"half_life_days": dict(self.half_life_days), "retention_days": dict(self.retention_days),
                "decay_floor": self.decay_floor, "decay_min_step": self.decay_min_step,
                "near_duplicate_similarity": self.near_duplicate_similarity}


def lifecycle_config(repo_config: Mapping[str, Any]) -> LifecycleConfig:
    """Build the settings from the parsed repo config; a malformed value is a :class:`RepoError`."""
    data = {**repo_config, **(repo_config.get("maintenance") or {})}
    half = {**DEFAULT_HALF_LIFE, **_numbers(data.get("half_life_days"), "half_life_days", allow_null=True)}
    keep = {k: int(v) for k, v in _numbers(data.get("retention_days"), "retention_days").items() if v}
    if keep.get("raw", 1) < 1:
        raise RepoError("retention_days.raw must be at least 1 (today's raw file is still being appended to)")
    floor = _fraction(data.get("decay_floor", 0.1), "decay_floor")
    near = _fraction(data.get("near_duplicate_similarity", 0.92), "near_duplicate_similarity")
    step = _fraction(data.get("decay_min_step", 0.01), "decay_min_step")
    return LifecycleConfig(half, keep, floor, near, step)


def _numbers(value: object, name: str, allow_null: bool = False) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RepoError(f"{name} in .markmem/config.yaml must be a mapping of type -> days")
    out: dict[str, float] = {}
    for key, days in value.items():
        if days is None and allow_null:
            out[str(key)] = 0
            continue
        if isinstance(days, bool) or not isinstance(days, (int, float)) or days < 0:
            raise RepoError(f"{name}.{key} in .markmem/config.yaml must be a non-negative number of days")
        out[str(key)] = days
    return out


def _fraction(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise RepoError(f"{name} in .markmem/config.yaml must be a number between 0 and 1")
    return float(value)
