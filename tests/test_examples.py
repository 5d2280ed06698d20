"""Every example runs offline (no API keys: mock LLM replies) as a subprocess, in a temp memory repo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXPECT = {  # a line each example must print: proof that memory reached the (mock) model
    "simple_chatbot.py": "Actually I moved to Porto last month. [c-",  # the default gate keeps places
    "openai_chatbot.py": "I work as a nurse in Leeds [c-",  # a cited claim in the (offline) reply, in any order
    "anthropic_chatbot.py": "I'm allergic to peanuts [c-",
    "litellm_chatbot.py": "My sister is called Maria [c-",
    "async_chatbot.py": "3 users, 12 entries",
    "fastapi_app.py": "bad user id -> 422",
}
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY")


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.CompletedProcess[str]]:
    """Start all examples at once (they are independent), then collect each one's outcome."""
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env.update(HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    procs = {name: subprocess.Popen([sys.executable, str(EXAMPLES / name)], env=env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE) for name in EXPECT}
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=120)
        out[name] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    return out


def test_every_example_is_tested() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECT)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_example_runs_offline(runs: dict[str, subprocess.CompletedProcess[str]], name: str) -> None:
    result = runs[name]
    assert result.returncode == 0, result.stderr[-3000:]
    assert EXPECT[name] in result.stdout, result.stdout
    assert "Traceback" not in result.stderr
