"""export(user_id, to="access"): everything memory holds about one user, as JSON and markdown.

Read from the repo (the source of truth), decrypted when the repo is encrypted: raw inputs as
stored after the PII gate, every claim with its validity (active, superseded, closed), the pages,
pending review items, and the processing history (``history(user_id=...)``). Written files are
created with mode 0600: an access export is personal data.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..context import Context
from ..ids import now
from ..model import RawEntry
from ..store import raw as raw_store
from ..store.pages import claim_to_dict, dump_page, iter_page_files, read_page
from ..write import review
from . import audit

FORMAT = "markmem-access-export"


def export_access(ctx: Context, user_id: str, path: str | Path | None = None,
                  pending: Sequence[RawEntry] = ()) -> dict[str, Any]:
    """``pending``: the user's entries accepted elsewhere and not yet in the repo (a cluster's
    intake rows), listed among the raw inputs with ``"pending": true``."""
    with ctx.write_lock.held():  # a consistent snapshot: no compile or erasure in between
        entries = [{**e.to_json(), "source": e.source} for e in raw_store.iter_entries(ctx.root, ctx.codec, user_id)]
        have = {e["id"] for e in entries}
        waiting = [{**e.to_json(), "source": "intake", "pending": True} for e in pending if e.id not in have]
        entries += waiting
        pages = [read_page(ctx.root, rel, ctx.codec) for rel in iter_page_files(ctx.root, user_id)]
        items = review.list_items(ctx.root, ctx.codec, user_id)
        history = audit.user_history(ctx, user_id)
    claims = []
    for page in pages:
        for c in page.claims:
            claims.append({**claim_to_dict(c), "page_id": page.id, "status": _status(c)})
    data: dict[str, Any] = {
        "format": FORMAT, "version": 1, "user_id": user_id, "generated_at": now(),
        "summary": {"raw_entries": len(entries), "claims": len(claims),
                    "active_claims": sum(1 for c in claims if c["status"] == "active"),
                    "pages": len(pages), "review_items": len(items), "operations": len(history),
                    "pending_compilation": ctx.queue.pending(user_id) + len(waiting)},
        "raw": entries,
        "claims": claims,
        "pages": [{"id": p.id, "type": p.type, "title": p.title, "path": p.path, "created": p.created,
                   "updated": p.updated, "pinned": p.pinned, "archived": p.archived, "markdown": dump_page(p)}
                  for p in pages],
        "review": items,
        "history": history,
        "notes": [
            "Inputs are stored after the PII gate: masked values (<EMAIL_ADDRESS>, ...) were never kept.",
            "The search cache is derived from these files and holds nothing else.",
            "Data erased earlier (forget) is not included; its tombstones appear in the history.",
        ] + (["Raw inputs marked pending were accepted and are held, gated, in the cluster's intake until "
              "they are compiled into the repo."] if waiting else []),
    }
    if path is not None:
        data["files"] = [str(p) for p in _write(data, Path(path), user_id)]
    return data


def _status(c: Any) -> str:
    if c.active:
        return "active"
    if c.superseded_by:
        return "superseded"
    return "retracted" if (c.metadata or {}).get("deleted") else "closed"


def _write(data: dict[str, Any], path: Path, user_id: str) -> list[Path]:
    if path.suffix.lower() in (".json", ".md"):
        base = path.with_suffix("")
        base.parent.mkdir(parents=True, exist_ok=True)
    else:
        path.mkdir(parents=True, exist_ok=True)
        base = path / f"access-{user_id}"
    out = [base.with_suffix(".json"), base.with_suffix(".md")]
    _private(out[0], json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    _private(out[1], to_markdown(data))
    return out


def _private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def to_markdown(data: dict[str, Any]) -> str:
    """The access export as a human-readable markdown document."""
    s = data["summary"]
    out = [
        f"# Data held about user `{data['user_id']}`", "",
        f"Generated {data['generated_at']} by markmem ({data['format']} v{data['version']}).", "",
        "## Summary", "",
        f"- {s['raw_entries']} raw inputs ({s['pending_compilation']} not compiled yet)",
        f"- {s['claims']} claims, {s['active_claims']} currently active",
        f"- {s['pages']} pages, {s['review_items']} review items, {s['operations']} recorded operations", "",
    ]
    for title, wanted in (("Current facts", ("active",)), ("Past facts", ("superseded", "closed", "retracted"))):
        rows = [c for c in data["claims"] if c["status"] in wanted]
        out += [f"## {title}", ""]
        if not rows:
            out += ["_(none)_", ""]
            continue
        out += ["| claim | fact | valid from | valid until | status | provenance |",
                "|---|---|---|---|---|---|"]
        out += [f"| {c['id']} | {_cell(c['text'])} | {c['valid_from'] or ''} | {c['valid_until'] or ''} "
                f"| {c['status']} | {c['provenance']} |" for c in rows]
        out.append("")
    out += ["## Pages", ""]
    for p in data["pages"]:
        out += [f"### {p['title']} (`{p['id']}`)", "", "```markdown", p["markdown"].rstrip(), "```", ""]
    out += ["## Review items", ""]
    out += [f"- `{i['id']}` {i.get('kind')}: {i.get('reason')} (raw `{i.get('raw_id')}`)" for i in data["review"]]
    out += ["", "## Raw inputs", ""]
    for e in data["raw"]:
        pii = f" _(PII found: {', '.join(e['pii'])})_" if e.get("pii") else ""
        wait = " _(accepted, not compiled yet)_" if e.get("pending") else ""
        out.append(f"- `{e['id']}` {e['recorded_at']} **{e['role']}**: {_cell(e['content'])}{pii}{wait}")
    out += ["", "## Processing history", ""]
    for h in data["history"]:
        ref = f" `{h['sha'][:12]}`" if h.get("sha") else ""
        out.append(f"- {h.get('at')} {h.get('op')} ({h['source']}){ref} {h.get('subject', '')}".rstrip())
    out += ["", "## Notes", ""] + [f"- {n}" for n in data["notes"]]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")
