"""Start-up cost: read-only work never loads Presidio/spaCy or the vector model; the first write does.

Run in a fresh interpreter with default settings (pii_engine="auto", the built-in vector model),
since another test in this process may already have imported spaCy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import json, sys
from markmem import Memory

def loaded():
    return sorted(m for m in ("spacy", "presidio_analyzer", "model2vec", "tokenizers") if m in sys.modules)

out = {}
with Memory(sys.argv[1], background=False) as mem:
    mem.stats(); mem.doctor(); mem.get_all("bob")
    out["read_only"] = loaded()
    out["gate_name"] = mem.doctor()["pii_gate"]
    mem.search("Lisbon", user_id="bob")
    out["after_search"] = loaded()
    mem.add("My friend Anna Schmidt lives in Berlin, anna@example.com", user_id="bob")
    out["after_add"] = loaded()
    mem.flush()
    out["stored"] = "".join(p.read_text() for p in (mem.root / "raw").rglob("*.jsonl"))
print(json.dumps(out))
"""


def test_reads_load_no_model_and_the_first_write_loads_the_gate(tmp_repo: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]), HF_HUB_OFFLINE="1")
    for var in ("MARKMEM_PII_ENGINE", "MARKMEM_VECTOR_MODEL"):
        env.pop(var, None)
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_repo)], env=env, capture_output=True, text=True,
                         check=True)
    out = json.loads(run.stdout)
    assert out["read_only"] == []
    assert out["gate_name"] == "presidio"  # known from package metadata, before loading
    # the built-in model embeds a plain ASCII question without tokenizers (adapters/wordpiece); model2vec
    # loads for long texts and big batches, tokenizers for other text
    assert out["after_search"] == []
    assert out["after_add"] == ["presidio_analyzer", "spacy"]
    # the NER gate ran before disk: the name is tagged (kept, listed as PII), the address masked
    assert '"PERSON"' in out["stored"] and "<EMAIL_ADDRESS>" in out["stored"] and "anna@" not in out["stored"]
