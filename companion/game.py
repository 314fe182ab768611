"""The table game: the one object the page talks to.

It holds the live table (what the camera sees), the game being played on it (a
rule system, its state and the session that resolves actions), and the dice:
the tray's throws arrive by themselves, dice typed in on the page and a virtual
roll are one call away, all answering the same waiting request.

Poses: the game's recorded poses follow the camera, except for cars that are
held. The vehicle whose turn it is is held from the start of its activation,
so its move template stays where the car started while a player lifts and
places it; an action that says "where the car stands now" takes the camera's
current pose of that car. Nothing moves a car in the game without the camera
having seen it.

Every change bumps `version` and nudges the live table, so every open page
hears of it on its event stream.
"""

from __future__ import annotations

import copy
import json
import math
import threading
import time
from collections import deque
from importlib import resources
from typing import Any

from .dice import ChoiceRequest, DiceError, DiceRequest, DiceThrow, VirtualDice, WaitingDiceSource
from .geometry import Footprint, Pose, Terrain, closest_distance, centre_distance, in_half_plane_arc
from .geometry.pose import MM_PER_IN
from .geometry.sight import Obstacles
from .live import LiveTable
from .rules.actions import ActionError
from .rules.base import RulesError, rule_system, rule_systems
from .scene import Scene
from .session import GameSession


#: A car's path keeps a pose each time it has moved this far or turned this much.
PATH_STEP_MM = 5.0
PATH_STEP_DEG = 3.0
PATH_MAX_POINTS = 2000


class GameError(ValueError):
    """A request the game cannot take; the message says why, for the player."""


class TableDice(WaitingDiceSource):
    """Every way dice reach the game at once: the tray (if there is one) is told a
    throw is awaited and answers by itself; typed-in dice and a virtual roll answer
    the same request from the page. Whichever comes first is used."""

    name = "table"

    def __init__(self, virtual: VirtualDice, tray=None, on_change=None, on_tray_outcome=None) -> None:
        self.virtual = virtual
        self.tray = tray
        self.on_change = on_change
        #: Called with what a tray's throw led to (the page's own answers see theirs returned).
        self.on_tray_outcome = on_tray_outcome
        self.pending: tuple[DiceRequest, Any] | None = None
        self._lock = threading.RLock()

    def request(self, request: DiceRequest, deliver) -> None:
        with self._lock:
            self.pending = (request, deliver)
        if self.tray is not None:
            self.tray.request(request, self._from_tray)
        if self.on_change is not None:
            self.on_change()

    def _take(self, throw: DiceThrow):
        with self._lock:
            if self.pending is None:
                raise DiceError("no dice are awaited")
            request, deliver = self.pending
            throw.check(request)
            self.pending = None
        if throw.source != "tray" and self.tray is not None:
            self.tray.cancel()
        return deliver(throw)

    def _from_tray(self, throw: DiceThrow) -> None:
        try:
            outcome = self._take(throw)
            if self.on_tray_outcome is not None:
                self.on_tray_outcome(outcome)
        finally:
            if self.on_change is not None:
                self.on_change()

    def typed(self, faces) -> Any:
        with self._lock:
            if self.pending is None:
                raise DiceError("no dice are awaited")
            request = self.pending[0]
        try:
            values = tuple(int(f) for f in faces)
        except (TypeError, ValueError):
            raise DiceError(f"faces must be whole numbers, not {faces!r}") from None
        if len(values) != len(request.dice):
            raise DiceError(f"{request.describe()}: type {len(request.dice)} face(s), not {len(values)}")
        return self._take(DiceThrow(values, request.dice, "typed"))

    def roll(self) -> Any:
        with self._lock:
            if self.pending is None:
                raise DiceError("no dice are awaited")
            request = self.pending[0]
        return self._take(self.virtual.throw(request))

    def cancel(self) -> None:
        with self._lock:
            self.pending = None
        if self.tray is not None:
            self.tray.cancel()


class TableGame:
    """The live table, and the game played on it."""

    def __init__(self, live: LiveTable, *, tray=None, seed: int | None = None, log_size: int = 200,
                 store=None) -> None:
        self.live = live
        #: The game file (companion.store.GameStore) every committed event goes to, or None.
        self.store = store
        self._evidence: list[dict] = []         # this resolution's frames, stored when it commits
        self.table = live.table
        self.terrain = tuple(Terrain.from_points(t.points, t.kind, t.name) for t in self.table.terrain)
        self.dice = TableDice(VirtualDice(seed), tray, on_change=self._changed, on_tray_outcome=self._after_tray)
        self.tray = tray
        self.session: GameSession | None = None
        self.setup: dict | None = None
        self.held: set[int] = set()
        self.version = 0
        self.notes: deque[dict] = deque(maxlen=log_size)
        self.last_outcome: dict | None = None
        self._lock = threading.RLock()
        self._held_for_turn: int | None = None
        #: Each car's way over the table since its activation began, as the camera followed
        #: it (for rules that take distance and turns from the path driven).
        self._paths: dict[int, list[list[float]]] = {}
        #: On the synthetic demo table only: a callable(marker, x_mm, y_mm, heading_deg) that
        #: puts a car there in the rendered frames (players move the demo's cars from the page).
        #: On a real table it stays None: cars are moved by hand, and the camera sees them.
        self.demo_mover = None
        live.add_frame_listener(self.on_frame)

    # --- bookkeeping ------------------------------------------------------------------

    def _changed(self) -> None:
        self.version += 1
        self.live.nudge({"game_version": self.version})

    def note(self, text: str, kind: str = "info") -> None:
        self.notes.append({"t": round(time.time(), 3), "kind": kind, "text": text})
        self._changed()

    def _need_game(self) -> GameSession:
        if self.session is None:
            raise GameError("no game yet: choose a rule system and rosters in Setup, and start one")
        return self.session

    # --- the camera -------------------------------------------------------------------

    def live_poses(self) -> dict[int, dict]:
        """The camera's cars now, by marker: pose, doubt, and whether it is seen."""
        return {c["id"]: c for c in self.live.snapshot()["cars"]}

    def on_frame(self, tracked) -> None:
        """A frame tracked: the game's poses follow the camera, but for held cars."""
        session = self.session
        for c in tracked.cars:
            if c.stale:
                continue
            path = self._paths.setdefault(c.id, [])
            last = path[-1] if path else None
            if last is None or math.hypot(c.x_mm - last[0], c.y_mm - last[1]) >= PATH_STEP_MM \
                    or abs((c.heading_deg - last[2] + 180) % 360 - 180) >= PATH_STEP_DEG:
                path.append([c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg])
                del path[:-PATH_MAX_POINTS]
        if session is None:
            return
        # Under the lock that orders resolutions: a pose never lands inside one.
        with self._lock:
            if self.session is not session or session.pending is not None:
                return
            poses = {c.id: Pose(c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg)
                     for c in tracked.cars if c.id not in self.held}
            if poses:
                session.rules.update_poses(session.state, poses)

    def _hold_active(self) -> None:
        """Hold the vehicle whose turn it is (its move is judged from where it started)."""
        marker = self.session.rules.active_marker(self.session.state)
        if marker != self._held_for_turn:
            if self._held_for_turn is not None:
                self.held.discard(self._held_for_turn)
            if marker is not None:
                self.held.add(marker)
                self._record_hold(marker)
                self._paths.pop(marker, None)           # its way this activation starts here
            self._held_for_turn = marker

    # --- evidence ---------------------------------------------------------------------

    def _frame_poses(self):
        """The latest frame's own poses for the cars it saw (not the tracker's averages: a
        verdict is measured from one frame, so it can be measured again from that frame),
        and the frame itself."""
        image, tracked = self.live.last_image()
        if tracked is None or tracked.located.table_pose is None:
            return {}, None
        located = tracked.located
        poses = {c.id: Pose(c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg) for c in located.cars}
        return poses, (image, located)

    def _sync_from_frame(self, state) -> None:
        """Set the cars (but held ones) where the latest frame puts them, and keep that
        frame as the evidence of the resolution about to be made."""
        poses, frame = self._frame_poses()
        pieces = self.session.rules.pieces(state)
        use = {m: p for m, p in poses.items() if m not in self.held and m in pieces and pieces[m].in_play}
        if use:
            self.session.rules.update_poses(state, use)
        self._evidence = [] if frame is None else [{"frame": frame, "cars": sorted(use)}]

    def _store_evidence(self, frame) -> dict | None:
        if self.store is None or frame is None:
            return None
        from vision.evidence import frame_evidence
        jpeg, detections, pose = frame_evidence(*frame)
        return self.store.add_evidence(jpeg, detections, pose)

    def _calibration(self) -> str | None:
        from vision.evidence import camera_fingerprint
        pose = self.live.pipeline.locator.table_pose
        return camera_fingerprint(pose.camera) if pose is not None else None

    def _record_hold(self, marker: int) -> None:
        """A car held where its turn began: its pose from this frame, and the frame."""
        poses, frame = self._frame_poses()
        v = self.session.rules.pieces(self.session.state).get(marker)
        if v is not None and marker in poses and v.in_play:
            self.session.rules.update_poses(self.session.state, {marker: poses[marker]})
        if self.store is not None and v is not None and v.pose is not None:
            from .record import pose_json
            ref = self._store_evidence(frame) if marker in poses else None
            self.store.append("hold", {"vehicle": marker, "pose": pose_json(v.pose), "evidence": ref})

    def _commit(self, event) -> None:
        """A resolution or an undo is final: into the game file, with its evidence."""
        if self.store is None:
            return
        from .record import event_body
        refs = []
        for item in self._evidence:
            ref = self._store_evidence(item["frame"])
            if ref is not None:
                refs.append({"ref": ref, "cars": item["cars"]})
        kind, body = event_body(event, self.session.rules, self.session.state, refs, self._calibration())
        self.store.append(kind, body)
        self._evidence = []

    def hold(self, marker: int, held: bool) -> dict:
        with self._lock:
            self._vehicle(marker)
            if held:
                self.held.add(marker)
            else:
                self.held.discard(marker)
                if marker == self._held_for_turn:
                    self._held_for_turn = None
            self._changed()
            return {"held": sorted(self.held)}

    def _table_pose(self, marker: int) -> list[float]:
        car = self.live_poses().get(marker)
        name = self._name(marker)
        if car is None:
            raise GameError(f"the camera has not found the {name} (marker {marker}) on the table")
        if car["stale"]:
            raise GameError(f"the camera has lost sight of the {name} (last seen {car['age_s']:.1f} s ago): "
                            f"clear the view and try again")
        return [car["x_mm"], car["y_mm"], car["heading_deg"], car["sigma_mm"], car["sigma_deg"]]

    def _name(self, marker: int) -> str:
        spec = self.table.car(marker)
        if self.session is not None and marker in self.session.rules.pieces(self.session.state):
            return self.session.rules.pieces(self.session.state)[marker].name
        return spec.name if spec else f"car {marker}"

    # --- setting up -------------------------------------------------------------------

    def rule_systems(self) -> list[dict]:
        return [cls().describe() for cls in rule_systems()]

    def start(self, rules: str, options: dict | None, rosters: list[dict]) -> dict:
        """A new game on the table as the camera sees it now."""
        if not isinstance(rules, str) or not rules:
            raise GameError("choose a rule system")
        if options is not None and not isinstance(options, dict):
            raise GameError("options must be an object of option names and values")
        if not isinstance(rosters, list) or not all(isinstance(r, dict) for r in rosters):
            raise GameError("rosters must be a list of roster objects (one per player)")
        system = rule_system(rules, options or {})
        cars = []
        live = self.live_poses()
        for spec in self.table.cars:
            c = live.get(spec.id)
            if c is not None:
                cars.append(Footprint(spec.id, Pose(c["x_mm"], c["y_mm"], c["heading_deg"], c["sigma_mm"],
                                                    c["sigma_deg"]), spec.length_mm, spec.width_mm, spec.name))
        scene = Scene(rules, self.table.width_mm, self.table.depth_mm, tuple(cars), self.terrain, "the table",
                      self.live.gates())
        state = system.new_game(rosters, scene)
        with self._lock:
            if self.session is not None and self.session.pending is not None:
                self.session.cancel()
            if self.store is not None and len(self.store):
                raise GameError(f"{self.store.path} already holds a game; resume it (serve --game) or "
                                f"start a new game in a new file")
            self.session = GameSession(system, state, self.dice)
            self.session.on_commit = self._commit
            self.setup = {"rules": rules, "options": system.settings, "rosters": copy.deepcopy(rosters)}
            if self.store is not None:
                from .record import setup_body
                from calibration.tablefile import table_to_json
                self.store.append("setup", setup_body(system, copy.deepcopy(rosters), scene, state,
                                                      calibration=self._calibration(),
                                                      table_file=table_to_json(self.table)))
            self.held.clear()
            self._held_for_turn = None
            self.last_outcome = None
            self.note(f"a new game of {system.title}")
            missing = [v.name for v in system.pieces(state).values() if v.pose is None]
            if missing:
                self.note(f"not on the table yet (the camera has not seen them): {', '.join(missing)}", "warn")
        return self.game_json()

    def resume(self) -> dict:
        """The game in the store, exactly where its last committed event left it."""
        from .record import resume
        with self._lock:
            replayed = resume(self.store)
            session = replayed.session
            session.dice = self.dice
            session.on_commit = self._commit
            self.session = session
            b = replayed.setup.body
            self.setup = {"rules": b["rules"], "options": b["options"], "rosters": b["rosters"]}
            active = session.rules.active_marker(session.state)
            self.held = {active} if active is not None else set()
            self._held_for_turn = active
            self.note(f"resumed from {self.store.path}: {len(replayed.events)} events played back, "
                      f"every state as recorded")
            return self.game_json()

    def starter_rosters(self, rules: str = "shattered_highways") -> list[dict]:
        """Rosters to start from: the demo's own on the demo table (Shattered Highways), else
        the rule system's own for this table's cars, to be edited."""
        names = {c.name for c in self.table.cars}
        if rules == "shattered_highways" and names == {"Interceptor", "Rust Bucket", "War Rig", "Buggy", "Hearse"}:
            text = resources.files("companion").joinpath("data/demo_rosters.json").read_text(encoding="utf-8")
            return json.loads(text)
        try:
            return rule_system(rules).starter_rosters([(c.id, c.name) for c in self.table.cars])
        except NotImplementedError as exc:
            raise GameError(str(exc)) from None

    def load_table(self, table) -> None:
        """Play on another table file: the camera uses it from the next frame; a game
        in progress ends (its cars and table no longer hold)."""
        with self._lock:
            self.live.replace_table(table)
            self.table = table
            self.terrain = tuple(Terrain.from_points(t.points, t.kind, t.name) for t in table.terrain)
            if self.session is not None:
                self.session.cancel()
                self.session = None
                self.setup = None
            self.note(f"table file loaded: {table.width_mm:g} x {table.depth_mm:g} mm, "
                      f"{len(table.anchors)} anchors, {len(table.cars)} cars")

    def place_gate(self, name, a, b, role="") -> dict:
        """A gate placed on the page (two posts picked on the table): it counts from now on,
        and the table-file lines to keep it are given back."""
        import dataclasses

        from calibration.tablefile import MIN_GATE_WIDTH_MM, GateSpec
        if not isinstance(name, str) or not name.strip():
            raise GameError("name the gate")
        name = name.strip()
        posts = [tuple(round(v, 1) for v in self._table_point(post, f"post {label}"))
                 for label, post in (("A", a), ("B", b))]
        width = math.hypot(posts[1][0] - posts[0][0], posts[1][1] - posts[0][1])
        if width < MIN_GATE_WIDTH_MM:
            raise GameError(f"its posts are {width:.0f} mm apart, too narrow for a car "
                            f"(at least {MIN_GATE_WIDTH_MM:g} mm)")
        if not isinstance(role, str):
            raise GameError("a gate's role is a word (start_finish, checkpoint, ...)")
        with self._lock:
            if self.table.gate(name) is not None:
                raise GameError(f"there is already a gate named '{name}'")
            gate = GateSpec(name, role.strip(), posts[0], posts[1])
            table = dataclasses.replace(self.table, gates=self.table.gates + (gate,))
            self.live.set_gates(table)
            self.table = table
            self.note(f"gate '{name}' placed: {width:.0f} mm wide, posts A {posts[0]} B {posts[1]}")
        toml = (f'[[gate]]\nname = "{name}"\n' + (f'role = "{role.strip()}"\n' if role.strip() else "")
                + f"a_mm = [{posts[0][0]}, {posts[0][1]}]\nb_mm = [{posts[1][0]}, {posts[1][1]}]\n")
        return {"gate": {"name": name, "a": list(posts[0]), "b": list(posts[1]), "role": role.strip(),
                         "width_mm": round(width, 1)}, "table_file": toml}

    def _table_point(self, value, what: str) -> tuple[float, float]:
        """A point [x_mm, y_mm] on this table, or a GameError saying what is wrong with it."""
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            raise GameError(f"{what} must be a point [x_mm, y_mm], not {value!r}")
        x, y = float(value[0]), float(value[1])
        if not (0 <= x <= self.table.width_mm and 0 <= y <= self.table.depth_mm):
            raise GameError(f"{what} ({x:.0f}, {y:.0f}) is off the {self.table.width_mm:g} x "
                            f"{self.table.depth_mm:g} mm table")
        return x, y

    def remove_gate(self, name) -> dict:
        import dataclasses
        with self._lock:
            if not isinstance(name, str) or self.table.gate(name) is None:
                raise GameError(f"there is no gate named {name!r}")
            table = dataclasses.replace(self.table, gates=tuple(g for g in self.table.gates if g.name != name))
            self.live.set_gates(table)
            self.table = table
            self.note(f"gate '{name}' taken away")
            return {"gates": [g.name for g in table.gates]}

    # --- reading ----------------------------------------------------------------------

    def _vehicle(self, marker: int):
        session = self._need_game()
        try:
            marker = int(marker)
        except (TypeError, ValueError):
            raise GameError(f"{marker!r} is not a vehicle's marker number") from None
        try:
            return session.state.vehicle(marker)
        except RulesError as exc:
            raise GameError(str(exc)) from None

    def car(self, marker: int) -> dict:
        """Everything the page shows for one selected vehicle."""
        with self._lock:
            session = self._need_game()
            v = self._vehicle(marker)
            rules, state = session.rules, session.state
            out = {"card": rules.card(state, v.marker), "held": v.marker in self.held,
                   "live": self.live_poses().get(v.marker)}
            try:
                out["overlays"] = rules.overlays(state, v.marker)
                out["targets"] = rules.targets(state, v.marker, self.terrain)
            except RulesError as exc:
                out["overlays"], out["targets"] = {"move_regions": [], "arcs": []}, []
                out["why_no_measurements"] = str(exc)
            if not rules.may_premeasure():
                # The book forbids measuring before an action is declared: who could be acted
                # against, but no distance, range, arc or roll needed until it is.
                out["targets"] = [{"marker": t["marker"], "name": t.get("name")} for t in out["targets"]
                                  if "marker" in t]
                out["overlays"] = {**out["overlays"], "arcs": []}
                out["premeasure"] = {"allowed": False,
                                     "why": f"{rules.title} forbids measuring before an action is declared: "
                                            f"distances and ranges are measured, and shown, once it is"}
            out["actions"] = [spec.to_json() for spec in rules.action_specs(state, v.marker)]
            return out

    def game_json(self) -> dict:
        with self._lock:
            session = self.session
            if session is None:
                return {"version": self.version, "game": None, "notes": list(self.notes),
                        "rule_systems": self.rule_systems()}
            running = session._running[1] if session._running is not None else None
            turn = session.rules.turn_info(session.state)
            return {
                "version": self.version,
                "game": {"rules": session.rules.describe(), "setup": self.setup,
                         "state": session.rules.state_json(session.state),
                         "players": turn.get("players", []),
                         "order": turn.get("order", []),
                         "turn": turn.get("turn", -1),
                         "active": turn.get("active"),
                         "up": turn.get("up"),
                         "round": turn.get("round"),
                         "board": self._board(session),
                         "turn_text": session.rules.turn_text(session.state),
                         "premeasure": session.rules.may_premeasure()},
                "pending": self._pending_json(session, running),
                "log": [self._public(session, e.to_json()) for e in reversed(session.log[-60:])],
                "last_outcome": ({**self.last_outcome, "event": self._public(session, self.last_outcome["event"])}
                                 if self.last_outcome and "event" in self.last_outcome else self.last_outcome),
                "held": sorted(self.held),
                "can_undo": bool(session._undo) and session.pending is None,
                "notes": list(self.notes),
                "rule_systems": self.rule_systems(),
            }

    def _pending_json(self, session, running) -> dict | None:
        """What the running resolution waits for: dice (`"dice"`), or a choice that is one
        player's to make (`"choice"`, with its options)."""
        if session.pending is None:
            return None
        p = session.pending
        out = {"asked": p.describe(), "who": p.who,
               "action": (session.rules.public_action(session.state, running.detail)
                          if running and running.kind == "action" else running.detail if running else None),
               "kind": running.kind if running else None,
               "so_far": running.dice if running else [],
               "choices_so_far": running.choices if running else [],
               "tray": self.tray is not None}
        if isinstance(p, ChoiceRequest):
            out.update(waiting="choice", player=p.player, purpose=p.purpose, options=list(p.options), dice=[])
        else:
            out.update(waiting="dice", dice=list(p.dice), purpose=p.purpose)
        return out

    @staticmethod
    def _public(session, event: dict) -> dict:
        """A logged event as the players may see it (a secret choice hidden)."""
        if event.get("kind") != "action":
            return event
        return {**event, "detail": session.rules.public_action(session.state, event["detail"])}

    def _board(self, session) -> dict | None:
        """What the rule system draws over the whole table (a square board, mines), or None;
        a board that cannot be drawn now says why instead of failing the whole page."""
        try:
            return session.rules.board(session.state)
        except RulesError as exc:
            return {"cells": [], "about": f"no board to show: {exc}"}

    # --- doing ------------------------------------------------------------------------

    def actor_marker(self, action: dict) -> int:
        """The marker of the car an action is taken with (whatever acts: a vehicle, a
        warrior, a freak...), as the rule system reads the action."""
        session = self._need_game()
        if not isinstance(action, dict):
            raise GameError("an action is an object with 'act' and its fields")
        try:
            return int(session.rules.actor_marker(session.state, action))
        except (RulesError, KeyError, TypeError, ValueError) as exc:
            act = action.get("act", "the action")
            raise GameError(f"{act}: {_say(exc)}") from None

    # The table as an action's fields read it (rules.actions.TableReader).
    def pose_of(self, marker: int) -> list[float]:
        return self._table_pose(marker)

    def path_of(self, marker: int) -> list[list[float]]:
        # With each pose's doubt, so a move judged at its limit can be too close to call.
        return [list(p) for p in self._paths.get(marker, [])] + [self._table_pose(marker)]

    def point(self, value, what: str) -> tuple[float, float]:
        return self._table_point(value, what)

    def _spec(self, action: dict):
        """The spec the action is checked against: the acting car's, for that act."""
        if not isinstance(action, dict):
            raise GameError("an action is an object with 'act' and its fields")
        act = action.get("act")
        if not isinstance(act, str):
            raise GameError("the action needs 'act' (move, shoot, ...)")
        v = self._vehicle(self.actor_marker(action))
        session = self.session
        try:
            specs = {s.act: s for s in session.rules.action_specs(session.state, v.marker)}
        except RulesError as exc:
            raise GameError(str(exc)) from None
        if act not in specs:
            can = ", ".join(specs) or "nothing"
            raise GameError(f"the {v.name} cannot {act} now (it can: {can})")
        return specs[act]

    def _fill(self, action: dict) -> dict:
        """Check an action's fields against its spec; the camera fills where cars stand and
        the ways they drove."""
        spec = self._spec(action)
        try:
            return spec.fill(action, self)
        except ActionError as exc:
            raise GameError(str(exc)) from None

    def preview(self, action: dict) -> dict:
        """Would this action go ahead, and what would it ask for? Played on a copy up to
        its first dice; nothing changes."""
        with self._lock:
            session = self._need_game()
            try:
                filled = self._fill(action)
            except GameError as exc:
                return {"ok": False, "why": str(exc)}
            state = copy.deepcopy(session.state)
            poses, _ = self._frame_poses()      # measured as the resolution would be: from this frame
            session.rules.update_poses(state, {m: p for m, p in poses.items() if m not in self.held})
            out: dict = {"action": filled}
            try:
                gen = session.rules.resolve(state, filled)
                request = next(gen)
                out.update(ok=True, needs=request.describe())
            except StopIteration:
                out.update(ok=True, needs=None)
            except (RulesError, DiceError, KeyError, ValueError) as exc:
                out.update(ok=False, why=_say(exc))
            actor = self.actor_marker(action)
            to = filled.get("to")
            if isinstance(to, list) and len(to) >= 3 and all(isinstance(v, (int, float)) for v in to):
                try:
                    judged = session.rules.judge_move(session.state, actor, Pose(*to))
                except RulesError as exc:
                    judged = {"legal": False, "reasons": [str(exc)]}
                if judged is not None:
                    out["judged"] = judged
            target = filled.get("target")
            if isinstance(target, int) and not isinstance(target, bool) and session.rules.may_premeasure():
                row = next((t for t in session.rules.targets(session.state, actor, self.terrain)
                            if t.get("marker") == target), None)
                out["measured"] = row
            return out

    def _refuse_while_waiting(self, session, what: str) -> None:
        """A request that would start a resolution while one waits is refused before anything
        is touched: no pose synced, no roll called off."""
        if session.pending is not None:
            raise GameError(f"cannot {what} now: waiting for {session.waiting_for()} (answer it, or call it off)")

    def act(self, action: dict) -> dict:
        with self._lock:
            session = self._need_game()
            self._refuse_while_waiting(session, "act")
            filled = self._fill(action)
            self._sync_from_frame(session.state)
            return self._run(lambda: session.act(filled))

    def start_round(self, orders: dict) -> dict:
        with self._lock:
            session = self._need_game()
            self._refuse_while_waiting(session, "start a round")
            if not isinstance(orders, dict):
                raise GameError("play orders: an object of player name to a list of vehicle markers")
            clean = {}
            for player, order in orders.items():
                if not isinstance(order, list):
                    raise GameError(f"{player}'s play order must be a list of vehicle markers")
                try:
                    clean[str(player)] = [None if m in (None, "") else int(m) for m in order]
                except (TypeError, ValueError, OverflowError):
                    raise GameError(f"{player}'s play order: {order!r} holds something that is not a marker") from None
            self._sync_from_frame(session.state)
            return self._run(lambda: session.start_round(clean))

    def end_turn(self) -> dict:
        with self._lock:
            session = self._need_game()
            self._refuse_while_waiting(session, "end the turn")
            self._sync_from_frame(session.state)
            return self._run(session.end_turn)

    def answer_choice(self, player, value) -> dict:
        """A choice the rules asked of one player, made by that player on the page."""
        with self._lock:
            session = self._need_game()
            if not isinstance(player, str) or not player:
                raise GameError("say which player is choosing ('player')")
            try:
                outcome = session.choose(player, value)
            except (RulesError, DiceError) as exc:
                raise GameError(_say(exc)) from None
            self._after(outcome)
            return self.game_json()

    def _run(self, start) -> dict:
        try:
            outcome = start()
        except (RulesError, DiceError) as exc:
            raise GameError(_say(exc)) from None
        except KeyError as exc:
            raise GameError(f"the action is missing {exc}") from None
        self._after(outcome)
        return self.game_json()

    def _after_tray(self, outcome: dict | None) -> None:
        """A throw in the tray finished a step: as after dice typed in or rolled here."""
        with self._lock:
            if self.session is not None:
                self._after(outcome)

    def _after(self, outcome: dict | None) -> None:
        if outcome is not None:
            self.last_outcome = {"event": self.session.log[-1].to_json()}
        self._hold_active()
        self._changed()

    def answer_typed(self, faces) -> dict:
        with self._lock:
            self._need_game()
            try:
                outcome = self.dice.typed(faces)
            except (RulesError, DiceError) as exc:
                raise GameError(_say(exc)) from None
            self._after(outcome)
            return self.game_json()

    def answer_virtual(self) -> dict:
        with self._lock:
            self._need_game()
            try:
                outcome = self.dice.roll()
            except (RulesError, DiceError) as exc:
                raise GameError(_say(exc)) from None
            self._after(outcome)
            return self.game_json()

    def void_throw(self, throw: DiceThrow) -> None:
        """The tray says a die was moved after its throw settled: the resolution that
        used it is taken back and asks for dice again."""
        with self._lock:
            if self.session is None:
                return
            try:
                outcome = self.session.void(throw)
            except (RulesError, DiceError) as exc:
                self.note(f"a die was moved after the throw settled; taking it back failed: {exc}", "warn")
                return
            self.note("a die was moved after the throw settled: that throw no longer stands; throw again", "warn")
            self._after(outcome)

    def cancel(self) -> dict:
        with self._lock:
            self._need_game().cancel()
            self.note("the resolution waiting for dice was called off; nothing it did stays")
            return self.game_json()

    def undo(self) -> dict:
        with self._lock:
            session = self._need_game()
            try:
                out = session.undo()
            except RulesError as exc:
                raise GameError(str(exc)) from None
            self.last_outcome = {"undone": out}
            self._hold_active()
            self._changed()
            return self.game_json()

    def move_demo_car(self, marker, x_mm, y_mm, heading_deg) -> dict:
        """Demo only: put a car at (x_mm, y_mm, heading_deg) in the synthetic camera's frames;
        the tracker then reads it back as it would a car moved by hand."""
        if self.demo_mover is None:
            raise GameError("cars are moved by hand on a real table; only the demo moves them from the page")
        try:
            marker = int(marker)
            x, y, h = (float(v) for v in (x_mm, y_mm, heading_deg))
        except (TypeError, ValueError):
            raise GameError("a demo move is a car's marker and a pose: x_mm, y_mm, heading_deg") from None
        if self.table.car(marker) is None:
            raise GameError(f"there is no car with marker {marker} on this table")
        if not all(math.isfinite(v) for v in (x, y, h)):
            raise GameError("a demo move's pose must be finite numbers")
        self._table_point([x, y], "where the car is put")
        self.demo_mover(marker, x, y, h)
        return {"moved": marker, "to": [x, y, h]}

    # --- the ruler ------------------------------------------------------------------

    def measure(self, a: int, b: int) -> dict:
        """Between two cars as the camera sees them now: closest and centre distance with
        doubt, arcs, and line of sight (terrain and the other cars block it)."""
        live = self.live_poses()
        feet = {}
        for m in (a, b):
            c = live.get(m)
            spec = self.table.car(m)
            if c is None or spec is None:
                raise GameError(f"the camera has not found car {m} on the table")
            feet[m] = Footprint(m, Pose(c["x_mm"], c["y_mm"], c["heading_deg"], c["sigma_mm"], c["sigma_deg"]),
                                spec.length_mm, spec.width_mm, spec.name)
        if a == b:
            raise GameError("choose two different cars")
        others = []
        for m, c in live.items():
            spec = self.table.car(m)
            if m not in (a, b) and spec is not None:
                others.append(Footprint(m, Pose(c["x_mm"], c["y_mm"], c["heading_deg"]),
                                        spec.length_mm, spec.width_mm, spec.name))
        d = closest_distance(feet[a], feet[b])
        cd = centre_distance(feet[a], feet[b])
        sight = Obstacles(self.terrain, others).line_of_sight(feet[a], feet[b])
        return {
            "from": a, "to": b, "names": [feet[a].name, feet[b].name],
            "distance_mm": round(d.distance_mm, 2), "distance_in": round(d.distance_mm / MM_PER_IN, 3),
            "sigma_mm": round(d.sigma_mm, 3), "sigma_in": round(d.sigma_mm / MM_PER_IN, 3),
            "line": [list(map(float, d.from_point)), list(map(float, d.to_point))],
            "centre_distance_mm": round(cd.distance_mm, 2), "centre_sigma_mm": round(cd.sigma_mm, 3),
            "in_front_arc": in_half_plane_arc(feet[a], feet[b], "front").verdict.to_json(),
            "in_rear_arc": in_half_plane_arc(feet[a], feet[b], "rear").verdict.to_json(),
            "line_of_sight": {"clear": sight.clear, "blocked_by": list(sight.blocked_by),
                              "line": [list(sight.line[0]), list(sight.line[1])]},
        }


def _say(exc: Exception) -> str:
    text = str(exc)
    return text[1:-1] if isinstance(exc, KeyError) and text.startswith("'") else text
