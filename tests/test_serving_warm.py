"""The servers warm their Memory before the first request; a failing warm-up never stops a start."""

from __future__ import annotations

import pytest

from markmem.serving import warm_start


def test_warm_start_loads_a_users_indexes_quietly(mem, capsys: pytest.CaptureFixture[str]) -> None:
    mem.add([{"role": "user", "content": "I live in Porto and work at Acme."}], user_id="alice")
    mem.flush()
    warm_start(mem, "alice")
    assert capsys.readouterr().err == ""
    assert mem.search("Porto", user_id="alice")


def test_a_failing_warm_up_is_said_and_the_start_goes_on(mem, capsys: pytest.CaptureFixture[str]) -> None:
    warm_start(mem, "../not a user")  # refused by Memory.warm: said on stderr, not raised
    err = capsys.readouterr().err
    assert err.startswith("markmem: warm-up skipped:") and "user" in err
    mem.add([{"role": "user", "content": "I live in Porto."}], user_id="bob")  # the Memory still works
    mem.flush()
    assert mem.search("Porto", user_id="bob")
