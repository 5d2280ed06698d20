"""A small, fast YAML emitter for page frontmatter (PyYAML's representer dominated compile time).

Emits only what pages need: scalars, lists of scalars, and mappings; anything unusual falls back to
PyYAML. Strings are plain when unambiguous, else JSON-quoted (a valid YAML double-quoted scalar) with
the characters YAML treats specially escaped. The property test in tests/test_pages.py round-trips it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_ ,.'/()+-]*")
_SPECIAL = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "nan", "inf"}
_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if "." in repr(value) or "e" in repr(value) else repr(value) + ".0"
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.casefold() not in _SPECIAL and not value.endswith(" ") and (
            len(value) < 200
        ):
            return value
        out = json.dumps(value, ensure_ascii=False)
        return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    raise TypeError(type(value))


def _fallback(value: Any) -> str:
    text: str = yaml.dump(value, Dumper=yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper,
                          default_flow_style=True, allow_unicode=True, width=10_000)
    return text.strip().removesuffix("...").strip()


def emit(mapping: dict[str, Any], indent: str = "") -> list[str]:
    lines: list[str] = []
    for key, value in mapping.items():
        k = scalar(key)
        if isinstance(value, dict):
            if not value:
                lines.append(f"{indent}{k}: {{}}")
            elif all(isinstance(v, (str, int, float, bool)) or v is None for v in value.values()):
                lines.append(f"{indent}{k}:")
                lines += [f"{indent}  {scalar(kk)}: {scalar(vv)}" for kk, vv in value.items()]
            else:
                lines.append(f"{indent}{k}: {_fallback(value)}")
        elif isinstance(value, (list, tuple)):
            lines += _emit_list(k, value, indent)
        else:
            try:
                lines.append(f"{indent}{k}: {scalar(value)}")
            except TypeError:
                lines.append(f"{indent}{k}: {_fallback(value)}")
    return lines


def _emit_list(k: str, items: Any, indent: str) -> list[str]:
    if not items:
        return [f"{indent}{k}: []"]
    lines = [f"{indent}{k}:"]
    for item in items:
        if isinstance(item, dict) and item:
            sub = emit(item, indent + "  ")
            lines.append(f"{indent}- " + sub[0][len(indent) + 2 :])
            lines += sub[1:]
        else:
            try:
                lines.append(f"{indent}- {scalar(item)}")
            except TypeError:
                lines.append(f"{indent}- {_fallback(item)}")
    return lines


def dump(mapping: dict[str, Any]) -> str:
    return "\n".join(emit(mapping)) + "\n"


class Unsupported(Exception):
    """The text uses YAML the fast reader does not handle; the caller falls back to PyYAML."""


_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*): ?(.*)")


def parse_scalar(text: str) -> Any:
    if text.startswith('"'):
        try:
            return json.loads(text)
        except ValueError:
            raise Unsupported(text) from None
    if text in ("null", "~"):
        return None
    if text in ("true", "false"):
        return text == "true"
    if text == "[]":
        return []
    if text == "{}":
        return {}
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _PLAIN.fullmatch(text) and text.casefold() not in _SPECIAL and not text.endswith(" "):
        return text
    raise Unsupported(text)


def load(text: str) -> dict[str, Any]:
    """Read frontmatter in the shape :func:`dump` writes; raise Unsupported for anything else."""
    root: dict[str, Any] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
            continue
        m = _KEY.fullmatch(line)
        if not m:
            raise Unsupported(line)
        key, rest = m.groups()
        if rest:
            root[key] = parse_scalar(rest)
            i += 1
        else:
            root[key], i = _block(lines, i + 1, "")
    return root


def _block(lines: list[str], i: int, indent: str) -> tuple[Any, int]:
    """A block under a key: a list (``- ``) or a mapping, at ``indent`` (top) or ``indent + '  '``."""
    if i < len(lines) and lines[i].startswith(indent + "- "):
        return _list(lines, i, indent)
    return _mapping(lines, i, indent + "  ")


def _list(lines: list[str], i: int, indent: str) -> tuple[list[Any], int]:
    out: list[Any] = []
    while i < len(lines) and lines[i].startswith(indent + "- "):
        item = lines[i][len(indent) + 2 :]
        m = _KEY.fullmatch(item)
        if m and not item.startswith('"'):
            lines[i] = indent + "  " + item  # read the item as a mapping at indent + 2
            value, i = _mapping(lines, i, indent + "  ")
            out.append(value)
        else:
            out.append(parse_scalar(item))
            i += 1
    return out, i


def _mapping(lines: list[str], i: int, indent: str) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    while i < len(lines) and lines[i].startswith(indent) and not lines[i].startswith(indent + " "):
        m = _KEY.fullmatch(lines[i][len(indent) :])
        if not m:
            raise Unsupported(lines[i])
        key, rest = m.groups()
        if rest:
            out[key] = parse_scalar(rest)
            i += 1
        elif i + 1 < len(lines) and lines[i + 1].startswith(indent + "- "):
            out[key], i = _list(lines, i + 1, indent)
        else:
            out[key], i = _mapping(lines, i + 1, indent + "  ")
    return out, i
