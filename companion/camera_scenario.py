"""`companion scenario run FILE --through-camera`: a scenario played as a table plays it.

The scene's cars stand on a filmed synthetic table (companion.filmed). Every `poses`
step, and every pose or path an action gives, is made by moving the cars in rendered
frames; the rules read only what tracking those frames gives. Every step goes through
the TableGame, with the request shapes the page sends:

- `round`, `end_turn`, `undo`: `start_round(orders)`, `end_turn()`, `undo()`;
- an action: the acting car's spec for that act, from `car(marker)["actions"]` as the
  page gets it. Each `table_pose` field the step gives is made by sliding car `of` there,
  each `table_path` field by driving car `of` along it, and the action is sent without
  them (the game reads them from the camera); choices, points, numbers and flags are
  sent as given. A field the spec lacks, or an act the car cannot take, cannot be sent
  from the page: the run stops and says so. (A step that expects a refusal is sent
  anyway when the car's card lacks its act or a field: not offering it is how the page
  refuses, and the game's refusal carries the rules' own reason.)
  A refused action's moved cars are put back where they stood, as a player would.
- `judge_move`: the car is slid to the pose, the page's preview of its move (a
  `table_pose` "to") answers with `judged`, and the car is put back;
- dice: the scenario's `dice` typed in request by request (`answer_typed`); choices a
  player owes, the scenario's `choices` in order (`answer_choice`); a piece the rules
  moved is slid to where the placement asks, and the camera seeing it there takes it.

The outcome is a plain run's, plus `"camera": {"frames", "max_pose_error_mm",
"max_heading_error_deg"}` (see FilmedTable.read for which frames count).
"""

from __future__ import annotations

from .filmed import FilmedTable, FilmError
from .scenario import ScenarioError, ScenarioStopped, check_file
from .scene import SceneError, parse_scene

#: A scenario's expected poses through the camera: within 1 mm and 1 degree (docs/scenarios.md).
POSE_TOLERANCE = (1.0, 1.0)


class _ChoiceRefused(Exception):
    """A choice the game refused (outside the offers, or another player's)."""


class _Allowed(Exception):
    """A step the file expects to be refused went ahead; `outcome` is what came of it."""

    def __init__(self, outcome: dict) -> None:
        super().__init__("allowed")
        self.outcome = outcome


class _Unreachable(ScenarioError):
    """A step the page cannot send."""


def _roster_markers(rosters) -> set[int]:
    """Every whole number a roster names as a marker (a hidden buggy's, say): the table's
    anchors must not take those ids."""
    found: set[int] = set()

    def walk(x, key=None):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, k)
        elif isinstance(x, list):
            for v in x:
                walk(v, key)
        elif key in ("marker", "vehicle", "aboard") and isinstance(x, int) and not isinstance(x, bool):
            found.add(x)
    walk(rosters)
    return found


class CameraRun:
    """One scenario played on a filmed table through a TableGame."""

    def __init__(self, data: dict, source: str = "<scenario>", store=None, **film_options) -> None:
        from .game import GameError, TableGame
        from .rules.base import RulesError
        self.GameError = GameError
        self.data = data
        self.source = source
        check_file(data, source)
        self.setup_error = None
        try:
            scene = parse_scene(data, source)
        except SceneError as exc:
            raise ScenarioError(f"{source}: {exc}") from None
        self.film = FilmedTable(scene, reserved_ids=_roster_markers(data.get("rosters", [])), **film_options)
        # With `store` (a GameStore), the game file records it as a table's game is recorded.
        self.game = TableGame(self.film.live, store=store)
        self.dice = list(data.get("dice", []))
        self.dice_used = 0
        self.choices = list(data.get("choices", []))
        self.choices_used = 0
        self.film.settle()
        self.film.read()
        try:
            self.game.start(data["rules"], data.get("options"), data.get("rosters", []), data.get("state"))
        except RulesError as exc:
            if not data.get("expect_error"):
                raise ScenarioError(f"{source}: {exc}") from None
            self.setup_error = str(exc)        # the refusal the file expects: the outcome
        except (GameError, KeyError) as exc:
            raise ScenarioError(f"{source}: {exc}") from None

    # --- answering what the game waits for ------------------------------------------------

    def _answer(self, where: str, refused_ok: bool = False) -> None:
        """Type in the dice and make the choices the game waits for, as the page does."""
        while True:
            pending = self.game.game_json()["pending"]
            if pending is None:
                return
            if pending.get("waiting") == "placement":
                # The rules moved a piece: the hand puts it where the page draws it, and the
                # camera seeing it there stands still takes it.
                p = pending["placement"]
                asked = self.game.session.pending
                self.film.slide(int(p["marker"]), p["to"], f"putting the {p['name']} in place ({p['why']})")
                if self.game.session.pending is asked:
                    self.game.place(int(p["marker"]))      # says how far off it is, if it is
                continue
            if pending.get("waiting") == "choice":
                if self.choices_used >= len(self.choices):
                    raise ScenarioError(f"{where}: ran out of choices (waiting for {pending['asked']})")
                c = self.choices[self.choices_used]
                self.choices_used += 1
                player, value = (c.get("player", pending["player"]), c["value"]) \
                    if isinstance(c, dict) and "value" in c else (pending["player"], c)
                try:
                    self.game.answer_choice(player, value)
                except self.GameError as exc:
                    # A choice outside the offers (or another player's) is refused; the step it
                    # came in is called off, and nothing it did stays.
                    self.game.cancel()
                    raise _ChoiceRefused(str(exc)) from None
            else:
                n = len(pending["dice"])
                if self.dice_used + n > len(self.dice):
                    raise ScenarioError(f"{where}: ran out of dice (waiting for {pending['asked']})")
                faces = self.dice[self.dice_used:self.dice_used + n]
                self.dice_used += n
                self.game.answer_typed(faces)

    def _call(self, where: str, request):
        """A request that may commit an event: its dice answered, the event's outcome."""
        before = self._last_event()
        self.film.read()
        request()
        self._answer(where)
        last = self._last_event()
        if last is None or last == before:
            raise ScenarioError(f"{where}: the game committed nothing")
        return self.game.game_json()["last_outcome"]["event"]["outcome"]

    def _last_event(self):
        last = self.game.game_json().get("last_outcome")
        if not last or "event" not in last:
            return None
        return last["event"]["n"]

    # --- steps ----------------------------------------------------------------------------

    def play(self) -> dict:
        from .rules.base import RulesError
        from .dice import DiceError
        if self.data.get("expect_error"):
            if self.setup_error is None:
                raise ScenarioStopped(f"{self.source}: expected the setup to be refused, but it was accepted",
                                      self._so_far([]))
            return {"rules": self.data["rules"], "options": self.data.get("options") or {}, "error": self.setup_error,
                    "steps": [], "dice_left": len(self.dice), "choices_left": len(self.choices),
                    "camera": self.film.to_json()}
        steps = []
        for n, step in enumerate(self.data.get("steps", [])):
            where = f"{self.source}: steps.{n}"      # numbered as "expect" paths are, from 0
            refused_ok = bool(step.get("expect_error"))
            try:
                out = self.step(step, where)
            except _ChoiceRefused as exc:
                if not refused_ok:
                    raise ScenarioStopped(f"{where}: a choice was refused: {exc}", self._so_far(steps)) from None
                out = {"error": str(exc)}
            except _Allowed as exc:
                steps.append(exc.outcome)
                raise ScenarioStopped(f"{where}: expected it to be refused, but it was allowed",
                                      self._so_far(steps)) from None
            except self.GameError as exc:
                raise ScenarioStopped(f"{where}: refused: {exc}", self._so_far(steps)) from None
            except (RulesError, DiceError) as exc:
                raise ScenarioError(f"{where}: {exc}") from None
            except FilmError as exc:
                raise ScenarioError(f"{where}: {exc}") from None
            steps.append(out)
        return self._so_far(steps)

    def _so_far(self, steps: list) -> dict:
        g = self.game.game_json()
        return {"rules": g["game"]["rules"]["name"], "options": g["game"]["setup"]["options"], "steps": steps,
                "state": g["game"]["state"], "dice_left": len(self.dice) - self.dice_used,
                "choices_left": len(self.choices) - self.choices_used,
                "camera": self.film.to_json()}

    def _refusable(self, step: dict, where: str, request) -> dict:
        """A round, an end of turn or an undo, which the file may expect to be refused."""
        try:
            out = request()
        except self.GameError as exc:
            if step.get("expect_error"):
                return {"error": str(exc)}
            raise
        if step.get("expect_error"):
            raise _Allowed(out)
        return out

    def _undo(self) -> dict:
        self.film.read()
        self.game.undo()
        return self.game.game_json()["last_outcome"]["undone"]

    def step(self, step: dict, where: str) -> dict:
        if not isinstance(step, dict):
            raise ScenarioError(f"{where}: a step is an object (round, act, end_turn, undo, poses or judge_move)")
        if "round" in step:
            return self._refusable(step, where, lambda: self._call(where, lambda: self.game.start_round(step["round"])))
        if step.get("end_turn"):
            return self._refusable(step, where, lambda: self._call(where, self.game.end_turn))
        if step.get("undo"):
            return self._refusable(step, where, self._undo)
        if "poses" in step:
            for marker, pose in step["poses"].items():
                self.film.slide(int(marker), pose, f"poses: car {marker}")
            return {"poses": step["poses"]}
        if "judge_move" in step:
            return self._judge(step["judge_move"], where)
        if "act" in step:
            return self._act(step, where)
        raise ScenarioError(f"{where}: a step is a round, act, end_turn, undo, poses or judge_move")

    def _judge(self, j: dict, where: str) -> dict:
        marker = int(j["vehicle"])
        card = self.game.car(marker)
        name = card.get("card", {}).get("name", f"car {marker}") if isinstance(card.get("card"), dict) else f"car {marker}"
        spec = next((a for a in card["actions"]
                     if any(f["kind"] == "table_pose" and f["name"] == "to" and f.get("of") == marker
                            for f in a["fields"])), None)
        if spec is None:
            raise _Unreachable(f"{where}: judge_move is not reachable from the page: none of the {name}'s "
                               f"actions ({', '.join(a['act'] for a in card['actions']) or 'none'}) takes "
                               f"where it stands ('to') from the camera, so no preview judges a move")
        stood = self.film.pose(marker)
        self.film.slide(marker, j["to"], "judge_move")
        action = {"act": spec["act"], **{f["name"]: f["value"] for f in spec["fields"] if f["kind"] == "fixed"}}
        self.film.read()
        preview = self.game.preview(action)
        self.film.slide(marker, stood, "judge_move: putting the car back")
        if "judged" not in preview:
            raise _Unreachable(f"{where}: judge_move is not reachable from the page: the preview of the "
                               f"{name}'s {spec['act']} judges nothing ({preview.get('why', 'no reason given')})")
        return preview["judged"]

    def _act(self, step: dict, where: str) -> dict:
        from .rules.base import RulesError
        refused_ok = bool(step.get("expect_error"))
        action = {k: v for k, v in step.items() if k != "expect_error"}
        rules = self.game.session.rules
        try:
            # A field the action does not have, or of the wrong shape, is the file's mistake
            # even where a refusal is expected: it must not pass for one.
            rules.check_action(action) if action["act"] in rules.handlers else None
        except RulesError as exc:
            raise ScenarioError(f"{where}: {exc}") from None
        try:
            marker = self.game.actor_marker(action)
            card = self.game.car(marker)
        except self.GameError as exc:
            if refused_ok:
                return {"error": str(exc)}
            raise
        spec = next((a for a in card["actions"] if a["act"] == action["act"]), None)
        name = card["card"].get("name", f"car {marker}") if isinstance(card.get("card"), dict) else f"car {marker}"
        if spec is None:
            can = ", ".join(a["act"] for a in card["actions"]) or "nothing"
            if refused_ok:
                # Not on the card is the page's refusal; the game's own words say why.
                try:
                    self.game.act(action)
                except self.GameError as exc:
                    return {"error": str(exc)}
                raise ScenarioError(f"{where}: expected the action to be refused, but the page sent it and "
                                    f"it was allowed")
            raise _Unreachable(f"{where}: not reachable from the page: the {name} cannot {action['act']} now "
                               f"(its actions: {can})")
        fields = {f["name"]: f for f in spec["fields"]}
        lacking = [k for k in action if k != "act" and k not in fields]
        if lacking and not refused_ok:      # expecting a refusal, it is sent anyway: the game says why
            raise _Unreachable(f"{where}: not reachable from the page: the {name}'s {action['act']} has no field "
                               f"{', '.join(repr(k) for k in lacking)} (its fields: {', '.join(fields) or 'none'})")
        moved: dict[int, tuple[float, float, float]] = {}
        for f in spec["fields"]:
            if f["kind"] not in ("table_pose", "table_path") or f["name"] not in action:
                continue
            of = f["of"]
            if isinstance(of, str):
                of = action.get(of)
            if not isinstance(of, int) or isinstance(of, bool):
                raise _Unreachable(f"{where}: not reachable from the page: {f['name']} is the pose of "
                                   f"'{f['of']}', which the step does not name")
            moved.setdefault(of, self.film.pose(of))
            value = action.pop(f["name"])
            what = f"{action['act']}: {f['name']}"
            if f["kind"] == "table_pose":
                self.film.slide(of, value, what)
            else:
                self.film.drive(of, value, what)
        try:
            out = self._call(where, lambda: self.game.act(action))
        except _ChoiceRefused:
            for m, pose in moved.items():     # called off: what was moved for it goes back
                self.film.slide(m, pose, "putting a car back after a refused choice")
            raise
        except self.GameError as exc:
            if not refused_ok:
                raise
            # Refused: the player puts back what was moved for it.
            for m, pose in moved.items():
                self.film.slide(m, pose, "putting a car back after a refusal")
            return {"error": str(exc)}
        if refused_ok:
            raise _Allowed(out)
        return out


def run_through_camera(data: dict, source: str = "<scenario>", store=None, **film_options) -> dict:
    """Play a scenario on a filmed table through the page's table game; the outcome as a
    plain run's, with `camera`. With `store`, the game file records it."""
    return CameraRun(data, source, store, **film_options).play()
