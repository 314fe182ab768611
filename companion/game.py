"""The table game: the one object the page talks to.

It holds the live table (what the camera sees), the game being played on it (a
rule system, its state and the session that resolves actions), and puts together
the parts that do each job:

- `table_dice.TableDice`: dice from the tray, typed in or rolled, answering one
  waiting request (choices asked of a player wait in the session);
- `activation.Activations`: where every car stood when the activation began (the
  ghosts), the way each drove since, and which cars are held;
- `game_evidence.EvidenceTrail`: the frame each verdict was measured from, into
  the game file with its event;
- `table_layout.TableLayout`: the table file, terrain, gates and points on it;
- `ruler.measure`: the two-car ruler.

It knows no rule system: it calls only what `rules/base.py` declares.

Poses: the game's poses follow the camera, except for held cars (the car whose
activation is under way, and any a player holds). When an action is resolved, the
cars it moves (those whose pose or path the camera gives it) are judged from where
they stood when their move began, and every other car from the latest frame; a
move reads the path driven since then. Nothing moves a car in the game without the
camera having seen it.

Every change bumps `version` and nudges the live table, so every open page hears
of it on its event stream.
"""

from __future__ import annotations

import copy
import logging
import math
import threading
import time
from collections import deque

from calibration.tablefile import table_to_json

from .activation import Activations
from .dice import ChoiceRequest, DiceError, DiceThrow, PlacementRequest, VirtualDice
from .game_evidence import EvidenceTrail
from .geometry import Footprint, Pose
from .live import LiveTable
from .rules.actions import ActionError, NotOffered
from .rules.base import DEFAULT_SYSTEM, RulesError, rule_system, rule_systems
from .ruler import RulerError, measure
from .scene import Scene
from .session import GameSession
from .table_dice import TableDice
from .table_layout import LayoutError, TableLayout


log = logging.getLogger(__name__)


class GameError(ValueError):
    """A request the game cannot take; the message says why, for the player."""


class TableGame:
    """The live table, and the game played on it."""

    def __init__(self, live: LiveTable, *, tray=None, seed: int | None = None, log_size: int = 200,
                 store=None) -> None:
        self.live = live
        #: The game file (companion.store.GameStore) every committed event goes to, or None.
        self.store = store
        self.evidence = EvidenceTrail(live, store)
        self.layout = TableLayout(live)
        self.activations = Activations()
        self.dice = TableDice(VirtualDice(seed), tray, on_change=self._changed, on_tray_outcome=self._after_tray)
        self.tray = tray
        self.session: GameSession | None = None
        self.setup: dict | None = None
        self.version = 0
        self.notes: deque[dict] = deque(maxlen=log_size)
        self.last_outcome: dict | None = None
        self._conditions: dict[int, tuple[str, str | None]] = {}   # what each piece had left after the last event
        self._lock = threading.RLock()
        self._moving: list[int] = []          # the cars the action being resolved moved
        #: Pieces to put back where the game has them (after an undo, or a resume), outside any
        #: resolution: each a PlacementRequest, and whether the table held the car already.
        self.putbacks: list[tuple[PlacementRequest, bool]] = []
        self._turn_checks: tuple | None = None     # (key, answer) of turn_checks, for one game version
        #: Pieces of a resumed game the camera has not seen yet: checked against the record on
        #: their first sighting, before the camera's pose is taken.
        self._unchecked: set[int] = set()
        #: The table file the game is played on (JSON, as the game file keeps it): its size,
        #: terrain, gates and cars' footprints cannot change mid-game (see `load_table`).
        self._game_table: dict | None = None
        #: On the synthetic demo table only: a callable(marker, x_mm, y_mm, heading_deg) that
        #: puts a car there in the rendered frames (players move the demo's cars from the page).
        #: On a real table it stays None: cars are moved by hand, and the camera sees them.
        self.demo_mover = None
        #: The demo's rules (serve sets it): what Setup offers first when no game runs, as
        #: when the demo's game could not start.
        self.demo_rules: str | None = None
        live.add_frame_listener(self.on_frame)

    @property
    def table(self):
        return self.layout.table

    @property
    def terrain(self):
        return self.layout.terrain

    @property
    def held(self) -> set[int]:
        return self.activations.held

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

    def _fresh_poses(self) -> dict[int, list[float]]:
        """Every car the camera sees now: [x_mm, y_mm, heading_deg, sigma_mm, sigma_deg]."""
        return {m: [c["x_mm"], c["y_mm"], c["heading_deg"], c["sigma_mm"], c["sigma_deg"]]
                for m, c in self.live_poses().items() if not c["stale"]}

    def on_frame(self, tracked) -> None:
        """A frame tracked: the paths grow, and the game's poses follow the camera (but for
        held cars), under the lock that orders resolutions: a pose never lands inside one.
        It is the session's own lock too (see `start`), so a throw the tray delivers on its
        thread, and the commit it leads to, never meet a frame half way."""
        with self._lock:
            for c in tracked.cars:
                if not c.stale:
                    self.activations.seen(c.id, [c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg])
            session = self.session
            if session is not None and isinstance(session.pending, PlacementRequest):
                self._try_place(session)
                return
            if session is not None and self._unchecked:
                self._check_resumed({c.id: c for c in tracked.cars if not c.stale})
            if session is not None and session.pending is None and self.putbacks:
                self._try_putbacks()
            if session is None or session.pending is not None:
                return
            poses = {c.id: Pose(c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg)
                     for c in tracked.cars if c.id not in self.held and not c.stale}
            if poses:
                session.rules.update_poses(session.state, poses)

    def _judging_poses(self, rules, state, moving: list[int]):
        """Put the cars where a resolution judges them from: the latest frame's poses (but
        held cars'), and the cars the action moves where their move began. The frame."""
        poses, frame = self.evidence.frame_poses()
        pieces = rules.pieces(state)
        use = {m: p for m, p in poses.items() if m not in self.held and m in pieces and pieces[m].in_play
               and m not in moving}
        for m in moving:
            stood = self.activations.stood(m)
            if stood is not None and m in pieces and pieces[m].in_play and m not in self.held:
                use[m] = Pose(*stood)
        if use:
            rules.update_poses(state, use)
        return use, frame

    def _sync_from_frame(self, state, moving: list[int] = ()) -> None:
        """Set the cars where the resolution about to be made judges them from, and keep the
        frame as its evidence."""
        use, frame = self._judging_poses(self.session.rules, state, list(moving))
        self.evidence.measuring_from(frame, use)

    def _begin_activation(self, session) -> None:
        """An activation (or round) began: every car's pose now is where it stood; a car whose
        activation begins is held there, with the frame its pose came from (one already held,
        as after an undo, keeps the pose the game has for it)."""
        before = self.activations.active
        active = session.rules.active_marker(session.state)
        self.activations.begin(self._fresh_poses(), active)
        if active is None or active == before:
            return
        poses, frame = self.evidence.frame_poses()
        v = session.rules.pieces(session.state).get(active)
        if v is not None and active in poses and v.in_play:
            session.rules.update_poses(session.state, {active: poses[active]})
        if v is not None:
            self.evidence.hold(active, v.pose, frame if active in poses else None)

    def _committed(self, event) -> None:
        """A resolution or an undo is final: into the game file with its evidence; then the
        activation's bookkeeping. A round, an end of turn, an undo, or the active car changing
        begins a new activation; a committed action's moved cars start their next move where
        they stand."""
        session = self.session
        self.evidence.commit(event, session.rules, session.state)
        # Committed (the store's append returned): whatever goes wrong from here must not make
        # the request answer "not done" (a player would do it again, an undo twice).
        try:
            before = self.activations.active
            now = session.rules.active_marker(session.state)
            if event.kind in ("round", "end_turn", "undo") or (before is not None and now != before):
                self._begin_activation(session)
            else:
                if now is not None and now != before:       # the first action began this car's activation
                    self.activations.active = now
                    self.activations.hold(now, True)
                fresh = self._fresh_poses()
                for m in self._moving:
                    self.activations.moved(m, fresh.get(m))
        except Exception as exc:
            log.exception("after committing event %s", event.n)
            self.note(f"event {event.n} is recorded, but the companion failed keeping track of the active car "
                      f"after it ({type(exc).__name__}); check where the cars stand", "warn")
        self._moving = []

    def hold(self, marker: int, held: bool) -> dict:
        with self._lock:
            self._vehicle(marker)
            self.activations.hold(int(marker), held)
            self._changed()
            return {"held": sorted(self.held)}

    def _table_pose(self, marker: int) -> list[float]:
        car = self.live_poses().get(marker)
        name = self._name(marker)
        if car is None:
            raise ActionError(f"the camera has not found the {name} (marker {marker}) on the table")
        if car["stale"]:
            raise ActionError(f"the camera has lost sight of the {name} (last seen {car['age_s']:.1f} s ago): "
                              f"clear the view and try again")
        return [car["x_mm"], car["y_mm"], car["heading_deg"], car["sigma_mm"], car["sigma_deg"]]

    def _table_point(self, value, what: str) -> tuple[float, float]:
        try:
            return self.layout.point(value, what)
        except LayoutError as exc:
            raise ActionError(str(exc)) from None

    def _name(self, marker: int) -> str:
        spec = self.table.car(marker)
        if self.session is not None and marker in self.session.rules.pieces(self.session.state):
            return self.session.rules.pieces(self.session.state)[marker].name
        return spec.name if spec else f"car {marker}"

    # --- setting up -------------------------------------------------------------------

    def rule_systems(self) -> list[dict]:
        return [cls().describe() for cls in rule_systems()]

    def start(self, rules: str, options: dict | None, rosters: list[dict], part_way: dict | None = None) -> dict:
        """A new game on the table as the camera sees it now; `part_way` (a scenario's `state`
        block) sets what play would have reached."""
        if not isinstance(rules, str) or not rules:
            raise GameError("choose a rule system")
        if options is not None and not isinstance(options, dict):
            raise GameError("options must be an object of option names and values")
        if not isinstance(rosters, list) or not all(isinstance(r, dict) for r in rosters):
            raise GameError("rosters must be a list of roster objects (one per player)")
        if self.store is not None and len(self.store):
            raise GameError(f"{self.store.path} already holds a game; resume it (serve --game) or "
                            f"start a new game in a new file")
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
        if part_way:
            system.start_part_way(state, part_way)
        with self._lock:
            if self.session is not None and self.session.pending is not None:
                self.session.cancel()
            # Pieces the rules move are put by hand where they say, the camera confirming it.
            self.session = GameSession(system, state, self.dice, lock=self._lock, placements=None)
            self.session.on_commit = self._committed
            self.setup = {"rules": rules, "options": system.settings, "rosters": copy.deepcopy(rosters)}
            if self.store is not None:
                from .record import setup_body
                self.store.append("setup", setup_body(system, copy.deepcopy(rosters), scene, state,
                                                      calibration=self.evidence.calibration(),
                                                      table_file=table_to_json(self.table),
                                                      part_way=copy.deepcopy(part_way)))
            self._game_table = table_to_json(self.table)
            self.activations = Activations()
            self.putbacks, self._unchecked = [], set()
            self._begin_activation(self.session)
            self.last_outcome = None
            self._conditions = self._conditions_now()
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
            session.choices = None
            session.placements = None
            session.lock = self._lock
            session.on_commit = self._committed
            self.session = session
            self._conditions = self._conditions_now()
            b = replayed.setup.body
            self.setup = {"rules": b["rules"], "options": b["options"], "rosters": b["rosters"]}
            self.activations = Activations()
            self.activations.begin(self._fresh_poses(), None)
            active = session.rules.active_marker(session.state)
            # The active car is held where the record says it stood, not where it stands now.
            self.activations.active = active
            if active is not None:
                self.activations.hold(active, True)
            self.note(f"resumed from {self.store.path}: {len(replayed.events)} events played back, "
                      f"every state as recorded")
            # Every car the camera first sees away from where the record has it is asked back there.
            self.putbacks = []
            self._unchecked = {m for m, p in session.rules.pieces(session.state).items()
                               if p.pose is not None and p.in_play}
            last = next((e for e in reversed(replayed.events)
                         if e.kind in ("setup", "table") and e.body.get("table_file")), None)
            here = table_to_json(self.table)
            self._game_table = last.body["table_file"] if last is not None else here
            if last is not None and last.body["table_file"] != here:
                why, changes = self._table_change(self._game_table, here)
                self.note(f"the table file given is not the game's last one (event {last.seq}): "
                          f"{why or '; '.join(changes)}; load the game's table file to play on it", "warn")
            return self.game_json()

    def starter_rosters(self, rules: str = DEFAULT_SYSTEM) -> list[dict]:
        """Rosters to start from: the rule system's own for this table's cars, to be edited."""
        try:
            return rule_system(rules).starter_rosters([(c.id, c.name) for c in self.table.cars])
        except (NotImplementedError, RulesError) as exc:
            raise GameError(str(exc)) from None

    def load_table(self, table, confirmed_by: str | None = None) -> None:
        """Play on another table file: the camera uses it from the next frame.

        Mid-game, a file that keeps the game's table (its size, terrain and gates, and every
        car in the game with its footprint) is taken, and recorded in the game file as a
        `table` event: anchors moved or measured again, a marker's place on a roof corrected.
        One that would change the game's table is refused, saying what it changes; so is any
        while a resolution waits for dice (it is measured on the table it began on)."""
        with self._lock:
            session = self.session
            if session is None:
                self.layout.load(table)
                self.note(f"table file loaded: {table.width_mm:g} x {table.depth_mm:g} mm, "
                          f"{len(table.anchors)} anchors, {len(table.cars)} cars")
                return
            if session.pending is not None:
                raise GameError(f"cannot load a table file now: waiting for {session.waiting_for()} "
                                f"(answer it, or call it off, first)")
            new = table_to_json(table)
            why, changes = self._table_change(self._game_table or table_to_json(self.table), new)
            if why:
                raise GameError(f"a game is being played on this table, and this table file {why}: finish the "
                                f"game (a new game file for a new table) or load one that keeps the game's table")
            self.layout.load(table)
            self._game_table = new
            if not changes:
                self.note("table file loaded again: nothing the game or the camera uses changed")
                return
            if self.store is not None:
                self.store.append("table", {"table_file": new, "changes": changes,
                                            **({"confirmed_by": confirmed_by} if confirmed_by else {})})
            self.note(f"table file loaded mid-game{' and recorded' if self.store is not None else ''}: "
                      f"{'; '.join(changes)}")

    def _table_change(self, old: dict, new: dict) -> tuple[str | None, list[str]]:
        """Whether a table file (JSON, as a game file keeps it) may replace the game's own
        mid-game: (why not, or None; what it changes)."""
        if (old["width_mm"], old["depth_mm"]) != (new["width_mm"], new["depth_mm"]):
            return (f"is {new['width_mm']:g} x {new['depth_mm']:g} mm, the game's table "
                    f"{old['width_mm']:g} x {old['depth_mm']:g} mm"), []
        if old["terrain"] != new["terrain"]:
            return "has other terrain than the game's (the rules judge the game's)", []
        if old.get("gates", []) != new.get("gates", []):
            return "has other gates than the game's (the rules judge the game's)", []
        old_cars = {c["id"]: c for c in old["cars"]}
        new_cars = {c["id"]: c for c in new["cars"]}
        in_game = self.session.rules.pieces(self.session.state)
        changes = []
        for m in sorted(in_game):
            if m not in old_cars:
                continue
            was, now = old_cars[m], new_cars.get(m)
            name = in_game[m].name
            if now is None:
                return f"has no car with marker {m} (the {name}, in the game)", []
            if (now["length_mm"], now["width_mm"]) != (was["length_mm"], was["width_mm"]):
                return (f"makes the {name} (marker {m}) {now['length_mm']:g} x {now['width_mm']:g} mm, in the game "
                        f"{was['length_mm']:g} x {was['width_mm']:g} mm"), []
            if any(now[k] != was[k] for k in ("roof_mm", "marker_mm", "offset_mm")):
                changes.append(f"the {name}'s marker (roof {now['roof_mm']:g} mm, side {now['marker_mm']:g} mm, "
                               f"offset {now['offset_mm']})")
        if old["anchors"] != new["anchors"]:
            changes.append(f"anchors ({len(new['anchors'])}: {', '.join(str(a['id']) for a in new['anchors'])})")
        others = sorted(set(old_cars) ^ set(new_cars))
        if others:
            changes.append(f"cars not in the game ({', '.join(map(str, others))})")
        for key, what in (("dictionary", "marker dictionary"), ("roof_sigma_mm", "roof heights' doubt")):
            if old.get(key) != new.get(key):
                changes.append(f"{what} {new.get(key)}")
        return None, changes

    def place_gate(self, name, a, b, role="") -> dict:
        """A gate placed on the page (two posts picked on the table): it counts from now on,
        and the table-file lines to keep it are given back."""
        with self._lock:
            try:
                gate, toml = self.layout.place_gate(name, a, b, role)
            except LayoutError as exc:
                raise GameError(str(exc)) from None
            self.note(f"gate '{gate['name']}' placed: {gate['width_mm']:.0f} mm wide, posts A {tuple(gate['a'])} "
                      f"B {tuple(gate['b'])}")
        return {"gate": gate, "table_file": toml}

    def remove_gate(self, name) -> dict:
        with self._lock:
            try:
                gates = self.layout.remove_gate(name)
            except LayoutError as exc:
                raise GameError(str(exc)) from None
            self.note(f"gate '{name}' taken away")
            return {"gates": gates}

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
                        "rule_systems": self.rule_systems(), "demo_rules": self.demo_rules}
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
                         "round_orders": session.rules.round_orders(session.state),
                         "premeasure": session.rules.may_premeasure()},
                "pending": self._pending_json(session, running),
                "log": [self._public(session, e.to_json()) for e in reversed(session.log[-60:])],
                "last_outcome": ({**self.last_outcome, "event": self._public(session, self.last_outcome["event"])}
                                 if self.last_outcome and "event" in self.last_outcome else self.last_outcome),
                "held": sorted(self.held),
                "activation": self.activations.to_json(),
                "can_undo": bool(session._undo) and session.pending is None,
                "out_of_place": self.out_of_place(),
                "turn_checks": self.turn_checks(),
                # Pieces the rules took out of the game (wrecked, removed, off the table): the
                # page draws them as such, not as cars still playing.
                "out_of_play": sorted(m for m, p in session.rules.pieces(session.state).items() if not p.in_play),
                "notes": list(self.notes),
                "rule_systems": self.rule_systems(),
            }

    def _pending_json(self, session, running) -> dict | None:
        """What the running resolution waits for: dice (`"dice"`), a choice that is one
        player's to make (`"choice"`, with its options), or a piece put in place
        (`"placement"`); with nothing running, a piece to put back after an undo or a resume
        (`"placement"` with `put_back`)."""
        if session.pending is None and self.putbacks:
            p = self.putbacks[0][0]
            return {"asked": f"put {p.who} back {p.why}", "who": p.who, "action": None, "kind": "put_back",
                    "so_far": [], "choices_so_far": [], "tray": self.tray is not None, "waiting": "placement",
                    "placement": {**p.to_json(), "asked": f"put {p.who} back {p.why}", "put_back": True,
                                  "seen": self._seen_against(p), "placed_so_far": [],
                                  "also": [r.to_json() for r, _ in self.putbacks[1:]]},
                    "dice": [], "purpose": p.why}
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
        elif isinstance(p, PlacementRequest):
            out.update(waiting="placement", placement={**p.to_json(), "seen": self._seen_against(p),
                                                       "placed_so_far": running.placements if running else []},
                       dice=[], purpose=p.why)
        else:
            out.update(waiting="dice", dice=list(p.dice), purpose=p.purpose)
        return out

    def _seen_against(self, p: PlacementRequest) -> dict | None:
        """Where the camera sees the piece a placement waits for, and how far it is to go."""
        seen = self.live_poses().get(p.marker)
        if seen is None:
            return None
        d_mm, d_deg = p.off_by(seen["x_mm"], seen["y_mm"], seen["heading_deg"])
        return {"at": [round(seen["x_mm"], 2), round(seen["y_mm"], 2), round(seen["heading_deg"], 2)],
                "stale": bool(seen["stale"]), "off_mm": round(d_mm, 1), "off_deg": round(d_deg, 1)}

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
        return self.activations.path(marker, self._table_pose(marker))

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
            why = self._rules_reason(action)
            raise GameError(f"the {v.name} cannot {act} now" + (f": {why}" if why else "") + f" (it can: {can})")
        return specs[act]

    def _rules_reason(self, action: dict, spec=None) -> str | None:
        """Why the rules themselves refuse an action the car's spec does not offer (not its
        turn, already moved, not the target the book says): the action as sent, tried on a
        copy of the game up to its first dice, with the poses a resolution would judge from.
        None where the rules would take it, or stop only at a field it lacks: then the spec's
        own words are all there is to say. Nothing changes."""
        session = self.session
        act = action.get("act")
        if act not in session.rules.handlers:
            return None
        if spec is not None:
            action = {**action, **spec.camera_values(action, self)}
        state = copy.deepcopy(session.state)
        try:
            self._judging_poses(session.rules, state, [] if spec is None else spec.camera_cars(action))
            next(session.rules.resolve(state, action))
        except RulesError as exc:
            text = str(exc)
            return None if text.startswith(f"{act}: the action needs the field") else text
        except Exception:        # noqa: BLE001 - unchecked fields the rules never expected: no reason to give
            return None
        return None

    def _fill(self, action: dict) -> tuple[dict, list[int]]:
        """Check an action's fields against its spec; the camera fills where cars stand and
        the ways they drove. Also: the cars whose pose or path the camera gave (they moved
        for this action)."""
        spec = self._spec(action)
        try:
            filled = spec.fill(action, self)
        except ActionError as exc:
            # A choice the spec does not offer (a target the book rules out): the rules say why.
            why = self._rules_reason(action, spec) if isinstance(exc, NotOffered) else None
            raise GameError(f"{exc}: {why}" if why else str(exc)) from None
        return filled, spec.camera_cars(filled)

    def checks(self, marker) -> dict:
        """Every action the car can take now, each with the rules' own verdict for every option
        of its choices, tried as `preview` tries one (see companion/checks.py): what the page
        offers, greys and picks first. Nothing changes."""
        from .checks import car_checks
        with self._lock:
            return car_checks(self, marker)

    def preview(self, action: dict) -> dict:
        """Would this action go ahead, and what would it ask for? Played on a copy up to
        its first dice; nothing changes."""
        with self._lock:
            session = self._need_game()
            try:
                filled, moving = self._fill(action)
            except GameError as exc:
                return {"ok": False, "why": str(exc)}
            state = copy.deepcopy(session.state)
            self._judging_poses(session.rules, state, moving)     # as the resolution would be
            said = session.rules.judge_action(state, filled)      # its checks before any dice
            refused = said is not None and not said.get("legal", True)
            if not session.rules.may_premeasure():
                # Playing it up to its dice would tell what is in range: only those checks.
                out = {"ok": not refused, "action": filled, "needs": None, "premeasure": False,
                       "about": "measured, and shown, once the action is declared"}
                if refused:
                    out["why"] = "; ".join(said.get("reasons") or ["the rules refuse it"])
                if said is not None and said.get("move"):
                    out["judged"] = said
                return out
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
            if "judged" not in out and said is not None and said.get("move"):
                out["judged"] = said
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
        if self.putbacks:
            names = ", ".join(f"{p.who}" for p, _ in self.putbacks)
            raise GameError(f"cannot {what} now: waiting for {names} to be put back where the game has "
                            f"{'it' if len(self.putbacks) == 1 else 'them'} ({self.putbacks[0][0].why})")

    def act(self, action: dict) -> dict:
        with self._lock:
            session = self._need_game()
            self._refuse_while_waiting(session, "act")
            filled, moving = self._fill(action)
            return self._resolve(session, lambda: session.act(filled), moving)

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
            self._refuse_moved_held(session, "start a round")
            return self._resolve(session, lambda: session.start_round(clean))

    def end_turn(self) -> dict:
        with self._lock:
            session = self._need_game()
            self._refuse_while_waiting(session, "end the turn")
            self._refuse_moved_held(session, "end the turn")
            return self._resolve(session, session.end_turn)

    def _refuse_moved_held(self, session, what: str) -> None:
        """Ending a turn or a round lets go of the cars the game holds, and a car let go is
        where the camera sees it: a held car moved with no move resolved (the acting car pushed
        before its crew did something else) would keep that move for free. Refused until it
        is back where the game has it, or its move is resolved."""
        away = self.out_of_place(with_active=True)
        if away:
            names = "; ".join(a["text"] for a in away)
            raise GameError(f"cannot {what} now: {names}, and no move of it was resolved; put it back on its "
                            f"outline (or resolve its move) first")

    def turn_checks(self) -> dict:
        """Whether the Round tab's two steps would go ahead now, and if not why, in the rules'
        own words: a new round with the play orders the game offers, and the end of the turn,
        each played on a copy of the game up to its first request (as `checks` plays actions).
        `{"round": None | why, "end_turn": None | why}`; nothing changes."""
        from .checks import play_to_first_request
        with self._lock:
            session = self.session
            if session is None:
                return {"round": "no game yet", "end_turn": "no game yet"}
            key = (self.version, tuple(sorted((a["marker"], a["off_mm"]) for a in self.out_of_place(with_active=True))))
            if self._turn_checks is not None and self._turn_checks[0] == key:
                return self._turn_checks[1]
            rules = session.rules
            out: dict = {}
            for step in ("round", "end_turn"):
                what = "start a round" if step == "round" else "end the turn"
                try:
                    self._refuse_while_waiting(session, what)
                    self._refuse_moved_held(session, what)
                except GameError as exc:
                    out[step] = str(exc)
                    continue
                state = copy.deepcopy(session.state)
                if step == "round":
                    offered = rules.round_orders(state) or {}
                    orders = {p: [c.get("value") for c in cars] for p, cars in offered.items()}
                    got = play_to_first_request(lambda: rules.start_round(state, orders))
                else:
                    got = play_to_first_request(lambda: rules.end_activation(state))
                out[step] = None if got["ok"] else got["why"]
            self._turn_checks = (key, out)
            return out

    def _resolve(self, session, start, moving: list[int] = ()) -> dict:
        """Set the cars where the resolution judges them from, and start it. Refused by the
        rules, it changes nothing: the game is put back as it was before the cars were set."""
        saved, logged = copy.deepcopy(session.state), len(session.log)
        self._sync_from_frame(session.state, moving)
        self._moving = list(moving)
        try:
            return self._run(start)
        except BaseException:
            if session._running is None and len(session.log) == logged:     # nothing began, nothing committed
                session.state = saved
                self._moving = []
                self.evidence.measuring_from(None, ())
            raise

    def _try_place(self, session) -> bool:
        """A piece the rules moved waits to be put in place: taken once the camera sees it
        there (the record keeps the camera's pose). True when it was."""
        p = session.pending
        if not isinstance(p, PlacementRequest) or p.chosen:
            return False            # a piece put where a player chooses is there when they say so
        seen = self.live_poses().get(p.marker)
        # A car still being pushed towards its place is not in place yet: it must be let go.
        if seen is None or seen["stale"] or not p.fits(seen["x_mm"], seen["y_mm"], seen["heading_deg"]) \
                or not self.activations.still(p.marker):
            return False
        try:
            outcome = session.place(p.marker, [seen["x_mm"], seen["y_mm"], seen["heading_deg"], seen["sigma_mm"],
                                               seen["sigma_deg"]], "camera")
        except (RulesError, DiceError) as exc:
            self.note(f"putting {p.who} in place failed: {exc}", "warn")
            return False
        self._after(outcome)          # which tries the next placement, if one is asked
        return True

    def redo_move(self, marker) -> dict:
        """"Redo this move": the car's move under way starts again from where it began once the
        car is put down near its ghost and let go; no exact re-placement is needed."""
        with self._lock:
            v = self._vehicle(marker)
            back = self.activations.redo_move(v.marker)
            if back is None:
                raise GameError(f"the {v.name} has no move under way to redo")
            self.note(f"redo the {v.name}'s move: put it down by its ghost and let go, then move it again")
            return self.game_json()

    def place(self, marker, stay: bool = False) -> dict:
        """The piece the rules moved is in place (the camera is asked where it stands), or,
        where the book lets the players leave it where it stands, it stays there. Refused
        (nothing changes) for another piece, a piece not yet close enough, or staying where
        the book does not allow it."""
        with self._lock:
            session = self._need_game()
            p = session.pending
            if p is None and self.putbacks:
                return self._confirm_putback(marker, stay)
            if not isinstance(p, PlacementRequest):
                raise GameError("no piece is waiting to be put in place"
                                + (f": waiting for {session.waiting_for()}" if p is not None else ""))
            try:
                marker = int(marker)
            except (TypeError, ValueError):
                raise GameError(f"{marker!r} is not a piece's marker number") from None
            if marker != p.marker:
                raise GameError(f"waiting for {p.who} to be put in place ({p.why}), "
                                f"not the {self._name(marker)}")
            try:
                pose = self._table_pose(marker)
            except ActionError as exc:
                raise GameError(str(exc)) from None
            try:
                outcome = session.place(marker, pose, "stayed" if stay else "camera")
            except (RulesError, DiceError) as exc:
                raise GameError(_say(exc)) from None
            self._after(outcome)
            return self.game_json()

    def _confirm_putback(self, marker, stay: bool) -> dict:
        """A put-back confirmed on the page: the camera must see the piece there (an undo or a
        resume never lets a piece stay where the undone move, or anything else, left it)."""
        try:
            marker = int(marker)
        except (TypeError, ValueError):
            raise GameError(f"{marker!r} is not a piece's marker number") from None
        found = next(((r, h) for r, h in self.putbacks if r.marker == marker), None)
        if found is None:
            names = ", ".join(f"{r.who}" for r, _ in self.putbacks)
            raise GameError(f"waiting for {names} to be put back, not the {self._name(marker)}")
        request, was_held = found
        if stay:
            raise GameError(f"{request.who} must be put back {request.why}: it cannot stay where it stands")
        try:
            pose = self._table_pose(marker)
        except ActionError as exc:
            raise GameError(str(exc)) from None
        if not request.fits(*pose[:3]):
            d_mm, d_deg = request.off_by(*pose[:3])
            raise GameError(f"{request.who} stands {d_mm:.0f} mm and {d_deg:.0f}° from where the game has it; "
                            f"put it within {request.tolerance_mm:.0f} mm and {request.tolerance_deg:.0f}°")
        self.putbacks.remove(found)
        self._put_back(request, {"x_mm": pose[0], "y_mm": pose[1], "heading_deg": pose[2], "sigma_mm": pose[3],
                                 "sigma_deg": pose[4]}, was_held)
        self._changed()
        return self.game_json()

    def out_of_place(self, with_active: bool = False) -> list[dict]:
        """Held pieces (but the car whose move is under way, unless `with_active`) the camera
        sees away from where the game has them: nothing waits, yet the record and the table
        disagree, and the page says so ("the Buggy stands 14 mm from where the rules put it")."""
        session = self.session
        if session is None or session.pending is not None:
            return []
        out = []
        live = self.live_poses()
        active = self.activations.active
        for m, piece in session.rules.pieces(session.state).items():
            if m not in self.held or (m == active and not with_active) or piece.pose is None or not piece.in_play:
                continue
            seen = live.get(m)
            if seen is None or seen["stale"]:
                continue
            d_mm = math.hypot(seen["x_mm"] - piece.pose.x_mm, seen["y_mm"] - piece.pose.y_mm)
            d_deg = abs((seen["heading_deg"] - piece.pose.heading_deg + 180) % 360 - 180)
            doubt_mm = max(3.0, 3 * float(seen.get("sigma_mm") or 0.0))
            doubt_deg = max(3.0, 3 * float(seen.get("sigma_deg") or 0.0))
            if d_mm > doubt_mm or d_deg > doubt_deg:
                out.append({"marker": m, "name": piece.name, "off_mm": round(d_mm, 1), "off_deg": round(d_deg, 1),
                            "to": [round(piece.pose.x_mm, 2), round(piece.pose.y_mm, 2),
                                   round(piece.pose.heading_deg, 2)],
                            "text": f"the {piece.name} stands {d_mm:.0f} mm from where the game has it"})
        return out

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
        """A request was answered: if an event was committed, the activation's bookkeeping
        follows it (see `_committed`); the page hears of the change either way."""
        if outcome is not None:
            before, now = self._conditions, self._conditions_now()
            self._conditions = now
            left = [{"marker": m, "name": name, "left": text} for m, (name, text) in now.items()
                    if text is not None and before.get(m) != (name, text)]
            self.last_outcome = {"event": self.session.log[-1].to_json(), "left": left}
        self._changed()
        session = self.session
        if session is not None and isinstance(session.pending, PlacementRequest):
            self._try_place(session)          # a piece already standing where the rules put it

    def _conditions_now(self) -> dict[int, tuple[str, str | None]]:
        """Each piece's name and what it has left (the rules' words), to say after an event
        what it changed ("the Buggy: body 9 of 13 left")."""
        session = self.session
        if session is None:
            return {}
        out = {}
        for m, p in session.rules.pieces(session.state).items():
            try:
                out[m] = (p.name, session.rules.condition(session.state, m))
            except RulesError:          # a piece the rules cannot say it of now: nothing said
                out[m] = (p.name, None)
        return out

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
            self._conditions = self._conditions_now()
            undone = next((e for e in session.log if e.n == out["undid"]), None)
            what = (undone.detail.get("act") if undone is not None and undone.kind == "action"
                    else out.get("kind", "event"))
            # The pieces the undone event moved, and the held ones, go back where the game has them
            # (any other car's pose is the camera's anyway).
            moved = {p["marker"] for p in (undone.placements if undone is not None else [])} | self.held
            self._ask_putbacks(f"where it stood before the undone {str(what).replace('_', ' ')}", moved)
            self._changed()
            return self.game_json()

    def _ask_putbacks(self, why: str, markers: set[int]) -> None:
        """Each of these pieces the camera sees away from where the game now has it (an undo
        took the game back) is asked to be put back there, as a placement: held where the game
        has it until the camera sees it there."""
        session = self.session
        live = self.live_poses()
        self.putbacks = []
        rules = session.rules
        for m, piece in sorted(rules.pieces(session.state).items()):
            if m not in markers or piece.pose is None or not piece.in_play:
                continue
            request = PlacementRequest(m, piece.name, piece.pose.x_mm, piece.pose.y_mm, piece.pose.heading_deg,
                                       why, rules.PLACE_TOLERANCE_MM, rules.PLACE_TOLERANCE_DEG)
            seen = live.get(m)
            if seen is not None and not seen["stale"] and request.fits(seen["x_mm"], seen["y_mm"],
                                                                        seen["heading_deg"]):
                continue
            self.putbacks.append((request, m in self.held))
            self.activations.hold(m, True)

    def _check_resumed(self, seen: dict) -> None:
        """A resumed game's pieces, each on its first sighting: one the camera sees away from
        where the record has it is asked back there (and held there meanwhile)."""
        session = self.session
        rules = session.rules
        pieces = rules.pieces(session.state)
        for m in sorted(self._unchecked & set(seen)):
            self._unchecked.discard(m)
            piece, c = pieces.get(m), seen[m]
            if piece is None or piece.pose is None or not piece.in_play:
                continue
            request = PlacementRequest(m, piece.name, piece.pose.x_mm, piece.pose.y_mm, piece.pose.heading_deg,
                                       "where the game file has it", rules.PLACE_TOLERANCE_MM,
                                       rules.PLACE_TOLERANCE_DEG)
            if not request.fits(c.x_mm, c.y_mm, c.heading_deg):
                self.putbacks.append((request, m in self.held))
                self.activations.hold(m, True)
                self._changed()

    def _try_putbacks(self) -> None:
        """Put-backs the camera now sees done (the piece let go where the game has it): the
        game keeps the camera's pose, and the car's next move starts from there."""
        live = self.live_poses()
        left = []
        done = False
        for request, was_held in self.putbacks:
            seen = live.get(request.marker)
            if seen is not None and not seen["stale"] and self.activations.still(request.marker) \
                    and request.fits(seen["x_mm"], seen["y_mm"], seen["heading_deg"]):
                self._put_back(request, seen, was_held)
                done = True
            else:
                left.append((request, was_held))
        self.putbacks = left
        if done:
            self._changed()

    def _put_back(self, request: PlacementRequest, seen: dict, was_held: bool) -> None:
        session = self.session
        pose = [seen["x_mm"], seen["y_mm"], seen["heading_deg"], seen["sigma_mm"], seen["sigma_deg"]]
        session.rules.set_poses(session.state, {request.marker: Pose(*pose)})
        self.activations.start[request.marker] = list(pose)
        self.activations.moved(request.marker, pose)
        if not was_held:
            self.activations.hold(request.marker, False)
        self.note(f"{request.who} is back where the game has it")

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
        try:
            self.layout.point([x, y], "where the car is put")
        except LayoutError as exc:
            raise GameError(str(exc)) from None
        self.demo_mover(marker, x, y, h)
        return {"moved": marker, "to": [x, y, h]}

    # --- the ruler ------------------------------------------------------------------

    def measure(self, a: int, b: int) -> dict:
        """Between two cars as the camera sees them now (see `ruler.measure`); refused while a
        game whose book forbids measuring before declaring is being played."""
        with self._lock:
            if self.session is not None and not self.session.rules.may_premeasure():
                raise GameError(f"{self.session.rules.title} forbids measuring before an action is declared: "
                                f"the ruler is off during its games")
        try:
            return measure(self.live_poses(), self.table, self.terrain, a, b)
        except RulerError as exc:
            raise GameError(str(exc)) from None


def _say(exc: Exception) -> str:
    text = str(exc)
    return text[1:-1] if isinstance(exc, KeyError) and text.startswith("'") else text
