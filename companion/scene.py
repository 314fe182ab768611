"""Scene files: a table snapshot as JSON, for `companion measure` and scenarios.

    {"rules": "shattered_highways",
     "table": {"width_mm": 1219.2, "depth_mm": 812.8},
     "cars": [{"id": 10, "name": "Interceptor", "x_mm": 300, "y_mm": 200,
               "heading_deg": 0, "length_mm": 75, "width_mm": 32,
               "sigma_mm": 0.2, "sigma_deg": 0.3}],
     "terrain": [{"kind": "blocking", "name": "wreck", "points": [[x, y], ...]}]}

A missing field, a negative size, an unknown rule system or a car with no pose
is a SceneError naming the car (or terrain piece) and the field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .geometry import TERRAIN_KINDS, Footprint, Gate, Pose, Terrain
from .rules.base import SYSTEM_MODULES

#: The rule systems a scene may name (DESIGN.md, "Outside contracts").
RULE_SYSTEMS = SYSTEM_MODULES          # the registry's one list of names


class SceneError(ValueError):
    """A scene file that does not describe a table snapshot; the message says where."""


@dataclass(frozen=True)
class Scene:
    rules: str
    width_mm: float
    depth_mm: float
    cars: tuple[Footprint, ...]
    terrain: tuple[Terrain, ...]
    source: str = "<scene>"
    #: Directed gates: `{"name", "a": [x, y], "b": [x, y], "role"}`, crossed with post A
    #: on the driver's left (companion.geometry.gates).
    gates: tuple[Gate, ...] = ()


def _number(raw: dict, key: str, where: str, *, positive: bool = False, default: float | None = None) -> float:
    if key not in raw:
        if default is not None:
            return default
        raise SceneError(f"{where}: missing field '{key}'")
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SceneError(f"{where}: field '{key}' must be a number, not {value!r}")
    if positive and value <= 0:
        raise SceneError(f"{where}: field '{key}' must be more than 0, not {value:g}")
    if not positive and key.startswith("sigma") and value < 0:
        raise SceneError(f"{where}: field '{key}' must not be negative, not {value:g}")
    return float(value)


def parse_scene(raw: Any, source: str = "<scene>") -> Scene:
    if not isinstance(raw, dict):
        raise SceneError(f"{source}: a scene is a JSON object with rules, table, cars and terrain")
    rules = raw.get("rules")
    if rules is None:
        raise SceneError(f"{source}: missing field 'rules' (one of {', '.join(RULE_SYSTEMS)})")
    if rules not in RULE_SYSTEMS:
        raise SceneError(f"{source}: unknown rule system '{rules}' (one of {', '.join(RULE_SYSTEMS)})")
    table = raw.get("table")
    if not isinstance(table, dict):
        raise SceneError(f"{source}: missing field 'table' (width_mm, depth_mm)")
    width = _number(table, "width_mm", f"{source}: table", positive=True)
    depth = _number(table, "depth_mm", f"{source}: table", positive=True)
    cars_raw = raw.get("cars")
    if not isinstance(cars_raw, list):
        raise SceneError(f"{source}: missing field 'cars' (a list of cars)")
    cars, seen = [], set()
    for n, c in enumerate(cars_raw):
        if not isinstance(c, dict):
            raise SceneError(f"{source}: car #{n + 1} is not an object")
        label = c.get("name") or c.get("id") or f"#{n + 1}"
        where = f"{source}: car {label}"
        if "id" not in c:
            raise SceneError(f"{where}: missing field 'id'")
        if not isinstance(c["id"], int) or isinstance(c["id"], bool):
            raise SceneError(f"{where}: field 'id' must be a whole number, not {c['id']!r}")
        if c["id"] in seen:
            raise SceneError(f"{where}: id {c['id']} appears twice")
        seen.add(c["id"])
        missing_pose = [k for k in ("x_mm", "y_mm", "heading_deg") if c.get(k) is None]
        if missing_pose:
            raise SceneError(f"{where}: no pose (missing field{'s' if len(missing_pose) > 1 else ''} "
                             f"{', '.join(repr(k) for k in missing_pose)})")
        pose = Pose(_number(c, "x_mm", where), _number(c, "y_mm", where), _number(c, "heading_deg", where),
                    _number(c, "sigma_mm", where, default=0.0), _number(c, "sigma_deg", where, default=0.0))
        cars.append(Footprint(c["id"], pose, _number(c, "length_mm", where, positive=True),
                              _number(c, "width_mm", where, positive=True), str(c.get("name", ""))))
    terrain = []
    for n, t in enumerate(raw.get("terrain", []) or []):
        where = f"{source}: terrain {t.get('name') or '#' + str(n + 1)}" if isinstance(t, dict) else f"{source}: terrain #{n + 1}"
        if not isinstance(t, dict):
            raise SceneError(f"{where}: not an object")
        kind = t.get("kind", "blocking")
        if kind not in TERRAIN_KINDS:
            raise SceneError(f"{where}: field 'kind' must be one of {', '.join(TERRAIN_KINDS)}, not {kind!r}")
        pts = t.get("points")
        if (not isinstance(pts, list) or len(pts) < 3
                or not all(isinstance(p, list) and len(p) == 2 and all(isinstance(v, (int, float)) for v in p) for p in pts)):
            raise SceneError(f"{where}: field 'points' must be a list of at least 3 [x_mm, y_mm] pairs")
        piece = Terrain.from_points(pts, kind, str(t.get("name", "")))
        if not piece.polygon.is_valid or piece.polygon.area <= 0:
            raise SceneError(f"{where}: its points do not make a simple polygon (edges crossing?)")
        terrain.append(piece)
    gates, names = [], set()
    for n, g in enumerate(raw.get("gates", []) or []):
        where = f"{source}: gate {g.get('name') or '#' + str(n + 1)}" if isinstance(g, dict) else f"{source}: gate #{n + 1}"
        if not isinstance(g, dict):
            raise SceneError(f"{where}: not an object")
        posts = [g.get("a"), g.get("b")]
        if not all(isinstance(q, list) and len(q) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                              for v in q) for q in posts):
            raise SceneError(f"{where}: fields 'a' and 'b' must be its posts, [x_mm, y_mm] each")
        if posts[0] == posts[1]:
            raise SceneError(f"{where}: its posts are in the same place")
        name = str(g.get("name") or f"gate {n + 1}")
        if name in names:
            raise SceneError(f"{where}: two gates named '{name}'")
        names.add(name)
        gates.append(Gate(tuple(map(float, posts[0])), tuple(map(float, posts[1])), name, str(g.get("role", ""))))
    return Scene(rules, width, depth, tuple(cars), tuple(terrain), source, tuple(gates))


def load_scene(path: str | Path) -> Scene:
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SceneError(f"{p}: no such scene file") from None
    except json.JSONDecodeError as exc:
        raise SceneError(f"{p}: not valid JSON: {exc}") from None
    return parse_scene(raw, str(p))
