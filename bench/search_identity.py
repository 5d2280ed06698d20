"""A hash of what 300 searches return, to show a change to the read path keeps results bit for bit.

The queries are bench/search_latency.py's (``queries(corpus(10000), 150)`` and ``common_queries(150)``);
each is searched six ways (top 5 and top 10 with explain, two context packs, two ``as_of`` searches)
and every hit's ``to_json()`` / pack's fields are hashed. Run it on main and on a branch, each on its
own copy of the same repo, with ``PYTHONHASHSEED=0``, and compare the last line printed; the per-query
hashes written to OUT show which query differs.

    PYTHONHASHSEED=0 python bench/search_identity.py /tmp/sl/n10000 /tmp/ids.txt
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import search_latency as sl  # noqa: E402

from markmem import Memory  # noqa: E402


def main(root: Path, out: Path) -> str:
    texts = sl.corpus(10000)
    qs = sl.queries(texts, 150) + sl.common_queries(150)
    mem = Memory(root, pii_engine="regex", background=False)
    lines = []
    for q in qs:
        got = [mem.search(q, user_id="bench", top_k=5, explain=True),
               mem.search(q, user_id="bench", top_k=10, explain=True),
               mem.search(q, user_id="bench", top_k=5, format="context"),
               mem.search(q, user_id="bench", top_k=10, format="context", explain=True),
               mem.search(q, user_id="bench", top_k=5, explain=True, as_of="2025-06-15T00:00:00Z"),
               mem.search(q, user_id="bench", top_k=10, format="context", as_of="2025-03-01T00:00:00Z")]
        dump = [[h.to_json() for h in r] if isinstance(r, list) else dataclasses.asdict(r) for r in got]
        text = json.dumps(dump, sort_keys=True, default=str)
        lines.append(hashlib.sha256(text.encode()).hexdigest()[:16] + " " + q)
    mem.close()
    out.write_text("\n".join(lines) + "\n")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


if __name__ == "__main__":
    print(main(Path(sys.argv[1]), Path(sys.argv[2])))
