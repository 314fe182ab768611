"""Scenario files: a table snapshot, the rosters, the dice that fell and the steps
played; `companion scenario run FILE` plays them and prints what happened.
The format is documented in docs/scenarios.md."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .dice import ChoiceRefused, DiceError, FixedChoices, FixedDice, FixedPlacements
from .geometry import Pose
from .rules.base import RulesError, rule_system
from .scene import SceneError, parse_scene
from .session import GameSession


class ScenarioError(ValueError):
    """A scenario that cannot be played; the message names the step."""


class ScenarioStopped(ScenarioError):
    """A step came out other than the file says (refused when it should go ahead, or allowed
    when it should be refused): the run stops there. `outcome` holds what was played up to it,
    so every expectation can still be reported, not just this first disagreement."""

    def __init__(self, message: str, outcome: dict) -> None:
        super().__init__(message)
        self.outcome = outcome


#: A scenario file's fields, each with what it must be.
FILE_FIELDS = {
    "rules": "the rule system's name", "about": "a sentence or two", "options": "an object",
    "table": "an object", "cars": "a list", "terrain": "a list", "gates": "a list", "rosters": "a list",
    "state": "an object", "dice": "a list of faces", "choices": "a list", "steps": "a list",
    "expect": "an object", "expect_error": "true",
}
_FILE_TYPES = {"rules": str, "about": str, "options": dict, "table": dict, "cars": list, "terrain": list,
               "gates": list, "rosters": list, "state": dict, "dice": list, "choices": list, "steps": list,
               "expect": dict, "expect_error": bool}
_PIECE_FIELDS = {
    "table": ("width_mm", "depth_mm"),
    "cars": ("id", "name", "x_mm", "y_mm", "heading_deg", "length_mm", "width_mm", "sigma_mm", "sigma_deg"),
    "terrain": ("kind", "name", "points"),
    "gates": ("name", "a", "b", "role"),
}
#: Each kind of step and the fields it may carry besides `expect_error`.
STEP_KINDS = ("round", "act", "end_turn", "undo", "poses", "judge_move")


def check_file(data: Any, source: str) -> None:
    """The file as the format has it: every field known, each of its type (ScenarioError
    naming the field). An unknown field is refused, not ignored: a misspelt one would leave the
    scenario checking something other than it says. Action fields are the rules' to check."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a JSON object (rules, table, cars, rosters, steps...)")
    _known(data, FILE_FIELDS, f"{source}: a scenario")
    for key, kind in _FILE_TYPES.items():
        if key in data and not isinstance(data[key], kind):
            raise ScenarioError(f"{source}: '{key}' must be {FILE_FIELDS[key]}, not {_text(data[key])}")
    for key, known in _PIECE_FIELDS.items():
        items = [data[key]] if key == "table" and key in data else data.get(key) or []
        for n, item in enumerate(items):
            where = key if key == "table" else f"{key}.{n}"
            if not isinstance(item, dict):
                raise ScenarioError(f"{source}: {where} must be an object, not {_text(item)}")
            _known(item, known, f"{source}: {where}")
    for n, face in enumerate(data.get("dice", [])):
        if not isinstance(face, int) or isinstance(face, bool):
            raise ScenarioError(f"{source}: dice.{n} must be a die's face (a whole number), not {_text(face)}")
    if data.get("expect_error") and data.get("steps"):
        raise ScenarioError(f"{source}: a scenario whose setup is expected to be refused has no steps to play")
    for n, step in enumerate(data.get("steps", [])):
        check_step(step, f"{source}: steps.{n}")


def _known(obj: dict, known, where: str) -> None:
    unknown = sorted(k for k in obj if k not in known)
    if unknown:
        raise ScenarioError(f"{where}: no field {', '.join(repr(k) for k in unknown)} "
                            f"(its fields: {', '.join(known)})")


def check_step(step: Any, where: str) -> None:
    if not isinstance(step, dict):
        raise ScenarioError(f"{where}: a step is an object ({', '.join(STEP_KINDS)})")
    kinds = [k for k in STEP_KINDS if k in step]
    if len(kinds) != 1:
        raise ScenarioError(f"{where}: a step is one of {', '.join(STEP_KINDS)}"
                            + (f", not {' and '.join(kinds)} at once" if kinds else
                               f" (it has {', '.join(repr(k) for k in step) or 'nothing'})"))
    kind = kinds[0]
    if "expect_error" in step and not isinstance(step["expect_error"], bool):
        raise ScenarioError(f"{where}: expect_error is true or false, not {_text(step['expect_error'])}")
    if kind == "act":
        if not isinstance(step["act"], str):
            raise ScenarioError(f"{where}: act is an action's name, not {_text(step['act'])}")
        return                                   # its fields are the rules' to check
    extra = sorted(k for k in step if k not in (kind, "expect_error"))
    if extra:
        raise ScenarioError(f"{where}: a {kind} step has no field {', '.join(repr(k) for k in extra)}")
    value = step[kind]
    if kind in ("end_turn", "undo") and value is not True:
        raise ScenarioError(f"{where}: {kind} is true, not {_text(value)}")
    if kind == "round" and not isinstance(value, dict):
        raise ScenarioError(f"{where}: round is an object of player to play order ({{}} where the book has none), "
                            f"not {_text(value)}")
    if kind == "poses":
        if not isinstance(value, dict) or not value:
            raise ScenarioError(f"{where}: poses is an object of marker to [x_mm, y_mm, heading_deg]")
        for m, pose in value.items():
            if not m.lstrip("-").isdigit():
                raise ScenarioError(f"{where}: poses: {m!r} is not a marker")
            if not _pose(pose):
                raise ScenarioError(f"{where}: poses.{m} must be [x_mm, y_mm, heading_deg], not {_text(pose)}")
    if kind == "judge_move":
        if not isinstance(value, dict) or set(value) != {"vehicle", "to"}:
            raise ScenarioError(f"{where}: judge_move is {{\"vehicle\": marker, \"to\": [x_mm, y_mm, heading_deg]}}, "
                                f"not {_text(value)}")
        if not isinstance(value["vehicle"], int) or isinstance(value["vehicle"], bool) or not _pose(value["to"]):
            raise ScenarioError(f"{where}: judge_move is {{\"vehicle\": marker, \"to\": [x_mm, y_mm, heading_deg]}}, "
                                f"not {_text(value)}")


def _pose(v: Any) -> bool:
    return (isinstance(v, list) and 3 <= len(v) <= 5
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v))


def _text(value: Any) -> str:
    t = json.dumps(value) if isinstance(value, (dict, list, str, int, float, bool, type(None))) else repr(value)
    return t if len(t) <= 80 else t[:77] + "..."


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


def start_game(rules, data: dict, scene):
    """The game the file starts: its rosters, then its `state` block (a game part way
    through). A roster or state the rules refuse raises RulesError."""
    state = rules.new_game(data.get("rosters", []), scene)
    if data.get("state"):
        rules.start_part_way(state, data["state"])
    return state


def run_scenario(data: dict, source: str = "<scenario>", store=None) -> dict:
    """Play a scenario; the outcome of every step and the final state. With `store`
    (a GameStore), its setup and every committed event are recorded there. A step that comes
    out other than the file says raises ScenarioStopped, with the outcome so far."""
    check_file(data, source)
    try:
        scene = parse_scene(data, source)
        rules = rule_system(data["rules"], data.get("options"))
    except (SceneError, RulesError, KeyError) as exc:
        raise ScenarioError(f"{source}: {exc}") from None
    try:
        state = start_game(rules, data, scene)
    except RulesError as exc:
        if data.get("expect_error"):
            # A roster over its points, an illegal deployment: the refusal is the outcome.
            return {"rules": rules.name, "options": rules.settings, "error": str(exc), "steps": [],
                    "dice_left": len(data.get("dice", [])), "choices_left": len(data.get("choices", [])), "log": []}
        raise ScenarioError(f"{source}: {exc}") from None
    if data.get("expect_error"):
        raise ScenarioStopped(f"{source}: expected the setup to be refused, but it was accepted",
                              {"rules": rules.name, "options": rules.settings, "steps": [],
                               "state": state_json(state), "dice_left": len(data.get("dice", [])),
                               "choices_left": len(data.get("choices", [])), "log": []})
    dice = FixedDice(data.get("dice", []), "scenario")
    # Choices the book gives a player (a defender's pick), made in order as they are asked.
    # Pieces the rules move are put exactly where they say, as a careful hand would.
    session = GameSession(rules, state, dice, FixedChoices(data.get("choices", []), "scenario"),
                          placements=FixedPlacements(source="scenario", as_asked=True))
    if store is not None:
        from .record import event_body, setup_body
        if len(store):
            raise ScenarioError(f"{store.path} already holds a game; record into a new file")
        store.append("setup", setup_body(rules, data.get("rosters", []), scene, session.state,
                                         part_way=data.get("state")))
        session.on_commit = lambda event: store.append(*event_body(event, rules, session.state))
    steps: list = []

    def so_far() -> dict:
        return {"rules": rules.name, "options": rules.settings, "steps": steps, "state": state_json(session.state),
                "dice_left": dice.remaining, "choices_left": session.choices.remaining,
                "log": [e.to_json() for e in session.log]}

    for n, step in enumerate(data.get("steps", [])):
        where = f"{source}: steps.{n}"          # numbered as "expect" paths are, from 0
        refused_ok = bool(step.get("expect_error"))
        if "act" in step:
            action = {k: v for k, v in step.items() if k != "expect_error"}
            try:
                # A field the action does not have, or of the wrong shape, is the file's
                # mistake even where a refusal is expected: it must not pass for one.
                rules.check_action(action) if action["act"] in rules.handlers else None
            except RulesError as exc:
                raise ScenarioError(f"{where}: {exc}") from None
        try:
            out = play_step(session, step, where)
        except RulesError as exc:
            if not refused_ok:
                raise ScenarioStopped(f"{where}: refused: {exc}", so_far()) from None
            out = {"error": str(exc)}
        except ChoiceRefused as exc:
            # A choice outside the offers (or another player's) is refused; the step it came in
            # is called off, and nothing it did stays.
            session.cancel()
            if not refused_ok:
                raise ScenarioStopped(f"{where}: a choice was refused: {exc}", so_far()) from None
            out = {"error": str(exc)}
        except DiceError as exc:
            # Running out of dice (or a face its die cannot show) is the file's mistake, never
            # the refusal it expects.
            if refused_ok:
                raise ScenarioError(f"{where}: expected the rules to refuse the action, but they went on to ask "
                                    f"for dice or a choice the scenario does not give: {exc}") from None
            raise ScenarioError(f"{where}: {exc}") from None
        else:
            if out is None:
                if refused_ok:
                    raise ScenarioError(f"{where}: expected the rules to refuse the action, but they went on to "
                                        f"ask for dice or a choice the scenario does not give (waiting for "
                                        f"{session.waiting_for()})")
                raise ScenarioError(f"{where}: ran out of dice or choices (waiting for {session.waiting_for()})")
            if refused_ok:
                steps.append(out)
                raise ScenarioStopped(f"{where}: expected it to be refused, but it was allowed", so_far())
        steps.append(out)
    return so_far()


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
        return session.act({k: v for k, v in step.items() if k != "expect_error"})
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
    left = outcome.get("choices_left") or 0
    if left and "choices_left" not in data.get("expect", {}):
        # A choice the file gives that was never asked: the situation did not go as the file
        # says (a dice left over is the file's to expect, as `dice_left`; a choice is a decision
        # the file claims a player made).
        wrong.append(f"choices: the last {left} of {len(data.get('choices', []))} were never asked "
                     f"({_text(data['choices'][-left:])})")
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
