"""A game begun part way through (a scenario's `state` block) is recorded with that block in its
setup, and the file plays back to the same game: without the block the replay would start
from the rosters alone and every recorded state would disagree."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.record import check_playback, replay
from companion.scenario import load_scenario, run_scenario
from companion.store import GameStore

SCENARIOS = [p for p in sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("*.json"))
             if "state" in load_scenario(p) and not load_scenario(p).get("expect_error")]


def test_every_system_has_a_scenario_that_starts_part_way():
    systems = {load_scenario(p)["rules"] for p in SCENARIOS}
    assert systems == {"shattered_highways", "car_cult", "stop_the_truck", "wasteland_rally", "alpha_destructicus"}


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_a_game_begun_part_way_plays_back_from_its_file(path, tmp_path):
    data = load_scenario(path)
    store = GameStore(tmp_path / "game.db")
    try:
        out = run_scenario(data, str(path), store)
        setup = store.events()[0]
        assert setup.body["part_way"] == data["state"]
        back = replay(store.events())
        assert back.session.state.to_json() == out["state"]
        ok, said, _ = check_playback(store)
        assert ok, said
    finally:
        store.close()
