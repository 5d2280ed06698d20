"""Human output for the ``markmem`` commands: short lines and rich tables (``--json`` bypasses all of it).

Each command hands its result to one function here; :func:`show` renders anything else (a dict as
key/value lines, a list of dicts as a table), so no command prints raw JSON unless asked to.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import click

from .jsonable import to_jsonable
from .model import Claim, Commit, Hit, Page, RawEntry

WIDTH = 100  # pipes and CI logs get this width; a terminal uses its own


def _print(renderable: Any) -> None:
    """Render with rich, print through click (trailing padding stripped: short lines, clean pipes)."""
    from rich.console import Console  # rich costs ~0.1 s to import: only commands that print tables pay it

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=WIDTH, color_system=None)
    with console.capture() as captured:
        console.print(renderable)
    click.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))


def pairs(rows: Iterable[tuple[str, Any]], title: str | None = None) -> None:
    """Key/value lines, e.g. ``markmem stats``."""
    from rich.table import Table

    if title:
        click.echo(title)
    table = Table(show_header=False, box=None, pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(key.replace("_", " "), cell(value))
    _print(table)


def rows(columns: Sequence[str], data: Iterable[Sequence[Any]], empty: str) -> None:
    """A table with a header; ``empty`` when there is no row."""
    from rich import box
    from rich.table import Table

    data = list(data)
    if not data:
        click.echo(empty)
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for name in columns:
        table.add_column(name, overflow="fold")
    for row in data:
        table.add_row(*(cell(v) for v in row))
    _print(table)


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={cell(v)}" for k, v in value.items()) or "-"
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], dict):
            return f"{len(value)} item(s)"
        return ", ".join(cell(v) for v in value) or "-"
    return " ".join(str(value).split())


def show(value: Any) -> None:
    """Any result: text as is, a dict as key/value lines, a list of dicts as a table."""
    summary = getattr(value, "summary", None)
    if callable(summary):
        click.echo(str(summary()))
        return
    data = to_jsonable(value)
    if isinstance(data, str):
        click.echo(data)
    elif isinstance(data, dict):
        pairs(data.items())
    elif isinstance(data, list) and all(isinstance(d, dict) for d in data):
        columns = list(dict.fromkeys(k for d in data for k in d))[:6]
        rows(columns, ([d.get(c) for c in columns] for d in data), "(none)")
    else:
        for item in data if isinstance(data, list) else [data]:
            click.echo(cell(item))


# ---- per command ---------------------------------------------------------------------------


def exported(data: dict[str, Any]) -> None:
    """``markmem export --out``: what was written where."""
    if {"records", "path"} <= data.keys():
        users = data.get("users") or [data.get("user_id")]
        click.echo(f"wrote {data['records']} {data.get('format', '')} record(s) of {cell(users)} to {data['path']}")
    else:
        show(data)


def hits(found: Sequence[Hit], user_id: str, has_memories: bool) -> None:
    if not has_memories:
        click.echo(f"no memories for user {user_id!r} yet (add some with: markmem add --user {user_id} TEXT)")
        return
    rows(("score", "kind", "id", "text"), ((f"{h.score:.3f}", h.kind, h.id, _short(h.text, 90)) for h in found),
         "no matches")
    when = next((h.explain["query"].get("when") for h in found if h.explain and "query" in h.explain), None)
    if when and when.get("window"):
        w = when["window"]
        click.echo(f"time window: {w['phrase']!r} = {w['start']} .. {w['end']}, score x{when['boost']}")
    if when and when.get("events"):
        click.echo("events searched: " + " | ".join(when["events"]))


def pages(found: Sequence[Page], user_id: str) -> None:
    rows(("page", "facts", "title"), ((p.id, f"{len(p.active_claims())} of {len(p.claims)}", p.title)
                                      for p in found), f"no pages for user {user_id!r}")


def obj(found: Page | Claim | RawEntry) -> None:
    """``markmem get``: a page with its claim ledger, a claim, or a raw entry."""
    if isinstance(found, Page):
        flags = [found.type] + [f for f, on in (("pinned", found.pinned), ("archived", found.archived)) if on]
        click.echo(f"{found.id}  {found.title} ({', '.join(flags)}; updated {found.updated[:19]})")
        rows(("claim", "status", "fact", "valid from", "until"),
             ((c.id, _status(c), _short(c.text, 60), _day(c.valid_from), _day(c.valid_until)) for c in found.claims),
             "no claims")
        return
    data = to_jsonable(found)
    pairs(((k, v) for k, v in data.items() if v not in (None, {}, [], ())), title=None)


def commits(found: Sequence[Commit]) -> None:
    """``markmem history ID``: one line per commit, then its claim-level changes (and diff)."""
    if not found:
        click.echo("no history")
    for c in found:
        click.echo(f"{c.sha[:10]} {c.when[:19]} {c.op or '-'}  {c.message.splitlines()[0]}")
        for ch in c.changes:
            click.echo(f"    {ch['change']:>14}  {ch['claim']}")
        if c.diff:
            click.echo(c.diff)


def user_history(records: Sequence[dict[str, Any]], user_id: str) -> None:
    """``markmem history --user``: every operation that touched the user."""
    rows(("when", "op", "commit", "what"),
         ((str(r.get("at") or "")[:19], r.get("op"), (r.get("sha") or "")[:10],
           _short(r.get("subject") or cell({k: v for k, v in r.items() if k not in _KNOWN}), 70)) for r in records),
         f"no history for user {user_id!r}")


_KNOWN = ("source", "user_id", "at", "op", "sha", "subject", "trailers", "files", "users_in_batch")


def review_item(item: dict[str, Any]) -> None:
    raw = item.get("raw") or {}
    pairs(((k, v) for k, v in item.items() if k != "raw"), title=f"review item {item['id']}")
    if raw:
        click.echo(f"\n{raw.get('role', 'user')} said ({raw.get('id')}): {raw.get('content', '')}")


def decision(result: dict[str, Any]) -> None:
    claims = result.get("claims") or []
    click.echo(f"{result['decision']} {result['id']} ({result['kind']}, user {result['user_id']}): "
               f"{len(claims)} claim(s) added, {result.get('closed', 0)} closed; "
               f"commit {(result.get('commit') or '-')[:10]}")


def doctor(report: dict[str, Any]) -> None:
    cache = report["cache"]
    pairs([
        ("repo", f"{report['repo']} (schema {report['schema']}, head {(report['git_head'] or '-')[:10]})"),
        ("cache", f"{'ok' if cache['ok'] else 'BROKEN'}, {cache['pages']} of {cache['pages_on_disk']} pages"
                  f"{'' if cache['in_sync'] else ' (out of sync: markmem reindex)'}"),
        ("pii_gate", report["pii_gate"]), ("injection_guard", report["injection_guard"]),
        ("extractor", report["extractor"]), ("vectors", report["vectors"] or "off (BM25 only)"),
        ("encryption", report["encryption"]), ("queue_pending", report["queue_pending"]),
    ])
    for p in report["problems"]:
        click.echo(f"problem: {p['path']}: {p['reason']}")
    for w in report["warnings"]:
        click.echo(f"warning: {w}")
    ok = not report["problems"] and cache["ok"]
    click.echo("ok" if ok else f"{len(report['problems'])} problem(s)")


def _status(c: Claim) -> str:
    if c.valid_until is None:
        return "active"
    return f"superseded by {c.superseded_by}" if c.superseded_by else "closed"


def _day(stamp: str | None) -> str:
    return stamp[:10] if stamp else "-"


def _short(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"
