"""LLM extractors: LiteLLM, Anthropic and OpenAI turn a batch of raw entries into candidates.

All three send the same prompt (:mod:`markmem.adapters.llm_prompt`), one call per user and
per ~24k characters of turns, so a call never mixes two users' words. A reply that is not the
promised JSON is retried once; a second bad reply, a timeout or an API error runs the
``fallback`` extractor (the heuristic one) for that chunk and marks the result ``flagged``.
Nothing here raises for a provider problem: only a failing fallback raises
:class:`~markmem.errors.ExtractionError`.

The SDKs are imported lazily: ``pip install 'markmem[llm]'`` (anthropic, openai) or
``'markmem[litellm]'``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ExtractionError, InvalidInput, MarkmemError
from ..model import RawEntry
from ..ports import Extraction, Extractor
from .llm_prompt import (
    MalformedOutput,
    build_prompt,
    chunk_entries,
    citable,
    parse_reply,
)

if TYPE_CHECKING:
    import anthropic
    import openai

DEFAULT_MODELS = {
    "litellm": "gpt-4.1-mini",
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-4.1-mini",
}
DEFAULT_MAX_TOKENS = 4096
_ATTEMPTS = 2  # a malformed reply is retried once


@dataclass(frozen=True)
class Reply:
    """What one model call returned: its text and the tokens it cost."""

    text: str | None
    tokens_in: int = 0
    tokens_out: int = 0


class _ChatExtractor:
    """Chunking, retry and fallback shared by the three providers; they only add ``_complete``."""

    name: str

    def __init__(self, name: str, fallback: Extractor, timeout: float) -> None:
        self.name = name
        self.fallback = fallback
        self.timeout = timeout

    def _complete(self, system: str, user: str) -> Reply:
        raise NotImplementedError

    def extract(self, entries: Sequence[RawEntry]) -> Extraction:
        result = Extraction(candidates=[])
        notes: list[str] = []
        for chunk in chunk_entries(entries):
            if any(citable(e) for e in chunk):
                self._extract_chunk(chunk, result, notes)
        result.note = "; ".join(notes)
        return result

    def _extract_chunk(self, chunk: list[RawEntry], out: Extraction, notes: list[str]) -> None:
        system, user = build_prompt(chunk)
        problem = ""
        for attempt in range(_ATTEMPTS):
            try:
                reply = self._complete(system, user)
            # Timeouts, API errors, a missing key, an SDK's changed reply shape: each provider
            # raises its own tree, and every one of them must end in the fallback, not the worker.
            except Exception as exc:  # noqa: BLE001
                problem = _describe(exc)
                break
            out.tokens_in += reply.tokens_in
            out.tokens_out += reply.tokens_out
            try:
                parsed = parse_reply(reply.text, chunk)
            except MalformedOutput as exc:
                problem = f"malformed output twice ({exc})"
                continue
            out.candidates.extend(parsed.candidates)
            if attempt:
                notes.append(f"{self.name}: retried once after malformed output")
            if parsed.dropped:
                notes.append(f"{self.name}: dropped {parsed.dropped} invalid claim(s)")
            return
        self._fall_back(chunk, out, notes, problem)

    def _fall_back(self, chunk: list[RawEntry], out: Extraction, notes: list[str], problem: str) -> None:
        try:
            result = self.fallback.extract(chunk)
        except MarkmemError:
            raise
        except Exception as exc:
            raise ExtractionError(
                f"{self.name} failed ({problem}) and the fallback {self.fallback.name} failed too: {exc!r}"
            ) from exc
        out.candidates.extend(result.candidates)
        out.tokens_in += result.tokens_in
        out.tokens_out += result.tokens_out
        out.flagged = True
        notes.append(f"{self.name}: {problem}; {self.fallback.name} ran for {len(chunk)} entries")


def _describe(exc: Exception) -> str:
    """Class and status only for HTTP errors: their message may echo the prompt (user content)."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return f"{type(exc).__name__} (HTTP {status})"
    return f"{type(exc).__name__}: {str(exc)[:160]}"


def _tokens(usage: object, *fields: str) -> int:
    total = 0
    for field in fields:
        value = getattr(usage, field, None)
        if isinstance(value, int) and not isinstance(value, bool):
            total += value
    return total


def _import(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ExtractionError(
            f"the {module} extractor needs the {module!r} package: pip install 'markmem[{extra}]'"
        ) from exc


def _import_litellm() -> Any:
    # Without this, importing litellm fetches its model price map from GitHub (a 5 s stall and
    # a retry thread when offline). markmem never needs fresh prices; an explicit setting wins.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return _import("litellm", "litellm")


class LiteLLMExtractor(_ChatExtractor):
    """Any model LiteLLM can reach (``"anthropic/claude-haiku-4-5"``, ``"ollama/llama3"`` ...).

    ``completion_kwargs`` go to every ``litellm.completion`` call (``api_base``, ``api_key``,
    ``response_format``, ``mock_response`` in tests ...).
    """

    def __init__(self, model: str, fallback: Extractor, timeout: float = 30.0, **completion_kwargs: Any) -> None:
        super().__init__(f"litellm:{model}", fallback, timeout)
        self.model = model
        self.completion_kwargs = completion_kwargs
        self._litellm = _import_litellm()

    def _complete(self, system: str, user: str) -> Reply:
        response = self._litellm.completion(
            model=self.model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            timeout=self.timeout,
            **self.completion_kwargs,
        )
        usage = getattr(response, "usage", None)
        return Reply(
            response.choices[0].message.content,
            _tokens(usage, "prompt_tokens"),
            _tokens(usage, "completion_tokens"),
        )


class AnthropicExtractor(_ChatExtractor):
    """Claude through the Messages API. Without ``client``, one is built on first use from
    the SDK's own credential resolution (``ANTHROPIC_API_KEY`` ...)."""

    def __init__(
        self,
        model: str,
        fallback: Extractor,
        client: anthropic.Anthropic | None = None,
        timeout: float = 30.0,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        super().__init__(f"anthropic:{model}", fallback, timeout)
        self.model = model
        self.max_tokens = max_tokens
        self._sdk = _import("anthropic", "llm")
        self._client = client

    def _complete(self, system: str, user: str) -> Reply:
        if self._client is None:
            self._client = self._sdk.Anthropic(timeout=self.timeout)
        message = self._client.messages.create(
            model=self.model,
            max_tokens=self.max_tokens,
            system=system,
            messages=[{"role": "user", "content": user}],
            timeout=self.timeout,
        )
        text = "".join(getattr(block, "text", "") for block in message.content if block.type == "text")
        usage = message.usage
        tokens_in = _tokens(usage, "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        return Reply(text, tokens_in, _tokens(usage, "output_tokens"))


class OpenAIExtractor(_ChatExtractor):
    """OpenAI (or a compatible server via ``OPENAI_BASE_URL``) through chat completions in JSON
    mode. Without ``client``, one is built on first use (``OPENAI_API_KEY`` ...)."""

    def __init__(
        self,
        model: str,
        fallback: Extractor,
        client: openai.OpenAI | None = None,
        timeout: float = 30.0,
    ) -> None:
        super().__init__(f"openai:{model}", fallback, timeout)
        self.model = model
        self._sdk = _import("openai", "llm")
        self._client = client

    def _complete(self, system: str, user: str) -> Reply:
        if self._client is None:
            self._client = self._sdk.OpenAI(timeout=self.timeout)
        completion = self._client.chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            response_format={"type": "json_object"},
            timeout=self.timeout,
        )
        usage = completion.usage
        text = completion.choices[0].message.content if completion.choices else None
        return Reply(text, _tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens"))


_KINDS: dict[str, Callable[[str, Extractor, float], Extractor]] = {
    "litellm": lambda model, fallback, timeout: LiteLLMExtractor(model, fallback, timeout=timeout),
    "anthropic": lambda model, fallback, timeout: AnthropicExtractor(model, fallback, timeout=timeout),
    "openai": lambda model, fallback, timeout: OpenAIExtractor(model, fallback, timeout=timeout),
}


def build_extractor(kind: str, model: str | None, fallback: Extractor, timeout: float = 30.0) -> Extractor:
    """The LLM extractor for ``Settings.extractor`` (litellm | anthropic | openai).

    ``model`` defaults to :data:`DEFAULT_MODELS`; a missing SDK raises ExtractionError.
    """
    try:
        make = _KINDS[kind]
    except KeyError:
        expected = ", ".join(_KINDS)
        raise InvalidInput(f"unknown LLM extractor {kind!r}: expected one of {expected}", field="extractor") from None
    return make(model or DEFAULT_MODELS[kind], fallback, timeout)
