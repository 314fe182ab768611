"""The players' tools on the table: the system's templates, a free ruler, and "put it back".

- `GET api/templates`: the templates and gauges of the rule system in play (or `?rules=`),
  with the table's own doubt, for the page to place, move and turn over the live table.
- `GET|POST api/ruler`: between two points, a car and a point, or two cars, as the camera
  sees them now: the distance with its doubt. Refused (409, saying why) while a game whose
  book forbids measuring before declaring is played.
- `POST api/putback` (`{"from": "undo" | "activation" | "record"}`): where each car must stand
  again, fixed then; `GET api/putback` compares it with the camera now, car by car, with
  what to do ("12 mm forward, turn 5° left"); `POST api/putback/clear` ends it.

Like `api`, this talks to the table game only, and a bad request gets a 400 naming the
problem, one the game cannot take a 409 saying why.
"""

from __future__ import annotations

import math
import re
import threading

from flask import Blueprint, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

from ..game import GameError
from ..geometry import Footprint, Pose, closest_distance, normalize_deg
from ..geometry.pose import MM_PER_IN
from ..rules.base import DEFAULT_SYSTEM, RulesError, rule_system
from . import api
from .api import BadRequest, body, game

bp = Blueprint("tools", __name__, url_prefix="/api")

#: A car is back in place when the camera sees it this near where it must stand (beyond its
#: own doubt): the play of a hand putting a 75 mm car down, and what a rule's margin survives.
PUT_BACK_TOLERANCE_MM = 3.0
PUT_BACK_TOLERANCE_DEG = 2.0
#: Below these a correction is not worth saying.
SAY_MM = 0.5
SAY_DEG = 0.5


# The same answers as `api`'s to bad input, a refusal and a failure (one place says them).
for _kind, _handler in ((BadRequest, api.bad_request), (GameError, api.cannot), (RulesError, api.cannot),
                        (HTTPException, api.http_error), (Exception, api.broken)):
    bp.register_error_handler(_kind, _handler)


def _table_doubt_mm() -> float | None:
    """How well the table's own pose is known (the anchors' fit, mm), or None before the
    camera has found the table."""
    cam = game().live.snapshot().get("camera")
    return None if not cam else float(cam["reprojection_mm"])


# --- templates --------------------------------------------------------------------------------

@bp.get("/templates")
def templates():
    """The templates of the rule system in play (or `?rules=NAME`)."""
    g = game()
    name = request.args.get("rules")
    with g._lock:
        session = g.session
        if name is None and session is not None:
            rules = session.rules
        else:
            try:
                rules = rule_system(name or DEFAULT_SYSTEM)
            except RulesError as exc:
                raise BadRequest(str(exc)) from None
    return jsonify({"rules": rules.name, "title": rules.title, "templates": rules.templates(),
                    "premeasure": rules.may_premeasure(), "table_sigma_mm": _table_doubt_mm()})


# --- the ruler ---------------------------------------------------------------------------------

_POINT = re.compile(r"\s*(-?[0-9]+(?:\.[0-9]+)?)\s*,\s*(-?[0-9]+(?:\.[0-9]+)?)\s*")
_CAR = re.compile(r"\s*car:\s*([0-9]{1,9})\s*")


def _end(value, what: str) -> dict:
    """One end of the ruler: {"car": marker} or {"point": [x_mm, y_mm]}; from a query string,
    "car:10" or "300,200"."""
    if isinstance(value, str):
        if m := _CAR.fullmatch(value):
            return {"car": int(m.group(1))}
        if m := _POINT.fullmatch(value):
            return {"point": [float(m.group(1)), float(m.group(2))]}
        raise BadRequest(f"{what}: say a car as car:MARKER or a point as x_mm,y_mm, not {value[:40]!r}")
    if isinstance(value, dict) and set(value) == {"car"}:
        car = value["car"]
        if isinstance(car, bool) or not isinstance(car, int):
            raise BadRequest(f"{what}: a car is its marker, a whole number, not {car!r}")
        return {"car": car}
    if isinstance(value, dict) and set(value) == {"point"}:
        pt = value["point"]
        if not (isinstance(pt, list) and len(pt) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pt)):
            raise BadRequest(f"{what}: a point is [x_mm, y_mm], not {pt!r}")
        return {"point": [float(pt[0]), float(pt[1])]}
    raise BadRequest(f'{what}: send {{"car": MARKER}} or {{"point": [x_mm, y_mm]}}')


@bp.route("/ruler", methods=["GET", "POST"])
def ruler():
    """From one end to the other (a car's nearest edge, or a point), as the camera sees it now."""
    if request.method == "POST":
        b = body()
        a, z = _end(b.get("from"), "from"), _end(b.get("to"), "to")
    else:
        a, z = _end(request.args.get("from", ""), "from"), _end(request.args.get("to", ""), "to")
    g = game()
    with g._lock:
        session = g.session
        if session is not None and not session.rules.may_premeasure():
            raise GameError(f"{session.rules.title} forbids measuring before an action is declared: "
                            f"the ruler is off during its games (declare the action; it is measured then)")
    if "car" in a and "car" in z:
        m = g.measure(a["car"], z["car"])
        return jsonify(_ruled({"car": a["car"], "label": m["names"][0]}, {"car": z["car"], "label": m["names"][1]},
                              m["distance_mm"], m["sigma_mm"], m["line"]))
    doubt = _table_doubt_mm()
    if doubt is None:
        raise GameError("the camera has not found the table yet (no anchors seen): nothing can be measured")
    ends = []
    for end, what in ((a, "from"), (z, "to")):
        if "car" in end:
            ends.append(_car_footprint(end["car"]))
        else:
            x, y = end["point"]
            table = g.table
            if not (0 <= x <= table.width_mm and 0 <= y <= table.depth_mm):
                raise BadRequest(f"{what}: ({x:.0f}, {y:.0f}) mm is off the {table.width_mm:.0f} x "
                                 f"{table.depth_mm:.0f} mm table")
            # A point is as well placed as the table is: the anchors' fit is its doubt.
            ends.append(Footprint(-1, Pose(x, y, 0.0, doubt, 0.0), 1e-3, 1e-3, f"({x:.0f}, {y:.0f})"))
    d = closest_distance(ends[0], ends[1])
    labels = [{"car": e["car"], "label": f.name} if "car" in e else {"point": e["point"], "label": "the point"}
              for e, f in zip((a, z), ends)]
    return jsonify(_ruled(labels[0], labels[1], d.distance_mm, d.sigma_mm,
                          [list(map(float, d.from_point)), list(map(float, d.to_point))]))


def _car_footprint(marker: int) -> Footprint:
    g = game()
    spec = g.table.car(marker)
    if spec is None:
        raise BadRequest(f"there is no car with marker {marker} on this table")
    c = g.live_poses().get(marker)
    if c is None:
        raise GameError(f"the camera has not found the {spec.name} (marker {marker}) on the table")
    if c["stale"]:
        raise GameError(f"the camera has lost sight of the {spec.name}: clear its view and measure again")
    return Footprint(marker, Pose(c["x_mm"], c["y_mm"], c["heading_deg"], c["sigma_mm"], c["sigma_deg"]),
                     spec.length_mm, spec.width_mm, spec.name)


def _ruled(a: dict, z: dict, distance_mm: float, sigma_mm: float, line) -> dict:
    return {"from": a, "to": z, "distance_mm": round(float(distance_mm), 2), "sigma_mm": round(float(sigma_mm), 3),
            "distance_in": round(float(distance_mm) / MM_PER_IN, 3), "sigma_in": round(float(sigma_mm) / MM_PER_IN, 3),
            "line": [[round(v, 2) for v in p] for p in line]}


# --- put it back ------------------------------------------------------------------------------

class PutBack:
    """Where each car must stand again, fixed when asked: {marker: (x_mm, y_mm, heading_deg)}."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.targets: dict[int, tuple[float, float, float]] = {}
        self.why = ""
        self.source = ""


def _putback() -> PutBack:
    return current_app.extensions.setdefault("tools_putback", PutBack())


def _targets_from(source: str) -> tuple[dict[int, tuple[float, float, float]], str]:
    """The poses the game has for its cars, as `source` says, and why they are the ones."""
    g = game()
    with g._lock:
        session = g._need_game()
        rules, state = session.rules, session.state
        pieces = rules.pieces(state)
        in_play = {m for m, v in pieces.items() if v.in_play}
        if source == "undo":
            undo = next((e for e in reversed(session.log) if e.kind == "undo"), None)
            if undo is None:
                raise GameError("nothing has been undone in this game: there is nothing to put back after an undo")
            undone = next(e for e in session.log if e.n == undo.detail["event"])
            poses = {m: (p.x_mm, p.y_mm, p.heading_deg) for m, p in (undone.poses or {}).items() if m in in_play}
            # Cars the undone action did not judge stood where the activation has them.
            for m in in_play - set(poses):
                stood = g.activations.stood(m)
                if stood is not None:
                    poses[m] = tuple(stood[:3])
            return poses, f"the undo of event {undone.n}: where the cars stood when it was resolved"
        if source == "activation":
            poses = {}
            for m in in_play:
                stood = g.activations.stood(m)
                if stood is not None:
                    poses[m] = tuple(stood[:3])
            return poses, "where each car stood when this turn began (or its last move ended)"
        if source == "record":
            if g.store is None or not len(g.store):
                raise GameError("this game is not kept in a game file (serve --game FILE): there is no record to "
                                "put the cars back from")
            from ..record import resume
            replayed = resume(g.store).session
            recorded = replayed.rules.poses_of(replayed.state)
            alive = {m for m, v in replayed.rules.pieces(replayed.state).items() if v.in_play}
            return ({m: (p.x_mm, p.y_mm, p.heading_deg) for m, p in recorded.items() if m in alive},
                    "the game file: where its last event left the cars")
    raise BadRequest(f"put back from 'undo', 'activation' or 'record', not {source!r}")


def _say_mm(v: float, plus: str, minus: str) -> str | None:
    return None if abs(v) < SAY_MM else f"{abs(v):.0f} mm {plus if v > 0 else minus}"


def guidance(now: tuple[float, float, float], target: tuple[float, float, float]) -> dict:
    """From where a car stands to where it must: the offset in the car's own frame (forward,
    left, as the player moving it sees it whichever side they stand), the turn, and in words."""
    x, y, h = now
    tx, ty, th = target
    dx, dy = tx - x, ty - y
    rad = math.radians(h)
    forward_mm = dx * math.cos(rad) + dy * math.sin(rad)
    left_mm = -dx * math.sin(rad) + dy * math.cos(rad)
    turn_deg = normalize_deg(th - h)
    parts = [p for p in (_say_mm(forward_mm, "forward", "back"), _say_mm(left_mm, "to its left", "to its right"))
             if p]
    if abs(turn_deg) >= SAY_DEG:
        parts.append(f"turn {abs(turn_deg):.0f}° {'left (anticlockwise)' if turn_deg > 0 else 'right (clockwise)'}")
    return {"distance_mm": round(math.hypot(dx, dy), 2), "forward_mm": round(forward_mm, 2),
            "left_mm": round(left_mm, 2), "turn_deg": round(turn_deg, 2),
            "text": ", ".join(parts) if parts else "as it is"}


def _status() -> dict:
    pb = _putback()
    with pb.lock:
        targets, why, source = dict(pb.targets), pb.why, pb.source
    if not targets:
        return {"active": False, "cars": []}
    g = game()
    live = g.live_poses()
    rows = []
    for m, target in sorted(targets.items()):
        c = live.get(m)
        row = {"marker": m, "name": g._name(m), "target": [round(v, 2) for v in target]}
        if c is None or c["stale"]:
            row.update(seen=False, in_place=False,
                       text="not seen by the camera: put it back on the table where its outline is drawn")
        else:
            now = (c["x_mm"], c["y_mm"], c["heading_deg"])
            gd = guidance(now, target)
            tol_mm = PUT_BACK_TOLERANCE_MM + c["sigma_mm"]
            tol_deg = PUT_BACK_TOLERANCE_DEG + c["sigma_deg"]
            ok = gd["distance_mm"] <= tol_mm and abs(gd["turn_deg"]) <= tol_deg
            row.update(seen=True, now=[round(v, 2) for v in now], in_place=ok, tolerance_mm=round(tol_mm, 2),
                       tolerance_deg=round(tol_deg, 2), **{k: gd[k] for k in ("distance_mm", "forward_mm",
                                                                             "left_mm", "turn_deg")},
                       text="in place" if ok else gd["text"])
        rows.append(row)
    return {"active": True, "source": source, "why": why, "cars": rows,
            "done": all(r["in_place"] for r in rows),
            "tolerance_mm": PUT_BACK_TOLERANCE_MM, "tolerance_deg": PUT_BACK_TOLERANCE_DEG}


@bp.post("/putback")
def put_back():
    """Fix where each car must stand again (`{"from": "undo" | "activation" | "record"}`)."""
    source = body().get("from", "activation")
    if not isinstance(source, str):
        raise BadRequest(f"'from' is 'undo', 'activation' or 'record', not {source!r}")
    targets, why = _targets_from(source)
    if not targets:
        raise GameError("the game has no car with a pose to put back yet")
    pb = _putback()
    with pb.lock:
        pb.targets, pb.why, pb.source = targets, why, source
    return jsonify(_status())


@bp.get("/putback")
def put_back_status():
    """Each car's place against the camera's pose now."""
    return jsonify(_status())


@bp.post("/putback/clear")
def put_back_clear():
    pb = _putback()
    with pb.lock:
        pb.targets, pb.why, pb.source = {}, "", ""
    return jsonify(_status())
