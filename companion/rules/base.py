"""The rule-system contract: every hook the table calls, written once, and the registry.

Like python-chess's variants: `RuleSystem` holds what every system shares
(options, the registry) and declares every hook that anything outside a system
calls (the session, the table game, the page, the audit, the scenario runner),
each with its meaning; each system's module subclasses it, states its options
(the readings it takes of ambiguous rules, each with a default, the rule it reads
and why) and implements the hooks its game needs. Nothing outside
`companion/rules` knows which system is playing, nor guesses a state's shape:
what it needs from a game state is declared here (`GameState`, `TablePiece`).

The hooks, by who calls them:

- starting: `new_game`, `start_part_way`, `starter_rosters`, `demo_layout`, `demo_scenery`;
- the turn: `start_round`, `end_activation` (resolutions, like actions),
  `active_marker`, `turn_info`, `turn_text`;
- acting: `actions` (typed `ActionSpec`s, see `actions.py`), `actor_marker`,
  `resolve` (a generator that yields `DiceRequest`s, `ChoiceRequest`s and
  `PlacementRequest`s, the last through `place`), `judge_move`, `judge_action`, `public_action`;
- the table's poses: `pieces`, `update_poses`, `poses_of`, `set_poses`;
- what the page shows: `card`, `overlays`, `targets`, `board`,
  `may_premeasure`, `templates`;
- the record: `state_json`, `evidence`.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..dice import ChoiceRequest, DiceRequest, DiceThrow, Placed, PlacementRequest
from .actions import ActionError, ActionSpec, as_spec, check_fields, check_shape, json_text


class RulesError(ValueError):
    """A rule system, option or action that cannot be; the message says why."""


@dataclass(frozen=True)
class RuleOption:
    """One reading of an ambiguous rule: its name, default, the values it may
    take, the rule it reads (file and section) and what each reading means."""

    name: str
    default: Any
    choices: tuple[Any, ...] | None
    rule: str
    doc: str

    def check(self, value: Any) -> Any:
        if self.choices is not None and value not in self.choices:
            raise RulesError(f"option {self.name}: {value!r} is not one of "
                             f"{', '.join(repr(c) for c in self.choices)}")
        if self.choices is None and isinstance(self.default, (int, float)) and not isinstance(self.default, bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise RulesError(f"option {self.name}: {value!r} is not a number")
        if self.choices is None and isinstance(self.default, (tuple, list)):
            # A list (finishing points, terrain names): a list again, numbers where its default's are.
            if not isinstance(value, (tuple, list)):
                raise RulesError(f"option {self.name}: {value!r} is not a list")
            numbers = bool(self.default) and all(isinstance(d, (int, float)) and not isinstance(d, bool)
                                                 for d in self.default)
            bad = [x for x in value if numbers and (isinstance(x, bool) or not isinstance(x, (int, float)))]
            if bad:
                raise RulesError(f"option {self.name}: {bad[0]!r} is not a number")
        return value

    def to_json(self) -> dict:
        return {"name": self.name, "default": self.default, "choices": list(self.choices) if self.choices else None,
                "rule": self.rule, "doc": self.doc}


#: A resolution: a generator that yields dice requests (and receives throws), choice
#: requests (and receives the chosen value) or placement requests (and receives `Placed`:
#: where the piece was put), and returns what happened.
Resolution = Generator[DiceRequest | ChoiceRequest | PlacementRequest, Any, dict]


@runtime_checkable
class TablePiece(Protocol):
    """A car (vehicle, truck, bike...) a game knows on the table, by its roof marker."""

    marker: int
    name: str
    pose: Any                       # geometry.Pose, or None before the camera has seen it

    @property
    def in_play(self) -> bool:
        """Still on the table and in the game (not destroyed, removed or gone off the edge)."""

    def footprint(self):
        """The rectangle it covers, at its pose (geometry.Footprint)."""


@runtime_checkable
class GameState(Protocol):
    """What the table needs of any system's game state; the rest is the system's own."""

    players: list[str]
    vehicles: dict[int, Any]        # marker -> TablePiece
    round: int                      # 0 before the first round

    def vehicle(self, marker: int) -> Any:
        """The piece with that marker, or a RulesError naming it."""

    def to_json(self) -> dict:
        """The whole state as plain JSON: what the game file keeps and scenarios look into."""


def check_block(where: str, declared: dict[str, Any], block: Any) -> dict:
    """An object of a roster or a `state` block as `declared` has it (field names to shapes, as
    actions declare theirs): an unknown field refused by name with its path, a wrong shape saying
    what it must be (RulesError). The one check every system's setup uses."""
    if not isinstance(block, dict):
        raise RulesError(f"{where} must be an object ({', '.join(declared)}), not {json_text(block)}")
    try:
        check_fields(where, declared, block)
    except ActionError as exc:
        raise RulesError(str(exc)) from None
    return block


def piece_named(pieces: dict[int, Any], key: str, where: str, word: str = "vehicle") -> Any:
    """The piece a `state` block names by its marker (a JSON key, so text), or a RulesError
    naming the pieces the game has."""
    try:
        return pieces[int(key)]
    except (KeyError, ValueError):
        raise RulesError(f"{where}: no {word} with marker {key!r} in this game (its {word}s: "
                         f"{', '.join(str(m) for m in pieces)})") from None


def action(name: str, fields: dict[str, Any] | None = None):
    """Method decorator: this method resolves the action `name` (a generator yielding dice and
    choice requests, or a plain function returning the outcome). The base's `resolve` finds
    it by that name: one dispatcher for every system. `fields` declares every field the action
    may carry and its shape (`actions.SHAPES`, `OneOf`, `ListOf`): what the page, a scenario or
    a record sends is checked against it before the rules see it."""
    if fields is not None:
        for shape in fields.values():
            check_shape(shape)

    def mark(fn):
        fn.resolves_action = name
        fn.action_fields = dict(fields) if fields is not None else None
        return fn
    return mark


class RuleSystem:
    """What every rule system shares. Subclasses set `name`, `title`, `rulebook`
    and `options`, and implement the hooks below that their game needs."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    #: What the book calls one go round the table ("round"; Stop The Truck's "turn"): the
    #: page's buttons and headings say it so.
    round_word: ClassVar[str] = "round"
    rulebook: ClassVar[str] = ""
    options: ClassVar[tuple[RuleOption, ...]] = ()

    #: The actions this system resolves: name to the method's name (filled from @action).
    handlers: ClassVar[dict[str, str]] = {}
    #: Each action's declared fields and their shapes (from @action(name, fields=...)).
    action_fields: ClassVar[dict[str, dict[str, Any]]] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        found, fields = {}, {}
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                name = getattr(fn, "resolves_action", None)   # set by @action only
                if isinstance(name, str):
                    found[name] = attr
                    if fn.action_fields is not None:
                        fields[name] = fn.action_fields
        cls.handlers = found
        cls.action_fields = fields

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        known = {o.name: o for o in self.options}
        self.settings: dict[str, Any] = {o.name: o.default for o in self.options}
        for key, value in (options or {}).items():
            if key not in known:
                raise RulesError(f"{self.name} has no option '{key}' (its options: {', '.join(known) or 'none'})")
            self.settings[key] = known[key].check(value)

    def option(self, name: str) -> Any:
        return self.settings[name]

    # --- moving pieces -------------------------------------------------------------------

    #: How close a piece must be put to where the rules say, unless a placement says otherwise.
    PLACE_TOLERANCE_MM: ClassVar[float] = 10.0
    PLACE_TOLERANCE_DEG: ClassVar[float] = 6.0

    def place(self, state, piece, to, why: str, *, tolerance_mm: float | None = None,
              tolerance_deg: float | None = None, may_stay: bool = False):
        """The rules move a piece (a car losing control, bumped, pushed, spun, rolled over,
        halted at contact): `yield from self.place(state, car, pose, "Lost Control: veers 2 in
        left")` asks for it to be put at `to` (a Pose) and waits until it is; the piece then
        stands where it was put (the camera's pose on a table, `to` itself in a scenario played
        without one) and that pose is returned. `why` is said to the players, in their words.
        `may_stay`: the book lets them leave it where it stands instead. Every rule-made move
        goes through here: a piece whose pose a resolution changed without it is asked for at
        the end, with a plainer reason (see `GameSession`)."""
        request = PlacementRequest(int(piece.marker), str(piece.name), float(to.x_mm), float(to.y_mm),
                                   float(to.heading_deg), why,
                                   self.PLACE_TOLERANCE_MM if tolerance_mm is None else float(tolerance_mm),
                                   self.PLACE_TOLERANCE_DEG if tolerance_deg is None else float(tolerance_deg),
                                   may_stay)
        placed = yield request
        if not isinstance(placed, Placed):
            raise RulesError(f"placing the {piece.name}: expected where it was put, got {placed!r}")
        if placed.how == "as asked":
            piece.pose = to
        else:
            from ..geometry import Pose
            piece.pose = Pose(*[float(v) for v in placed.pose])
        return piece.pose

    def place_chosen(self, state, piece, why: str, judge, *, area=()):
        """A player puts a piece where they choose, as the book lets them (a Nudge's push
        "within N sections"): `yield from self.place_chosen(state, car, "pushed up to 2
        sections", judge, area=rings)` asks for it, with `area` (polygon rings, table mm)
        drawn as where it may go, and waits until the players say it is there. `judge(pose)`
        gives None when the rules accept that pose, else the reason in players' words; a
        refused pose is asked again with the reason. Left where it stands, the piece stays
        (no judgement: it did not move). Returns the pose it now stands at."""
        from ..geometry import Pose
        start = piece.pose
        said = why
        while True:
            request = PlacementRequest(int(piece.marker), str(piece.name), float(start.x_mm), float(start.y_mm),
                                       float(start.heading_deg), said, self.PLACE_TOLERANCE_MM,
                                       self.PLACE_TOLERANCE_DEG, False, True, tuple(area))
            placed = yield request
            if not isinstance(placed, Placed):
                raise RulesError(f"placing the {piece.name}: expected where it was put, got {placed!r}")
            if placed.how == "as asked":
                return start                        # a scenario's hand leaves it where it stands
            pose = Pose(*[float(v) for v in placed.pose])
            refusal = judge(pose)
            if refusal is None:
                piece.pose = pose
                return pose
            if request.fits(pose.x_mm, pose.y_mm, pose.heading_deg):
                return start                        # left (about) where it stood: a push of nothing
            said = f"{why}; not where it was put: {refusal}"

    # --- hooks --------------------------------------------------------------------

    def new_game(self, rosters: list[dict], scene) -> Any:
        """The game's starting state from the players' rosters and the table."""
        raise NotImplementedError(f"{self.name} does not start games yet")

    def start_part_way(self, state, block: dict) -> None:
        """A game part way through: a scenario's `state` block sets on the new game what play
        would have reached (damage, scores, whose turn...), each system's fields documented in
        docs/scenarios.md. An unknown field is refused by name and a wrong one says what it
        must be (RulesError), as rosters are."""
        if block:
            raise RulesError(f"{self.title or self.name} cannot start part way through a game: "
                             f"no 'state' block is read for it")

    def resolve(self, state, action: dict) -> Resolution:
        """Resolve one action (filled by its spec): a generator yielding dice and choice
        requests. The action's @action method resolves it; `before_action` and `after_action`
        are the system's checks and bookkeeping around every action."""
        act = action.get("act") if isinstance(action, dict) else None
        if act not in self.handlers:
            raise RulesError(f"{self.title or self.name} has no action {act!r} "
                             f"(its actions: {', '.join(sorted(self.handlers)) or 'none'})")
        self.check_action(action)
        self.before_action(state, action)
        try:
            out = getattr(self, self.handlers[act])(state, action)
            result = (yield from out) if isinstance(out, Generator) else out
        except KeyError as exc:
            raise RulesError(f"{act}: the action needs the field {exc}") from None
        return self.after_action(state, action, result)

    def check_action(self, action: dict) -> None:
        """The action's fields as its `@action` declares them: an unknown field is refused by
        name, a field of the wrong shape saying what it must be (RulesError), before anything
        is resolved. Every sender goes through here: the page, a scenario step, a record."""
        declared = self.action_fields.get(action.get("act"))
        if declared is None:
            return
        try:
            check_fields(action["act"], declared, action)
        except ActionError as exc:
            raise RulesError(str(exc)) from None

    def before_action(self, state, action: dict) -> None:
        """Checks every action of this system passes first (the game is not over...)."""

    def after_action(self, state, action: dict, result: dict) -> dict:
        """Bookkeeping after every action (the end of the game checked, an activation
        finished...); returns the outcome."""
        return result

    def start_round(self, state, orders: dict) -> Resolution:
        """A new round begins: `orders` are the players' play orders where the book has them
        (player to a list of markers, None for a blank), else {}. A resolution, as actions are."""
        raise RulesError(f"{self.title or self.name} has no rounds to start")
        yield  # pragma: no cover - a generator

    def end_activation(self, state) -> Resolution:
        """The acting car's activation ends; with no car acting, the side whose turn it is
        passes, where the rules let it. A resolution (ending may ask for dice)."""
        raise RulesError(f"{self.title or self.name} has no activations to end")
        yield  # pragma: no cover - a generator

    def active_marker(self, state) -> int | None:
        """The car whose activation is under way (its turn began, its move is judged from
        where it stood), or None between activations."""
        return None

    def turn_info(self, state) -> dict:
        """Where the turn stands, for the page: `{"round", "players", "order": [{"player",
        "vehicle"}], "turn", "active", "up"}`: the play order this round, the index of the
        activation under way (-1 none), the active car's marker, and whose side is up
        (a player's name, or None)."""
        return {"round": state.round, "players": list(state.players), "order": [],
                "turn": -1, "active": self.active_marker(state), "up": None}

    def round_orders(self, state) -> dict[str, list[dict]] | None:
        """What starting a round asks of each player: {player: [{"value": marker, "label":
        name}, ...]}, the cars they put in a play order (secretly, where the book says so);
        None where a round starts without orders (the rules or the dice set the order). An
        entry with `"open": True` starts its slot empty on the page: the car is chosen at the
        table when its turn comes (a book without play orders)."""
        return None

    def actor_marker(self, state, action: dict) -> int:
        """The marker of the car an action is taken with (a warrior's or freak's car, the
        vehicle itself): whose spec the action is checked against. A RulesError names what
        is missing."""
        marker = action.get("vehicle") if isinstance(action, dict) else None
        if isinstance(marker, int) and not isinstance(marker, bool):
            return marker
        raise RulesError("say which vehicle acts ('vehicle')")

    def judge_move(self, state, marker: int, to) -> dict | None:
        """Would a move of car `marker` to pose `to` (from where its activation began) be
        legal, and by what margin: `{"legal", "reasons", "margin_mm", ...}`; None where the
        system judges moves only as they resolve. `verdict`, where given, is the call as
        `Verdict.to_json()` or its outcome word alone ("in", "out", "too close to call"): the
        page's live ruler says "too close to call" of a legal move by it; `fix`, where given,
        lists what would make an illegal move legal, in players' words; `halts`, where given,
        says in players' words where the rules stop a legal move short of `to` (a car halted
        where it touches something), and the ruler says that instead."""
        return None

    def judge_action(self, state, action: dict) -> dict | None:
        """The rules' answer on an action (filled by its spec) before it is resolved, from the
        very checks its resolution makes before its first request, with nothing rolled and
        nothing measured that the book forbids measuring before an action is declared: None
        where they take it and have nothing to add; else `{"legal": bool, "reasons": [...]}`
        (why they refuse it, in players' words), and for a move `"move": True` with what
        `judge_move` gives (`fix`, `halts`, `verdict`...). The preview says it where the book
        forbids pre-measuring (a dry run up to the dice could tell what is in range), and
        beside the dry run elsewhere. Changes nothing."""
        return None

    def condition(self, state, marker: int) -> str | None:
        """What a piece has left, in its book's terms, for the result headline after it was
        hurt ("body 9 of 13 left", "2 of 5 structure boxes left", "wrecked"): the page shows it
        for each piece whose condition an event changed. None: the system counts nothing."""
        return None

    def may_premeasure(self) -> bool:
        """May players see distances, ranges and suggested targets before declaring an
        action? Some books forbid it; a system that does says so with an option."""
        return True

    def templates(self) -> list[dict]:
        """The templates and gauges players lay on the table in this system's games (blast and
        explosion circles, move templates, range and boarding gauges), each as `template()`
        makes it: name, shape, size in mm, what it is for, and the rule it comes from (file and
        section, with the words that give its size). The page lets players place, move and
        turn them over the live table."""
        return []

    def state_json(self, state) -> dict:
        """The state as plain JSON (the record, the scenario runner, the page)."""
        return state.to_json()

    def evidence(self, state, detail: dict, actor: int | None, target: int | None) -> list[dict]:
        """What a resolution's evidence picture shows besides every car's footprint (drawn by
        the audit for every system), in table mm: `{"kind": "line"|"polygon", "points",
        "role": "measure"|"arc"|"template"|"actor", "label"}` shapes. By default, the closest
        line from the actor to its target; a system adds its arcs and templates."""
        from ..geometry import closest_distance
        feet = {m: v.footprint() for m, v in state.vehicles.items()
                if m in (actor, target) and v.pose is not None}
        if actor in feet and target in feet:
            d = closest_distance(feet[actor], feet[target])
            return [{"kind": "line", "points": [list(map(float, d.from_point)), list(map(float, d.to_point))],
                     "role": "measure", "label": f"{d.distance_mm:.1f} mm"}]
        return []

    def game_from_scene(self, scene, cars: list[dict]) -> Any:
        """A game from a scene file alone (no rosters), for judging a move on it: the scene's
        `cars` as JSON, with whatever a system reads from them (Shattered Highways: `class`)."""
        raise RulesError(f"{self.title or self.name} needs the players' rosters in the scene ('rosters')")

    def starter_rosters(self, cars: list[tuple[int, str]]) -> list[dict]:
        """Rosters to begin from for a table's cars (marker, name): something that plays,
        for the players to edit."""
        raise NotImplementedError(f"{self.name} has no starter rosters; write them in Setup")

    def demo_layout(self, cars: list[tuple[int, str, float, float]], table_mm: tuple[float, float]
                    ) -> dict[int, tuple[float, float, float]]:
        """Where the demo table puts each car (marker, name, length_mm, width_mm) when a game of
        this system starts on it: {marker: (x_mm, y_mm, heading_deg)}. By default the cars stand
        side by side across the middle of the table, facing +x, 2 in apart: a system whose game
        starts otherwise (a pack heading one way, a truck in the middle) says so here."""
        width_mm, depth_mm = table_mm
        gap_mm = 50.8
        step = max((w for _, _, _, w in cars), default=32.0) + gap_mm
        y0 = depth_mm / 2 - step * (len(cars) - 1) / 2
        x = width_mm / 2
        return {m: (x, y0 + k * step, 0.0) for k, (m, _, _, _) in enumerate(cars)}

    def demo_scenery(self, table_mm: tuple[float, float]) -> dict | None:
        """The terrain and gates the demo table carries for this system's games, as its book
        uses them: `{"terrain": [{"name", "kind", "points": [[x_mm, y_mm], ...]}], "gates":
        [{"name", "role", "a_mm": [x, y], "b_mm": [x, y]}]}` (kinds as the table file takes
        them); None keeps the demo table's own. A system shows only its own features: a
        system without gates gives none."""
        return None

    # --- what the page shows (read only) ---------------------------------------------

    def card(self, state, marker: int) -> dict:
        """A vehicle's card: class, hit points, crew and seats, weapons, add-ons."""
        raise NotImplementedError(f"{self.name} shows no vehicle cards yet")

    def overlays(self, state, marker: int) -> dict:
        """What to draw for a vehicle: `move_regions` and weapon `arcs`, as polygon rings."""
        return {"move_regions": [], "arcs": []}

    def turn_text(self, state) -> str | None:
        """Where the game stands, in a sentence for the page's header ("turn 2, moves: the Bike
        to move"), or None for the page's own reading of `round` and `active`."""
        return None

    def public_action(self, state, action: dict) -> dict:
        """An action as the page may show it while the game runs: a system whose players
        choose in secret (Stop The Truck's gear boxes and bomb squares) hides the choice.
        The game file keeps the whole action; this is only what the log shows."""
        return action

    def board(self, state) -> dict | None:
        """What the system draws over the whole table whichever car is selected, or None.

        `{"cells": [{"polygon": [[x_mm, y_mm], ...], "label": str, "kind": str}, ...],
        "about": str}`: a square board's squares (kind "square"), the squares something
        holds ("truck", "bomb", "mine", "hazard"), each with a short label the page prints
        in it. A cell that is a piece with no marker of its own (a freak on foot) may say
        `"select": marker`: the car whose card offers what it can do, selected by a tap on it. A car's `overlays` may carry `cells` of the same shape (kinds "reach", and
        "red" or "blue" where a driving roll comes first) for the squares it may reach this turn."""
        return None

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """The vehicles it could act against, with their measurements, nearest first. Each row
        has what the page's targets table reads, and anything more a system's
        own card or preview wants:

        - `marker`, `name`, `label`; `distance_mm`, `sigma_mm` and `line` (the closest points,
          [[x_mm, y_mm], [x_mm, y_mm]]) where the system measures a distance, or `square`;
        - `range`: a verdict's JSON (`outcome`, `margin_mm`, `sigma_mm`...) against the best
          weapon's or the rule's limit, with `range_text` in words, where there is a range;
        - `arcs`: a list of `{"mount", "outcome", "margin_mm", "sigma_mm"}`, one per weapon or
          mount that has an arc ([]: none);
        - `sight`: `{"clear": bool, "blocked_by": [names]}` where sight matters;
        - `shootable`: whether an attack on it could be made now."""
        return []

    def actions(self, state, marker: int) -> list[ActionSpec | dict]:
        """The actions that car's side can take now, each an `ActionSpec` (or its JSON)."""
        return []

    def action_specs(self, state, marker: int) -> list[ActionSpec]:
        """`actions`, typed and checked: what the table and the page use."""
        try:
            specs = [as_spec(a) for a in self.actions(state, marker)]
        except ActionError as exc:
            raise RulesError(f"{self.name}: a bad action spec: {exc}") from None
        for spec in specs:          # the page's form and the rules' declaration are one
            declared = self.action_fields.get(spec.act)
            extra = [f.name for f in spec.fields if declared is not None and f.name not in declared]
            if extra:
                raise RulesError(f"{self.name}: a bad action spec: {spec.act} offers {', '.join(extra)}, "
                                 f"which its action does not declare")
        return specs

    def pieces(self, state) -> dict[int, TablePiece]:
        """Every car the game knows, by marker."""
        return state.vehicles

    def update_poses(self, state, poses: dict) -> None:
        """The table's latest poses (from the camera, or a scenario): marker to Pose, for the
        cars the camera sees and the table does not hold."""
        for m, pose in poses.items():
            piece = state.vehicles.get(m)
            if piece is not None and piece.in_play:
                piece.pose = pose

    def poses_of(self, state) -> dict:
        """Every car's recorded pose (marker to Pose): what a resolution is judged on."""
        return {m: v.pose for m, v in self.pieces(state).items() if v.pose is not None}

    def set_poses(self, state, poses: dict) -> None:
        """Put cars back exactly where a record says they stood (replaying a game)."""
        vehicles = self.pieces(state)
        for m, pose in poses.items():
            if m in vehicles:
                vehicles[m].pose = pose

    def describe(self) -> dict:
        return {"name": self.name, "title": self.title, "rulebook": self.rulebook, "round_word": self.round_word,
                "options": [{**o.to_json(), "value": self.settings[o.name]} for o in self.options]}


#: The shapes a template takes: a circle (its radius from the point where it is put), a
#: rectangle (length along its heading, width across), a straight gauge (a length).
TEMPLATE_SHAPES = ("circle", "rect", "gauge")


def template(name: str, shape: str, *, rule: str, quote: str, use: str, radius_in: float | None = None,
             length_in: float | None = None, width_in: float | None = None,
             marks_in: tuple[float, ...] = ()) -> dict:
    """One template as the page and `templates()` give it: its size in the book's inches and
    in mm, section marks (inches from its rear end or centre) and its rule. Checked here, so a
    system's table of templates cannot carry a shape without a size."""
    from ..geometry.pose import MM_PER_IN
    if shape not in TEMPLATE_SHAPES:
        raise RulesError(f"template {name!r}: shape {shape!r} is not one of {', '.join(TEMPLATE_SHAPES)}")
    need = {"circle": ("radius_in",), "rect": ("length_in", "width_in"), "gauge": ("length_in",)}[shape]
    given = {"radius_in": radius_in, "length_in": length_in, "width_in": width_in}
    for key in need:
        v = given[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1000:
            raise RulesError(f"template {name!r}: a {shape} needs {key} as a positive number of inches, not {v!r}")
    extra = [k for k, v in given.items() if v is not None and k not in need]
    if extra:
        raise RulesError(f"template {name!r}: a {shape} has no {', '.join(extra)}")
    if not rule.strip() or not quote.strip() or not use.strip():
        raise RulesError(f"template {name!r}: say what it is for and cite its rule (file, section) and words")
    size_in = {k[:-3]: float(given[k]) for k in need}
    words = {"circle": lambda: f'{size_in["radius"]:g}" radius',
             "rect": lambda: f'{size_in["length"]:g}" x {size_in["width"]:g}"',
             "gauge": lambda: f'{size_in["length"]:g}"'}[shape]()
    return {"name": name, "shape": shape, "use": use, "rule": rule, "quote": quote, "size_text": words,
            "size_in": size_in, "size_mm": {f"{k}_mm": round(v * MM_PER_IN, 2) for k, v in size_in.items()},
            "marks_mm": [round(m * MM_PER_IN, 2) for m in marks_in]}


def polygon_rings(geom) -> list[list[list[list[float]]]]:
    """A (multi)polygon as JSON: a list of polygons, each a list of rings (the outline,
    then any holes), each a list of [x_mm, y_mm]; for drawing as an SVG path."""
    parts = getattr(geom, "geoms", [geom])
    out = []
    for g in parts:
        if g.is_empty or g.geom_type != "Polygon":
            continue
        rings = [g.exterior, *g.interiors]
        out.append([[[round(x, 2), round(y, 2)] for x, y in ring.coords] for ring in rings])
    return out


_REGISTRY: dict[str, type[RuleSystem]] = {}


def register(cls: type[RuleSystem]) -> type[RuleSystem]:
    """Class decorator: make a rule system findable by its name."""
    if not cls.name:
        raise RulesError(f"{cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def rule_system(name: str, options: dict[str, Any] | None = None) -> RuleSystem:
    """The rule system of that name, with these options."""
    _load_all()
    if name not in _REGISTRY:
        raise RulesError(f"no rule system '{name}' (there are: {', '.join(sorted(_REGISTRY))})")
    return _REGISTRY[name](options)


def rule_systems() -> list[type[RuleSystem]]:
    _load_all()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


#: The rule systems' modules (DESIGN.md names the systems); importing one registers it. The
#: one list of system names: a new system is a module under companion/rules and a line here.
SYSTEM_MODULES = ("shattered_highways", "alpha_destructicus", "wasteland_rally", "car_cult", "stop_the_truck")

#: The system a table plays when nobody has chosen one (the demo's, Setup's first).
DEFAULT_SYSTEM = SYSTEM_MODULES[0]


def _load_all() -> None:
    import importlib
    import importlib.util
    for name in SYSTEM_MODULES:
        if importlib.util.find_spec(f"{__package__}.{name}") is not None:
            importlib.import_module(f"{__package__}.{name}")
