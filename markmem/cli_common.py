"""What every ``markmem`` command shares: the --repo/--json options, opening Memory, printing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from .config import Settings
from .jsonable import to_jsonable
from .memory import Memory

repo_option = click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path),
                           envvar="MARKMEM_REPO", default=".", show_default=True,
                           help="Memory repo path (default: $MARKMEM_REPO, else the current directory).")
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")


def open_memory(repo: Path, **overrides: Any) -> Memory:
    """Settings are built once, here, from the environment; commands compile in the foreground."""
    settings = Settings.from_env(repo_path=repo)
    return Memory(repo, settings, **{"background": False, "create": False, **overrides})


def emit(value: Any, as_json: bool) -> None:
    """Print text as is, anything else (or anything with --json) as indented JSON."""
    if isinstance(value, str) and not as_json:
        click.echo(value)
    else:
        click.echo(dumps(value))


def dumps(value: Any) -> str:
    return json.dumps(to_jsonable(value), indent=2, ensure_ascii=False)


@contextmanager
def busy(label: str) -> Iterator[None]:
    """A transient rich spinner on stderr for long work (export, import, rewrite)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:  # pipes and CI logs get no spinner frames
        yield
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        bar.add_task(label, total=None)
        yield
