"""The smallest chatbot with markmem memory: no LLM, no API key, no network.

Each turn: search memory for context -> reply -> store the exchange. Facts the user states
("I live in Lisbon", "I moved to Porto") are compiled into markdown pages in a git repo, with
the old fact superseded, not overwritten.

    python examples/simple_chatbot.py                      # scripted chat in a temporary repo
    python examples/simple_chatbot.py --repo ./chat-memory # keep the memory afterwards
    python examples/simple_chatbot.py --interactive        # type your own messages
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from markmem import Memory

SCRIPT = [
    "Hi! My name is Ana and I live in Lisbon.",
    "I'm vegetarian, so no meat suggestions please.",
    "Actually I moved to Porto last month.",
    "Where do I live now, and what do I eat?",
]


def reply(memory_context: str, message: str) -> str:
    """A stand-in for an LLM: answers from the memory context it was given."""
    facts = [line[2:] for line in memory_context.splitlines() if line.startswith("- ")]
    if message.rstrip().endswith("?") and facts:
        return "From memory: " + " | ".join(facts[:3])
    return "Noted! I'll remember that."


def chat(mem: Memory, user_id: str, message: str) -> str:
    context = str(mem.search(message, user_id=user_id, format="context"))
    answer = reply(context, message)
    mem.add([{"role": "user", "content": message}, {"role": "assistant", "content": answer}], user_id=user_id)
    mem.flush()  # compile now so the next turn sees the new facts (a server lets the worker do it)
    return answer


def run(repo: Path, user_id: str, messages: list[str]) -> None:
    with Memory(repo) as mem:  # the default gate: Presidio if installed (else regex); names and places kept
        for message in messages:
            print(f"user> {message}\nbot > {chat(mem, user_id, message)}")
        print(f"\nmemory repo: {mem.root}")
        for page in mem.get_all(user_id):
            print(f"--- {page.path}\n{page.body.strip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="memory repo (default: a temporary one)")
    parser.add_argument("--user", default="ana")
    parser.add_argument("--interactive", action="store_true")
    args = parser.parse_args()
    messages = [line.strip() for line in sys.stdin if line.strip()] if args.interactive else SCRIPT
    if args.repo:
        run(args.repo, args.user, messages)
        return
    with tempfile.TemporaryDirectory(prefix="markmem-example-") as tmp:
        run(Path(tmp) / "memory", args.user, messages)


if __name__ == "__main__":
    main()
