"""A failing extractor: the batch still compiles (heuristic fallback, flagged) and the log keeps
the traceback, so the bug behind the fallback can be found (not only its exception's type)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from markmem import Memory
from markmem.model import RawEntry
from markmem.ports import Extraction


class Broken:
    name = "broken"

    def extract(self, entries: Sequence[RawEntry]) -> Extraction:
        return _inner(entries)


def _inner(entries: Sequence[RawEntry]) -> Extraction:
    raise KeyError("slot table missing 'city'")


def test_failing_extractor_logs_its_traceback_and_falls_back(mem: Memory, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="markmem")
    mem._ctx.extractor = Broken()
    mem.add("I live in Lisbon", user_id="alice")
    [report] = mem.flush()
    assert report.entries == 1 and report.flagged  # compiled by the heuristic fallback
    [record] = [r for r in caplog.records if "extractor broken failed" in r.getMessage()]
    assert "KeyError" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is KeyError
    assert "_inner" in caplog.text and "slot table missing" in caplog.text  # the frames and the message
