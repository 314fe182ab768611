"""Stop The Truck! as the page shows it: a vehicle's card (its template, skills, gear and
square), the squares it may reach this turn and its shooting arcs, the targets in its arcs,
the actions it can take now with their fields, and the board over the whole table (every
square, the truck's four, the petrol bomb squares once revealed).

Read only: everything comes from the state and the rules' own checks.
"""

from __future__ import annotations

from . import st_data as D
from .actions import ActionSpec, Field
from ..geometry import MM_PER_IN
from .base import RulesError, polygon_rings

_ARC_MM = 2000.0


def _ring(poly) -> list[list[float]]:
    return [[round(x, 2), round(y, 2)] for x, y in poly.exterior.coords]


def _sq_label(sq) -> str:
    return f"{sq[0] + 1},{sq[1] + 1}"


def _name_sq(sq) -> str:
    return f"square {_sq_label(sq)}"


class StopTheTruckViews:
    """Mixed into StopTheTruck: the hooks the page calls."""

    def condition(self, state, marker: int) -> str | None:
        """What a vehicle has left on its sheet's tracks, every track damage takes points off
        ("Gang Vehicle Templates": structural points, driver and shooting skill; the auto-gyro's
        flying and dropping skill, "Car No 11"; "The Truck Template": Max, the crossbowman, the two
        petrol bombers, burst tyres), and a weapon destroyed (damage tables 10). Every track is in
        the words, so they change exactly when damage does. A vehicle out of the game is not said
        out here: the outcome's event says so once ("the Bike is out of the game (wrecked)"), and the
        page prints both (usability pass: "out of the game" twice)."""
        v = state.vehicles.get(marker)
        if v is None:
            return None
        parts = [f"structure {v.structure} of {v.max_structure} left"]
        tpl = v.kind
        if v.is_truck:
            t = state.truck
            parts.append(f"Max {v.driver}" + (", shotgun destroyed" if v.weapon_lost else ""))
            parts.append(", ".join(f"bomber {i + 1} " + (str(n) if n > 0 else "out") for i, n in enumerate(t.bombers)))
            parts.append(f"crossbowman {t.gunner}" if t.gunner > 0 else "crossbowman out")
            burst = t.tyres_burst
            if burst["left"] or burst["right"]:
                parts.append(f"tyres burst {burst['left']} left, {burst['right']} right")
            if v.structure == 0 or v.driver == 0:
                parts.append("the truck is stopped")
            return ", ".join(parts)
        if tpl.flying:
            parts.append(f"flying {v.driver}, dropping {v.dropping}")
            return ", ".join(parts)
        parts.append(f"driver {v.driver}")
        if v.weapon_lost:
            parts.append("hand weapon destroyed")
        elif tpl.arc != "none" or v.shooting:
            parts.append(f"shooting {v.shooting}")
        return ", ".join(parts)

    def card(self, state, marker: int) -> dict:
        v = state.vehicle(marker)
        tpl = v.kind
        secret = state.phase == "select"
        out = {
            "marker": v.marker, "name": v.name, "owner": v.owner, "template": tpl.key, "type": tpl.name,
            "status": v.status(), "active": state.active is not None and state.active.marker == v.marker,
            "hp": [{"part": "structure", "now": v.structure, "max": v.max_structure}],
            "skills": {"driver": v.driver, "shooting": v.shooting, **({"dropping": v.dropping} if tpl.flying else {})},
            "gear": v.gear, "top_gear": tpl.top_gear, "gear_change": tpl.gear_change,
            "box": None if v.choice is None or secret else v.choice.to_json(), "selected": v.choice is not None,
            "square": None if v.square is None else {"column": v.square[0] + 1, "row": v.square[1] + 1},
            "ram": dict(tpl.ram), "chart": tpl.chart, "arc": D.ARCS[tpl.arc], "move_order": tpl.order,
            "conditions": dict(v.conditions), "snake": v.snake, "no_shooting": list(v.no_shooting),
            "phase": state.phase, "turn": state.turn,
            "source": tpl.source, "rule": f'{D.RULEBOOK}, "Gang Vehicle Templates"',
        }
        if v.choice is not None and not secret and not v.is_truck and v.square is not None and not v.moved \
                and state.truck.speed is not None:
            # Its box is shown once the truck declares: where it takes the car, before it moves.
            want = self.target_square(state, v, v.choice, state.truck.speed)
            out["goes to"] = _name_sq(want) if self.on_grid(want) else "off the board: out of the game"
        if v.is_truck:
            t = state.truck
            out["skills"] = {"max": v.driver, "gunner": t.gunner, "bomber1": t.bombers[0], "bomber2": t.bombers[1]}
            out["truck"] = {"tyres_burst": dict(t.tyres_burst), "tyres_per_side": t.tyres_per_side,
                            "top_gear_turns": t.top_gear_turns, "speed": t.speed, "distance": state.distance,
                            "of": self.option("distance_squares"), "cab_hit": t.cab_hit,
                            "sideways_this_turn": self.truck_sideways_squares(state),
                            "squares": [{"square": k + 1, "part": "cab" if k < 2 else "tanker",
                                         "at": _sq_label(sq)} for k, sq in enumerate(self.truck_squares(state))]}
            out["rule"] = f'{D.RULEBOOK}, "The Truck Template"'
        return out

    def _speed_for_reach(self, state) -> tuple[int, str]:
        t = state.truck
        if t.speed is not None:
            return t.speed, f"the truck's declared speed {t.speed}"
        return t.last_speed, f"the truck's last speed {t.last_speed} (it has not declared this turn's)"

    def reach_cells(self, state, v) -> tuple[list[dict], str]:
        """The squares each box it may pick (or the box it picked) takes it to this turn."""
        if not v.on_board or v.is_truck or state.over or v.moved:
            return [], ""
        grid = self.grid(state)
        speed, about = self._speed_for_reach(state)
        if v.choice is not None and state.phase != "select":
            boxes, why = [v.choice], []
        else:
            boxes, why = self.allowed_boxes(state, v)
        cells: dict[tuple, dict] = {}
        for b in boxes:
            sq = self.target_square(state, v, b, speed)
            if not self.on_grid(sq):
                continue
            kind = self.roll_for_box(v, b) or "reach"       # "red", "blue": a driving roll first
            # Labelled by the gear whose box reaches it (where it lies says how far forward and
            # sideways), at the square's top, clear of the square's own "column,row" at its
            # bottom: a phone's squares are too small for both in one place (usability pass).
            # Only the box picked is labelled: a label in each of a row of squares ran into the
            # next on a phone; the tint (green, red, blue) and the form's words say the rest.
            c = cells.get(sq)
            if c is None:
                cells[sq] = {"polygon": _ring(grid.polygon(*sq)), "label": f"gear {b.gear}", "kind": kind,
                             "square": [sq[0] + 1, sq[1] + 1], "boxes": [b.key], "label_at": "top"}
            else:
                c["boxes"].append(b.key)
                if kind == "reach" and c["kind"] != "reach":     # a square reached without a roll is shown as such
                    c["kind"] = "reach"
                    c["label"] = f"gear {b.gear}"
        if len(boxes) > 1:
            for c in cells.values():
                c["label"] = ""
        return list(cells.values()), about + (f"; {'; '.join(why)}" if why else "")

    def overlays(self, state, marker: int) -> dict:
        v = state.vehicle(marker)
        out = {"move_regions": [], "arcs": [], "cells": []}
        if v.pose is None or not v.in_play:
            return out
        cells, about = self.reach_cells(state, v)
        out["cells"] = cells
        out["about"] = about
        shooters = ["max", "gunner"] if v.is_truck else [""]
        for s in shooters:
            for sec in self.shooter_sectors(state, v, s):
                out["arcs"].append({"mount": s or "shooting", "range_in": None,
                                    "polygons": polygon_rings(sec.polygon(_ARC_MM))})
        return out

    def _vehicle_target(self, state, v, o) -> dict:
        """A vehicle `v` could shoot as a whole ("at": "vehicle"), with its arc and square."""
        arc = self.in_arc(state, v, o.footprint())
        return {"marker": o.marker, "name": o.name, "label": f"{o.name} ({o.owner})", "at": "vehicle",
                "arc": arc.to_json() if arc else None, "arc_text": arc.describe() if arc else "",
                "square": None if o.square is None else _sq_label(o.square),
                "shootable": arc is not None and arc.outcome != "out"}

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """What it could shoot at: each target's arc verdict from the tracked poses."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play or state.truck_vehicle.pose is None:
            return []
        out = []
        if not v.is_truck and self.truck_side(state, v):
            if v.kind.arc == "none":
                return []
            for o in state.on_board():
                if self.truck_side(state, o) or o.pose is None:
                    continue
                out.append(self._vehicle_target(state, v, o))
            return out
        if v.is_truck:
            for shooter in ("max", "gunner"):
                nearest = {o.marker for o in self._nearest_behind_all(state)} if shooter == "gunner" else set()
                for o in state.on_board():
                    if self.truck_side(state, o) or o.pose is None:
                        continue
                    arc = self.in_arc(state, v, o.footprint(), shooter)
                    usable = arc is not None and arc.outcome != "out" and (shooter == "max" or o.marker in nearest)
                    # One row per shooter: the arc says whose it is ("Max: no ...", "the crossbowman:
                    # yes ..."), or the page shows the same car twice with two answers.
                    out.append({"marker": o.marker, "name": o.name, "label": f"{o.name} ({o.owner})", "shooter": shooter,
                                "at": "vehicle",
                                "arc": {**arc.to_json(), "mount": D.part_words(shooter)} if arc else None,
                                "arc_text": arc.describe() if arc else "", "nearest": o.marker in nearest,
                                "square": None if o.square is None else _sq_label(o.square), "shootable": usable})
            return out
        if v.kind.arc == "none":
            return []
        tv = state.truck_vehicle
        for part in self._visible_parts(state, v):
            arc = self.in_arc(state, v, self.part_footprint(state, part))
            out.append({"marker": tv.marker, "name": D.part_words(part), "at": part,
                        "label": D.part_words(part), "arc": arc.to_json() if arc else None,
                        "arc_text": arc.describe() if arc else "", "shootable": arc is not None and arc.outcome != "out"})
        for o in state.on_board():
            if o.is_truck or not self.truck_side(state, o) or o.pose is None:
                continue
            out.append(self._vehicle_target(state, v, o))
        for o in state.on_board():
            if o.snake is not None:
                own = o.marker == v.marker
                arc = None if own else self.in_arc(state, v, o.footprint())
                out.append({"marker": o.marker, "name": f"the snake in the {o.name}", "at": "snake", "label": "snake",
                            "arc": arc.to_json() if arc else None, "shootable": own or (arc is not None and arc.outcome != "out")})
        return out

    def _visible_parts(self, state, v) -> list[str]:
        t = state.truck
        tv = state.truck_vehicle
        _, l = tv.pose.to_local(v.pose.xy)
        parts = ["max"]
        parts += [f"bomber{i + 1}" for i in range(2) if t.bombers[i] > 0]
        if t.gunner > 0:
            parts.append("gunner")
        parts.append("tyre_left" if l > 0 else "tyre_right")
        return parts

    def actions(self, state, marker: int) -> list[ActionSpec]:
        """What the vehicle's player can do with it now: one spec per action (the truck's two
        shooters are one `shoot`, the shooter a field), every field its resolution reads."""
        v = state.vehicle(marker)
        if state.over:
            return []
        fixed = Field("vehicle", "fixed", "vehicle", value=marker)
        pose = Field("to", "table_pose", "where the car stands now", of=marker)
        rule = D.RULEBOOK
        if not v.on_board:
            return self._enter_specs(state, v, fixed, pose)
        ph = state.phase
        acts: list[ActionSpec] = []
        if ph == "select":
            acts += self._select_specs(state, v, fixed)
        elif ph == "move" and state.active is not None and state.active.marker == marker:
            want = self.target_square(state, v, v.choice, state.truck.speed)
            if self.on_grid(want):
                to = self.square_pose(state, v, want)
                acts.append(ActionSpec("move", f"Move ({v.choice.label}) to square {_sq_label(want)}", (fixed, pose),
                                       rule=f'{rule}, "Movement"',
                                       about=f"Put the car in the middle of square {_sq_label(want)} (column "
                                             f"{want[0] + 1} from the back of the board, row {want[1] + 1} from its "
                                             f"right), then resolve: the camera says the square.",
                                       extra={"place": [{"vehicle": marker, "name": v.name,
                                                         "square": [want[0] + 1, want[1] + 1], "pose": to}]}))
            else:
                acts.append(ActionSpec("move", f"Move ({v.choice.label}): off the board", (fixed,),
                                       rule=f'{rule}, "Movement"',
                                       about="Its box takes it off the board: it is out of the game. Take it off the "
                                             "table."))
        elif ph == "driving" and v.roll_needed:
            acts.append(ActionSpec("drive_roll", f"{v.roll_needed.title()} driving roll", (fixed,),
                                   rule=f'{rule}, "Gang Vehicle Templates", Driver Skill'))
        elif ph == "collisions":
            acts += self._collision_specs(state, v, fixed, pose)
        elif ph == "truck" and v.is_truck:
            n = self.truck_sideways_squares(state)
            row = min(max(v.square[1] + n, 0), D.BOARD_ROWS - 1)
            to = self.truck_row_pose(state, row)
            slide = f"{abs(n)} square{'s' if abs(n) != 1 else ''} {'left' if n > 0 else 'right'}"
            acts.append(ActionSpec("truck_sideways", f"Slide the truck {slide} to row {row + 1}",
                                   (fixed,), rule=f'{rule}, "Move sequence" 6',
                                   about=f"Resolve, then put each car it pushes where the page shows, and the "
                                         f"truck in row {row + 1}, its four squares in the same columns.",
                                   extra={"place": [{"vehicle": marker, "name": v.name, "row": row + 1, "pose": to}]}))
        elif ph == "bombs" and v.is_truck:
            acts.append(ActionSpec("bombs", "Drop the petrol bombs", (fixed,), rule=f'{rule}, "Move sequence" 7'))
        elif ph == "gyro" and v.kind.flying:
            targets = tuple({"value": o.marker, "label": o.name} for o, _, _ in self._drop_targets(state, v))
            if targets:
                acts.append(ActionSpec("drop", "Drop", (fixed, Field("payload", "choice", "drop", choices=(
                    {"value": "bomb", "label": "petrol bomb"}, {"value": "snake", "label": "snake"})),
                    Field("target", "choice", "on", choices=targets)), rule=f'{rule}, "Notes", The AutoGyro'))
            acts.append(ActionSpec("pass", "Drop nothing", (fixed,), rule=f'{rule}, "Notes", The AutoGyro'))
        elif ph == "shooting":
            spec = self._shoot_spec(state, v, fixed)
            if spec is not None:
                acts.append(spec)
        return acts

    def evidence(self, state, detail: dict, actor: int | None, target: int | None) -> list[dict]:
        """What a verdict was measured on, over the state it was judged in: the square a car had to
        stand in (a move, an avoid, a replacement coming on) and where the camera put it;
        the truck's new row; the contested square of a collision; the petrol bomb squares; the
        gyro's reach; a shot's arc from the shooter's pose and the part of the truck aimed at."""
        from ..geometry import Pose
        shapes: list[dict] = []
        grid = self.grid(state)
        act = detail.get("act")
        v = state.vehicles.get(actor) if actor is not None else None
        if v is None:
            return super().evidence(state, detail, actor, target)

        def square(sq, label, role="template"):
            if self.on_grid(sq):
                shapes.append({"kind": "polygon", "points": _ring(grid.polygon(*sq))[:-1], "role": role,
                               "label": label})

        if isinstance(detail.get("to"), list) and len(detail["to"]) >= 3:
            fp = v.footprint(Pose(*detail["to"][:3]))
            shapes.append({"kind": "polygon", "points": fp.corners.tolist(), "role": "actor", "label": "put here"})
        if act == "move" and v.choice is not None and state.truck.speed is not None:
            want = self.target_square(state, v, v.choice, state.truck.speed)
            square(want, f"box {v.choice.key}: {_sq_label(want)}")
        elif act == "avoid":
            for q in self.avoid_squares(state, v):
                square(q, f"free {_sq_label(q)}")
        elif act == "truck_sideways" and v.square is not None:
            row = min(max(v.square[1] + self.truck_sideways_squares(state), 0), D.BOARD_ROWS - 1)
            for k in range(D.TRUCK_SQUARES):
                square((v.square[0] - k, row), f"row {row + 1}")
        elif act == "collide":
            mine = next((sq for sq, vs in self.contested(state) if v in vs), None)
            if mine is not None:
                square(mine, f"contested {_sq_label(mine)}", "measure")
        elif act == "bombs":
            for i, sq in enumerate(self._bomb_squares(state)):
                if sq is not None:
                    square(sq, f"bomb {i + 1}", "measure")
        elif act == "drop" and v.square is not None:
            for dc in (-1, 0, 1):
                for dr in (-1, 0, 1):
                    square((v.square[0] + dc, v.square[1] + dr), "", "template")
        elif act == "shoot" and v.pose is not None:
            shooter = detail.get("shooter", "max" if v.is_truck else "")
            for sec in self.shooter_sectors(state, v, shooter):
                for poly in polygon_rings(sec.polygon(_ARC_MM)):
                    shapes.append({"kind": "polygon", "points": poly[0][:-1], "role": "arc", "label": "arc"})
            at = detail.get("at", "vehicle")
            if at in ("max", "bomber1", "bomber2", "gunner", "tyre_left", "tyre_right") and state.truck_vehicle.pose:
                aim = self.part_footprint(state, at)
                shapes.append({"kind": "polygon", "points": aim.corners.tolist(), "role": "target", "label": at})
            shapes += super().evidence(state, detail, actor, target)
        return shapes

    def _enter_specs(self, state, v, fixed, pose) -> list[ActionSpec]:
        """A car off the board (out, or not yet on) comes on as a new vehicle of its side."""
        if v.is_truck or state.phase not in ("setup", "turn_over", "select"):
            return []
        if v.out is not None and v.conditions.get("out_turn", -1) >= state.turn and state.phase != "turn_over":
            return []
        side = "truck" if self.truck_side(state, v) else "gang"
        choices = tuple({"value": k, "label": self._template_name(k)} for k in D.MOVE_ORDER
                        if self._template_side(k) == side or (side == "truck" and k != "auto_gyro"))
        where = ("a free square of the board's back row (column 1)" if self.option("replacement_enters") == "back_edge"
                 else "a free square on the board's edge")
        return [ActionSpec("enter", "Come on (a new vehicle)",
                           (fixed, Field("template", "choice", "vehicle", choices=choices), pose),
                           rule=f'{D.RULEBOOK}, "Movement"', about=f"Put the car on {where}, then resolve.")]

    def box_words(self, v, b) -> str:
        """A box as the book says what it does ("Gears": "a forward speed (in squares) and a
        sideways move (in squares)"; RED boxes "require a driving roll"; "+1 or +2 ... a modifier
        to collision damage"): "gear 2: 3 squares forward, 1 left, yellow"."""
        if b.colour == "es":
            return "emergency stop: no squares forward, no shooting, first gear next turn"
        sq = "square" if b.forward == 1 else "squares"
        head = f"speed {b.forward}" if v.is_truck else f"{b.forward} {sq} forward"
        side = "" if b.side == 0 else f", {abs(b.side)} {'left' if b.side > 0 else 'right'}"
        colour = {"red": "red (a driving roll)", "blue": "blue (a driving roll against twice the skill)"}.get(
            b.colour, b.colour)
        ram = f", +{b.ram} to collision rolls" if b.ram else ""
        return f"gear {b.gear}: {head}{side}, {colour}{ram}"

    def off_board_speeds(self, state, v, b) -> tuple[list[int], list[int]]:
        """The truck's speeds at which box `b` takes car `v` off the board ("Any vehicle that
        'drives' off the edge of the board ... is out of the game"), and every speed it may go:
        the declared one, else each its boxes allow this turn (the truck's pick is secret)."""
        if v.is_truck or v.square is None:
            return [], []
        tv = state.truck_vehicle
        speed = state.truck.speed
        speeds = [speed] if speed is not None else sorted({x.forward for x in self.allowed_boxes(state, tv)[0]})
        return [s for s in speeds if not self.on_grid(self.target_square(state, v, b, s))], speeds

    def box_warning(self, state, v, b) -> str:
        """What a player must know before picking box `b`: "" or the truck's speeds that take the
        car off the board, in players' words."""
        off, speeds = self.off_board_speeds(state, v, b)
        if not off:
            return ""
        if off == speeds:
            return "off the board: out of the game"
        said = ", ".join(map(str, off[:-1])) + (" or " if len(off) > 1 else "") + str(off[-1])
        return f"off the board (out of the game) if the truck goes {said}"

    def _select_specs(self, state, v, fixed) -> list[ActionSpec]:
        rule = D.RULEBOOK
        boxes, _ = self.allowed_boxes(state, v)
        # Each box in the book's words, with a warning where it may drive the car off the board;
        # boxes that keep it on the board at every speed the truck may go come first, so the
        # form's first (default) choice never throws the car out unasked.
        words = [(self.box_words(v, b), self.box_warning(state, v, b)) for b in boxes]
        order = sorted(range(len(boxes)), key=lambda i: bool(words[i][1]))
        fields = [fixed, Field("box", "choice", "gear box (your speed and sideways move this turn)",
                               choices=tuple({"value": boxes[i].key,
                                              "label": words[i][0] + (f" - {words[i][1]}" if words[i][1] else "")}
                                             for i in order))]
        if v.is_truck:
            squares = tuple(self._bomb_choices(state))
            for i in range(2):
                if state.truck.bombers[i] > 0:
                    fields.append(Field(f"bomb{i + 1}", "choice", f"petrol bomber {i + 1}'s square", choices=squares,
                                        optional=True))
        out = [ActionSpec("select", "Pick a box (secret)", tuple(fields), rule=f'{rule}, "Move sequence" 1',
                          about="Only you see it until the truck declares its speed.")]
        if v.is_truck and all(o.choice is not None for o in state.on_board()):
            out.append(ActionSpec("declare", "Declare the truck's speed", (fixed,), rule=f'{rule}, "Move sequence" 2'))
        return out

    def _collision_specs(self, state, v, fixed, pose) -> list[ActionSpec]:
        rule = D.RULEBOOK
        mine = next(((sq, vs) for sq, vs in self.contested(state) if v in vs), None)
        if mine is None:
            return []
        out = []
        collider, _ = self._pair(state, *mine)
        avoiding = any(o.conditions.get("avoiding") == state.turn for o in mine[1])
        if collider is v and not avoiding:
            out.append(ActionSpec("collide", f"Collide in square {_sq_label(mine[0])}", (fixed,),
                                  rule=f'{rule}, "Gang Vehicle Templates", Collision chart'))
        if v.kind.avoid:
            free = self.avoid_squares(state, v)
            if free:
                out.append(ActionSpec("avoid", "Avoid (one square; no shooting)", (
                    fixed, Field("square", "choice", "to square", choices=tuple(
                        {"value": [c + 1, r + 1], "label": _sq_label((c, r))} for c, r in free), optional=True), pose),
                    rule=f'{rule}, "Notes"', about="Put it in a free square next to it "
                                                   f"({', '.join(_sq_label(q) for q in free)}), then resolve."))
        return out

    def avoid_squares(self, state, v) -> list[tuple[int, int]]:
        """The free squares the bike (any way) or trike (sideways) may avoid into (Notes)."""
        occ = self.occupants(state)
        c0, r0 = v.square
        steps = [(dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if (dc, dr) != (0, 0)
                 and (v.kind.avoid == "any" or dc == 0)]
        return [(c0 + dc, r0 + dr) for dc, dr in steps if self.on_grid((c0 + dc, r0 + dr)) and not occ.get((c0 + dc, r0 + dr))]

    def _shoot_spec(self, state, v, fixed) -> ActionSpec | None:
        """One shoot per vehicle: the truck's shooter (Max, the crossbowman) a field, each with
        the targets it may shoot; a gang vehicle's truck part or snake; a vehicle on the truck's
        side its gang target. `at` on a vehicle: the vehicle, its harpoonist, or its snake."""
        rule = f'{D.RULEBOOK}, "Move sequence" 8'
        marker = v.marker

        def aims(o) -> tuple[dict, ...]:
            out = [{"value": "vehicle", "label": f"the {o.name}"}]
            if o.kind.harpoon:
                out.append({"value": "harpoonist", "label": f"the {o.name}'s harpoonist"})
            if o.snake is not None:
                out.append({"value": "snake", "label": f"the snake in the {o.name}"})
            return tuple(out)

        if v.is_truck or self.truck_side(state, v):
            shooters = ["max", "gunner"] if v.is_truck else [""]
            by: dict[str, tuple[dict, ...]] = {}
            for s in shooters:
                if self._can_shoot(state, v, s):
                    continue
                rows = [t for t in self.targets(state, marker) if t["shootable"] and t.get("shooter", "") == s]
                if rows:
                    by[s] = tuple({"value": t["marker"], "label": t["label"]} for t in rows)
            if not by:
                return None
            every = {c["value"] for cs in by.values() for c in cs}
            # Each field its own label (usability pass: two fields both said "at").
            at = Field("at", "choice", "aim at (the car, its harpoonist or its snake)", depends_on="target",
                       optional=True,
                       choices_by={str(m): aims(state.vehicle(m)) for m in every})
            if v.is_truck:
                names = {"max": "Max's shotgun", "gunner": "the rear crossbowman"}
                fields = (fixed, Field("shooter", "choice", "who shoots",
                                       choices=tuple({"value": s, "label": names[s]} for s in by)),
                          Field("target", "choice", "at which car", depends_on="shooter", choices_by=by), at)
            else:
                fields = (fixed, Field("target", "choice", "at which car", choices=by[""]), at)
            return ActionSpec("shoot", "Shoot", fields, rule=rule)
        if self._can_shoot(state, v, ""):
            return None
        rows = [t for t in self.targets(state, marker) if t["shootable"]]
        if not rows:
            return None
        parts = [{"value": t["at"], "label": t["name"]} for t in rows if t["at"] not in ("snake", "vehicle")]
        snakes = tuple({"value": t["marker"], "label": t["name"]} for t in rows if t["at"] == "snake")
        enemies = tuple({"value": t["marker"], "label": t["label"]} for t in rows if t["at"] == "vehicle")
        fields = [fixed]
        if enemies:
            parts.append({"value": "vehicle", "label": "a vehicle on Max's side"})
        if snakes:
            parts.append({"value": "snake", "label": "a snake"})
        fields.append(Field("at", "choice", "shoot at", choices=tuple(parts)))
        by = {k: cs for k, cs in (("vehicle", enemies), ("snake", snakes)) if cs}
        if by:
            fields.append(Field("target", "choice", "which one", depends_on="at", choices_by=by, optional=True))
        return ActionSpec("shoot", "Shoot", tuple(fields), rule=rule)

    def _template_side(self, key: str) -> str:
        from .st_state import template
        return template(key).side

    def _template_name(self, key: str) -> str:
        from .st_state import template
        return template(key).name

    def _bomb_choices(self, state) -> list[dict]:
        out = []
        for c in range(D.BOARD_COLUMNS):
            for r in range(D.BOARD_ROWS):
                try:
                    self._check_bomb_square(state, (c, r), 0)
                except RulesError:
                    continue
                out.append({"value": [c + 1, r + 1], "label": _sq_label((c, r))})
        return out

    #: The truck's squares as players call them, front to back ("Max - Occupies the second
    #: square of the truck"; "the cab part of the truck (the front two squares)"; "the tanker
    #: section (squares 3 and 4)"), each with its number, as the Blue Slasher's note counts them.
    #: Short enough for a phone's square (about 22 screen pixels: "tanker 4" ran over "tanker 3"):
    #: the cab's front square, Max's, and the tanker's squares by the numbers the book gives them.
    TRUCK_SQUARE_WORDS = ("cab", "Max", "3", "4")

    def board(self, state) -> dict:
        """Every square of the board (kind "square", labelled "column,row"), the truck's four
        (kind "truck", "cab", "Max", "3", "4") and the petrol bomb squares once
        revealed at step 7 (kind "bomb", "bomb 1", "bomb 2"). One label a square: a square the
        truck or a bomb holds is labelled by what holds it, so no two labels print over each other."""
        grid = self.grid(state)
        held: dict[tuple[int, int], dict] = {}
        if state.truck_vehicle.square is not None:
            for k, sq in enumerate(self.truck_squares(state)):
                if self.on_grid(sq):
                    held[sq] = {"polygon": _ring(grid.polygon(*sq)), "kind": "truck",
                                "label": self.TRUCK_SQUARE_WORDS[k]}
        t = state.truck
        bombs = []
        if t.bombs_revealed:
            for i, sq in enumerate(t.bomb_squares):
                if sq is not None and self.on_grid(sq):
                    bombs.append((sq, {"polygon": _ring(grid.polygon(*sq)), "kind": "bomb", "label": f"bomb {i + 1}"}))
        taken = set(held) | {sq for sq, _ in bombs}
        cells = [{"polygon": _ring(grid.polygon(c, r)), "kind": "square",
                  "label": "" if (c, r) in taken else _sq_label((c, r))}
                 for c in range(D.BOARD_COLUMNS) for r in range(D.BOARD_ROWS)]
        cells += list(held.values())
        # Two bombs on one square: one label says both; a bomb on the truck's square (the squares
        # do not follow it, option bomb_squares_follow_truck) leaves the label to the truck's.
        for sq, cell in bombs:
            same = [b for q, b in bombs if q == sq]
            if cell is same[0]:
                words = "" if sq in held else " + ".join(b["label"] for b in same)
                cells.append({**cell, "label": words})
        return {"cells": cells, "about": (f"turn {state.turn}, {self.PHASE_WORDS.get(state.phase, state.phase)}: the truck has gone {state.distance} of "
                                          f"{self.option('distance_squares')} squares; squares {state.square_mm / MM_PER_IN:.3g} in, "
                                          f"column 1 at the back, row 1 on the truck's right")}
