"""Stop The Truck!: vehicle templates (the data files), rosters and the game's state.

A template is a vehicle's sheet ("Gang Vehicle Templates"): its skills, structure,
gear zones of coloured boxes, ram modifiers and collision chart, read from
`data/stop_the_truck/<key>.toml`.  A roster (JSON) is one player's vehicles:

    {"player": "Max", "vehicles": [{"marker": 1, "template": "the_truck"},
                                   {"marker": 9, "template": "auto_gyro"}]}
    {"player": "Ann", "vehicles": [{"marker": 10, "template": "bike", "name": "Scuttle"}]}

Exactly one vehicle is `the_truck`; its player is Max.  A vehicle may start part way
through a game with `gear`, `structure`, `driver_skill`, `shooting_skill` and `square`
([column, row], 1-based, settling a car that stands on a line).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources

from ..geometry import Footprint, Pose
from . import st_data as D
from .base import RulesError, check_block

ES = "ES"     # the emergency stop box (Plated Wrecker's sheet: "ES = emergency stop")


@dataclass(frozen=True)
class Box:
    """A coloured box in a gear zone: forward and sideways squares (+ left), its colour and
    its collision modifier."""

    gear: int
    forward: int
    side: int
    colour: str            # green, yellow, blue, red; "es" for the emergency stop
    ram: int = 0

    @property
    def label(self) -> str:
        if self.colour == "es":
            return ES
        side = "" if self.side == 0 else f" {abs(self.side)}{'L' if self.side > 0 else 'R'}"
        return f"{self.forward}{side} {self.colour}" + (f" +{self.ram}" if self.ram else "")

    @property
    def key(self) -> str:
        """How an action names it: "3:5 1L" (gear, forward, sideways), or "ES"."""
        if self.colour == "es":
            return ES
        side = "" if self.side == 0 else f" {abs(self.side)}{'L' if self.side > 0 else 'R'}"
        return f"{self.gear}:{self.forward}{side}"

    def to_json(self) -> dict:
        return {"key": self.key, "gear": self.gear, "forward": self.forward, "side": self.side,
                "colour": self.colour, "ram": self.ram, "label": self.label}


def parse_box(text: str, gear: int, where: str) -> Box:
    parts = text.split()
    try:
        forward = int(parts[0])
        rest = parts[1:]
        side = 0
        if rest and rest[0][-1] in "LR" and rest[0][:-1].isdigit():
            n = int(rest[0][:-1])
            side = n if rest[0][-1] == "L" else -n
            rest = rest[1:]
        colour = D.COLOURS[rest[0]]
        ram = int(rest[1]) if len(rest) > 1 else 0
    except (IndexError, KeyError, ValueError):
        raise RulesError(f"{where}: gear {gear} box {text!r} is not 'FORWARD [nL|nR] G|Y|B|R [+RAM]'") from None
    return Box(gear, forward, side, colour, ram)


@dataclass(frozen=True)
class Template:
    key: str
    name: str
    side: str                    # "gang" or "truck"
    order: int                   # the move order, lightest first
    source: str                  # which numbers are the rulebook's, which reconstructed
    driver_skill: int
    shooting_skill: int
    structure: int
    gear_change: int
    arc: str
    chart: str
    target_table: str
    avoid: str                   # "any", "sideways" or "" (Notes: the Bike, the Trike)
    harpoon: bool
    tyre_slasher: bool
    ram: dict
    gears: tuple[tuple[Box, ...], ...]
    dropping_skill: int = 0
    flying: bool = False
    drop_modifiers: dict = field(default_factory=dict)
    bombers: int = 0
    gunner: int = 0
    tyres_per_side: int = 0
    aka: str = ""

    @property
    def is_truck(self) -> bool:
        return self.key == "the_truck"

    @property
    def top_gear(self) -> int:
        return len(self.gears)

    def boxes(self, gear: int) -> tuple[Box, ...]:
        return self.gears[gear - 1]


def _load(key: str) -> Template:
    path = resources.files("companion.rules").joinpath(f"data/stop_the_truck/{key}.toml")
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    where = f"template {key}.toml"
    gears = tuple(tuple(parse_box(b, n, where) for b in g) for n, g in enumerate(raw["gears"], start=1))
    return Template(raw["key"], raw["name"], raw["side"], raw["order"], raw["source"], raw["driver_skill"],
                    raw["shooting_skill"], raw["structure"], raw["gear_change"], raw["arc"], raw["chart"],
                    raw["target_table"], raw["avoid"], raw["harpoon"], raw["tyre_slasher"], dict(raw["ram"]), gears,
                    raw.get("dropping_skill", 0), raw.get("flying", False), dict(raw.get("drop_modifiers", {})),
                    raw.get("bombers", 0), raw.get("gunner", 0), raw.get("tyres_per_side", 0), raw.get("aka", ""))


def template_keys() -> list[str]:
    folder = resources.files("companion.rules").joinpath("data/stop_the_truck")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


_TEMPLATES: dict[str, Template] = {}


def templates() -> dict[str, Template]:
    if not _TEMPLATES:
        for k in template_keys():
            _TEMPLATES[k] = _load(k)
    return _TEMPLATES


def template(key: str) -> Template:
    t = templates()
    if key not in t:
        raise RulesError(f"no vehicle template {key!r} (there are: {', '.join(t)}; {D.RULEBOOK}, "
                         f"\"Gang Vehicle Templates\")")
    return t[key]


@dataclass
class Vehicle:
    marker: int
    name: str
    owner: str
    template_key: str
    length_mm: float
    width_mm: float
    driver: int = 0              # driver skill (Max's track on the truck; flying skill on the gyro)
    shooting: int = 0
    dropping: int = 0
    structure: int = 0
    max_structure: int = 0
    gear: int = 1
    square: tuple[int, int] | None = None      # (column, row), 0-based; the truck's is its front square
    pose: Pose | None = None
    out: str | None = None                     # why it is out of the game ("wrecked", "off the board", ...)
    weapon_lost: bool = False
    conditions: dict = field(default_factory=dict)    # lasting effects from the RED/BLUE tables
    snake: dict | None = None                  # {"active": turns left, "asleep": bool}
    reload: bool = False                       # the harpoon van reloading this turn
    # this turn
    choice: Box | None = None
    moved: bool = False
    from_square: tuple[int, int] | None = None
    roll_needed: str | None = None             # "red" / "blue" after moving through such a box
    collided: bool = False
    bombed: bool = False
    no_shooting: list = field(default_factory=list)   # why it may not shoot this turn
    shot: bool = False
    turn_rules: list = field(default_factory=list)    # snake / blue: what it must pick this turn
    arrival: int = 0                           # when it came into its square (the later is the collider)

    @property
    def kind(self) -> Template:
        return template(self.template_key)

    @property
    def is_truck(self) -> bool:
        return self.template_key == "the_truck"

    @property
    def in_play(self) -> bool:
        return self.out is None

    @property
    def on_board(self) -> bool:
        return self.out is None and self.square is not None

    def max_track(self) -> None:
        """The truck's shooting is Max's: one track, "Max's Shoot/Drive 0,1,2,...,8" (the truck
        sheet), so his shots roll against the points left on it; none once the shotgun is
        destroyed ("At Max" 10: "Shotgun destroyed (no shooting)"). Kept equal here so the state
        shows the number the rolls use."""
        self.shooting = 0 if self.weapon_lost else self.driver

    def footprint(self, pose: Pose | None = None) -> Footprint:
        p = pose or self.pose
        if p is None:
            raise RulesError(f"the {self.name} is not on the table")
        return Footprint(self.marker, p, self.length_mm, self.width_mm, self.name)

    def status(self) -> str:
        return self.out and f"out: {self.out}" or ("waiting to come on" if self.square is None else "in play")


@dataclass
class Truck:
    """The truck's own tracks ("The Truck Template")."""

    bombers: list[int]              # the two petrol bombers' points
    gunner: int                     # the rear crossbowman's shooting skill
    tyres_burst: dict               # {"left": n, "right": n}
    tyres_per_side: int
    top_gear_turns: int = 0
    speed: int | None = None        # declared forward speed this turn
    last_speed: int = 0
    bomb_squares: list = field(default_factory=list)   # [(column, row) or None] per bomber, secret until revealed
    bomb_row: int | None = None     # the truck's row when they were picked (they may move with it)
    bombs_revealed: bool = False
    bombs_done: bool = False
    sideways_done: bool = False
    cab_hit: bool = False           # the cab (squares 1-2) was in a collision this turn
    max_shot: bool = False
    gunner_shot: bool = False


@dataclass
class GameState:
    players: list[str]
    vehicles: dict[int, Vehicle]
    truck_marker: int
    truck: Truck
    board_origin: Pose
    square_mm: float
    turn: int = 0
    phase: str = "setup"
    distance: int = 0
    gyro_done: bool = False
    wrecks: list[dict] = field(default_factory=list)      # vehicles replaced
    eliminated: int = 0
    over: bool = False
    winner: str | None = None
    why_over: str = ""
    notes: list[str] = field(default_factory=list)
    #: The rosters' `square`s, [column, row] from 0 by marker: the square a car on a line starts in.
    square_hints: dict = field(default_factory=dict, repr=False, compare=False)
    #: What the action being resolved has done so far, in words (its outcome's `events`).
    events: list[str] = field(default_factory=list, repr=False, compare=False)
    #: The cars the action being resolved has had put where the rules moved them (its `placed`).
    placed: list[dict] = field(default_factory=list, repr=False, compare=False)

    def vehicle(self, marker: int) -> Vehicle:
        if marker not in self.vehicles:
            raise RulesError(f"there is no vehicle {marker}")
        return self.vehicles[marker]

    @property
    def truck_vehicle(self) -> Vehicle:
        return self.vehicles[self.truck_marker]

    @property
    def active(self) -> Vehicle | None:
        """The vehicle whose move it is (in the move step), else None."""
        if self.phase != "move":
            return None
        movers = self.movers()
        return movers[0] if movers else None

    def gang(self) -> list[Vehicle]:
        return [v for v in self.vehicles.values() if not v.is_truck]

    def on_board(self) -> list[Vehicle]:
        return [v for v in self.vehicles.values() if v.on_board]

    def movers(self) -> list[Vehicle]:
        """Vehicles yet to move this turn, lightest first (TURN SEQUENCE, step 4)."""
        return sorted((v for v in self.gang() if v.on_board and v.choice is not None and not v.moved),
                      key=lambda v: (v.kind.order, v.marker))

    def to_json(self) -> dict:
        t = self.truck
        tv = self.truck_vehicle

        def vjson(v: Vehicle) -> dict:
            secret = self.phase == "select" and v.choice is not None
            return {
                "name": v.name, "owner": v.owner, "template": v.template_key, "status": v.status(),
                "driver": v.driver, "shooting": v.shooting, "structure": v.structure,
                "max_structure": v.max_structure, "gear": None if secret else v.gear,
                "square": None if v.square is None else [v.square[0] + 1, v.square[1] + 1],
                "selected": v.choice is not None,
                "box": None if (v.choice is None or secret) else v.choice.key,
                "moved": v.moved, "collided": v.collided, "bombed": v.bombed, "shot": v.shot,
                "no_shooting": list(v.no_shooting), "weapon_lost": v.weapon_lost,
                "conditions": dict(v.conditions), "snake": None if v.snake is None else dict(v.snake),
                "reload": v.reload, **({"dropping": v.dropping} if v.kind.flying else {}),
                "pose": None if v.pose is None else [round(v.pose.x_mm, 2), round(v.pose.y_mm, 2),
                                                     round(v.pose.heading_deg, 2)],
            }
        return {
            "turn": self.turn, "phase": self.phase, "distance": self.distance, "over": self.over,
            "winner": self.winner, "why_over": self.why_over, "square_mm": self.square_mm,
            "board_origin": [round(self.board_origin.x_mm, 2), round(self.board_origin.y_mm, 2),
                             round(self.board_origin.heading_deg, 2)],
            "next_to_move": self.active.marker if self.active else None,
            "truck": {"marker": tv.marker, "max": tv.driver, "structure": tv.structure,
                      "bombers": list(t.bombers), "gunner": t.gunner, "tyres_burst": dict(t.tyres_burst),
                      "top_gear_turns": t.top_gear_turns,
                      "speed": t.speed, "row": None if tv.square is None else tv.square[1] + 1,
                      # The bomb squares are the truck's secret until step 7 (Move sequence).
                      "bomb_squares": ([None if s is None else [s[0] + 1, s[1] + 1] for s in t.bomb_squares]
                                       if t.bombs_revealed else ("hidden" if t.bomb_squares else [])),
                      "cab_hit": t.cab_hit},
            "eliminated": self.eliminated, "wrecks": list(self.wrecks), "notes": list(self.notes),
            "vehicles": {str(m): vjson(v) for m, v in sorted(self.vehicles.items())},
        }


#: What a roster's vehicle may say (the module's docstring): anything else is refused by name, so a
#: misspelt `driver_skil` is not silently a vehicle at its sheet's skill.
VEHICLE_SPEC_FIELDS = {"marker": "marker", "template": "text", "name": "text", "gear": "whole", "structure": "whole",
                       "driver_skill": "whole", "shooting_skill": "whole", "dropping_skill": "whole",
                       "square": "any", "length_mm": "number", "width_mm": "number"}


def new_vehicle(spec: dict, player: str, sizes: dict, taken: set[int]) -> Vehicle:
    where = f"roster of {player}"
    check_block(f"{where}, vehicle {spec.get('marker', '?') if isinstance(spec, dict) else '?'}",
                VEHICLE_SPEC_FIELDS, spec)
    key = spec.get("template")
    tpl = template(key if isinstance(key, str) else "")
    marker = spec.get("marker")
    if not isinstance(marker, int) or isinstance(marker, bool):
        raise RulesError(f"{where}, {tpl.name}: needs its roof 'marker' id")
    if marker in taken:
        raise RulesError(f"{where}, {tpl.name}: marker {marker} is already another vehicle's")
    taken.add(marker)
    length, width = sizes.get(marker, (spec.get("length_mm", 75.0), spec.get("width_mm", 32.0)))
    v = Vehicle(marker, spec.get("name") or tpl.name, player, tpl.key, float(length), float(width))
    v.driver = int(spec.get("driver_skill", tpl.driver_skill))
    v.shooting = int(spec.get("shooting_skill", tpl.shooting_skill))
    v.dropping = int(spec.get("dropping_skill", tpl.dropping_skill))
    if tpl.is_truck:
        if "shooting_skill" in spec and spec["shooting_skill"] != v.driver:
            raise RulesError(f"{where}, {v.name}: Max has one track for shooting and driving (\"Max's Shoot/Drive\", "
                             f"the truck's sheet): give it as driver_skill")
        v.max_track()
    v.max_structure = tpl.structure
    v.structure = int(spec.get("structure", tpl.structure))
    if not 0 < v.structure <= tpl.structure:
        raise RulesError(f"{where}, {v.name}: structure {v.structure} is not between 1 and its {tpl.structure}")
    gear = spec.get("gear")
    if gear is not None and not 1 <= gear <= tpl.top_gear:
        raise RulesError(f"{where}, {v.name}: gear {gear}; the {tpl.name} has gears 1-{tpl.top_gear}")
    v.gear = gear or 0        # 0: the start_gear option decides
    return v
