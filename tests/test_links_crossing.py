"""``links.crossing`` (the commit's batched symlink check, issue #12 pt 6) says exactly what
``crosses_link`` says of each path, with real symlinks on disk."""

from __future__ import annotations

from pathlib import Path

from markmem.store.links import crosses_link, crossing


def test_crossing_agrees_with_crosses_link_path_by_path(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "wiki" / "u" / "bob" / "profile").mkdir(parents=True)
    (root / "wiki" / "u" / "bob" / "profile" / "job.md").write_text("x")
    outside = tmp_path / "outside"
    (outside / "profile").mkdir(parents=True)
    (outside / "profile" / "job.md").write_text("secret")
    (root / "wiki" / "u" / "eve").symlink_to(outside, target_is_directory=True)
    (root / "wiki" / "u" / "bob" / "profile" / "link.md").symlink_to(outside / "profile" / "job.md")
    (root / "raw").symlink_to(outside, target_is_directory=True)
    rels = ["wiki/u/bob/profile/job.md", "wiki/u/eve/profile/job.md", "wiki/u/eve", "wiki/u/bob/profile/link.md",
            "wiki/u/bob/profile/gone.md", "wiki/u/nobody/profile/x.md", "raw/u/bob/2026/01/01.jsonl",
            "wiki/u/bob/profile/job.md/inside", "wiki//u/bob/profile/job.md", "", "wiki/u/bob"]
    want = {r for r in rels if crosses_link(root, r)}
    assert want == {"wiki/u/eve/profile/job.md", "wiki/u/eve", "wiki/u/bob/profile/link.md",
                    "raw/u/bob/2026/01/01.jsonl"}
    assert crossing(root, rels) == want
    assert crossing(root, reversed(rels)) == want  # the folder memo does not depend on the order
