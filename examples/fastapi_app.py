"""Your own FastAPI chat service with markmem memory (AsyncMemory + the OpenAI SDK).

    python examples/fastapi_app.py            # offline demo: drives the app in-process, prints replies
    python examples/fastapi_app.py --serve    # uvicorn on 127.0.0.1:8001; POST /chat {"user_id", "message"}

Without OPENAI_API_KEY the OpenAI SDK runs over ``httpx2.MockTransport`` (offline replies built
from the memory block in the prompt). The memory repo is temporary unless --repo is given.
(markmem also ships a ready-made REST API for the memory itself: ``markmem api``.)
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from openai import AsyncOpenAI
from pydantic import BaseModel

from markmem import MarkmemError, NotFound
from markmem.aio import AsyncMemory

SYSTEM = "You are a friendly assistant. What you remember about the user, with ids:\n{memory}"


class ChatIn(BaseModel):
    user_id: str
    message: str


def offline_completion(request: httpx2.Request) -> httpx2.Response:
    body = json.loads(request.content)
    facts = [line[2:] for line in body["messages"][0]["content"].splitlines() if line.startswith("- ")]
    text = "(offline) " + ("I remember: " + facts[0] if facts else "Nice to meet you!")
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


def create_app(repo: Path) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with await AsyncMemory.open(repo, pii_engine="regex") as mem:  # background worker compiles
            app.state.mem, app.state.llm = mem, make_llm()
            yield

    app = FastAPI(title="chat with memory", lifespan=lifespan)

    @app.exception_handler(MarkmemError)
    async def markmem_error(request: Request, exc: MarkmemError) -> JSONResponse:
        status = 404 if isinstance(exc, NotFound) else 422
        return JSONResponse({"error": type(exc).__name__, "message": str(exc)}, status)

    @app.post("/chat")
    async def chat(req: ChatIn, request: Request) -> dict[str, str]:
        mem: AsyncMemory = request.app.state.mem
        memory = str(await mem.search(req.message, user_id=req.user_id, format="context"))
        completion = await request.app.state.llm.chat.completions.create(
            model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"),
            messages=[{"role": "system", "content": SYSTEM.format(memory=memory)},
                      {"role": "user", "content": req.message}],
        )
        answer = completion.choices[0].message.content or ""
        await mem.add([{"role": "user", "content": req.message}, {"role": "assistant", "content": answer}],
                      user_id=req.user_id)
        return {"reply": answer}

    @app.get("/memory/{user_id}")
    async def memory(user_id: str, request: Request) -> list[dict[str, object]]:
        await request.app.state.mem.flush()
        pages = await request.app.state.mem.get_all(user_id)
        return [{"page": p.id, "facts": [c.text for c in p.active_claims()]} for p in pages]

    return app


def demo(repo: Path) -> None:
    from fastapi.testclient import TestClient

    with TestClient(create_app(repo)) as client:
        for message in ("I'm a teacher and I live in Nairobi.", "I'm learning Japanese.", "What do I do for work?"):
            client.get("/memory/zara")  # compile what came before
            reply = client.post("/chat", json={"user_id": "zara", "message": message}).json()["reply"]
            print(f"user> {message}\nbot > {reply}")
        print("memory:", client.get("/memory/zara").json())
        print("bad user id ->", client.post("/chat", json={"user_id": "../etc", "message": "hi"}).status_code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="memory repo (default: a temporary one)")
    parser.add_argument("--serve", action="store_true", help="run uvicorn on 127.0.0.1:8001")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="markmem-example-") as tmp:
        repo = args.repo or Path(tmp) / "memory"
        if args.serve:
            import uvicorn

            uvicorn.run(create_app(repo), host="127.0.0.1", port=8001)
        else:
            demo(repo)


if __name__ == "__main__":
    main()
