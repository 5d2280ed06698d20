"""Dependencies flow shells -> memory -> write/read/erase -> store/index -> model/errors (checked via ast)."""

from __future__ import annotations

import ast
from pathlib import Path

import markmem

PKG = Path(markmem.__file__).parent
SHELLS = {"cli", "cli_admin", "cli_common", "cli_render", "cli_install", "mcp_server", "api", "aio", "serving",
          "jsonable", "jobs"}
LOW = {"store", "index"}  # must not import upward


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = path.relative_to(PKG).parts[: -node.level] if node.level > 1 else path.relative_to(PKG).parts[:-1]
            mod = list(base) + (node.module.split(".") if node.module else [])
            out.add(mod[0] if mod else (node.names[0].name))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("markmem."):
            out.add(node.module.split(".")[1])
    return out


def test_shells_only_talk_to_the_facade() -> None:
    allowed = {"memory", "errors", "config", "model", "ports", "aio", "__init__", "inspect", "ids"}
    for name in SHELLS:
        path = PKG / f"{name}.py"
        if path.exists():
            bad = imports(path) - allowed - SHELLS
            assert not {b for b in bad if b in {"store", "index", "write", "read", "erase", "lifecycle"}}, (name, bad)


def test_the_console_only_talks_to_the_facade() -> None:
    """The console is a shell of its own (a room beside api.py): Memory and value types, nothing below."""
    allowed = {"memory", "errors", "config", "model", "serving", "console", "jobs", "ids"}  # ids: time parsing, a leaf
    paths = sorted((PKG / "console").rglob("*.py"))
    assert paths
    for path in paths:
        assert imports(path) <= allowed, (path, imports(path) - allowed)
    assert all("console" not in imports(PKG / f"{name}.py") for name in SHELLS - {"cli"})


def test_store_and_index_do_not_import_upward() -> None:
    upward = {"memory", "write", "read", "erase", "lifecycle", "cli", "api", "mcp_server", "portability", "cluster"}
    for layer in LOW:
        for path in (PKG / layer).rglob("*.py"):
            assert not imports(path) & upward, (path, imports(path) & upward)


def test_core_never_imports_torch() -> None:
    for path in PKG.rglob("*.py"):
        assert "import torch" not in path.read_text(), path


def test_public_api_is_pinned() -> None:
    assert sorted(markmem.__all__) == sorted([
        "AddResult", "Claim", "Commit", "CompileReport", "EditQuarantined", "EncryptionError", "ErasureError",
        "GateUnavailable",
        "Hit", "InvalidInput", "InvalidUserId", "LockTimeout", "MalformedPage", "MarkmemError", "Memory",
        "NotFound", "Pack", "Page", "PiiBlocked", "PiiPolicy", "RawEntry", "RepoError", "Settings", "Source",
        "__version__",
    ])


def test_every_error_derives_from_the_root() -> None:
    from markmem import errors

    for name in dir(errors):
        obj = getattr(errors, name)
        if isinstance(obj, type) and issubclass(obj, Exception) and obj.__module__ == errors.__name__:
            assert issubclass(obj, errors.MarkmemError)


def test_schema_file_matches_the_package_copy() -> None:
    assert (PKG.parent / ".markmem-schema").read_text() == (PKG / "schema.yaml").read_text()
