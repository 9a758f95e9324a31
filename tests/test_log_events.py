"""kit.log_events: a logged line is text to everything that prints it, and says its kind to the console."""

from __future__ import annotations

import json

from kit.log_events import Event, Kind, detail, kind_of


def test_an_event_is_its_text_wherever_it_goes() -> None:
    event = detail("reusing environment .nox/jax-envs/x")
    assert event == "reusing environment .nox/jax-envs/x"
    assert f"{event}" == "reusing environment .nox/jax-envs/x"
    assert json.dumps(event) == json.dumps("reusing environment .nox/jax-envs/x")
    assert kind_of(event) is Kind.DETAIL


def test_a_plain_line_is_a_phase_line_and_a_changed_event_is_plain_text() -> None:
    assert kind_of("bounds from the command line") is Kind.PHASE
    assert kind_of(Event("x", Kind.PROBE) + " more") is Kind.PHASE  # str operations make a new, plain line
    assert kind_of(Event("probe jax 0.5.0: bad", Kind.PROBE)) is Kind.PROBE
