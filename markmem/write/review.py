"""Review items: quarantined inputs and low-confidence candidates awaiting a human.

Stored as ``wiki/u/<user>/review/<id>.yaml`` so that they sit inside the user's footprint
(erasure covers them) and are committed (decisions are auditable).
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from ..errors import MalformedPage, NotFound
from ..ids import short_hash
from ..model import Candidate, RawEntry
from ..store.codec import Codec
from ..store.links import open_nofollow
from ..store.pages import atomic_write


def item_path(user_id: str, item_id: str) -> str:
    return f"wiki/u/{user_id}/review/{item_id}.yaml"


def quarantine_item_id(raw_id: str) -> str:
    return "v-" + short_hash("quarantine", raw_id)


def quarantine_item(entry: RawEntry, now: str) -> dict[str, Any]:
    return {
        "id": quarantine_item_id(entry.id),
        "kind": "quarantine",
        "user_id": entry.user_id,
        "raw_id": entry.id,
        "source": entry.source,
        "reason": entry.quarantined or "injection",
        "created": now,
    }


def low_confidence_item(cand: Candidate, entry: RawEntry, now: str) -> dict[str, Any]:
    return {
        "id": "v-" + short_hash("candidate", entry.id, cand.predicate, cand.value),
        "kind": "low_confidence",
        "user_id": entry.user_id,
        "raw_id": entry.id,
        "source": entry.source,
        "reason": f"confidence {cand.confidence:.2f}",
        "candidate": asdict(cand),
        "created": now,
    }


def write_item(root: Path, item: dict[str, Any], codec: Codec) -> str:
    rel = item_path(item["user_id"], item["id"])
    text = yaml.safe_dump(item, sort_keys=False, allow_unicode=True)
    atomic_write(root / rel, codec.seal_text(item["user_id"], text), sync=False)
    return rel


def read_item(root: Path, user_id: str, item_id: str, codec: Codec) -> dict[str, Any]:
    """The item, NotFound if there is none, MalformedPage if it is unreadable or not this user's."""
    rel = item_path(user_id, item_id)
    if not (root / rel).exists():
        raise NotFound("review item", item_id)
    try:
        with os.fdopen(open_nofollow(root, rel), "rb") as fh:
            data = yaml.safe_load(codec.open_text(user_id, fh.read().decode("utf-8")))
    except (OSError, ValueError, yaml.YAMLError) as exc:  # a symlink, not UTF-8, bad YAML, bad seal
        raise MalformedPage(rel, f"unreadable review item: {type(exc).__name__}") from None
    if not isinstance(data, dict) or data.get("id") != item_id or data.get("user_id") != user_id:
        raise MalformedPage(rel, "review item is not a mapping with its own id and its folder's user_id")
    return data


def list_items(root: Path, codec: Codec, user_id: str | None = None,
               bad: list[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """Every readable review item (of ``user_id``); the others are skipped and, with ``bad``, listed."""
    base = root / "wiki" / "u"
    users = [user_id] if user_id else sorted(p.name for p in base.iterdir()) if base.exists() else []
    out = []
    for uid in users:
        for path in sorted((base / uid / "review").glob("v-*.yaml")):
            try:
                out.append(read_item(root, uid, path.stem, codec))
            except MalformedPage as exc:
                if bad is not None:
                    bad.append((exc.path, exc.reason))
    return sorted(out, key=lambda i: (str(i.get("created", "")), i["id"]))
