"""How a user's content is sealed on disk. Plain by default; encryption plugs in here.

A codec maps a raw entry's JSON object and a page's text to what is stored, and back.
Everything that writes user content to the repo goes through one, so crypto-shred can
cover every byte.
"""

from __future__ import annotations

from typing import Any, Protocol


class Codec(Protocol):
    name: str

    def seal_entry(self, user_id: str, entry: dict[str, Any]) -> dict[str, Any]: ...

    def open_entry(self, user_id: str, stored: dict[str, Any]) -> dict[str, Any]: ...

    def seal_text(self, user_id: str, text: str) -> str: ...

    def open_text(self, user_id: str, stored: str) -> str: ...


class PlainCodec:
    name = "plain"

    def seal_entry(self, user_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        return entry

    def open_entry(self, user_id: str, stored: dict[str, Any]) -> dict[str, Any]:
        return stored

    def seal_text(self, user_id: str, text: str) -> str:
        return text

    def open_text(self, user_id: str, stored: str) -> str:
        return stored
