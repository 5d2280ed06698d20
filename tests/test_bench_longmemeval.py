"""bench/longmemeval.py and bench/baselines.py can't rot silently: loading, scoring and both baselines on two
hand-made questions in the slice's own record format (real SQLite FTS5, real shipped model2vec model)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from markmem.model import Hit, Source

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))  # longmemeval imports its sibling baselines.py
_spec = importlib.util.spec_from_file_location("bench_longmemeval", BENCH / "longmemeval.py")
lme = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules["bench_longmemeval"] = lme  # dataclasses look their module up there
_spec.loader.exec_module(lme)  # type: ignore[union-attr]
import baselines  # noqa: E402


def turn(role: str, content: str, answer: bool = False) -> dict[str, Any]:
    return {"role": role, "content": content, **({"has_answer": True} if answer else {})}


def record(qid: str, qtype: str, question: str, sessions: dict[str, list[dict[str, Any]]],
           gold: list[str]) -> dict[str, Any]:
    return {"question_id": qid, "question_type": qtype, "question": question,
            "question_date": "2023/06/17 (Sat) 04:02", "answer": "-", "answer_session_ids": gold,
            "haystack_session_ids": list(sessions), "haystack_dates": ["2023/05/10 (Wed) 01:57"] * len(sessions),
            "haystack_sessions": list(sessions.values())}


DOG = record("q-dog", "single-session-user", "What breed is my dog Rex?", {
    "s_chat": [turn("user", "Can you suggest a pasta recipe?"), turn("assistant", "Try carbonara with\x0b eggs.")],
    "answer_1": [turn("user", "My dog Rex is a beagle, a hound breed.", answer=True),
                 turn("assistant", "Beagles are friendly hounds.")],
}, gold=["answer_1"])
TRIP = record("q-trip", "temporal-reasoning", "How many days was my trip to Lisbon?", {
    "answer_a": [turn("user", "I flew to Lisbon on Monday.", answer=True), turn("assistant", "Enjoy Portugal!")],
    "s_other": [turn("user", "Help me fix a Python import error."), turn("assistant", "Check sys.path.")],
    "answer_b": [turn("user", "Back home from Lisbon after five days.", answer=True)],
}, gold=["answer_a", "answer_b"])


@pytest.fixture(scope="module")
def embedder() -> object:
    emb = baselines.load_builtin_embedder()
    assert emb is not None
    return emb


def test_records_become_questions_with_clean_text_and_evidence(tmp_path: Path) -> None:
    path = tmp_path / "slice.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump([DOG, TRIP], fh)
    assert [q.qid for q in lme.load(path)] == ["q-dog", "q-trip"]
    assert [q.qid for q in lme.load(path, types=["temporal-reasoning"])] == ["q-trip"]
    dog = lme.load(path, limit=1)[0]
    assert dog.text((0, 1)) == "Try carbonara with  eggs."  # \x0b would make add() refuse the turn
    assert dog.evidence == {(1, 0)}
    assert dog.date.isoformat() == "2023-06-17T04:02:00+00:00"
    assert lme.user_of(dog) == "lme-q-dog"
    assert not dog.late_evidence
    late = {**TRIP, "haystack_dates": ["2023/05/10 (Wed) 01:57", "2023/05/10 (Wed) 01:57", "2023/06/17 (Sat) 04:03"]}
    assert lme.question_of(late).late_evidence  # answer_b one minute after the question: as_of hides it


def test_score_counts_turns_and_sessions() -> None:
    trip = lme.question_of(TRIP)  # evidence (0, 0) and (2, 0); gold sessions answer_a, answer_b
    ranked = [(1, 0), (1, 1), (0, 1), (0, 0), (2, 0)]
    got = lme.score(ranked, trip)
    assert got["turn any@5"] == 1.0 and got["turn all@10"] == 1.0 and got["session any@5"] == 1.0
    ideal = 1 + 1 / math.log2(3)
    assert got["turn ndcg@10"] == pytest.approx((1 / math.log2(5) + 1 / math.log2(6)) / ideal)
    missed = lme.score([(1, 0), (1, 1)], trip)
    assert missed == {"turn any@5": 0.0, "turn all@10": 0.0, "turn ndcg@10": 0.0, "session any@5": 0.0}
    # a separate top-5 list (markmem's top_k=5 search) decides turn any@5 on its own
    assert lme.score(ranked, trip, head5=[(1, 0)])["turn any@5"] == 0.0


def test_hits_map_to_turns_through_raw_ids() -> None:
    def hit(*raw_ids: str) -> Hit:
        return Hit(id="h", kind="claim", score=1.0, text="t", user_id="u",
                   sources=tuple(Source(r, "raw/u/x.jsonl", None) for r in raw_ids))

    by_raw = {"r-1": (0, 0), "r-2": (0, 1), "r-3": (2, 0)}
    assert lme.hit_keys([hit("r-2", "r-1"), hit("r-1", "r-9"), hit("r-3")], by_raw) == [(0, 1), (0, 0), (2, 0)]


def test_rrf_and_fts_query() -> None:
    assert baselines.rrf([0, 1, 2], [2, 1, 0]) == [0, 2, 1]  # 1/61 + 1/63 > 2/62; the tie goes to the index
    assert baselines.fts_query('Who said "hi" to me?') == '"who" OR "said" OR "hi" OR "to" OR "me"'
    assert baselines.fts_query("?!") is None


def test_baselines_rank_the_evidence_first(embedder: object) -> None:
    rows = []
    for rec in (DOG, TRIP):
        q = lme.question_of(rec)
        ranks = lme.baseline_ranks(q, embedder)
        bm25, hybrid = ranks["bm25"][0], ranks["hybrid"][0]
        assert bm25[0] in q.evidence and hybrid[0] in q.evidence
        assert sorted(hybrid) == sorted(q.keys)  # the cosine side ranks every turn
        assert set(bm25) < set(q.keys)  # BM25 ranks only turns sharing a word with the question
        rows.append({"id": q.qid, "type": q.qtype, "markmem": lme.score(bm25, q),
                     **{name: lme.score(ranked, q) for name, (ranked, _) in ranks.items()}})
    summary = lme.summarise(rows)
    assert list(summary) == ["overall", "single-session-user", "temporal-reasoning"]
    assert summary["overall"]["n"] == 2
    assert summary["overall"]["bm25"]["turn any@5"] == 100.0


def test_the_split_halves_each_type_by_question_id_hash() -> None:
    recs = [{**DOG, "question_id": f"d{i}"} for i in range(5)] + [{**TRIP, "question_id": f"t{i}"} for i in range(4)]
    halves = lme.split_of(recs)
    assert halves == lme.split_of(list(reversed(recs)))  # by hash, not by order
    dogs = [halves[f"d{i}"] for i in range(5)]
    trips = [halves[f"t{i}"] for i in range(4)]
    assert (dogs.count("tune"), trips.count("tune"), trips.count("held")) == (3, 2, 2)


def test_a_second_run_reuses_the_ingest_and_scores_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    path = tmp_path / "slice.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump([DOG, TRIP], fh)
    args = ["--data", str(path), "--work", str(tmp_path / "repo"), "--pii-engine", "regex", "--json"]
    lme.main(args)
    first = json.loads(capsys.readouterr().out)
    lme.main([*args, "--reuse", "--split", "all", "--recipe", "time_boost=0.5"])
    second = json.loads(capsys.readouterr().out)
    assert first["rows"] == second["rows"] and second["turns"] == first["turns"] == 9
    assert json.loads((tmp_path / "repo" / "lme-ingest.json").read_text()).keys() == {"q-dog", "q-trip"}


def test_as_of_day_searches_as_of_the_end_of_the_question_day() -> None:
    late = lme.question_of({**TRIP, "haystack_dates": ["2023/05/10 (Wed) 01:57", "2023/05/10 (Wed) 01:57",
                                                       "2023/06/17 (Sat) 21:40"]})
    assert late.late_evidence  # answer_b is dated 17 hours after the question, the same day
    assert lme.as_of_of(late, True) == late.date
    assert lme.as_of_of(late, False) is None
    day = lme.as_of_of(late, "day")
    assert day is not None and day.isoformat() == "2023-06-17T23:59:59+00:00"
    assert all(d <= day for d in late.session_dates)  # nothing of that day is hidden any more


def test_as_of_day_finds_evidence_dated_later_the_same_day(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    late = {**TRIP, "haystack_dates": ["2023/05/10 (Wed) 01:57", "2023/05/10 (Wed) 01:57",
                                       "2023/06/17 (Sat) 21:40"]}
    path = tmp_path / "slice.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump([late], fh)
    args = ["--data", str(path), "--work", str(tmp_path / "repo"), "--pii-engine", "regex", "--json"]
    lme.main(args)
    strict = json.loads(capsys.readouterr().out)["rows"][0]["markmem"]
    lme.main([*args, "--reuse", "--as-of-day"])
    day = json.loads(capsys.readouterr().out)["rows"][0]["markmem"]
    assert strict["turn all@10"] == 0.0  # the protocol's as_of hides answer_b
    assert day["turn all@10"] == 1.0
