"""``ids.format_time`` spells what strftime's "%Y-%m-%dT%H:%M:%S.%fZ" would (zero-padded years
before 1000 included) without strftime, which cost half of every add()'s time stamp."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from markmem.ids import format_time, now


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)))
def test_format_time_is_the_iso_text_strftime_gave(dt: datetime) -> None:
    want = f"{dt.year:04d}-" + dt.strftime("%m-%dT%H:%M:%S.%fZ")
    assert format_time(dt) == want  # naive: read as UTC
    assert format_time(dt.replace(tzinfo=timezone(timedelta(hours=5)))) == format_time(dt - timedelta(hours=5))


def test_now_is_utc_with_microseconds() -> None:
    stamp = now()
    assert len(stamp) == 27 and stamp.endswith("Z") and stamp[10] == "T" and stamp[19] == "."
