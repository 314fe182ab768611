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
from .sh_state import seat_words
from .actions import ActionSpec, Field
from .base import polygon_rings

_SIDES = {"front": FRONT, "rear": REAR, "left": LEFT, "right": RIGHT}
_FAR_MM = 5000.0


def _label(v) -> str:
    return f"{v.name} ({v.owner})"


class ShatteredHighwaysViews:
    """Mixed into ShatteredHighways: the hooks the page calls."""

    def condition(self, state, marker: int) -> str | None:
        """Hit points left by part, as the card counts them ("body 9 of 13 left"), or what
        took the vehicle out of the fight."""
        v = state.vehicles.get(marker)
        if v is None:
            return None
        if v.destroyed:
            return "destroyed"
        if v.out_of_play:
            return "out of play"
        return ", ".join(f"{part} {max(now, 0)} of {v.klass.hit_points[part]} left" for part, now in v.hp.items())

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
        """A shot's arc edge (the line across the shooter square to its heading, "Shoot"); a
        Move's templates at the front bumper, forwards and backwards, and where it ended ("Move");
        a Ram's or Nudge's reach (the attacker's template), and for a Nudge each target where it
        stood with its three sections' templates and where it was set down ("Nudge")."""
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
                shapes.append({"kind": "polygon", "points": dest.corners.tolist(), "role": "actor", "label": "where it ended"})
        if detail.get("act") in ("ram", "nudge"):
            # "Move up until they are against the target": the reach the target must lie in.
            length = inches(v.klass.template_length_in)
            for forwards in (True, False):
                t = MoveTemplate.at_front_bumper(fp, forwards, length)
                shapes.append({"kind": "polygon", "points": [list(p) for p in list(t.polygon.exterior.coords)[:-1]],
                               "role": "template", "label": "reach" if forwards else ""})
        if detail.get("act") == "nudge":
            # Each nudged car where it stood (what its push was judged from), its three sections'
            # templates, and where the attacker set it down.
            for aim, put in (("target", "push_to"), ("second_target", "push_to_2"), ("third_target", "push_to_3")):
                t = state.vehicles.get(detail.get(aim)) if isinstance(detail.get(aim), int) else None
                stood = state.placed_pose(t.marker) if t is not None else None
                if stood is None:
                    continue
                tf = t.footprint().at(stood)
                shapes.append({"kind": "polygon", "points": tf.corners.tolist(), "role": "target",
                               "label": f"{t.name} stood"})
                for forwards in (True, False):
                    tt = MoveTemplate.at_front_bumper(tf, forwards, inches(D.NUDGE_MAX_SECTIONS * D.SECTION_IN))
                    shapes.append({"kind": "polygon", "role": "template", "label": "",
                                   "points": [list(p) for p in list(tt.polygon.exterior.coords)[:-1]]})
                if detail.get(put) is not None:
                    shapes.append({"kind": "polygon", "points": tf.at(Pose(*detail[put][:3])).corners.tolist(),
                                   "role": "actor", "label": "set down"})
        return shapes

    def actions(self, state, marker: int) -> list[ActionSpec]:
        """The actions this vehicle's crew can take now, each a typed spec: every action of the
        book, with every field its resolution reads. The camera fills the poses: where the car
        stands (`to`), where a nudged car was set down (`push_to`...), where a car it was pushed
        into was knocked (`chain_to`), where the nudger finished its Move (`then_to`)."""
        v = state.vehicle(marker)
        crew = list(state.crew(marker))
        if not crew:
            return []
        def who(ws):
            return tuple({"value": w.id, "label": w.label() + (f", in {seat_words(w.seat)}" if w.seat else ", clinging on")}
                         for w in ws)
        rule = lambda section: f'{D.RULEBOOK}, "{section}"'  # noqa: E731
        # Every list of vehicles: the other side's first ("targets default to the other side"),
        # nearest first within each side.
        others = self._other_side_first(state, v, [o for o in state.vehicles.values()
                                                  if o.marker != marker and o.in_play])
        vehicles = tuple({"value": o.marker, "label": _label(o)} for o in others)
        # "Board any vehicle within 1" of their vehicle" (a leap from a wreck too: "any other
        # vehicle close enough"): only those the Board's own measure lets them reach.
        near = [o for o in others if v.pose is not None and o.pose is not None
                and self.board_gap(v.footprint(), o.footprint())[1].outcome != "out"]
        reachable = tuple({"value": o.marker, "label": _label(o)} for o in near)
        if v.destroyed:
            # "Destroyed!": the warriors aboard may leap for any vehicle close enough, at -1,
            # whether or not they have acted, until the wreck is gone (option wreck_leap_window).
            gone = marker not in state.wrecks and self.option("wreck_leap_window") != "any_time"
            leapers = [w for w in crew if not w.leapt]      # one leap each
            if gone or not reachable or not leapers:
                return []
            return [ActionSpec("board", "Leap from the wreck", (
                Field("warrior", "choice", "who leaps", choices=who(leapers)),
                Field("target", "choice", "onto", choices=reachable),
                Field("seat", "choice", "into seat", depends_on="target", optional=True,
                      choices_by=self._empty_seats(state, near)),
                Field("desperate", "fixed", "a desperate leap", value=True)),
                actor="warrior", rule=rule("Destroyed!"),
                about="A Board roll at -1 to any vehicle within 1 in, whether or not they have acted.")]
        if not v.in_play:
            return []
        vehicle = Field("vehicle", "fixed", "vehicle", value=marker)
        weapon_seats = {w.seat for w in v.weapons}
        driver = [w for w in crew if w.seat == "D"]
        gunners = [w for w in crew if w.seat in weapon_seats]
        sections = tuple({"value": s, "label": s} for s in ("front", "rear", "left", "right"))
        declared = (Field("with", "choice", "with its", choices=sections, optional=True,
                          about="the section it strikes the (first) target with (measured if not said)"),
                    Field("at", "choice", "the target's", choices=sections, optional=True,
                          about="the section of the (first) target it strikes (measured if not said)"))
        more: tuple = ()
        if v.cls == "rig":
            # "Rigs can Ram/Nudge multiple vehicles from the side due to their length"
            more = (Field("second_target", "choice", "and (a rig's side)", choices=vehicles, optional=True),
                    Field("third_target", "choice", "and (a rig's side)", choices=vehicles, optional=True))
            # Each further target's sections, declared as the first's are (measured if not said).
            for n, nth in ((2, "second"), (3, "third")):
                declared += (Field(f"with_{n}", "choice", f"with its (against the {nth})", choices=sections,
                                   optional=True, about=f"the section it strikes the {nth} target with "
                                                        f"(measured if not said)"),
                             Field(f"at_{n}", "choice", f"the {nth} target's", choices=sections, optional=True,
                                   about=f"the section of the {nth} target it strikes (measured if not said)"))
        acts: list[ActionSpec] = []
        if v.at_back_edge:
            if driver:
                acts.append(ActionSpec("move", "Move to rejoin", (vehicle, Field(
                    "to", "table_pose", "to where the car stands now", of=marker)), rule=rule("Move"),
                    about="At the back edge its only action is a Move to get back on the board."))
            return acts
        if driver:
            acts.append(ActionSpec("move", "Move", (vehicle, Field(
                "to", "table_pose", "to where the car stands now", of=marker)), rule=rule("Move"),
                about="Drive the car within its template on the table, then resolve: where it stands is where it went."))
        # A Ram or a Nudge strikes a vehicle its template reaches: those first (the other side's
        # before its own), then the rest, which the rules refuse with the distance.
        struck = tuple(sorted(vehicles, key=lambda c: not self.in_reach(v, state.vehicles[c["value"]])))
        if driver and vehicles:
            acts.append(ActionSpec("ram", "Ram", (
                vehicle, Field("target", "choice", "ram", choices=struck), *more,
                Field("to", "table_pose", "against it, where the car stands now", of=marker), *declared),
                rule=rule("Ram"), about="Drive up against the target on the table, then resolve."))
            pushes = ()
            if more:
                pushes = (Field("push_to_2", "table_pose", "the second target set down", of="second_target",
                                optional=True),
                          Field("push_to_3", "table_pose", "the third target set down", of="third_target",
                                optional=True))
            acts.append(ActionSpec("nudge", "Nudge", (
                vehicle, Field("target", "choice", "nudge", choices=struck),
                Field("push_to", "table_pose", "the target where it stands (push it after the rolls)", of="target"),
                *more, *pushes,
                Field("into", "choice", "pushing it into", choices=vehicles, optional=True,
                      about="a vehicle the target is pushed against; it rolls to keep control"),
                Field("chain_to", "table_pose", "that vehicle set down a section on (if it fails)", of="into",
                      optional=True),
                Field("into_2", "choice", "knocking that one into", choices=vehicles, optional=True,
                      about="daisy-chaining: the vehicle the knocked one is set down against; it rolls too"),
                Field("chain_to_2", "table_pose", "that vehicle set down a section on (if it fails)", of="into_2",
                      optional=True),
                Field("into_3", "choice", "knocking that one into", choices=vehicles, optional=True),
                Field("chain_to_3", "table_pose", "that vehicle set down a section on (if it fails)", of="into_3",
                      optional=True),
                Field("then_to", "table_pose", "the rest of your Move: where the car stands now", of=marker),
                *declared), rule=rule("Nudge"),
                about="Drive on if you finish your Move, then resolve: once the rolls win, you are asked to push "
                      "the target anywhere in the shaded area (a car it is pushed into rolls to keep control)."))
        if gunners and vehicles:
            aim = {}
            for o in others:
                choices = [{"value": "vehicle", "label": f"the {o.name}"}]
                if o.cls == "rig" and not o.decoupled:
                    choices += [{"value": p, "label": f"the {o.name}'s {p} (-1)"} for p in ("tractor", "trailer")]
                choices += [{"value": w.id, "label": w.label()} for w in state.crew(o.marker)]
                aim[str(o.marker)] = tuple(choices)
            shootable = {t["marker"] for t in self.targets(state, marker) if t["shootable"]}
            aims = tuple(sorted(vehicles, key=lambda c: c["value"] not in shootable))
            acts.append(ActionSpec("shoot", "Shoot", (
                Field("warrior", "choice", "gunner", choices=who(gunners)),
                Field("target", "choice", "at", choices=aims),
                Field("at", "choice", "aim at", depends_on="target", choices_by=aim, optional=True,
                      about="the vehicle (the default), a rig's tractor or trailer, or a warrior aboard")),
                actor="warrior", rule=rule("Shoot"),
                about="On the maximum the gunner's player is asked about the bonus, and the target's side who takes it."))
        boardable = list(reachable)
        seats = self._empty_seats(state, near)
        if v.cls == "rig" and not v.decoupled:
            # "Moving between a Rig's tractor and trailer requires a Board roll."
            boardable.append({"value": marker, "label": f"the {v.name}'s other part (tractor or trailer)"})
            taken = {w.seat for w in crew}
            seats[str(marker)] = tuple({"value": s, "label": f"{seat_words(s)} ({part})"} for s, part in v.seats if s not in taken)
        if boardable:
            acts.append(ActionSpec("board", "Board", (
                Field("warrior", "choice", "who", choices=who(crew)),
                Field("target", "choice", "board", choices=tuple(boardable)),
                Field("seat", "choice", "into seat", depends_on="target", choices_by=seats, optional=True,
                      about="an empty seat to take (else they cling on)")),
                actor="warrior", rule=rule("Board"), about="An uncontested roll: 4+ aboard, 2-3 stay, 1 falls."))
        my_taken = {w.seat for w in crew}
        free = tuple({"value": s, "label": f"{seat_words(s)} ({part})"} for s, part in v.seats if s not in my_taken)
        if free:
            acts.append(ActionSpec("change", "Change seats", (
                Field("warrior", "choice", "who", choices=who(crew)),
                Field("seat", "choice", "to seat", choices=free)), actor="warrior", rule=rule("Change"),
                about="No roll; one more action that turn at -1."))
        # Whom each warrior can attack, as the Attack itself judges it (a hero's pistol 3 in,
        # fodder hand to hand aboard): those on his own vehicle first, then the nearest.
        here = {o.marker: n for n, o in enumerate(others)}
        by_warrior = {}
        for w in crew:
            victims = [x for x in state.warriors.values() if x.vehicle is not None
                       and x.vehicle in state.vehicles and self.attack_refusal(state, w, x) is None]
            victims.sort(key=lambda x: (x.vehicle != marker, here.get(x.vehicle, -1)))
            if victims:
                by_warrior[w.id] = who(victims)
        if by_warrior:
            acts.append(ActionSpec("attack", "Attack", (
                Field("warrior", "choice", "who", choices=who([w for w in crew if w.id in by_warrior])),
                Field("target", "choice", "attack", depends_on="warrior", choices_by=by_warrior)),
                actor="warrior", rule=rule("Attack"),
                about="Fodder fight hand to hand aboard; a hero's pistol reaches 3 in."))
        jammed = [{"value": w.mount, "label": f"the {w.mount} gun"} for w in v.weapons if w.jammed]
        jammed += [{"value": "pistol", "label": "a hero's pistol"}] if any(w.jammed for w in crew) else []
        if jammed:
            # A gunner first: the driver clearing a gun spends the car's Move on it.
            clearers = sorted(crew, key=lambda w: (w.seat == "D", not w.jammed))
            acts.append(ActionSpec("unjam", "Unjam", (
                Field("warrior", "choice", "who", choices=who(clearers)),
                Field("weapon", "choice", "weapon", choices=tuple(jammed))), actor="warrior",
                rule=rule("Shoot"), about="A whole action spent clearing it."))
        if v.cls == "rig" and v.hp.get("trailer", 1) <= 0 and not v.decoupled:
            acts.append(ActionSpec("decouple", "Decouple", (vehicle,), rule=rule("Destroyed!"),
                                   about="The driver's uncontested roll to cut the dead trailer loose."))
        if v.hidden_buggy is not None:
            acts.append(ActionSpec("deploy", "Deploy the buggy", (vehicle, Field(
                "to", "table_pose", "where the buggy stands now", of=v.hidden_buggy)), rule=rule("Rig-only Add-ons"),
                about="Put the buggy on the table behind the rig, then resolve its driver's Drive roll."))
        acts.append(ActionSpec("pass", "Pass", (Field("warrior", "choice", "who", choices=who(crew)),),
                               actor="warrior", rule=rule("Within a Round"), about="A warrior can be skipped."))
        return acts

    @staticmethod
    def _other_side_first(state, v, vehicles) -> list:
        """Vehicles the other side controls first, then the car's own side's; nearest first in each."""
        def gap(o):
            if v.pose is None or o.pose is None:
                return float("inf")
            return closest_distance(v.footprint(), o.footprint()).distance_mm
        return sorted(vehicles, key=lambda o: (o.controller == v.controller, gap(o)))

    @staticmethod
    def _empty_seats(state, vehicles) -> dict:
        out = {}
        for o in vehicles:
            taken = {w.seat for w in state.crew(o.marker)}
            out[str(o.marker)] = tuple({"value": s, "label": f"{seat_words(s)} ({part})"} for s, part in o.seats if s not in taken)
        return out
