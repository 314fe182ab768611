"""Scenario files are strict (issue 25): a field the format does not have is refused by name
(a misspelt one was silently ignored and the file still "passed"), a field of the wrong shape is
refused saying what it must be (it crashed the runner with a TypeError), any step may expect a
refusal (an end of turn, a choice outside the offers), a step that comes out otherwise still
reports every expectation, and a setup the rules refuse can be expected."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.camera_scenario import run_through_camera
from companion.scenario import ScenarioError, ScenarioStopped, check_expectations, load_scenario, run_scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
ROOT = Path(__file__).resolve().parents[1]


def scenario(name: str) -> dict:
    return copy.deepcopy(load_scenario(EXAMPLES / name))


@pytest.mark.parametrize("where, change, says", [
    ("the file", lambda d: d.update(expectations={}), r"a scenario: no field 'expectations'"),
    ("a car", lambda d: d["cars"][0].update(heading=0), r"cars\.0: no field 'heading'"),
    ("the table", lambda d: d["table"].update(width_in=72), r"table: no field 'width_in'"),
    ("a step", lambda d: d["steps"][0].update(end_turn=True), r"steps\.0: a step is one of .* not act and end_turn at once"),
    ("a step's kind", lambda d: d["steps"].append({"end_turn": True, "why": "x"}), r"steps\.1: a end_turn step has no field 'why'"),
    ("a die", lambda d: d.update(dice=["7"]), r"dice\.0 must be a die's face"),
    ("the steps", lambda d: d.update(steps={"act": "move"}), r"'steps' must be a list"),
    ("a pose", lambda d: d["steps"].insert(0, {"poses": {"10": [1, 2]}}), r"steps\.0: poses\.10 must be \[x_mm, y_mm, heading_deg\]"),
])
def test_a_field_the_format_does_not_have_is_refused_by_name(where, change, says):
    data = scenario("01-move.json")
    change(data)
    with pytest.raises(ScenarioError, match=says):
        run_scenario(data)


def test_an_unknown_action_field_is_refused_even_where_a_refusal_is_expected():
    """A misspelt field on a step that expects a refusal must not pass for the refusal."""
    data = scenario("01-move.json")
    data["steps"][0]["to_2"] = [700, 430, 0]
    with pytest.raises(ScenarioError, match=r"steps\.0: move: no field 'to_2' \(its fields: "):
        run_scenario(data)
    data["steps"][0]["expect_error"] = True
    with pytest.raises(ScenarioError, match=r"steps\.0: move: no field 'to_2'"):
        run_scenario(data)


def test_a_field_of_the_wrong_shape_says_what_it_must_be():
    data = scenario("01-move.json")
    data["steps"][0]["to"] = ["left", "left"]
    with pytest.raises(ScenarioError, match=r"steps\.0: move: to must be a pose \[x_mm, y_mm, heading_deg\]"):
        run_scenario(data)


def test_an_end_of_turn_may_be_expected_to_be_refused():
    data = scenario("01-move.json")
    data["steps"] = [{"end_turn": True, "expect_error": True}]
    data["expect"] = {"steps.0.error": {"contains": "no"}}
    out = run_scenario(data)
    assert out["steps"][0]["error"]
    assert check_expectations(data, out) == []


def test_a_choice_outside_the_offers_may_be_expected_to_be_refused_and_nothing_changes():
    data = scenario("06-shoot-maximum.json")
    data["choices"][0]["value"] = "perhaps"
    data["steps"][0]["expect_error"] = True
    data["expect"] = {"steps.0.error": {"contains": "'perhaps' is not an option"},
                      "state.vehicles.10.hp.body": run_scenario(scenario("01-move.json"))["state"]["vehicles"]["10"]["hp"]["body"],
                      "state.warriors_out": [], "choices_left": 1}      # Max's, never asked: called off before
    out = run_scenario(data)
    assert check_expectations(data, out) == []
    # Not expected, the refusal stops the run and says so.
    del data["steps"][0]["expect_error"]
    with pytest.raises(ScenarioStopped, match=r"steps\.0: a choice was refused: 'perhaps' is not an option"):
        run_scenario(data)


def test_a_step_allowed_when_a_refusal_was_expected_stops_with_the_outcome_so_far():
    data = scenario("01-move.json")
    data["steps"][0]["expect_error"] = True
    with pytest.raises(ScenarioStopped, match=r"steps\.0: expected it to be refused, but it was allowed") as caught:
        run_scenario(data)
    assert caught.value.outcome["steps"][0]["result"] == "moved"


def test_a_step_that_disagrees_reports_every_expectation(tmp_path):
    data = scenario("01-move.json")
    data["steps"][0]["to"] = [1500, 430, 0]          # far beyond a 7 in move: refused
    data["expect"]["state.vehicles.11.destroyed"] = False
    path = tmp_path / "refused.json"
    path.write_text(json.dumps(data))
    run = subprocess.run([sys.executable, "-m", "companion", "scenario", "run", str(path), "--check"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1
    err = run.stderr
    assert "steps.0: refused:" in err
    for path_ in ("dice_left", "steps.0.result", "steps.0.judged.legal", "state.vehicles.10.pose"):
        assert f"{path_}: " in err, err                       # each failing expectation named
    assert "state.vehicles.11.destroyed" not in err             # the one that held is not
    assert "failed: 1 of 5 expectations held (the run stopped at the step above)" in err
    assert "Traceback" not in err


def test_a_setup_the_rules_refuse_can_be_expected():
    data = scenario("01-move.json")
    data["rosters"][0]["points"] = 10
    data["steps"] = []
    data["expect_error"] = True
    data["expect"] = {"error": {"contains": "points"}}
    out = run_scenario(data)
    assert check_expectations(data, out) == [], out
    data["rosters"][0]["points"] = 100
    with pytest.raises(ScenarioStopped, match="expected the setup to be refused, but it was accepted"):
        run_scenario(data)


def test_through_the_camera_a_refused_end_of_turn_and_choice_are_expected_as_plainly():
    data = scenario("06-shoot-maximum.json")
    data["choices"][0]["value"] = "perhaps"
    data["steps"][0]["expect_error"] = True
    data["steps"].append({"end_turn": True, "expect_error": True})
    plain = run_scenario(copy.deepcopy(data))
    filmed = run_through_camera(copy.deepcopy(data))
    assert "'perhaps' is not an option" in filmed["steps"][0]["error"]
    assert plain["state"]["vehicles"]["10"]["hp"] == filmed["state"]["vehicles"]["10"]["hp"]
    assert filmed["steps"][1]["error"]


def test_a_choice_never_asked_is_reported():
    """A file that says a player chose something the game never asked did not go as it says."""
    data = scenario("06-shoot-maximum.json")
    data["choices"].append({"player": "Max", "value": "Max:10:D"})
    out = run_scenario(data)
    assert out["choices_left"] == 1
    assert check_expectations(data, out) == [
        'choices: the last 1 of 3 were never asked ([{"player": "Max", "value": "Max:10:D"}])']
    data["expect"]["choices_left"] = 1                # expected, it is the file's to say
    assert check_expectations(data, out) == []
