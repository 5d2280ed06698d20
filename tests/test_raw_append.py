"""raw.append opens each day's segment once: its size from the descriptor (rolling over when it is
full), the folders checked for symlinks, O_NOFOLLOW at the file, and a new file told apart by the
first open failing. Real files; the same lines and offsets as checking each with a stat."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from markmem.errors import RepoError
from markmem.model import RawEntry
from markmem.store import raw
from markmem.store.codec import PlainCodec

STAMP = "2026-12-01T10:00:00.000000Z"


def entry(i: int, user: str = "bob", stamp: str = STAMP) -> RawEntry:
    return RawEntry(id=f"r-{i:012x}", user_id=user, role="user", content=f"line {i} " + "x" * 40, recorded_at=stamp)


def lines(root: Path, rel: str) -> list[str]:
    return [json.loads(line)["id"] for line in (root / rel).read_text("utf-8").splitlines()]


def test_appends_land_where_the_offsets_say_and_roll_past_the_segment_size(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(raw, "SEGMENT_BYTES", 300)
    monkeypatch.setattr(raw, "_last_segment", {})
    located = [loc for i in range(9) for loc in raw.append(tmp_path, [entry(i)], PlainCodec())]
    files = list(dict.fromkeys(loc.path for loc in located))
    assert files[0] == raw.raw_path("bob", STAMP, 0) and len(files) >= 3
    for loc in located:
        data = (tmp_path / loc.path).read_bytes()[loc.start:loc.end]
        assert json.loads(data)["id"] == loc.raw_id and data.endswith(b"\n")
    for rel in files[:-1]:  # every full segment stopped growing once it reached the size
        assert (tmp_path / rel).stat().st_size >= 300
        assert (tmp_path / rel).stat().st_size - len((tmp_path / rel).read_bytes().splitlines()[-1]) - 1 < 300
    assert [i for rel in files for i in lines(tmp_path, rel)] == [f"r-{i:012x}" for i in range(9)]


def test_a_new_process_finds_the_newest_segment_and_a_list_stays_in_one_file(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(raw, "SEGMENT_BYTES", 300)
    monkeypatch.setattr(raw, "_last_segment", {})
    for i in range(6):
        raw.append(tmp_path, [entry(i)], PlainCodec())
    newest = max(loc.path for loc in raw.append(tmp_path, [entry(6)], PlainCodec()))
    monkeypatch.setattr(raw, "_last_segment", {})  # as a fresh process sees it
    batch = raw.append(tmp_path, [entry(i) for i in range(7, 12)], PlainCodec())
    assert len({loc.path for loc in batch}) == 1 and batch[0].path == newest


def test_a_torn_tail_is_cut_before_the_next_append(tmp_path: Path) -> None:
    raw.append(tmp_path, [entry(1)], PlainCodec())
    rel = raw.raw_path("bob", STAMP)
    with open(tmp_path / rel, "ab") as fh:
        fh.write(b'{"id": "r-torn", "user_')
    loc = raw.append(tmp_path, [entry(2)], PlainCodec())[0]
    assert lines(tmp_path, rel) == [entry(1).id, entry(2).id]
    assert (tmp_path / rel).read_bytes()[loc.start:loc.end].startswith(b'{"id": "r-000000000002"')


def test_a_symlinked_segment_or_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "repo"
    rel = raw.raw_path("bob", STAMP)
    (root / rel).parent.mkdir(parents=True)
    (root / rel).symlink_to(outside / "stolen.jsonl")
    with pytest.raises(RepoError, match="symlink"):
        raw.append(root, [entry(1)], PlainCodec())
    (root / rel).unlink()
    (root / "raw/u/carol").parent.mkdir(parents=True, exist_ok=True)
    (root / "raw/u/carol").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RepoError, match="symlink"):
        raw.append(root, [entry(2, "carol")], PlainCodec())
    assert list(outside.iterdir()) == []


def test_a_new_file_and_its_new_folders_are_listed_for_the_caller_to_sync(tmp_path: Path) -> None:
    to_sync: list[Path] = []
    raw.append(tmp_path, [entry(1)], PlainCodec(), sync=False, to_sync=to_sync)
    full = tmp_path / raw.raw_path("bob", STAMP)
    assert to_sync == [full, full.parent]
    to_sync.clear()
    raw.append(tmp_path, [entry(2)], PlainCodec(), sync=False, to_sync=to_sync)
    assert to_sync == [full]
    assert oct(os.stat(full).st_mode & 0o777) == "0o644"
