"""A game's record: what goes into the store, and playing it back.

Events in a game file:

- `setup`: the rule system, its options, the rosters, the table (size, the cars'
  starting poses, terrain), the calibration's fingerprint, the companion's
  version, and the state it starts from.
- `resolution`: one action, round start or end of turn: what was asked, every
  dice throw with its source (tray boot and sequence number, typed, or virtual
  with its seed), the outcome with each measured verdict (value, threshold,
  margin, doubt), the poses (with their sigmas) it was judged on, the options
  in force, the evidence it was measured from, and the state after it.
- `undo`: a resolution taken back, with the state after.
- `hold`: a car held where its turn began, with the evidence of that pose.
- `table`: another table file loaded mid-game (anchors, or where a car's marker sits
  on its roof, corrected): the table file from then on. Its size, terrain, gates and
  the game's cars' footprints are the game's own and cannot change (`table_change`).

Playing back (`replay`) starts the game from its setup and resolves every event
again with its own poses and dice; after each, the state must come out as the
record says, or the record and the rules disagree and that is said. Resuming a
game after a crash is exactly this; so is "measure again".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import __version__
from .dice import DiceError, FixedChoices, FixedDice, FixedPlacements
from .geometry import Footprint, Gate, Pose, Terrain
from .rules.base import RulesError, rule_system
from .scene import Scene
from .session import Event, GameSession
from .store import GameStore, StoredEvent, StoreError


def state_json(state) -> dict:
    return state.to_json()


class ReplayError(ValueError):
    """A record that does not play back; the message names the event."""


def pose_json(pose: Pose) -> list[float]:
    return [pose.x_mm, pose.y_mm, pose.heading_deg, pose.sigma_mm, pose.sigma_deg]


def poses_json(poses: dict) -> dict[str, list[float]]:
    return {str(m): pose_json(p) for m, p in sorted(poses.items())}


def poses_from_json(data: dict) -> dict[int, Pose]:
    return {int(m): Pose(*v) for m, v in data.items()}


def setup_body(rules, rosters: list[dict], scene: Scene, state, *, calibration: str | None = None,
               table_file: dict | None = None, part_way: dict | None = None) -> dict:
    # `part_way`: a game begun part way through (a scenario's `state` block), set on the new
    # game before anything is played; a replay sets it again.
    return {
        **({"part_way": part_way} if part_way else {}),
        "rules": rules.name, "options": rules.settings, "rosters": rosters,
        "table": {"width_mm": scene.width_mm, "depth_mm": scene.depth_mm},
        "cars": [{"id": c.id, "name": c.name, "pose": pose_json(c.pose), "length_mm": c.length_mm,
                  "width_mm": c.width_mm} for c in scene.cars],
        "terrain": [{"name": t.name, "kind": t.kind, "points": [list(map(float, xy)) for xy in t.polygon.exterior.coords[:-1]]}
                    for t in scene.terrain],
        "gates": [{"name": g.name, "a": list(g.a), "b": list(g.b), "role": g.role} for g in scene.gates],
        "calibration": calibration, "table_file": table_file, "companion": __version__,
        "state": state_json(state),
    }


def event_body(event: Event, rules, state, evidence: list[dict] | None = None,
               calibration: str | None = None) -> tuple[str, dict]:
    """The store's kind and body for a committed session event."""
    if event.kind == "undo":
        return "undo", {"n": event.n, "undid": event.outcome["undid"], "state": state_json(state)}
    return "resolution", {
        "n": event.n, "kind": event.kind, "detail": event.detail, "dice": event.dice,
        "choices": event.choices, "placements": event.placements, "outcome": event.outcome,
        "poses": poses_json(event.poses or {}), "options": rules.settings, "calibration": calibration,
        "companion": __version__, "evidence": evidence or [], "state": state_json(state),
    }


def scene_from_setup(body: dict) -> Scene:
    cars = tuple(Footprint(c["id"], Pose(*c["pose"]), c["length_mm"], c["width_mm"], c["name"]) for c in body["cars"])
    terrain = tuple(Terrain.from_points(t["points"], t["kind"], t["name"]) for t in body.get("terrain", []))
    gates = tuple(Gate(tuple(g["a"]), tuple(g["b"]), g["name"], g.get("role", "")) for g in body.get("gates", []))
    return Scene(body["rules"], body["table"]["width_mm"], body["table"]["depth_mm"], cars, terrain, "the record",
                 gates)


@dataclass
class Replayed:
    rules: Any
    session: GameSession
    setup: StoredEvent
    events: list[StoredEvent]
    scene: Scene


def replay(events: list[StoredEvent], upto: int | None = None, before_each=None) -> Replayed:
    """Play a record back (to the end, or to just before event `upto`); every state checked.
    `before_each(session, event)`, if given, sees the game just before each event is played."""
    if not events or events[0].kind != "setup":
        raise ReplayError("the record does not start with the game's setup")
    setup = events[0]
    try:
        rules = rule_system(setup.body["rules"], setup.body["options"])
        scene = scene_from_setup(setup.body)
        state = rules.new_game(setup.body["rosters"], scene)
        if setup.body.get("part_way"):
            rules.start_part_way(state, setup.body["part_way"])
    except (RulesError, KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"event 1 (setup): {exc}") from None
    if state_json(state) != setup.body["state"]:
        raise ReplayError("event 1 (setup): the rules start a different game from the rosters")
    session = GameSession(rules, state, FixedDice([]))
    done = [setup]
    for e in events[1:]:
        if upto is not None and e.seq >= upto:
            break
        if before_each is not None:
            before_each(session, e)
        play(session, e)
        done.append(e)
    return Replayed(rules, session, setup, done, scene)


def play(session: GameSession, e: StoredEvent) -> None:
    """Resolve one recorded event again and check the state it leaves."""
    where = f"event {e.seq} ({e.kind})"
    b = e.body
    try:
        if e.kind == "resolution":
            out = resolve_again(session, b, poses_from_json(b["poses"]))
            if out is None:
                raise ReplayError(f"{where}: the record's dice ran out before the resolution ended")
        elif e.kind == "undo":
            session.undo()
        else:
            return                                  # holds, notes: nothing to resolve
    except (RulesError, DiceError, KeyError) as exc:
        raise ReplayError(f"{where}: does not play back: {exc}") from None
    if state_json(session.state) != b["state"]:
        raise ReplayError(f"{where}: playing it back gives a different state from the record's")


def resolve_again(session: GameSession, body: dict, poses: dict) -> dict | None:
    """A recorded resolution resolved again: the cars at `poses`, the record's own dice."""
    session.rules.set_poses(session.state, poses)
    session.dice = FixedDice([f for d in body["dice"] for f in d["faces"]], "record")
    session.choices = FixedChoices([{"player": c["player"], "value": c["value"]} for c in body.get("choices", [])],
                                   "record")
    # Where each piece the rules moved was put (a record from before placements were kept:
    # where the rules said, as it was then).
    session.placements = (FixedPlacements(body["placements"], "record") if "placements" in body
                          else FixedPlacements(source="record", as_asked=True))
    if body["kind"] == "action":
        return session.act(body["detail"])
    if body["kind"] == "round":
        return session.start_round(body["detail"]["orders"])
    return session.end_turn()


def resume(store: GameStore) -> Replayed:
    """The game in a store, exactly where its last committed event left it."""
    events = store.events()
    if not events:
        raise StoreError(f"{store.path}: the game file has no events yet")
    return replay(events)


# --- measuring again ------------------------------------------------------------------

def verdicts_in(outcome: Any, path: str = "") -> list[tuple[str, dict]]:
    """Every measured verdict in an outcome (a dict with a margin, an outcome or a
    legal/illegal judgement), with where it sits."""
    found = []
    if isinstance(outcome, dict):
        if "margin_mm" in outcome and ("outcome" in outcome or "legal" in outcome):
            found.append((path or "verdict", outcome))
        for k, v in outcome.items():
            if isinstance(v, (dict, list)):
                found += verdicts_in(v, f"{path}.{k}" if path else k)
    elif isinstance(outcome, list):
        for i, v in enumerate(outcome):
            found += verdicts_in(v, f"{path}[{i}]")
    return found


def table_at(events: list[StoredEvent], seq: int):
    """The table file in force at event `seq` (the setup's, or the last one loaded mid-game
    before it), or None for a record that keeps none (a scenario's)."""
    from calibration.tablefile import table_from_json
    body = None
    for e in events:
        if e.seq >= seq:
            break
        if e.kind in ("setup", "table") and e.body.get("table_file"):
            body = e.body["table_file"]
    return table_from_json(body) if body else None


def remeasure(store: GameStore, seq: int) -> dict:
    """Measure a stored resolution again from its evidence (see `audit.remeasure`)."""
    from .audit import remeasure as again
    return again(store, seq)


def _remeasure(store: GameStore, events: list[StoredEvent], e: StoredEvent, table, session: GameSession,
               frames=None) -> dict:
    """`remeasure` on the game as it stood just before `e` (`session`, changed by it): each car
    located again from the frame its recorded pose came from (see `audit.measure_again`)."""
    from .audit import measure_again
    return measure_again(store, events, e, session, frames)


def check_playback(store: GameStore) -> tuple[bool, str, dict]:
    """What `audit verify` adds to the chain: the game file resumes (every event played
    back, every state as recorded), and every resolution measured from a camera frame can
    be measured again from it. (ok, what was found, counts). One pass through the record:
    each resolution is measured again on a copy of the game just before it."""
    import copy
    events = store.events()
    counts = {"played": 0, "measured_again": 0, "differ": []}
    failed: list[str] = []
    from .audit import _Frames
    frames = _Frames(store, events)            # each stored frame located again once

    def measure_before(session: GameSession, e: StoredEvent) -> None:
        counts["played"] += 1
        if failed or e.kind != "resolution" or not e.body.get("evidence"):
            return
        table = table_at(events, e.seq)
        if table is None:
            return
        trial = GameSession(session.rules, copy.deepcopy(session.state), FixedDice([]))
        try:
            out = _remeasure(store, events, e, table, trial, frames)
        except Exception as exc:          # noqa: BLE001 - whatever stops it, the file cannot be re-measured
            failed.append(f"event {e.seq} (resolution): cannot be measured again from its frame "
                          f"({type(exc).__name__}: {exc})")
            return
        counts["measured_again"] += 1
        if not out["same"]:
            counts["differ"].append(e.seq)

    try:
        replay(events, before_each=measure_before)
    except ReplayError as exc:
        return False, f"{exc}: the game would not resume from this file", counts
    except (StoreError, ValueError, KeyError, TypeError) as exc:
        return False, f"the record does not play back ({type(exc).__name__}: {exc}): it would not resume", counts
    if failed:
        return False, failed[0], counts
    n = counts["measured_again"]
    text = f"plays back to its last event (it resumes); {n} resolution{'' if n == 1 else 's'} measured again"
    if counts["differ"]:
        text += (f", {len(counts['differ'])} of them not exactly as recorded (events "
                 f"{', '.join(map(str, counts['differ'][:10]))}: see audit remeasure)")
    return True, text, counts
