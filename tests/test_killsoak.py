"""Killed at random moments of a played game (issue 18): a real `companion demo --game`
server, its camera rendering and tracking, two pages' streams open, dice rolled and
typed, gets SIGKILL five times; every acknowledged event is kept, the file verifies
and plays back, and the server resumes it every time. `bench/killsoak.py` runs the
same with 50 kills (docs/benchmarks.md)."""

from __future__ import annotations

from bench.killsoak import soak


def test_killed_five_times_mid_game_every_acknowledged_event_is_kept_and_it_resumes(tmp_path):
    result = soak(5, seed=7, workdir=tmp_path, min_s=0.5, max_s=3.0, say=lambda text: None)
    figures = result["figures"]
    assert result["problems"] == [], result["problems"]
    assert figures["kills"] == 5 and figures["resumed"] == 5 and figures["not_resumed"] == 0
    assert figures["lost"] == 0 and figures["server_errors"] == 0
    # It was a game being played, not an idle server: events were answered and streamed.
    assert figures["acknowledged"] > 0 and figures["session_events"] >= figures["acknowledged"]
    assert figures["stream_events"] > 0
