"""The scenario runner: a refusal it expects must be the rules' own, its errors number steps
as "expect" paths do, and --check says what held."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from companion.cli import main
from companion.scenario import ScenarioError, load_scenario, run_scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


def test_an_expected_refusal_is_not_met_by_running_out_of_dice():
    """01-move's Move needs a die: with none left the rules never refused it, so the step
    expecting a refusal fails (it used to pass, the dice error taken for the refusal)."""
    data = load_scenario(EXAMPLES / "01-move.json")
    data = copy.deepcopy(data)
    data["steps"][-1]["expect_error"] = True
    data["dice"] = []
    with pytest.raises(ScenarioError, match=r"steps\.\d+: expected the rules to refuse the action, but they went on "
                                            r"to ask for dice"):
        run_scenario(data)


def test_a_rules_refusal_meets_the_expectation_and_is_recorded():
    data = load_scenario(EXAMPLES / "02-move-illegal.json")
    out = run_scenario(data)
    refused = [s for s in out["steps"] if "error" in s]
    assert refused and all(isinstance(s["error"], str) and s["error"] for s in refused)


def test_errors_number_steps_as_expect_paths_do():
    data = copy.deepcopy(load_scenario(EXAMPLES / "01-move.json"))
    data["steps"].append({"act": "fly", "vehicle": 10})
    n = len(data["steps"]) - 1
    with pytest.raises(ScenarioError, match=rf": steps\.{n}: .*no action 'fly'"):
        run_scenario(data)


def test_check_says_it_passed_and_how_many_expectations_held(capsys):
    path = EXAMPLES / "01-move.json"
    total = len(load_scenario(path)["expect"])
    assert main(["scenario", "run", str(path), "--check"]) == 0
    err = capsys.readouterr().err
    assert f"passed: {total} of {total} expectations held" in err


def test_check_says_what_failed_and_how_many_held(capsys, tmp_path):
    data = load_scenario(EXAMPLES / "01-move.json")
    data["expect"]["dice_left"] = 99
    path = tmp_path / "wrong.json"
    import json
    path.write_text(json.dumps(data))
    total = len(data["expect"])
    assert main(["scenario", "run", str(path), "--check"]) == 1
    err = capsys.readouterr().err
    assert "dice_left: expected 99, got 0" in err
    assert f"failed: {total - 1} of {total} expectations held" in err
