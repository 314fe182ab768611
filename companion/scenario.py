"""Scenario files: a table snapshot, the rosters, the dice that fell and the steps
played; `companion scenario run FILE` plays them and prints what happened.
The format is documented in docs/scenarios.md."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .dice import DiceError, FixedChoices, FixedDice, FixedPlacements
from .geometry import Pose
from .rules.base import RulesError, rule_system
from .scene import SceneError, parse_scene
from .session import GameSession


class ScenarioError(ValueError):
    """A scenario that cannot be played; the message names the step."""


def load_scenario(path: str | Path) -> dict:
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such scenario file") from None
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{p}: not valid JSON: {exc}") from None


def state_json(state) -> dict:
    """The game's state as plain JSON (what a scenario's "expect" looks into, what a game
    file keeps): every system's state says it itself."""
    return state.to_json()


def run_scenario(data: dict, source: str = "<scenario>", store=None) -> dict:
    """Play a scenario; the outcome of every step and the final state. With `store`
    (a GameStore), its setup and every committed event are recorded there."""
    try:
        scene = parse_scene(data, source)
        rules = rule_system(data["rules"], data.get("options"))
        state = rules.new_game(data.get("rosters", []), scene)
    except (SceneError, RulesError, KeyError) as exc:
        raise ScenarioError(f"{source}: {exc}") from None
    dice = FixedDice(data.get("dice", []), "scenario")
    # Choices the book gives a player (a defender's pick), made in order as they are asked.
    # Pieces the rules move are put exactly where they say, as a careful hand would.
    session = GameSession(rules, state, dice, FixedChoices(data.get("choices", []), "scenario"),
                          placements=FixedPlacements(source="scenario", as_asked=True))
    if store is not None:
        from .record import event_body, setup_body
        if len(store):
            raise ScenarioError(f"{store.path} already holds a game; record into a new file")
        store.append("setup", setup_body(rules, data.get("rosters", []), scene, state))
        session.on_commit = lambda event: store.append(*event_body(event, rules, session.state))
    steps = []
    for n, step in enumerate(data.get("steps", [])):
        where = f"{source}: steps.{n}"          # numbered as "expect" paths are, from 0
        try:
            if "act" in step and step.get("expect_error"):
                # Only the rules' own refusal counts: running out of dice (or a choice the
                # scenario got wrong) is the scenario's fault, not the refusal it expects.
                try:
                    session.act(step)
                except RulesError as exc:
                    out = {"error": str(exc)}
                except DiceError as exc:
                    raise ScenarioError(f"{where}: expected the rules to refuse the action, but they went on "
                                        f"to ask for dice or a choice the scenario does not give: {exc}") from None
                else:
                    raise ScenarioError(f"{where}: expected the action to be refused, but it was allowed")
            else:
                out = play_step(session, step, where)
        except (RulesError, DiceError) as exc:
            raise ScenarioError(f"{where}: {exc}") from None
        if out is None:
            raise ScenarioError(f"{where}: ran out of dice or choices (waiting for {session.waiting_for()})")
        steps.append(out)
    return {"rules": rules.name, "options": rules.settings, "steps": steps, "state": state_json(session.state),
            "dice_left": dice.remaining, "log": [e.to_json() for e in session.log]}


def play_step(session: GameSession, step: dict, where: str = "a step") -> dict | None:
    """One scenario step played on the session: its outcome (None while dice or a choice
    are still wanted); the rules' refusal is raised as it comes."""
    rules = session.rules
    if "round" in step:
        return session.start_round(step["round"])
    if step.get("end_turn"):
        return session.end_turn()
    if step.get("undo"):
        return session.undo()
    if "poses" in step:
        rules.update_poses(session.state, {int(k): Pose(*v) for k, v in step["poses"].items()})
        return {"poses": step["poses"]}
    if "judge_move" in step:
        j = step["judge_move"]
        return rules.judge_move(session.state, j["vehicle"], Pose(*j["to"]))
    if "act" in step:
        return session.act(step)
    raise ScenarioError(f"{where}: a step is a round, act, end_turn, undo, poses or judge_move")


def lookup(data: Any, path: str) -> Any:
    """`steps.2.result` in a scenario's output."""
    cur = data
    for part in path.split("."):
        if isinstance(cur, list):
            cur = cur[int(part)]
        elif isinstance(cur, dict):
            if part not in cur:
                raise KeyError(path)
            cur = cur[part]
        else:
            raise KeyError(path)
    return cur


def _is_pose(value: Any) -> bool:
    return (isinstance(value, list) and len(value) >= 3
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value[:3]))


def _measured(want: Any, have: Any, key: str) -> bool:
    return (any(key.endswith(u) for u in ("_mm", "_deg", "_in"))
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (want, have)))


def _measure_tolerance(key: str, tolerance: tuple[float, float]) -> float:
    mm, deg = tolerance
    return deg if key.endswith("_deg") else mm / 25.4 if key.endswith("_in") else mm


def _pose_close(want: list, have: Any, tolerance: tuple[float, float]) -> bool:
    """Two poses [x_mm, y_mm, heading_deg, ...] within (mm, degrees) of each other."""
    if not _is_pose(have):
        return False
    mm, deg = tolerance
    turn = (have[2] - want[2] + 180.0) % 360.0 - 180.0
    return math.hypot(have[0] - want[0], have[1] - want[1]) <= mm and abs(turn) <= deg


def check_expectations(data: dict, outcome: dict, pose_tolerance: tuple[float, float] | None = None) -> list[str]:
    """What in the outcome differs from the scenario's "expect" (empty: all as expected).
    With `pose_tolerance` (mm, degrees), an expected pose (a path ending in `pose`, a
    list of x, y, heading) matches within it: a scenario played through the camera."""
    wrong = []
    for path, want in data.get("expect", {}).items():
        try:
            have = lookup(outcome, path)
        except (KeyError, IndexError, ValueError):
            wrong.append(f"{path}: not in the outcome")
            continue
        key = path.rsplit(".", 1)[-1]
        if pose_tolerance is not None and key.endswith("pose") and _is_pose(want):
            ok = _pose_close(want, have, pose_tolerance)
        elif pose_tolerance is not None and _measured(want, have, key):
            # A length or angle the camera measures (a margin, a distance moved) is read as
            # the poses are: within the same millimetre and degree.
            ok = abs(have - want) <= _measure_tolerance(key, pose_tolerance)
        elif isinstance(want, float) and isinstance(have, (int, float)):
            ok = abs(have - want) <= 0.05
        elif isinstance(want, dict) and want.get("contains") is not None:
            ok = want["contains"] in json.dumps(have)
        else:
            ok = have == want
        if not ok:
            wrong.append(f"{path}: expected {want!r}, got {have!r}")
    return wrong
