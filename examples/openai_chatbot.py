"""A chatbot on the OpenAI SDK with markmem memory.

With OPENAI_API_KEY set it calls the real API (model: $OPENAI_MODEL, default gpt-4.1-mini).
Without a key it runs offline: the real SDK code path over ``httpx2.MockTransport``, which
answers from the memory block in the system prompt, so you can see memory reach the model.

    python examples/openai_chatbot.py [--repo ./chat-memory] [--user sam]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import httpx2
from openai import OpenAI

from markmem import Memory

SYSTEM = "You are a friendly assistant. What you remember about the user, with ids:\n{memory}"
SCRIPT = ["I work as a nurse in Leeds and I love climbing.", "Any idea for my weekend?"]


def offline_completion(request: httpx2.Request) -> httpx2.Response:
    """What the Chat Completions API would return, built from the prompt it was sent."""
    body = json.loads(request.content)
    system = body["messages"][0]["content"]
    facts = [line[2:] for line in system.splitlines() if line.startswith("- ")]
    text = "(offline) " + ("Based on what you told me: " + "; ".join(facts[:2]) if facts else "Tell me about you!")
    return httpx2.Response(200, json={
        "id": "chatcmpl-offline", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text, "refusal": None}}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    })


def make_client() -> OpenAI:
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAI()
    return OpenAI(api_key="sk-offline", http_client=httpx2.Client(transport=httpx2.MockTransport(offline_completion)))


def chat(client: OpenAI, mem: Memory, user_id: str, message: str) -> str:
    memory = str(mem.search(message, user_id=user_id, format="context"))
    completion = client.chat.completions.create(
        model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"),
        messages=[{"role": "system", "content": SYSTEM.format(memory=memory)}, {"role": "user", "content": message}],
    )
    answer = completion.choices[0].message.content or ""
    mem.add([{"role": "user", "content": message}, {"role": "assistant", "content": answer}], user_id=user_id)
    mem.flush()
    return answer


def run(repo: Path, user_id: str) -> None:
    client = make_client()
    with Memory(repo, pii_engine="regex") as mem:
        for message in SCRIPT:
            print(f"user> {message}\nbot > {chat(client, mem, user_id, message)}")
        print("remembered:", [f"{c.predicate}: {c.value}" for p in mem.get_all(user_id) for c in p.active_claims()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="memory repo (default: a temporary one)")
    parser.add_argument("--user", default="sam")
    args = parser.parse_args()
    if args.repo:
        return run(args.repo, args.user)
    with tempfile.TemporaryDirectory(prefix="markmem-example-") as tmp:
        run(Path(tmp) / "memory", args.user)


if __name__ == "__main__":
    main()
