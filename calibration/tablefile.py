"""The table file: one TOML file that describes a play space.

It names the table's size, the anchor markers lying on it and the cars with
their roof markers (DESIGN.md, "The table file").  Loading it gives small
immutable objects; anything wrong in it is a :class:`TableFileError` that names
the file, the entry, the line where we can find it, and the problem.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

#: ArUco dictionaries a table may use, with how many ids each holds.
DICTIONARY_SIZES: dict[str, int] = {
    f"DICT_{bits}X{bits}_{n}": n for bits in (4, 5, 6, 7) for n in (50, 100, 250, 1000)
}
DICTIONARY_SIZES.update({"DICT_ARUCO_ORIGINAL": 1024, "DICT_APRILTAG_16H5": 30,
                         "DICT_APRILTAG_25H9": 35, "DICT_APRILTAG_36H10": 2320,
                         "DICT_APRILTAG_36H11": 587, "DICT_ARUCO_MIP_36H12": 250})

#: The names as OpenCV's documentation spells them (cv2.aruco.DICT_APRILTAG_36h11);
#: a table file may use these, the upper-case names above, or any case of either.
OPENCV_SPELLINGS: dict[str, str] = {
    name: re.sub(r"_(\d+)H(\d+)$", r"_\1h\2", name) for name in DICTIONARY_SIZES}


def dictionary_name(text: object) -> str | None:
    """The canonical (upper-case) name of an ArUco dictionary as a person or
    OpenCV spells it ("DICT_APRILTAG_36h11", "dict_4x4_50"), or None if unknown."""
    if not isinstance(text, str):
        return None
    key = text.strip().upper()
    if not key.startswith("DICT_"):
        key = "DICT_" + key
    return key if key in DICTIONARY_SIZES else None


def accepted_dictionaries() -> str:
    """Every dictionary a table may name, as OpenCV spells them, for an error message."""
    return ", ".join(OPENCV_SPELLINGS[n] for n in DICTIONARY_SIZES)


class TableFileError(ValueError):
    """A table file that cannot describe a real table; the message says where and why."""


@dataclass(frozen=True)
class AnchorSpec:
    """A marker lying flat on the table, upright for a player on the near side,
    or turned by `rotation_deg` from upright (anticlockwise seen from above, as
    headings are: 90 puts its top edge towards -x, the left)."""

    id: int
    x_mm: float
    y_mm: float
    size_mm: float
    rotation_deg: float = 0.0

    def corners_mm(self) -> tuple[tuple[float, float], ...]:
        """Its four corners in OpenCV's order (top-left first, clockwise seen from above).

        Upright, the marker's top edge (corner 0 to corner 1) faces +y (DESIGN.md);
        turned, the corners turn with it about the marker's centre.
        """
        h = self.size_mm / 2.0
        x, y = self.x_mm, self.y_mm
        offsets = ((-h, h), (h, h), (h, -h), (-h, -h))
        if self.rotation_deg % 360.0 == 0.0:
            return tuple((x + dx, y + dy) for dx, dy in offsets)
        a = math.radians(self.rotation_deg)
        c, s = math.cos(a), math.sin(a)
        return tuple((x + c * dx - s * dy, y + s * dx + c * dy) for dx, dy in offsets)


@dataclass(frozen=True)
class CarSpec:
    """A car with a marker on its roof, its top edge towards the car's front."""

    id: int
    name: str
    length_mm: float
    width_mm: float
    roof_mm: float
    marker_mm: float
    offset_mm: tuple[float, float] = (0.0, 0.0)

    @property
    def forward_offset_mm(self) -> float:
        return self.offset_mm[0]

    @property
    def left_offset_mm(self) -> float:
        return self.offset_mm[1]


DICE_SOURCES = ("virtual", "typed", "tray")

#: What a piece of terrain can be (as the geometry's Terrain knows them).
TERRAIN_KINDS = ("blocking", "rough", "wreckage", "building", "exploding", "impassable", "slow")


@dataclass(frozen=True)
class TerrainSpec:
    """A piece of terrain lying on the table: its outline in table mm and its kind."""

    name: str
    kind: str
    points: tuple[tuple[float, float], ...]


#: Narrower than this, a gate is probably a typo: a 1:64 car is about 32 mm wide.
MIN_GATE_WIDTH_MM = 50.0


@dataclass(frozen=True)
class GateSpec:
    """A directed gate: posts A and B, crossed with A on the driver's left.

    Its posts are either measured (`a_mm`, `b_mm`) or found by the camera each
    frame from a flat marker at each post (`markers` = (id at A, id at B), each
    `marker_mm` on a side).  `role` is free text the rule system gives meaning to
    ("start_finish", "checkpoint", "elimination", ...)."""

    name: str
    role: str = ""
    a_mm: tuple[float, float] | None = None
    b_mm: tuple[float, float] | None = None
    markers: tuple[int, int] | None = None
    marker_mm: float | None = None

    @property
    def fixed(self) -> bool:
        """True when the posts are where the file says (no camera needed)."""
        return self.markers is None


@dataclass(frozen=True)
class DiceSpec:
    """Where the dice come from: a virtual roll (seeded, recorded), dice typed in
    on the page, or the electronic tray on a serial port (a pyserial URL)."""

    source: str = "virtual"
    port: str | None = None
    baud: int = 115200
    seed: int | None = None


@dataclass(frozen=True)
class TableSpec:
    """A whole table: its size, anchors and cars."""

    width_mm: float
    depth_mm: float
    dictionary: str = "DICT_4X4_50"
    anchors: tuple[AnchorSpec, ...] = ()
    cars: tuple[CarSpec, ...] = ()
    source: str = "<table>"
    #: How well the cars' roof heights are known (one sigma): a ruler against a
    #: diecast roof is good to about half a millimetre. It becomes position doubt
    #: far from the camera's nadir.
    roof_sigma_mm: float = 0.5
    dice: DiceSpec = DiceSpec()
    terrain: tuple[TerrainSpec, ...] = ()
    gates: tuple[GateSpec, ...] = ()

    def gate(self, name: str) -> GateSpec | None:
        return next((g for g in self.gates if g.name == name), None)

    @property
    def gate_marker_ids(self) -> tuple[int, ...]:
        """The ids of every gate post marker, in the file's order."""
        return tuple(i for g in self.gates if g.markers is not None for i in g.markers)

    def car(self, marker_id: int) -> CarSpec | None:
        return self._cars_by_id.get(marker_id)

    def anchor(self, marker_id: int) -> AnchorSpec | None:
        return self._anchors_by_id.get(marker_id)

    @cached_property
    def _cars_by_id(self) -> dict[int, CarSpec]:
        return {c.id: c for c in self.cars}

    @cached_property
    def _anchors_by_id(self) -> dict[int, AnchorSpec]:
        return {a.id: a for a in self.anchors}

    @property
    def anchor_ids(self) -> tuple[int, ...]:
        return tuple(a.id for a in self.anchors)

    @property
    def car_ids(self) -> tuple[int, ...]:
        return tuple(c.id for c in self.cars)


# --- loading -----------------------------------------------------------------

@dataclass
class _Where:
    """Where an entry sits in the file, for error messages."""

    path: str
    text: str
    section: str                  # "table", "anchor", "car"
    index: int | None = None      # position among [[section]] entries, 0-based
    label: str = ""
    _lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lines = self.text.splitlines()

    def entry(self) -> str:
        if self.index is None:
            return f"[{self.section}]"
        return f"[[{self.section}]] #{self.index + 1}{self.label}"

    def line_of(self, key: str | None = None) -> int | None:
        """The 1-based line of this entry's header, or of `key` inside it."""
        header = (re.compile(rf"^\s*\[\s*{self.section}\s*\]")
                  if self.index is None else re.compile(rf"^\s*\[\[\s*{self.section}\s*\]\]"))
        seen = -1
        start = None
        for n, line in enumerate(self._lines):
            if header.match(line):
                seen += 1
                if self.index is None or seen == self.index:
                    start = n
                    break
        if start is None:
            return None
        if key is None:
            return start + 1
        key_re = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for n in range(start + 1, len(self._lines)):
            if re.match(r"^\s*\[", self._lines[n]):
                break
            if key_re.match(self._lines[n]):
                return n + 1
        return start + 1

    def error(self, problem: str, key: str | None = None) -> TableFileError:
        line = self.line_of(key)
        at = f"{self.path}:{line}" if line else self.path
        what = f"{self.entry()} {key}" if key else self.entry()
        return TableFileError(f"{at}: {what}: {problem}")


_TABLE_KEYS = {"width_mm": float, "depth_mm": float, "dictionary": str, "roof_sigma_mm": float}
_ANCHOR_KEYS = {"id": int, "x_mm": float, "y_mm": float, "size_mm": float, "rotation_deg": float}
_CAR_KEYS = {"id": int, "name": str, "length_mm": float, "width_mm": float,
             "roof_mm": float, "marker_mm": float, "offset_mm": list}
_TERRAIN_KEYS = {"name": str, "kind": str, "points": list}
_OPTIONAL = {"dictionary", "offset_mm", "roof_sigma_mm", "kind", "rotation_deg"}
_TOP_LEVEL = {"table", "anchor", "car", "dice", "terrain", "gate"}
_GATE_KEYS = ("name", "role", "a_mm", "b_mm", "markers", "marker_mm")
_DICE_KEYS = {"source": str, "port": str, "baud": int, "seed": int}

# Bounds that keep a table physical: a table bigger than a room, a car bigger
# than a table or a roof higher than a camera is a typo, not a game.
_MAX_TABLE_MM = 20_000.0
_MAX_ROOF_MM = 500.0


def _suggest(key: str, known: set[str]) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _check_keys(raw: dict[str, Any], allowed: dict[str, type], where: _Where) -> None:
    for key in raw:
        if key not in allowed:
            known = ", ".join(allowed)
            raise where.error(f"unknown key '{key}'{_suggest(key, set(allowed))}; "
                              f"known keys are {known}", key)
    for key in allowed:
        if key not in raw and key not in _OPTIONAL:
            raise where.error(f"missing value '{key}'")


def _number(raw: dict[str, Any], key: str, where: _Where, *, positive: bool = True,
            at_most: float | None = None) -> float:
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise where.error(f"must be a number of millimetres, not {value!r}", key)
    value = float(value)
    if not math.isfinite(value):
        raise where.error(f"must be a finite number, not {value!r}", key)
    if positive and value <= 0:
        raise where.error(f"must be more than 0 mm, not {value:g}", key)
    if at_most is not None and value > at_most:
        raise where.error(f"{value:g} mm is impossible here (at most {at_most:g} mm)", key)
    return value


def _marker_id(raw: dict[str, Any], where: _Where, dictionary: str) -> int:
    value = raw["id"]
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"must be a whole marker id, not {value!r}", "id")
    size = DICTIONARY_SIZES[dictionary]
    if not 0 <= value < size:
        raise where.error(f"marker id {value} is not in {dictionary} (ids 0 to {size - 1})", "id")
    return value


def parse_table(text: str, path: str = "<table>") -> TableSpec:
    """Parse a table file's text into a validated :class:`TableSpec`."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TableFileError(f"{path}: not valid TOML: {exc}") from None

    top = _Where(path, text, "table")
    for key in raw:
        if key not in _TOP_LEVEL:
            raise TableFileError(f"{path}: unknown section '{key}'{_suggest(key, _TOP_LEVEL)}; "
                                 f"a table file has [table], [[anchor]], [[car]], [[terrain]], [[gate]] and [dice]")
    if "table" not in raw or not isinstance(raw["table"], dict):
        raise TableFileError(f"{path}: missing the [table] section (width_mm, depth_mm)")
    table_raw = raw["table"]
    _check_keys(table_raw, _TABLE_KEYS, top)
    width = _number(table_raw, "width_mm", top, at_most=_MAX_TABLE_MM)
    depth = _number(table_raw, "depth_mm", top, at_most=_MAX_TABLE_MM)
    written = table_raw.get("dictionary", "DICT_4X4_50")
    dictionary = dictionary_name(written)
    if dictionary is None:
        raise top.error(f"unknown ArUco dictionary {written!r}"
                        f"{_suggest(str(written), set(OPENCV_SPELLINGS.values()))}; "
                        f"the accepted ones are {accepted_dictionaries()} (in any case)", "dictionary")

    roof_sigma = 0.5
    if "roof_sigma_mm" in table_raw:
        roof_sigma = _number(table_raw, "roof_sigma_mm", top, positive=False, at_most=20.0)
        if roof_sigma < 0:
            raise top.error(f"must be 0 mm or more, not {roof_sigma:g}", "roof_sigma_mm")
    anchors = _parse_anchors(raw.get("anchor", []), path, text, dictionary, width, depth)
    cars = _parse_cars(raw.get("car", []), path, text, dictionary)

    seen: dict[int, str] = {a.id: f"anchor #{n + 1}" for n, a in enumerate(anchors)}
    for n, car in enumerate(cars):
        if car.id in seen:
            where = _Where(path, text, "car", n, f" ({car.name})")
            raise where.error(f"marker id {car.id} is already used by {seen[car.id]}", "id")
        seen[car.id] = f"car #{n + 1} ({car.name})"
    dice = _parse_dice(raw.get("dice", {}), path, text)
    terrain = _parse_terrain(raw.get("terrain", []), path, text, width, depth)
    gates = _parse_gates(raw.get("gate", []), path, text, dictionary, width, depth, seen)
    return TableSpec(width, depth, dictionary, anchors, cars, source=path, roof_sigma_mm=roof_sigma, dice=dice,
                     terrain=terrain, gates=gates)


def _parse_gates(value: Any, path: str, text: str, dictionary: str, width: float, depth: float,
                 taken: dict[int, str]) -> tuple[GateSpec, ...]:
    """[[gate]] entries; `taken` maps marker ids already used (anchors, cars) to who uses them."""
    gates: list[GateSpec] = []
    taken = dict(taken)
    for n, raw in enumerate(_entries(value, "gate", path)):
        where = _Where(path, text, "gate", n, f" ({raw.get('name', '?')})")
        for key in raw:
            if key not in _GATE_KEYS:
                raise where.error(f"unknown key '{key}'{_suggest(key, set(_GATE_KEYS))}; "
                                  f"known keys are {', '.join(_GATE_KEYS)}", key)
        if "name" not in raw:
            raise where.error("missing value 'name'")
        name = raw["name"]
        if not isinstance(name, str) or not name.strip():
            raise where.error("must be a non-empty name", "name")
        name = name.strip()
        if any(g.name == name for g in gates):
            raise where.error(f"two gates are named '{name}'", "name")
        role = raw.get("role", "")
        if not isinstance(role, str):
            raise where.error(f"must be text (\"start_finish\", \"checkpoint\", ...), not {role!r}", "role")
        measured = "a_mm" in raw or "b_mm" in raw
        if measured and "markers" in raw:
            raise where.error("a gate's posts are either measured (a_mm, b_mm) or markers, not both", "markers")
        if measured:
            if "marker_mm" in raw:
                raise where.error("only a gate with post markers has a marker size", "marker_mm")
            posts = []
            for key in ("a_mm", "b_mm"):
                if key not in raw:
                    raise where.error(f"missing value '{key}' (a gate needs both posts)")
                pt = raw[key]
                if (not isinstance(pt, list) or len(pt) != 2
                        or not all(isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c)
                                   for c in pt)):
                    raise where.error(f"must be a post's place [x_mm, y_mm], not {pt!r}", key)
                x, y = float(pt[0]), float(pt[1])
                if not (0 <= x <= width and 0 <= y <= depth):
                    raise where.error(f"post [{x:g}, {y:g}] is off the {width:g} x {depth:g} mm table", key)
                posts.append((x, y))
            gap = math.dist(posts[0], posts[1])
            if gap < MIN_GATE_WIDTH_MM:
                raise where.error(f"its posts are {gap:g} mm apart, too narrow for a car to pass "
                                  f"(at least {MIN_GATE_WIDTH_MM:g} mm)", "b_mm")
            gates.append(GateSpec(name, role.strip(), posts[0], posts[1]))
            continue
        if "markers" not in raw:
            raise where.error("a gate needs its posts: a_mm and b_mm measured on the table, "
                              "or markers = [id at post A, id at post B] with marker_mm")
        ids = raw["markers"]
        if (not isinstance(ids, list) or len(ids) != 2
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
            raise where.error(f"must be two marker ids [post A, post B], not {ids!r}", "markers")
        size = DICTIONARY_SIZES[dictionary]
        for i in ids:
            if not 0 <= i < size:
                raise where.error(f"marker id {i} is not in {dictionary} (ids 0 to {size - 1})", "markers")
            if i in taken:
                raise where.error(f"marker id {i} is already used by {taken[i]}", "markers")
        if ids[0] == ids[1]:
            raise where.error(f"both posts carry marker {ids[0]}; each post needs its own", "markers")
        if "marker_mm" not in raw:
            raise where.error("missing value 'marker_mm' (the side of the post markers' black square)")
        marker = _number(raw, "marker_mm", where, at_most=min(width, depth) / 2)
        for i in ids:
            taken[i] = f"gate #{n + 1} ({name})"
        gates.append(GateSpec(name, role.strip(), markers=(ids[0], ids[1]), marker_mm=marker))
    return tuple(gates)


def _parse_terrain(value: Any, path: str, text: str, width: float, depth: float) -> tuple[TerrainSpec, ...]:
    pieces: list[TerrainSpec] = []
    for n, raw in enumerate(_entries(value, "terrain", path)):
        where = _Where(path, text, "terrain", n, f" ({raw.get('name', '?')})")
        _check_keys(raw, _TERRAIN_KEYS, where)
        name = raw["name"]
        if not isinstance(name, str) or not name.strip():
            raise where.error("must be a non-empty name", "name")
        kind = raw.get("kind", "blocking")
        if kind not in TERRAIN_KINDS:
            raise where.error(f"'{kind}' is not a kind of terrain (one of {', '.join(TERRAIN_KINDS)})", "kind")
        pts = raw["points"]
        if (not isinstance(pts, list) or len(pts) < 3 or not all(
                isinstance(pt, list) and len(pt) == 2
                and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in pt) for pt in pts)):
            raise where.error("must be at least three [x_mm, y_mm] corners", "points")
        for x, y in pts:
            if not (0 <= x <= width and 0 <= y <= depth):
                raise where.error(f"corner [{x:g}, {y:g}] is off the {width:g} x {depth:g} mm table", "points")
        area = 0.5 * sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]))
        if abs(area) < 1.0:
            raise where.error("its corners enclose no area (are they all on one line?)", "points")
        pieces.append(TerrainSpec(name.strip(), kind, tuple((float(x), float(y)) for x, y in pts)))
    return tuple(pieces)


def _parse_dice(raw: Any, path: str, text: str) -> DiceSpec:
    where = _Where(path, text, "dice")
    if not isinstance(raw, dict):
        raise TableFileError(f"{path}: [dice] must be a table (source, port, baud, seed)")
    for key in raw:
        if key not in _DICE_KEYS:
            raise where.error(f"unknown key '{key}'{_suggest(key, set(_DICE_KEYS))}; known keys are "
                              f"{', '.join(_DICE_KEYS)}", key)
    source = raw.get("source", "virtual")
    if source not in DICE_SOURCES:
        raise where.error(f"'{source}' is not a dice source (one of {', '.join(DICE_SOURCES)})", "source")
    port = raw.get("port")
    if source == "tray" and not port:
        raise where.error("the tray needs its port, e.g. port = \"/dev/ttyACM0\" or \"socket://host:7000\"", "port")
    if port is not None and not isinstance(port, str):
        raise where.error(f"must be a port name or URL, not {port!r}", "port")
    baud = raw.get("baud", 115200)
    if isinstance(baud, bool) or not isinstance(baud, int) or baud not in (
            1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600):
        raise where.error(f"{baud!r} is not a serial speed (9600, 115200, ...)", "baud")
    seed = raw.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise where.error(f"must be a whole number, not {seed!r}", "seed")
    return DiceSpec(source, port, baud, seed)


def _entries(value: Any, section: str, path: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TableFileError(f"{path}: '{section}' must be written as [[{section}]] entries")
    return value


def _parse_anchors(value: Any, path: str, text: str, dictionary: str,
                   width: float, depth: float) -> tuple[AnchorSpec, ...]:
    entries = _entries(value, "anchor", path)
    if len(entries) < 3:
        raise TableFileError(f"{path}: a table needs at least 3 [[anchor]] markers to be found "
                             f"by the camera; this file has {len(entries)}")
    anchors: list[AnchorSpec] = []
    for n, raw in enumerate(entries):
        where = _Where(path, text, "anchor", n, f" (id {raw.get('id', '?')})")
        _check_keys(raw, _ANCHOR_KEYS, where)
        marker_id = _marker_id(raw, where, dictionary)
        size = _number(raw, "size_mm", where, at_most=min(width, depth))
        x = _number(raw, "x_mm", where, positive=False)
        y = _number(raw, "y_mm", where, positive=False)
        rotation = 0.0
        if "rotation_deg" in raw:
            value = raw["rotation_deg"]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise where.error(f"must be a number of degrees (anticlockwise from upright), not {value!r}",
                                  "rotation_deg")
            if not -360.0 <= value <= 360.0:
                raise where.error(f"{value:g} degrees is more than a whole turn; say it between -360 and 360",
                                  "rotation_deg")
            rotation = float(value)
        anchor = AnchorSpec(marker_id, x, y, size, rotation)
        corners = anchor.corners_mm()
        if not all(-1e-9 <= cx <= width + 1e-9 and -1e-9 <= cy <= depth + 1e-9 for cx, cy in corners):
            turned = f", turned {rotation:g} deg" if rotation else ""
            raise where.error(f"the marker (centre {x:g}, {y:g}, side {size:g} mm{turned}) does not lie "
                              f"wholly on the {width:g} x {depth:g} mm table")
        for other in anchors:
            if other.id == marker_id:
                raise where.error(f"anchor id {marker_id} appears twice", "id")
            if _squares_overlap(corners, other.corners_mm()):
                raise where.error(f"overlaps anchor {other.id}")
        anchors.append(anchor)
    return tuple(anchors)


def _squares_overlap(a: tuple[tuple[float, float], ...], b: tuple[tuple[float, float], ...]) -> bool:
    """True when two convex outlines share area (touching edges do not count):
    no edge of either separates them."""
    for poly in (a, b):
        for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1]):
            nx, ny = y1 - y0, x0 - x1
            pa = [nx * px + ny * py for px, py in a]
            pb = [nx * px + ny * py for px, py in b]
            if max(pa) <= min(pb) + 1e-9 or max(pb) <= min(pa) + 1e-9:
                return False
    return True


def _parse_cars(value: Any, path: str, text: str, dictionary: str) -> tuple[CarSpec, ...]:
    cars: list[CarSpec] = []
    for n, raw in enumerate(_entries(value, "car", path)):
        where = _Where(path, text, "car", n, f" ({raw.get('name', raw.get('id', '?'))})")
        _check_keys(raw, _CAR_KEYS, where)
        marker_id = _marker_id(raw, where, dictionary)
        name = raw["name"]
        if not isinstance(name, str) or not name.strip():
            raise where.error("must be a non-empty name", "name")
        length = _number(raw, "length_mm", where, at_most=2000.0)
        width = _number(raw, "width_mm", where, at_most=2000.0)
        # 0 is a flat token: a marker lying on the table itself.
        roof = _number(raw, "roof_mm", where, positive=False, at_most=_MAX_ROOF_MM)
        if roof < 0:
            raise where.error(f"must be 0 mm (a marker lying on the table) or more, not {roof:g}", "roof_mm")
        marker = _number(raw, "marker_mm", where, at_most=min(length, width))
        offset_raw = raw.get("offset_mm", [0.0, 0.0])
        if (not isinstance(offset_raw, list) or len(offset_raw) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in offset_raw)):
            raise where.error(f"must be two numbers [forward, left] in mm, not {offset_raw!r}",
                              "offset_mm")
        offset = (float(offset_raw[0]), float(offset_raw[1]))
        # The marker must sit on the car's roof: its centre inside the footprint.
        if abs(offset[0]) > length / 2 or abs(offset[1]) > width / 2:
            raise where.error(f"offset {list(offset)} puts the marker off the "
                              f"{length:g} x {width:g} mm car", "offset_mm")
        if any(c.id == marker_id for c in cars):
            raise where.error(f"car id {marker_id} appears twice", "id")
        cars.append(CarSpec(marker_id, name.strip(), length, width, roof, marker, offset))
    return tuple(cars)


def load_table(path: str | Path) -> TableSpec:
    """Load and validate a table file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TableFileError(f"{p}: no such table file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TableFileError(f"{p}: cannot read the table file: {exc}") from None
    return parse_table(text, str(p))


def table_to_json(table: TableSpec) -> dict:
    """The table as plain JSON (what a game file keeps of it)."""
    return {"width_mm": table.width_mm, "depth_mm": table.depth_mm, "dictionary": table.dictionary,
            "roof_sigma_mm": table.roof_sigma_mm,
            "anchors": [{"id": a.id, "x_mm": a.x_mm, "y_mm": a.y_mm, "size_mm": a.size_mm,
                         "rotation_deg": a.rotation_deg} for a in table.anchors],
            "cars": [{"id": c.id, "name": c.name, "length_mm": c.length_mm, "width_mm": c.width_mm,
                      "roof_mm": c.roof_mm, "marker_mm": c.marker_mm, "offset_mm": list(c.offset_mm)}
                     for c in table.cars],
            "terrain": [{"name": t.name, "kind": t.kind, "points": [list(pt) for pt in t.points]}
                        for t in table.terrain],
            "gates": [gate_spec_to_json(g) for g in table.gates]}


def gate_spec_to_json(g: GateSpec) -> dict:
    """A gate as the table file describes it (posts None for a marker gate, markers None for a measured one)."""
    return {"name": g.name, "role": g.role,
            "a_mm": None if g.a_mm is None else list(g.a_mm), "b_mm": None if g.b_mm is None else list(g.b_mm),
            "markers": None if g.markers is None else list(g.markers), "marker_mm": g.marker_mm}


def _gate_spec_from_json(g: dict) -> GateSpec:
    def pt(v):
        return None if v is None else (float(v[0]), float(v[1]))
    return GateSpec(g["name"], g.get("role", ""), pt(g.get("a_mm")), pt(g.get("b_mm")),
                    None if g.get("markers") is None else (int(g["markers"][0]), int(g["markers"][1])),
                    g.get("marker_mm"))


def table_from_json(data: dict, source: str = "<game file>") -> TableSpec:
    return TableSpec(data["width_mm"], data["depth_mm"], data["dictionary"],
                     tuple(AnchorSpec(a["id"], a["x_mm"], a["y_mm"], a["size_mm"], a.get("rotation_deg", 0.0))
                           for a in data["anchors"]),
                     tuple(CarSpec(c["id"], c["name"], c["length_mm"], c["width_mm"], c["roof_mm"], c["marker_mm"],
                                   tuple(c["offset_mm"])) for c in data["cars"]),
                     source=source, roof_sigma_mm=data["roof_sigma_mm"],
                     terrain=tuple(TerrainSpec(t["name"], t["kind"], tuple(tuple(pt) for pt in t["points"]))
                                   for t in data["terrain"]),
                     # Game files written before tables had gates have none.
                     gates=tuple(_gate_spec_from_json(g) for g in data.get("gates", [])))
