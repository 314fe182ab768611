"""Every die thrown in a step is in that step's `rolls` (docs/scenarios.md: "every roll with its
modifiers and their reasons"), damage dice and roll-offs included: a worked situation is
checked against the book by its rolls, and a die the outcome leaves out cannot be checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.scenario import load_scenario, run_scenario

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("*.json"))


def faces_listed(rolls) -> int:
    """The dice a step's `rolls` shows: each roll `{"asked", "faces" | "face", ...}`."""
    n = 0
    for r in rolls or []:
        faces = r.get("faces", r.get("face"))
        n += len(faces) if isinstance(faces, list) else 1
    return n


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_die_thrown_in_a_step_is_in_its_rolls(path):
    data = load_scenario(path)
    if data.get("expect_error"):
        pytest.skip("a refused setup plays no steps")
    out = run_scenario(data, str(path))
    events = [e for e in out["log"] if e.get("kind") != "undo"]
    missing = []
    for n, step in enumerate(out["steps"]):
        event = next((e for e in events if e.get("outcome") == step), None) if isinstance(step, dict) else None
        if event is None:
            continue                      # a refusal, a hand's move, a judged move: nothing thrown
        thrown = sum(len(d.get("faces", [])) for d in event.get("dice", []))
        listed = faces_listed(step.get("rolls"))
        if thrown != listed:
            missing.append(f"steps.{n}: {thrown} dice thrown, {listed} in its rolls")
    assert missing == []
