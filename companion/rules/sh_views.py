"""Shattered Highways as the page shows it: a vehicle's card, what to draw for it
(its move template's legal region, its guns' reach), the targets it could shoot
with their measurements, and the actions its crew can take with their fields.

Everything here is read from the game's state and the rules' own checks; it
changes nothing.
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely.geometry import Polygon

from ..geometry import FRONT, LEFT, REAR, RIGHT, Obstacles, around, closest_distance, inches
from ..geometry.pose import MM_PER_IN
from . import sh_data as D
from .base import polygon_rings

_SIDES = {"front": FRONT, "rear": REAR, "left": LEFT, "right": RIGHT}
_FAR_MM = 5000.0


def _label(v) -> str:
    return f"{v.name} ({v.owner})"


class ShatteredHighwaysViews:
    """Mixed into ShatteredHighways: the hooks the page calls."""

    def card(self, state, marker: int) -> dict:
        v = state.vehicle(marker)
        crew = state.crew(marker)
        seat_of = {w.seat: w for w in crew if w.seat is not None}
        status = ("destroyed" if v.destroyed else "out of play" if v.out_of_play
                  else "hidden in a rig" if v.hidden_in is not None
                  else "at the back edge" if v.at_back_edge else "in play")
        return {
            "marker": v.marker, "name": v.name, "class": v.cls, "owner": v.owner, "controller": v.controller,
            "status": status, "active": state.active is v,
            "hp": [{"part": part, "now": now, "max": v.klass.hit_points[part]} for part, now in v.hp.items()],
            "seats": [{"seat": seat, "part": part,
                       "who": seat_of[seat].id if seat in seat_of else None,
                       "label": seat_of[seat].label() if seat in seat_of else "empty",
                       "acted": seat_of[seat].acted if seat in seat_of else None} for seat, part in v.seats],
            "clinging": [{"who": w.id, "label": w.label()} for w in crew if w.seat is None],
            "weapons": [{"mount": w.mount, "seat": w.seat, "jammed": w.jammed,
                         "range_in": D.MACHINE_GUN_RANGE_IN} for w in v.weapons],
            "addons": list(v.addons),
            "template_in": v.klass.template_length_in,
            "rule": f'{D.RULEBOOK}, "Vehicles"',
        }

    def overlays(self, state, marker: int) -> dict:
        """What to draw for a vehicle: where its front bumper may end, and its guns' reach."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play:
            return {"move_regions": [], "arcs": []}
        regions = []
        for place, region in self.move_regions(state, marker).items():
            regions.append({"name": place, "polygons": polygon_rings(region.polygon),
                            "template": polygon_rings(region.template.polygon),
                            "sigma_mm": round(region.sigma_mm, 3),
                            "area_mm2": round(region.polygon.area, 1)})
        fp = v.footprint()
        arcs = []
        reach = around(fp, inches(D.MACHINE_GUN_RANGE_IN))
        for w in v.weapons:
            side = _SIDES[w.mount]
            p = fp.pose
            direction = {FRONT: p.forward, REAR: -p.forward, LEFT: p.left, RIGHT: -p.left}[side]
            across = np.array([-direction[1], direction[0]])
            start = p.xy
            if self.option("arc_edge") == "bumper_line" and side in (FRONT, REAR):
                start = p.xy + direction * fp.length_mm / 2
            half = Polygon([start + across * _FAR_MM, start + across * _FAR_MM + direction * _FAR_MM,
                            start - across * _FAR_MM + direction * _FAR_MM, start - across * _FAR_MM])
            zone = shapely.intersection(reach, half)
            arcs.append({"mount": w.mount, "jammed": w.jammed, "range_in": D.MACHINE_GUN_RANGE_IN,
                         "polygons": polygon_rings(zone)})
        return {"move_regions": regions, "arcs": arcs}

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """Every other vehicle in play: distance (closest point to closest point) against
        the guns' 6", each gun's arc, and line of sight, each with margin and doubt."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play:
            return []
        me = v.footprint()
        others = [o for o in state.vehicles.values() if o.marker != marker and o.in_play and o.pose is not None]
        feet = {o.marker: o.footprint() for o in others}
        out = []
        for o in others:
            them = feet[o.marker]
            dist = closest_distance(me, them)
            in_range = dist.within(inches(D.MACHINE_GUN_RANGE_IN), "range")
            blockers = Obstacles(terrain, [f for m, f in feet.items() if m != o.marker])
            sight = blockers.line_of_sight(me, them)
            arcs = []
            for w in v.weapons:
                arc = self._in_arc(me, them, w.mount)
                arcs.append({"mount": w.mount, "jammed": w.jammed, **arc.to_json()})
            can = [a["mount"] for a in arcs if a["outcome"] != "out" and not a["jammed"]]
            out.append({
                "marker": o.marker, "name": o.name, "label": _label(o), "owner": o.owner,
                "distance_mm": round(dist.distance_mm, 2), "distance_in": round(dist.distance_mm / MM_PER_IN, 3),
                "sigma_mm": round(dist.sigma_mm, 3),
                "line": [list(map(float, dist.from_point)), list(map(float, dist.to_point))],
                "range": in_range.to_json(), "range_text": in_range.describe(),
                "arcs": arcs,
                "sight": {"clear": sight.clear, "blocked_by": list(sight.blocked_by),
                          "line": [list(sight.line[0]), list(sight.line[1])],
                          "needed": False,
                          "note": "Shattered Highways asks for range and arc only; sight is shown for the players"},
                "shootable": in_range.outcome != "out" and bool(can),
            })
        return sorted(out, key=lambda t: t["distance_mm"])

    def evidence(self, state, detail: dict, actor: int | None, target: int | None) -> list[dict]:
        """A shot's arc edge (the line across the shooter square to its heading, "Shoot") and a
        Move's templates at the front bumper, forwards and backwards, and where it ended ("Move")."""
        from ..geometry import MoveTemplate, Pose
        shapes = super().evidence(state, detail, actor, target)
        v = state.vehicles.get(actor) if actor is not None else None
        if v is None or v.pose is None:
            return shapes
        fp = v.footprint()
        if detail.get("act") == "shoot":
            across = fp.pose.left * 250.0
            shapes.append({"kind": "line", "points": [list(fp.pose.xy - across), list(fp.pose.xy + across)],
                           "role": "arc", "label": "arc edge"})
        if detail.get("act") == "move":
            for forwards in (True, False):
                t = MoveTemplate.at_front_bumper(fp, forwards)
                shapes.append({"kind": "polygon", "points": [list(p) for p in list(t.polygon.exterior.coords)[:-1]],
                               "role": "template", "label": ""})
            if "to" in detail:
                dest = fp.at(Pose(*detail["to"][:3]))
                shapes.append({"kind": "polygon", "points": dest.corners.tolist(), "role": "actor", "label": "to"})
        return shapes

    def actions(self, state, marker: int) -> list[dict]:
        """The actions this vehicle's crew can take now, with the fields each needs."""
        v = state.vehicle(marker)
        crew = [w for w in state.crew(marker)]
        if not v.in_play or not crew:
            return []
        def who(ws):
            return [{"value": w.id, "label": w.label() + (f" ({w.seat})" if w.seat else " (clinging)")} for w in ws]
        others = [o for o in state.vehicles.values() if o.marker != marker and o.in_play]
        vehicles = [{"value": o.marker, "label": _label(o)} for o in others]
        weapon_seats = {w.seat for w in v.weapons}
        driver = [w for w in crew if w.seat == "D"]
        gunners = [w for w in crew if w.seat in weapon_seats]
        aim = {}
        for o in others:
            choices = [{"value": "vehicle", "label": f"the {o.name}"}]
            if o.cls == "rig":
                choices += [{"value": p, "label": f"the {o.name}'s {p} (-1)"} for p in ("tractor", "trailer")]
            choices += [{"value": w.id, "label": w.label()} for w in state.crew(o.marker)]
            aim[str(o.marker)] = choices
        empty_seats = {}
        for o in [*others]:
            taken = {w.seat for w in state.crew(o.marker)}
            empty_seats[str(o.marker)] = [{"value": s, "label": f"{s} ({part})"} for s, part in o.seats if s not in taken]
        my_taken = {w.seat for w in crew}
        acts = []
        def field_vehicle():
            return {"name": "vehicle", "kind": "fixed", "value": marker}
        if driver:
            acts.append({"act": "move", "label": "Move", "rule": f'{D.RULEBOOK}, "Move"',
                         "about": "Move the car on the table, then resolve: where it stands is where it went.",
                         "fields": [field_vehicle(), {"name": "to", "kind": "table_pose", "of": marker,
                                                       "label": "to where the car stands now"}]})
            if vehicles:
                acts.append({"act": "ram", "label": "Ram", "rule": f'{D.RULEBOOK}, "Ram"',
                             "about": "Drive into the target on the table, then resolve.",
                             "fields": [field_vehicle(), {"name": "target", "kind": "choice", "label": "ram",
                                                           "choices": vehicles},
                                        {"name": "to", "kind": "table_pose", "of": marker,
                                         "label": "against it, where the car stands now"}]})
                acts.append({"act": "nudge", "label": "Nudge", "rule": f'{D.RULEBOOK}, "Nudge"',
                             "about": "Push the target along on the table, then resolve.",
                             "fields": [field_vehicle(), {"name": "target", "kind": "choice", "label": "nudge",
                                                           "choices": vehicles},
                                        {"name": "push_to", "kind": "table_pose", "of": "target",
                                         "label": "the target to where it stands now"}]})
        if gunners and vehicles:
            acts.append({"act": "shoot", "label": "Shoot", "rule": f'{D.RULEBOOK}, "Shoot"',
                         "fields": [{"name": "warrior", "kind": "choice", "label": "gunner", "choices": who(gunners)},
                                    {"name": "target", "kind": "choice", "label": "at", "choices": vehicles},
                                    {"name": "at", "kind": "choice", "label": "aim at", "depends_on": "target",
                                     "choices_by": aim}]})
        if vehicles:
            acts.append({"act": "board", "label": "Board", "rule": f'{D.RULEBOOK}, "Board"',
                         "fields": [{"name": "warrior", "kind": "choice", "label": "who", "choices": who(crew)},
                                    {"name": "target", "kind": "choice", "label": "board", "choices": vehicles},
                                    {"name": "seat", "kind": "choice", "label": "into seat", "depends_on": "target",
                                     "choices_by": empty_seats, "optional": True}]})
        free = [{"value": s, "label": f"{s} ({part})"} for s, part in v.seats if s not in my_taken]
        if free:
            acts.append({"act": "change", "label": "Change seats", "rule": f'{D.RULEBOOK}, "Change"',
                         "fields": [{"name": "warrior", "kind": "choice", "label": "who", "choices": who(crew)},
                                    {"name": "seat", "kind": "choice", "label": "to seat", "choices": free}]})
        foes = [w for w in crew if len({x.player for x in crew}) > 1]
        if foes:
            acts.append({"act": "attack", "label": "Attack", "rule": f'{D.RULEBOOK}, "Attack"',
                         "fields": [{"name": "warrior", "kind": "choice", "label": "who", "choices": who(crew)},
                                    {"name": "target", "kind": "choice", "label": "attack", "choices": who(foes)}]})
        jammed = [{"value": w.mount, "label": f"the {w.mount} gun"} for w in v.weapons if w.jammed]
        jammed += [{"value": "pistol", "label": "a hero's pistol"}] if any(w.jammed for w in crew) else []
        if jammed:
            acts.append({"act": "unjam", "label": "Unjam", "rule": f'{D.RULEBOOK}, "Attack"',
                         "fields": [{"name": "warrior", "kind": "choice", "label": "who", "choices": who(crew)},
                                    {"name": "weapon", "kind": "choice", "label": "weapon", "choices": jammed}]})
        if v.cls == "rig" and v.hp.get("trailer", 1) <= 0 and not v.decoupled:
            acts.append({"act": "decouple", "label": "Decouple", "rule": f'{D.RULEBOOK}, "Destroyed!"',
                         "fields": [field_vehicle()]})
        if v.hidden_buggy is not None:
            acts.append({"act": "deploy", "label": "Deploy the buggy", "rule": f'{D.RULEBOOK}, "Vehicles"',
                         "fields": [field_vehicle(), {"name": "to", "kind": "table_pose", "of": v.hidden_buggy,
                                                       "label": "where the buggy stands now"}]})
        acts.append({"act": "pass", "label": "Pass", "rule": f'{D.RULEBOOK}, "Within a Round"',
                     "fields": [{"name": "warrior", "kind": "choice", "label": "who", "choices": who(crew)}]})
        return acts
