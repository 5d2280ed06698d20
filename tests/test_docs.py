"""Every CLI command has help text and is documented in docs/CLI.md, which README.md links."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from markmem.cli import main

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = ROOT / "docs" / "CLI.md"


def commands(group: click.Group, prefix: str = "markmem") -> list[tuple[str, click.Command]]:
    out = []
    for name, cmd in sorted(group.commands.items()):
        path = f"{prefix} {name}"
        out.append((path, cmd))
        if isinstance(cmd, click.Group):
            out += commands(cmd, path)
    return out


ALL = commands(main)


def test_the_cli_has_the_issue_commands() -> None:
    names = {path.split(" ", 1)[1] for path, _ in ALL}
    wanted = {"init", "add", "flush", "search", "get", "list", "update", "delete", "forget", "history", "review",
              "maintenance", "lint", "reindex", "export", "import", "doctor", "stats", "api", "mcp", "verify-erasure",
              "review list", "review show", "review approve", "review reject", "review edit"}
    assert wanted <= names


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[p for p, _ in ALL])
def test_command_has_help_text(path: str, cmd: click.Command) -> None:
    assert (cmd.help or "").strip(), f"{path} has no help text"
    assert cmd.get_short_help_str().strip()
    for param in cmd.params:
        if isinstance(param, click.Option):
            assert (param.help or "").strip(), f"{path} {param.opts[0]} has no help"


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[p for p, _ in ALL])
def test_command_is_in_docs(path: str, cmd: click.Command) -> None:
    section = CLI_DOC.read_text("utf-8").split("## CLI", 1)[1]
    assert f"`{path}" in section, f"{path} is missing from the ## CLI section of docs/CLI.md"


@pytest.mark.parametrize(("path", "cmd"), [(p, c) for p, c in ALL if not isinstance(c, click.Group)],
                         ids=[p for p, c in ALL if not isinstance(c, click.Group)])
def test_documented_options_exist(path: str, cmd: click.Command) -> None:
    """Every --flag a docs line shows for this command is a real option of it."""
    import re

    lines = [ln for ln in CLI_DOC.read_text("utf-8").splitlines() if ln.startswith((f"- `{path} ", f"- `{path}`"))]
    assert lines
    usage = lines[0].split("`")[1]
    real = {opt for p in cmd.params for opt in (*p.opts, *p.secondary_opts)}
    for flag in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", usage):
        assert flag in real, f"docs/CLI.md shows {flag} for {path}, which has no such option"


def test_readme_links_the_cli_docs() -> None:
    readme = ROOT / "README.md"
    if not readme.exists():
        pytest.skip("README.md is not written yet (the lead owns it); it must link docs/CLI.md")
    assert "docs/CLI.md" in readme.read_text("utf-8"), "README.md must mention docs/CLI.md (the CLI reference)"


def test_relative_links_in_the_docs_resolve() -> None:
    """A link in README.md or docs/*.md (outside code examples) to a file of the repo exists."""
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        prose = re.sub(r"```.*?```", "", page.read_text("utf-8"), flags=re.S)  # examples, not links
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(f"{page.name}: {target}")
    assert not broken, broken
