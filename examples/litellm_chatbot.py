"""A chatbot on LiteLLM (any provider) with markmem memory.

Set a provider key and $LITELLM_MODEL (e.g. ``groq/llama-3.1-8b-instant``, ``gpt-4.1-mini``,
``anthropic/claude-haiku-4-5``) to call a real model. Without a key it runs offline through
LiteLLM's own ``mock_response`` path.

    python examples/litellm_chatbot.py [--repo ./chat-memory] [--user lee]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from markmem import Memory

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY")
OFFLINE = not any(os.environ.get(k) for k in KEYS)
if OFFLINE:  # no network at all: LiteLLM's bundled model-cost map instead of a download
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

SYSTEM = "You are a friendly assistant. What you remember about the user, with ids:\n{memory}"
SCRIPT = ["My sister is called Maria and I speak Portuguese.", "What's my sister's name?"]


def offline_reply(memory: str) -> str:
    facts = [line[2:] for line in memory.splitlines() if line.startswith("- ")]
    return "(offline) " + ("From memory: " + "; ".join(facts[:2]) if facts else "Tell me about you!")


def chat(mem: Memory, user_id: str, message: str) -> str:
    memory = str(mem.search(message, user_id=user_id, format="context"))
    response = litellm.completion(
        model=os.environ.get("LITELLM_MODEL", "gpt-4.1-mini"),
        messages=[{"role": "system", "content": SYSTEM.format(memory=memory)}, {"role": "user", "content": message}],
        mock_response=offline_reply(memory) if OFFLINE else None,
    )
    answer = response.choices[0].message.content or ""
    mem.add([{"role": "user", "content": message}, {"role": "assistant", "content": answer}], user_id=user_id)
    mem.flush()
    return answer


def run(repo: Path, user_id: str) -> None:
    with Memory(repo, pii_engine="regex") as mem:
        for message in SCRIPT:
            print(f"user> {message}\nbot > {chat(mem, user_id, message)}")
        print("remembered:", [f"{c.predicate}: {c.value}" for p in mem.get_all(user_id) for c in p.active_claims()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="memory repo (default: a temporary one)")
    parser.add_argument("--user", default="lee")
    args = parser.parse_args()
    if args.repo:
        return run(args.repo, args.user)
    with tempfile.TemporaryDirectory(prefix="markmem-example-") as tmp:
        run(Path(tmp) / "memory", args.user)


if __name__ == "__main__":
    main()
