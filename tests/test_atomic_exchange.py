"""atomic_write(sync=False) swaps a page in with renameat2(RENAME_EXCHANGE) where it can."""

from __future__ import annotations

import os
from pathlib import Path

from markmem.store import pages
from markmem.store.pages import atomic_write


def test_exchange_replaces_content_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "p.md"
    atomic_write(target, "first", sync=False)  # a new file: a plain rename
    for i in range(3):
        atomic_write(target, f"text {i}", sync=False)  # an existing one: exchanged, old text removed
    assert target.read_text() == "text 2"
    assert os.listdir(tmp_path) == ["p.md"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o600)


def test_synced_writes_and_missing_call_use_replace(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "p.md"
    target.write_text("old")
    atomic_write(target, "synced")
    assert target.read_text() == "synced"
    monkeypatch.setattr(pages, "_renameat2", lambda: None)  # no renameat2 here (another OS, old libc)
    atomic_write(target, "fallback", sync=False)
    assert target.read_text() == "fallback"
    assert os.listdir(tmp_path) == ["p.md"]
