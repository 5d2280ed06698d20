"""A date alone as ``as_of`` / ``known_at`` means the end of that day: "what was true on May 27"
includes what was said on May 27 (read as midnight, it hid the whole day)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from markmem import Memory
from markmem.errors import InvalidInput
from markmem.ids import parse_moment


def test_a_date_is_the_end_of_that_day() -> None:
    assert parse_moment("2023-05-27") == "2023-05-27T23:59:59.999999Z"
    assert parse_moment(" 2023-05-27 ") == "2023-05-27T23:59:59.999999Z"
    assert parse_moment(date(2023, 5, 27)) == "2023-05-27T23:59:59.999999Z"


def test_a_time_stays_that_time() -> None:
    assert parse_moment("2023-05-27T00:00:00Z") == "2023-05-27T00:00:00.000000Z"
    assert parse_moment(datetime(2023, 5, 27, 8, tzinfo=timezone.utc)) == "2023-05-27T08:00:00.000000Z"


@pytest.mark.parametrize("bad", ["2023-02-30", "27/05/2023", "", "2023-05-27\x00", 20230527])
def test_a_bad_date_is_a_clear_error(bad: object) -> None:
    with pytest.raises(InvalidInput, match="as_of"):
        parse_moment(bad, field="as_of")


def test_a_search_as_of_a_day_sees_what_was_said_that_day(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", pii_engine="regex", vector_model=None, background=False) as mem:
        mem.add("I live in Lyon", user_id="ann", occurred_at="2026-01-10T10:00:00Z")
        mem.add("I moved to Nantes", user_id="ann", occurred_at="2026-05-27T15:00:00Z")
        mem.flush()
        on_the_day = mem.search("where do I live?", user_id="ann", as_of="2026-05-27", format="context")
        before = mem.search("where do I live?", user_id="ann", as_of="2026-05-26", format="context")
        assert "Nantes" in str(on_the_day).split("## Relevant")[0]
        assert "Nantes" not in str(before) and "Lyon" in str(before)
