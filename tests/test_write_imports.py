"""A process that only writes does not import what only compile or search need.

``import markmem; Memory(repo).add(...)`` used to compile the extractor's rule table (~0.1 s of
regular expressions) and import numpy and the read path at import time although ``add()`` never
extracts or searches. Each check runs in a fresh interpreter: ``sys.modules`` of this test process
already holds everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

COMPILE_ONLY = ("markmem.write.extract", "markmem.write.extract_rules", "markmem.write.entities",
                "markmem.write.resolve")
SEARCH_ONLY = ("markmem.read.search", "markmem.read.pack", "markmem.index.lexicon", "markmem.index.vecfile", "numpy")

SCRIPT = """
import json, sys
import markmem
mem = markmem.Memory(sys.argv[1], pii_engine="regex", vector_model=None, background=False)
mem.add(["I moved to Lisbon last month", "and I prefer aisle seats"], user_id="alice")
loaded = [m for m in json.loads(sys.argv[2]) if m in sys.modules]
reports = mem.flush() if sys.argv[3] == "flush" else []
after = [m for m in json.loads(sys.argv[2]) if m in sys.modules]
claims = len(mem.get_all(user_id="alice")) if reports else 0
mem.close()
print(json.dumps({"loaded": loaded, "after": after, "claims": claims}))
"""


def _run(repo: Path, flush: bool) -> dict[str, object]:
    src = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(repo), json.dumps([*COMPILE_ONLY, *SEARCH_ONLY]), "flush" if flush else "-"],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": src},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_add_imports_neither_the_extractor_nor_the_read_path(tmp_repo: Path) -> None:
    _run(tmp_repo, flush=False)  # creates the repo and its cache (a new cache clears saved matrices)
    seen = _run(tmp_repo, flush=False)
    assert seen["loaded"] == []


def test_the_first_compile_imports_the_extractor_and_extracts(tmp_repo: Path) -> None:
    seen = _run(tmp_repo, flush=True)
    assert not set(COMPILE_ONLY) & set(seen["loaded"])  # type: ignore[arg-type]
    assert set(COMPILE_ONLY) <= set(seen["after"])  # type: ignore[arg-type]
    assert seen["claims"] >= 1  # the deferred extractor found the facts


OPEN = """
import json, sys
import markmem
mem = markmem.Memory(sys.argv[1], pii_engine="regex", vector_model="builtin", background=False)
opened = "numpy" in sys.modules
mem.search("Where do I live?", user_id="alice")
print(json.dumps({"opened": opened, "searched": "numpy" in sys.modules, "name": mem.context.embedder.name}))
mem.close()
"""


def test_opening_with_the_vector_model_imports_no_numpy(tmp_repo: Path) -> None:
    """``Memory()`` probes the vector model without importing numpy (~0.1 s): the first search does."""
    src = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    for _ in range(2):  # the first run creates the repo
        out = subprocess.run([sys.executable, "-c", OPEN, str(tmp_repo)], capture_output=True, text=True, check=True,
                             env=env)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"opened": False, "searched": True, "name": "markmem/minilm-m2v"}
