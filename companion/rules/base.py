"""The rule-system base: a rule system is a subclass with a few hooks, found by name.

Like python-chess's variants: `RuleSystem` holds what every system shares
(options, the registry, the session's hooks); each system's module subclasses
it, states its options (the readings it takes of ambiguous rules, each with a
default, the rule it reads and why) and implements the hooks it needs.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, ClassVar

from ..dice import DiceRequest, DiceThrow


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
        return value

    def to_json(self) -> dict:
        return {"name": self.name, "default": self.default, "choices": list(self.choices) if self.choices else None,
                "rule": self.rule, "doc": self.doc}


#: A resolution: a generator that yields dice requests, receives throws, and
#: returns what happened.
Resolution = Generator[DiceRequest, DiceThrow, dict]


class RuleSystem:
    """What every rule system shares. Subclasses set `name`, `title`, `rulebook`
    and `options`, and implement the hooks below that their game needs."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    rulebook: ClassVar[str] = ""
    options: ClassVar[tuple[RuleOption, ...]] = ()

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        known = {o.name: o for o in self.options}
        self.settings: dict[str, Any] = {o.name: o.default for o in self.options}
        for key, value in (options or {}).items():
            if key not in known:
                raise RulesError(f"{self.name} has no option '{key}' (its options: {', '.join(known) or 'none'})")
            self.settings[key] = known[key].check(value)

    def option(self, name: str) -> Any:
        return self.settings[name]

    # --- hooks --------------------------------------------------------------------

    def new_game(self, rosters: list[dict], scene) -> Any:
        """The game's starting state from the players' rosters and the table."""
        raise NotImplementedError(f"{self.name} does not start games yet")

    def resolve(self, state, action: dict) -> Resolution:
        """Resolve one action: a generator yielding dice requests."""
        raise NotImplementedError(f"{self.name} resolves no actions yet")

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
        in it. A car's `overlays` may carry `cells` of the same shape (kinds "reach", and
        "red" or "blue" where a driving roll comes first) for the squares it may reach this turn."""
        return None

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """The vehicles it could act against, with their measurements."""
        return []

    def actions(self, state, marker: int) -> list[dict]:
        """The actions its crew can take now, each with the fields it needs."""
        return []

    def update_poses(self, state, poses: dict) -> None:
        """The table's latest poses (from the camera, or a scenario)."""

    def poses_of(self, state) -> dict:
        """Every vehicle's recorded pose (marker to Pose): what a resolution is judged on."""
        return {m: v.pose for m, v in getattr(state, "vehicles", {}).items() if v.pose is not None}

    def set_poses(self, state, poses: dict) -> None:
        """Put vehicles back exactly where a record says they stood (replaying a game)."""
        vehicles = getattr(state, "vehicles", {})
        for m, pose in poses.items():
            if m in vehicles:
                vehicles[m].pose = pose

    def describe(self) -> dict:
        return {"name": self.name, "title": self.title, "rulebook": self.rulebook,
                "options": [{**o.to_json(), "value": self.settings[o.name]} for o in self.options]}


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


#: The rule systems' modules (DESIGN.md names the systems); importing one registers it.
SYSTEM_MODULES = ("shattered_highways", "alpha_destructicus", "wasteland_rally", "car_cult", "stop_the_truck")


def _load_all() -> None:
    import importlib
    import importlib.util
    for name in SYSTEM_MODULES:
        if importlib.util.find_spec(f"{__package__}.{name}") is not None:
            importlib.import_module(f"{__package__}.{name}")
