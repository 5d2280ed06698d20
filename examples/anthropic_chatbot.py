"""A chatbot on the Anthropic SDK with markmem memory.

With ANTHROPIC_API_KEY set it calls the real API (model: $ANTHROPIC_MODEL, default
claude-haiku-4-5). Without a key it runs offline: the real SDK code path over
``httpx2.MockTransport``, answering from the memory block in the system prompt.

    python examples/anthropic_chatbot.py [--repo ./chat-memory] [--user kim]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import httpx2
from anthropic import Anthropic

from markmem import Memory

SYSTEM = "You are a friendly assistant. What you remember about the user, with ids:\n{memory}"
SCRIPT = ["I'm allergic to peanuts and I prefer aisle seats.", "Book me a flight snack and seat, please?"]


def offline_message(request: httpx2.Request) -> httpx2.Response:
    """What the Messages API would return, built from the prompt it was sent."""
    body = json.loads(request.content)
    facts = [line[2:] for line in str(body.get("system", "")).splitlines() if line.startswith("- ")]
    text = "(offline) " + ("I'll keep in mind: " + "; ".join(facts[:2]) if facts else "Tell me about you!")
    return httpx2.Response(200, json={
        "id": "msg_offline", "type": "message", "role": "assistant", "model": body["model"],
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    })


def make_client() -> Anthropic:
    if os.environ.get("ANTHROPIC_API_KEY"):
        return Anthropic()
    transport = httpx2.MockTransport(offline_message)
    return Anthropic(api_key="sk-ant-offline", http_client=httpx2.Client(transport=transport))


def chat(client: Anthropic, mem: Memory, user_id: str, message: str) -> str:
    memory = str(mem.search(message, user_id=user_id, format="context"))
    reply = client.messages.create(
        model=os.environ.get("ANTHROPIC_MODEL", "claude-haiku-4-5"), max_tokens=512,
        system=SYSTEM.format(memory=memory), messages=[{"role": "user", "content": message}],
    )
    answer = "".join(block.text for block in reply.content if block.type == "text")
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
    parser.add_argument("--user", default="kim")
    args = parser.parse_args()
    if args.repo:
        return run(args.repo, args.user)
    with tempfile.TemporaryDirectory(prefix="markmem-example-") as tmp:
        run(Path(tmp) / "memory", args.user)


if __name__ == "__main__":
    main()
