"""A small, fast YAML emitter for page frontmatter (PyYAML's representer dominated compile time).

Emits only what pages need: scalars, lists of scalars, and mappings; anything unusual falls back to
PyYAML. Strings are plain when unambiguous, else JSON-quoted (a valid YAML double-quoted scalar) with
the characters YAML treats specially escaped. The property test in tests/test_pages.py round-trips it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.encoder import encode_basestring
from typing import Any

import yaml

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_ ,.'/()+-]*")
_SPECIAL = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "nan", "inf"}
_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def scalar(value: Any) -> str:
    if isinstance(value, str):
        return _str_scalar(value)
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if "." in repr(value) or "e" in repr(value) else repr(value) + ".0"
    raise TypeError(type(value))


@lru_cache(maxsize=1 << 16)  # a page is re-dumped batch after batch with mostly the same strings
def _str_scalar(value: str) -> str:
    if _PLAIN.fullmatch(value) and value.casefold() not in _SPECIAL and not value.endswith(" ") and (
        len(value) < 200
    ):
        return value
    out: str = encode_basestring(value)  # what json.dumps(value, ensure_ascii=False) returns
    return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", out) if _ESCAPE.search(out) else out


def _fallback(value: Any) -> str:
    text: str = yaml.dump(value, Dumper=yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper,
                          default_flow_style=True, allow_unicode=True, width=10_000)
    return text.strip().removesuffix("...").strip()


def emit(mapping: dict[str, Any], indent: str = "") -> list[str]:
    lines: list[str] = []
    for key, value in mapping.items():
        k = _str_scalar(key) if type(key) is str else scalar(key)
        if type(value) is str:  # the common case first
            lines.append(f"{indent}{k}: {_str_scalar(value)}")
        elif isinstance(value, dict):
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
        elif type(item) is str:
            lines.append(f"{indent}- {_str_scalar(item)}")
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
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return _parse_immutable(text)


@lru_cache(maxsize=1 << 16)
def _parse_immutable(text: str) -> Any:
    if text.startswith('"'):
        try:
            value, end = scanstring(text, 1)  # json.loads of a JSON string, without its overhead
        except ValueError:
            raise Unsupported(text) from None
        if end != len(text) and text[end:].strip(" \t\n\r"):  # json.loads allows trailing space
            raise Unsupported(text)
        return value
    if text in ("null", "~"):
        return None
    if text in ("true", "false"):
        return text == "true"
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
    i, n = 0, len(lines)
    while i < n:
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
    dash = indent + "- "
    w, n = len(dash), len(lines)
    while i < n and lines[i].startswith(dash):
        line = lines[i]
        if line[w:w + 1] != '"' and _KEY.fullmatch(line, w):
            lines[i] = indent + "  " + line[w:]  # read the item as a mapping at indent + 2
            value, i = _mapping(lines, i, indent + "  ")
            out.append(value)
        else:
            out.append(parse_scalar(line[w:]))
            i += 1
    return out, i


def _mapping(lines: list[str], i: int, indent: str) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    w, n = len(indent), len(lines)
    deeper, dash = indent + " ", indent + "- "
    while i < n:
        line = lines[i]
        if not line.startswith(indent) or line.startswith(deeper):
            break
        m = _KEY.fullmatch(line, w)
        if not m:
            raise Unsupported(line)
        key, rest = m.groups()
        if rest:
            out[key] = parse_scalar(rest)
            i += 1
        elif i + 1 < n and lines[i + 1].startswith(dash):
            out[key], i = _list(lines, i + 1, indent)
        else:
            out[key], i = _mapping(lines, i + 1, indent + "  ")
    return out, i
