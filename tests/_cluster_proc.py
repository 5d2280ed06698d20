"""A replica process for the cluster tests: ``_cluster_proc.py replica ROOT NAME USERS N`` adds N
turns per user (comma-separated USERS), each with a unique word, searching for it right after
add() returned (read-your-writes) and printing one JSON line per add; then, when the file
ROOT/../phase2 lists other replicas' adds, searches each from here and prints a summary line.
``hold`` mode: add one turn, print its id, then sleep (the test kills it with -9).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from markmem import Memory, Settings


def main() -> None:
    mode, root, name = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    mem = Memory(root, Settings.from_env(), background=False, create=False)
    print(json.dumps({"ready": name}), flush=True)
    if mode == "hold":
        result = mem.add(f"my parking spot is kw{name}hold", user_id=sys.argv[4])
        print(json.dumps({"id": result.ids[0]}), flush=True)
        time.sleep(600)
        return
    users, n = sys.argv[4].split(","), int(sys.argv[5])
    for i in range(n):
        for user in users:
            word = f"kw{name}{user}n{i}z".replace("-", "")
            result = mem.add(f"I keep my {word} notebook in the blue drawer", user_id=user)
            hits = mem.search(word, user_id=user)
            seen = any(h.id == result.ids[0] for h in hits)  # type: ignore[union-attr]
            print(json.dumps({"id": result.ids[0], "user": user, "word": word, "seen": seen}), flush=True)
    go = root.parent / "phase2"
    while not go.exists():
        time.sleep(0.05)
    todo = json.loads(go.read_text())
    found = sum(any(h.id == t["id"] for h in mem.search(t["word"], user_id=t["user"])) for t in todo)  # type: ignore[union-attr]
    print(json.dumps({"checked": len(todo), "found": found}), flush=True)
    mem.close()


if __name__ == "__main__":
    main()
