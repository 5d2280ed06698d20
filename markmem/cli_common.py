"""What every ``markmem`` command shares: the --repo/--json options, opening Memory, printing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
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


class Group(click.Group):
    """A click group whose command list shows each command's whole first help line, not a cut one."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        commands = [(name, cmd) for name in self.list_commands(ctx)
                    if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if commands:
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit=1_000)) for name, cmd in commands])


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
def counting(label: str) -> Iterator[Callable[[str, int, int], None]]:
    """A counting rich progress bar on stderr, one line per stage; yields ``tick(stage, done, total)``
    (the ``progress=`` callback of reindex, import, export, forget, maintenance and lint), each bar
    with its counts (``120/4000``). Silent when stderr is not a terminal: stdout (``--json``) is never touched."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda stage, done, total: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def tick(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(f"{label} {stage}", total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield tick


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
