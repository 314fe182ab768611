"""What the projector throws on the table, in table mm: the page's own drawing, as outlines.

The scene is made from exactly what the table page is given (no second judgement):
- the game as `TableGame.game_json()` gives it: the board's cells (Stop The Truck's squares,
  bombs, mines), the activation (whose move starts where), the placement the rules wait for
  (`pending.placement`, with `also`);
- the acting car as `TableGame.car()` gives it: its overlays (move templates and legal
  regions, its weapons' arcs, the cells it may reach) and the lines to the targets in its
  weapons' reach (neither arcs nor lines where the book forbids measuring before declaring);
- the camera's snapshot (`LiveTable.snapshot()`): where each car stands now (the live ruler, the
  placement outline's footprint, the ghosts of cars moved since the activation began, the
  masks) and the gates' posts.

While the rules wait for a piece to be put somewhere (`pending.waiting == "placement"`, what the
page's showPlacement reads), the page dims the acting car's overlays and lines (table.css:
`body.placing #overlays, body.placing #lines`, a quarter of their light) and draws no move
ruler: the scene does the same (those shapes' colours at PLACING_LIGHT, no live ruler), and the
placement's outline stays at full light.

A projector draws outlines, never floods: a polygon with holes is drawn ring by ring, each a
closed stroke. Only the masks are filled (black, drawn last by the display): every roof
marker and every anchor, with a margin, so no marker is ever lit and tracking keeps working.

`build_scene` is pure (plain data in, TableShapes out); `SceneSource` reads a TableGame for
it, keeping the game's answers while the game and the cars stand still.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time

from .geometry.pose import Pose
from .projector import TableShape

#: Around every marker the mask reaches this far beyond the marker's edge (mm): the camera's
#: doubt, the projector's calibration error and the marker's white border.
MASK_MARGIN_MM = 6.0
#: The live ruler is drawn once the acting car has moved this far from its move's start (mm).
RULER_MIN_MM = 1.0
#: A car's ghost (where it stood when the activation began) is drawn once it has moved this far
#: or turned this much from there, as the page draws it.
GHOST_MIN_MM = 3.0
GHOST_MIN_DEG = 3.0
#: A car's footprint when neither the camera's snapshot nor the table file gives one (mm).
DEFAULT_FOOTPRINT = (75.0, 32.0)
#: One colour per role, the page's own (table.css), at full brightness: what the page draws
#: in amber is thrown in amber (a projector's light on a mat).
COLOURS = {"template": "#ffffff", "region": "#7bd88f", "arc": "#f0b429", "arc_jammed": "#a0a0a0",
           "reach": "#ffe600", "red": "#ff4040", "blue": "#4da6ff", "ruler": "#ff5dc8",
           "square": "#6fa8ff", "board_piece": "#ff9d2e", "gate": "#ff9d2e", "placement": "#3fe0ff",
           "blast": "#ff5a1f", "ghost": "#b0b0b0", "mask": "#000000"}
#: While a placement waits, the page shows its overlays and lines at this opacity (table.css,
#: `body.placing #overlays`): a projector's light on a dark table is the colour times it.
PLACING_LIGHT = 0.25
WIDTHS = {"template": 2.0, "region": 1.5, "arc": 1.5, "reach": 1.5, "ruler": 2.0, "square": 1.2,
          "gate": 2.0, "placement": 3.0, "ghost": 1.2, "blast": 2.0}


def _rings(polygons) -> list[list[tuple[float, float]]]:
    """Every ring of a list of polygons (each a list of rings: outer first, then holes)."""
    out = []
    for poly in polygons or []:
        for ring in poly or []:
            pts = [(float(p[0]), float(p[1])) for p in ring]
            # Rings may repeat their first point at the end; the shape closes itself.
            if len(pts) > 1 and pts[0] == pts[-1]:
                pts = pts[:-1]
            if len(pts) >= 2:
                out.append(pts)
    return out


def _outlines(role: str, polygons, label: str, colour: str | None = None) -> list[TableShape]:
    return [TableShape(role, tuple(r), closed=True, filled=False, width_mm=WIDTHS.get(role, 2.0),
                       colour=colour or COLOURS[role], label=label) for r in _rings(polygons)]


def _cell_shapes(cells, role_of) -> list[TableShape]:
    out = []
    for c in cells or []:
        kind = c.get("kind") or "square"
        role, colour = role_of(kind)
        pts = tuple((float(x), float(y)) for x, y in c.get("polygon") or [])
        if len(pts) >= 3:
            out.append(TableShape(role, pts, True, False, WIDTHS[role], colour,
                                  f"{c.get('label') or kind} ({kind})"))
    return out


def _board_role(kind: str) -> tuple[str, str]:
    # The board's plain squares, and the squares something holds (truck, bomb, mine, hazard).
    return ("square", COLOURS["square"] if kind == "square" else COLOURS["board_piece"])


def _reach_role(kind: str) -> tuple[str, str]:
    # A car's reachable squares: "reach", or "red"/"blue" where a driving roll comes first.
    return ("reach", COLOURS.get(kind, COLOURS["reach"]))


def _box(cx: float, cy: float, heading_deg: float, half_f: float, half_l: float) -> tuple:
    """A rectangle's corners about (cx, cy), `half_f` along the heading and `half_l` across."""
    pose = Pose(cx, cy, heading_deg)
    return tuple(tuple(pose.to_table(sf * half_f, sl * half_l).tolist())
                 for sf, sl in ((1, 1), (1, -1), (-1, -1), (-1, 1)))


def _footprint(marker: int, live_cars: dict, table) -> tuple[float, float]:
    c = live_cars.get(marker)
    if c and c.get("length_mm") and c.get("width_mm"):
        return float(c["length_mm"]), float(c["width_mm"])
    spec = table.car(marker) if table is not None else None
    return (spec.length_mm, spec.width_mm) if spec is not None else DEFAULT_FOOTPRINT


def _placement_shapes(p: dict, live_cars: dict, table, back: bool) -> list[TableShape]:
    """As the page's drawPlacement: the area where the player chooses, else the car's outline at
    the asked pose with its front marked (a bar across the front and a nose beyond it)."""
    name = p.get("name") or f"car {p.get('marker')}"
    if p.get("chosen"):
        return _outlines("placement", p.get("area") or [], f"put {name}'s front in here")
    x, y, h = (float(v) for v in p["to"][:3])
    length, width = _footprint(int(p["marker"]), live_cars, table)
    label = f"put {name} {'back ' if back else ''}here"
    pose = Pose(x, y, h)
    at = lambda f, l: tuple(pose.to_table(f, l).tolist())           # noqa: E731 (car frame to table)
    nose = 5 + width * 0.45
    width_mm, colour = WIDTHS["placement"], COLOURS["placement"]
    return [TableShape("placement", _box(x, y, h, length / 2, width / 2), True, False, width_mm, colour, label),
            TableShape("placement", (at(length / 2, width / 2 - 2), at(length / 2, -width / 2 + 2)), False, False,
                       width_mm, colour, f"{label}: its front"),
            TableShape("placement", (at(length / 2 + 5, width / 2 - 3), at(length / 2 + nose, 0.0),
                                     at(length / 2 + 5, -width / 2 + 3)), True, False, width_mm, colour,
                       f"{label}: its front")]


def _ghosts(activation: dict, live_cars: dict, table) -> list[TableShape]:
    """As the page's drawGhosts: where each car stood when the activation began, once the camera
    sees it moved from there (never while it stands there: that would light the car itself)."""
    out = []
    for key, p in sorted((activation.get("start") or {}).items()):
        now = live_cars.get(int(key))
        if now is None:
            continue
        turned = abs((now["heading_deg"] - p[2] + 540) % 360 - 180)
        if math.hypot(now["x_mm"] - p[0], now["y_mm"] - p[1]) <= GHOST_MIN_MM and turned <= GHOST_MIN_DEG:
            continue
        length, width = _footprint(int(key), live_cars, table)
        name = (table.car(int(key)).name if table is not None and table.car(int(key)) else f"car {key}")
        out.append(TableShape("ruler", _box(float(p[0]), float(p[1]), float(p[2]), length / 2, width / 2), True, False,
                              WIDTHS["ghost"], COLOURS["ghost"], f"where {name} stood when this activation began"))
    return out


def _gate_shapes(g: dict) -> list[TableShape]:
    """As the page's drawGates: the line between the posts, an arrow the way through (the
    left-hand normal of A -> B) and a small ring at each post."""
    if not g.get("a") or not g.get("b"):
        return []                               # a marker gate whose posts are not seen yet
    (ax, ay), (bx, by) = g["a"], g["b"]
    length = math.hypot(bx - ax, by - ay)
    if not length > 0:
        return []
    name, w, c = g.get("name") or "gate", WIDTHS["gate"], COLOURS["gate"]
    nx, ny = -(by - ay) / length, (bx - ax) / length
    mx, my, r = (ax + bx) / 2, (ay + by) / 2, min(28.0, length / 3)
    tip, tail = (mx + nx * r, my + ny * r), (mx - nx * r, my - ny * r)
    side, back = (-ny * r * 0.45, nx * r * 0.45), (nx * r * 0.5, ny * r * 0.5)
    head = ((tip[0] - back[0] + side[0], tip[1] - back[1] + side[1]), tip,
            (tip[0] - back[0] - side[0], tip[1] - back[1] - side[1]))
    post = lambda px, py: tuple((px + 7 * math.cos(k * math.pi / 6), py + 7 * math.sin(k * math.pi / 6))  # noqa: E731
                                for k in range(12))
    return [TableShape("gate", ((ax, ay), (bx, by)), False, False, w, c, f"gate {name}"),
            TableShape("gate", (tail, tip), False, False, w, c, f"gate {name}: the way through"),
            TableShape("gate", head, False, False, w, c, f"gate {name}: the way through"),
            TableShape("gate", post(ax, ay), True, False, w, c, f"gate {name}: post A"),
            TableShape("gate", post(bx, by), True, False, w, c, f"gate {name}: post B")]


def _masks(live: dict, table, margin_mm: float) -> list[TableShape]:
    """A filled black square over every roof marker the camera sees (the table file's marker,
    offset from the car's middle as the file says) and every anchor, `margin_mm` wider each side;
    a marker gate's posts too (their turn unknown: a square round any turn)."""
    out = []
    black = COLOURS["mask"]
    for c in live.get("cars") or []:
        spec = table.car(int(c["id"])) if table is not None else None
        if spec is None:
            continue
        h = float(c["heading_deg"])
        # The marker's middle, as the renderer and the locator place it on the roof.
        mx, my = Pose(float(c["x_mm"]), float(c["y_mm"]), h).to_table(-spec.forward_offset_mm,
                                                                     -spec.left_offset_mm).tolist()
        half = spec.marker_mm / 2 + margin_mm
        # On the roof, not the table: the display widens it by the parallax of the roof's height.
        out.append(TableShape("mask", _box(mx, my, h, half, half), True, True, 0.0, black,
                              f"{spec.name}'s roof marker", z_mm=spec.roof_mm))
    for a in (table.anchors if table is not None else ()):
        half = a.size_mm / 2 + margin_mm
        out.append(TableShape("mask", _box(a.x_mm, a.y_mm, a.rotation_deg, half, half), True, True, 0.0, black,
                              f"anchor {a.id}"))
    for g in live.get("gates") or []:
        spec = table.gate(g.get("name")) if table is not None else None
        if spec is None or spec.markers is None or not spec.marker_mm:
            continue
        half = spec.marker_mm / math.sqrt(2) + margin_mm
        for end in ("a", "b"):
            if g.get(end):
                out.append(TableShape("mask", _box(float(g[end][0]), float(g[end][1]), 0.0, half, half), True, True,
                                      0.0, black, f"gate {spec.name}'s post marker"))
    return out


def _dim(shapes: list[TableShape], light: float) -> list[TableShape]:
    """The shapes at `light` of their brightness (as the page's opacity over black)."""
    def scaled(colour: str) -> str:
        c = colour.lstrip("#")
        if len(c) == 3:
            c = "".join(ch * 2 for ch in c)
        return "#" + "".join(f"{round(int(c[i:i + 2], 16) * light):02x}" for i in (0, 2, 4))
    return [dataclasses.replace(s, colour=scaled(s.colour)) for s in shapes]


def placement_waited(game_view: dict | None) -> dict | None:
    """The placement the rules wait for, as the page's placementOf reads it (None: none)."""
    pending = (game_view or {}).get("pending") or {}
    return pending.get("placement") if pending.get("waiting") == "placement" else None


def _half(v) -> float:
    return round(float(v) * 2) / 2


def acting_car(game_view: dict) -> int | None:
    """The car whose turn it is, as the page reads it (the rules' active car, else the
    activation's)."""
    g = game_view.get("game") or {}
    a = g.get("active")
    if a is None:
        a = (game_view.get("activation") or {}).get("active")
    return None if a is None else int(a)


def build_scene(game_view: dict | None, car: dict | None, live: dict, table,
                margin_mm: float = MASK_MARGIN_MM) -> list[TableShape]:
    """The table's scene in mm.

    `game_view`: `TableGame.game_json()` (None or without a game: only gates and masks);
    `car`: the acting car as `TableGame.car()` gives it (None: no car acts);
    `live`: the camera's snapshot (cars, gates); `table`: the table file (TableSpec)."""
    shapes: list[TableShape] = []
    # The camera's poses to the half millimetre and degree: a still car's jitter leaves the
    # scene the same (so the display's mapping is reused), well inside the masks' margin.
    live = {**live, "cars": [{**c, "x_mm": _half(c["x_mm"]), "y_mm": _half(c["y_mm"]),
                              "heading_deg": _half(c["heading_deg"])} for c in live.get("cars") or []]}
    live_cars = {int(c["id"]): c for c in live["cars"]}
    playing = bool(game_view and game_view.get("game"))
    if playing:
        board = game_view["game"].get("board") or {}
        shapes += _cell_shapes(board.get("cells"), _board_role)
    for g in live.get("gates") or []:
        shapes += _gate_shapes(g)
    active = acting_car(game_view) if playing else None
    placement = placement_waited(game_view)
    overlays = (car or {}).get("overlays") or {}
    # What the page draws in #overlays and #lines: dimmed together while a placement waits.
    acting: list[TableShape] = []
    if active is not None and overlays:
        acting += _cell_shapes(overlays.get("cells"), _reach_role)
        for r in overlays.get("move_regions") or []:
            name = r.get("name") or "move"
            if r.get("template"):
                acting += _outlines("template", r["template"], f"move template ({name})")
            acting += _outlines("region", r.get("polygons"), f"where it may end its move ({name})")
        for a in overlays.get("arcs") or []:
            acting += _outlines("arc", a.get("polygons"), f"{a.get('mount') or 'weapon'} arc",
                                COLOURS["arc_jammed"] if a.get("jammed") else None)
    if active is not None:
        # As the page's drawOverlays: the closest line to each target its weapons reach.
        for t in (car or {}).get("targets") or []:
            line, rng = t.get("line"), t.get("range") or {}
            if line and rng and rng.get("outcome") != "out":
                acting.append(TableShape("reach", tuple((float(x), float(y)) for x, y in line), False, False,
                                         WIDTHS["reach"], COLOURS["reach"], f"in reach: {t.get('name') or 'a target'}"))
    shapes += _dim(acting, PLACING_LIGHT) if placement else acting
    # The page's followRuler draws the placement's words instead of the move ruler meanwhile.
    if active is not None and not placement:
        act = game_view.get("activation") or {}
        start = (act.get("move_from") or {}).get(str(active)) or (act.get("start") or {}).get(str(active))
        now = live_cars.get(active)
        if start and now and math.hypot(now["x_mm"] - start[0], now["y_mm"] - start[1]) > RULER_MIN_MM:
            line = ((float(start[0]), float(start[1])), (float(now["x_mm"]), float(now["y_mm"])))
            shapes.append(TableShape("ruler", line, False, False, WIDTHS["ruler"], COLOURS["ruler"],
                                     "the live ruler: moved so far"))
    if playing:
        shapes += _ghosts(game_view.get("activation") or {}, live_cars, table)
    if placement:
        for p in [placement, *(placement.get("also") or [])]:
            shapes += _placement_shapes(p, live_cars, table, bool(placement.get("put_back")))
    shapes += _masks(live, table, margin_mm)
    return shapes


class SceneSource:
    """Reads a TableGame for `build_scene`: the game as the page has it, asked again only when
    the game's version changes, and the acting car's, asked again only when the game
    or a car's pose (to the millimetre and degree) changes; the camera's snapshot every time."""

    def __init__(self, game) -> None:
        self.game = game
        self._view: tuple | None = None          # (game version, game_json)
        self._car: tuple | None = None           # (key, the acting car as the page has it)

    def _game_view(self) -> dict:
        if self._view is None or self._view[0] != self.game.version:
            view = self.game.game_json()
            self._view = (view["version"], view)      # the version it was made at, read under the game's lock
        return self._view[1]

    def _acting(self, active: int | None, live: dict, version: int) -> dict | None:
        if active is None:
            return None
        key = (version, active, tuple(sorted((int(c["id"]), round(c["x_mm"]), round(c["y_mm"]), round(c["heading_deg"]))
                                             for c in live.get("cars") or [])))
        if self._car is None or self._car[0] != key:
            try:
                car = self.game.car(active)
            except ValueError:                   # GameError: no such car in this game now
                car = None
            self._car = (key, car)
        return self._car[1]

    def scene(self, margin_mm: float = MASK_MARGIN_MM) -> list[TableShape]:
        live = self.game.live.snapshot()
        view = self._game_view()
        active = acting_car(view) if view.get("game") else None
        car = self._acting(active, live, self._view[0])
        return build_scene(view, car, live, self.game.table, margin_mm)


# --- the players' tools: templates and the ruler each page lays on the table ------------------

#: What a page may send (POST /api/projector/tools): at most this many shapes, each of at most
#: this many points (a circle is drawn with a few dozen), named in at most this many characters.
MAX_TOOL_SHAPES = 64
MAX_TOOL_POINTS = 256
MAX_TOOL_NAME = 80
#: A template may hang over the table's edge, not lie across the room (mm beyond each edge).
TOOL_MARGIN_MM = 400.0
#: Pages kept at once (the least recently heard from is forgotten first). A page with tools
#: out says them again every TOOLS_RESEND_S (the answer to each POST tells it so: tools.js
#: follows it); one not heard from for TOOLS_FORGET_S is forgotten, so the tools of a page
#: that died (a crash, a phone gone flat: no unload word) leave the table within seconds,
#: while a living page's survive two lost re-sends.
MAX_TOOL_PAGES = 32
TOOLS_RESEND_S = 5.0
TOOLS_FORGET_S = 15.0
#: What each kind of tool is drawn as, and its label when the page names none.
TOOL_ROLES = {"template": "blast", "ruler": "ruler"}
TOOL_LABELS = {"template": "a template", "ruler": "the players' ruler"}


def read_tool_shapes(shapes, width_mm: float, depth_mm: float) -> tuple[TableShape, ...]:
    """A page's tools as TableShapes, or ValueError naming the first thing wrong with them.

    `shapes`: [{"kind": "template"|"ruler", "name", "points": [[x_mm, y_mm], ...], "closed"}]."""
    if not isinstance(shapes, list):
        raise ValueError('send "shapes": a list of the tools\' outlines (an empty list clears them)')
    if len(shapes) > MAX_TOOL_SHAPES:
        raise ValueError(f"at most {MAX_TOOL_SHAPES} shapes a page, not {len(shapes)}")
    lo_x, hi_x = -TOOL_MARGIN_MM, width_mm + TOOL_MARGIN_MM
    lo_y, hi_y = -TOOL_MARGIN_MM, depth_mm + TOOL_MARGIN_MM
    out = []
    for k, s in enumerate(shapes):
        where = f"shape {k + 1}"
        if not isinstance(s, dict):
            raise ValueError(f'{where} must be an object with "kind", "name", "points" and "closed"')
        kind = s.get("kind")
        if kind not in TOOL_ROLES:
            raise ValueError(f"{where}: its kind must be {' or '.join(repr(x) for x in TOOL_ROLES)}, not {kind!r}"[:200])
        name = s.get("name", "")
        if not isinstance(name, str) or len(name) > MAX_TOOL_NAME:
            raise ValueError(f"{where}: its name must be text of at most {MAX_TOOL_NAME} characters")
        closed = s.get("closed", kind == "template")
        if not isinstance(closed, bool):
            raise ValueError(f"{where}: closed must be true or false, not {closed!r}"[:200])
        pts = s.get("points")
        least = 3 if closed else 2
        if not isinstance(pts, list) or not least <= len(pts) <= MAX_TOOL_POINTS:
            raise ValueError(f"{where}: send its points as a list of {least} to {MAX_TOOL_POINTS} [x_mm, y_mm] pairs")
        points = []
        for p in pts:
            if (not isinstance(p, list) or len(p) != 2
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p)):
                raise ValueError(f"{where}: each point must be [x_mm, y_mm], two numbers, not {p!r}"[:200])
            x, y = float(p[0]), float(p[1])
            if not (math.isfinite(x) and math.isfinite(y) and lo_x <= x <= hi_x and lo_y <= y <= hi_y):
                raise ValueError(f"{where}: the point ({p[0]}, {p[1]}) is more than {TOOL_MARGIN_MM:g} mm off the "
                                 f"{width_mm:g} x {depth_mm:g} mm table"[:200])
            points.append((round(x, 1), round(y, 1)))    # a tenth of a mm: a still tool maps once
        role = TOOL_ROLES[kind]
        out.append(TableShape(role, tuple(points), closed, False, WIDTHS[role], COLOURS[role],
                              name.strip() or TOOL_LABELS[kind]))
    return tuple(out)


class PlayersTools:
    """The tools each page has laid on the table, kept per page (a device's page: two pages,
    or two tabs, never erase each other's), forgotten when the page sends an empty list or
    has sent nothing for `forget_s` (a page with tools sends them every `resend_s`)."""

    def __init__(self, forget_s: float = TOOLS_FORGET_S, max_pages: int = MAX_TOOL_PAGES, clock=time.monotonic,
                 resend_s: float = TOOLS_RESEND_S) -> None:
        if not 0 < resend_s * 2 < forget_s:
            # A living page must be heard from at least twice within the time it is forgotten
            # after, or one late re-send would take its tools off the table.
            raise ValueError(f"the pages' re-send ({resend_s:g} s) must be under half the time a silent page "
                             f"is forgotten after ({forget_s:g} s)")
        self.forget_s, self.max_pages, self.clock, self.resend_s = forget_s, max_pages, clock, resend_s
        self._lock = threading.Lock()
        self._pages: dict[str, tuple[float, tuple[TableShape, ...]]] = {}   # page -> (last heard, shapes)

    def _forget_old(self, now: float) -> None:
        for page in [p for p, (t, _) in self._pages.items() if now - t > self.forget_s]:
            del self._pages[page]

    def put(self, page: str, shapes: tuple[TableShape, ...]) -> None:
        with self._lock:
            now = self.clock()
            self._forget_old(now)
            if not shapes:
                self._pages.pop(page, None)
                return
            while page not in self._pages and len(self._pages) >= self.max_pages:
                del self._pages[min(self._pages, key=lambda p: self._pages[p][0])]
            self._pages[page] = (now, tuple(shapes))      # a page sending again keeps its place

    def shapes(self) -> tuple[TableShape, ...]:
        """Every page's shapes, the pages in the order first heard from (a still scene stays
        the same tuple, so its frame is answered again)."""
        with self._lock:
            self._forget_old(self.clock())
            return tuple(s for _, shapes in self._pages.values() for s in shapes)

    def pages(self) -> int:
        with self._lock:
            self._forget_old(self.clock())
            return len(self._pages)
