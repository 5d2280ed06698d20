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
