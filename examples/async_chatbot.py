"""An asyncio chatbot serving several users at once: AsyncMemory + the async OpenAI SDK.

AsyncMemory wraps the same sync core in worker threads, so memory calls never block the event
loop and concurrent users never see each other's memory. Without OPENAI_API_KEY the SDK runs
offline over ``httpx2.MockTransport`` (replies built from the memory block in the prompt).

    python examples/async_chatbot.py [--repo ./chat-memory]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

import httpx2
from openai import AsyncOpenAI

from markmem.aio import AsyncMemory

SYSTEM = "You are a friendly assistant. What you remember about the user, with ids:\n{memory}"
CONVERSATIONS = {
    "noor": ["I live in Cairo and I love chess.", "Where do I live?"],
    "theo": ["I live in Oslo and I hate chess.", "Where do I live?"],
    "ines": ["I'm a pilot and I have two kids.", "What's my job?"],
}


async def offline_completion(request: httpx2.Request) -> httpx2.Response:
    body = json.loads(request.content)
    facts = [line[2:] for line in body["messages"][0]["content"].splitlines() if line.startswith("- ")]
    text = "(offline) " + ("From memory: " + facts[0] if facts else "Nice to meet you!")
    return httpx2.Response(200, json={
        "id": "chatcmpl-offline", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    })


def make_llm() -> AsyncOpenAI:
    if os.environ.get("OPENAI_API_KEY"):
        return AsyncOpenAI()
    transport = httpx2.MockTransport(offline_completion)
    return AsyncOpenAI(api_key="sk-offline", http_client=httpx2.AsyncClient(transport=transport))


async def chat(llm: AsyncOpenAI, mem: AsyncMemory, user_id: str, message: str) -> str:
    memory = str(await mem.search(message, user_id=user_id, format="context"))
    completion = await llm.chat.completions.create(
        model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"),
        messages=[{"role": "system", "content": SYSTEM.format(memory=memory)}, {"role": "user", "content": message}],
    )
    answer = completion.choices[0].message.content or ""
    await mem.add([{"role": "user", "content": message}, {"role": "assistant", "content": answer}], user_id=user_id)
    await mem.flush()
    return answer


async def session(llm: AsyncOpenAI, mem: AsyncMemory, user_id: str, messages: list[str]) -> list[str]:
    return [f"[{user_id}] user> {m}\n[{user_id}] bot > {await chat(llm, mem, user_id, m)}" for m in messages]


async def run(repo: Path) -> None:
    llm = make_llm()
    async with await AsyncMemory.open(repo, pii_engine="regex") as mem:
        transcripts = await asyncio.gather(*(session(llm, mem, u, msgs) for u, msgs in CONVERSATIONS.items()))
        for lines in transcripts:
            print("\n".join(lines))
        stats = await mem.stats()
        print(f"{stats['users']} users, {stats['raw_entries']} entries, {stats['active_claims']} active claims")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="memory repo (default: a temporary one)")
    args = parser.parse_args()
    if args.repo:
        return asyncio.run(run(args.repo))
    with tempfile.TemporaryDirectory(prefix="markmem-example-") as tmp:
        asyncio.run(run(Path(tmp) / "memory"))


if __name__ == "__main__":
    main()
