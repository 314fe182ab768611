"""Stop The Truck! as the page shows it: a vehicle's card (its template, skills, gear and
square), the squares it may reach this turn and its shooting arcs, the targets in its arcs,
the actions it can take now with their fields, and the board over the whole table (every
square, the truck's four, the petrol bomb squares once revealed).

Read only: everything comes from the state and the rules' own checks.
"""

from __future__ import annotations

from . import st_data as D
from .base import RulesError, polygon_rings

_ARC_MM = 2000.0


def _ring(poly) -> list[list[float]]:
    return [[round(x, 2), round(y, 2)] for x, y in poly.exterior.coords]


def _sq_label(sq) -> str:
    return f"{sq[0] + 1},{sq[1] + 1}"


class StopTheTruckViews:
    """Mixed into StopTheTruck: the hooks the page calls."""

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
            c = cells.get(sq)
            if c is None:
                cells[sq] = {"polygon": _ring(grid.polygon(*sq)), "label": b.key, "kind": kind,
                             "square": [sq[0] + 1, sq[1] + 1], "boxes": [b.key]}
            else:
                c["boxes"].append(b.key)
                if kind == "reach":     # a square reached without a roll is shown as such
                    c["kind"] = "reach"
                    c["label"] = b.key
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
                arc = self.in_arc(state, v, o.footprint())
                out.append({"marker": o.marker, "name": o.name, "label": f"{o.name} ({o.owner})", "at": "vehicle",
                            "arc": arc.to_json() if arc else None, "arc_text": arc.describe("mm") if arc else "",
                            "square": None if o.square is None else _sq_label(o.square),
                            "shootable": arc is not None and arc.outcome != "out"})
            return out
        if v.is_truck:
            for shooter in ("max", "gunner"):
                nearest = {o.marker for o in self._nearest_behind_all(state)} if shooter == "gunner" else set()
                for o in state.on_board():
                    if self.truck_side(state, o) or o.pose is None:
                        continue
                    arc = self.in_arc(state, v, o.footprint(), shooter)
                    usable = arc is not None and arc.outcome != "out" and (shooter == "max" or o.marker in nearest)
                    out.append({"marker": o.marker, "name": o.name, "label": f"{o.name} ({o.owner})", "shooter": shooter,
                                "at": "vehicle", "arc": arc.to_json() if arc else None,
                                "arc_text": arc.describe("mm") if arc else "", "nearest": o.marker in nearest,
                                "square": None if o.square is None else _sq_label(o.square), "shootable": usable})
            return out
        if v.kind.arc == "none":
            return []
        tv = state.truck_vehicle
        for part in self._visible_parts(state, v):
            arc = self.in_arc(state, v, self.part_footprint(state, part))
            out.append({"marker": tv.marker, "name": f"the truck's {part.replace('_', ' ')}", "at": part,
                        "label": part.replace("_", " "), "arc": arc.to_json() if arc else None,
                        "arc_text": arc.describe("mm") if arc else "", "shootable": arc is not None and arc.outcome != "out"})
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

    def actions(self, state, marker: int) -> list[dict]:
        """What the vehicle can do now, with each action's fields."""
        v = state.vehicle(marker)
        fixed = {"name": "vehicle", "kind": "fixed", "value": marker}
        pose = {"name": "to", "kind": "table_pose", "of": marker, "label": "where the car stands now"}
        rule = D.RULEBOOK
        acts = []
        if state.over:
            return []
        p = next((p for p in state.pending if p["vehicle"] == marker), None)
        if p is not None:
            return [{"act": "place", "label": f"Put it in square {_sq_label(p['square'])}", "rule": f'{rule}, "Move sequence"',
                     "about": f"{p['why']}: put the car in square {_sq_label(p['square'])}, then resolve.",
                     "fields": [fixed, pose]}]
        if state.pending:
            return []
        if not v.on_board:
            if not v.is_truck and state.phase in ("setup", "turn_over", "select"):
                choices = [{"value": k, "label": self._template_name(k)} for k in D.MOVE_ORDER]
                acts.append({"act": "enter", "label": "Come on (a new vehicle)", "rule": f'{rule}, "Movement"',
                             "about": "Put the car on a free square of the board's back row, then resolve.",
                             "fields": [fixed, {"name": "template", "kind": "choice", "label": "vehicle",
                                                "choices": choices}, pose]})
            return acts
        ph = state.phase
        if ph == "select":
            try:
                boxes, _ = self.allowed_boxes(state, v)
            except RulesError:
                boxes = []
            fields = [fixed, {"name": "box", "kind": "choice", "label": "gear box (gear:forward sideways)",
                              "choices": [{"value": b.key, "label": f"gear {b.gear}: {b.label}" if b.key != "ES"
                                           else "emergency stop"} for b in boxes]}]
            if v.is_truck:
                squares = self._bomb_choices(state)
                for i in range(2):
                    if state.truck.bombers[i] > 0:
                        fields.append({"name": f"bomb{i + 1}", "kind": "choice", "label": f"petrol bomber {i + 1}'s square",
                                       "choices": squares, "optional": True})
            acts.append({"act": "select", "label": "Pick a box (secret)", "rule": f'{rule}, "Move sequence" 1',
                         "fields": fields})
            if v.is_truck and all(o.choice is not None for o in state.on_board()):
                acts.append({"act": "declare", "label": "Declare the truck's speed", "rule": f'{rule}, "Move sequence" 2',
                             "fields": [fixed]})
        elif ph == "move" and state.active is not None and state.active.marker == marker:
            acts.append({"act": "move", "label": f"Move ({v.choice.label})", "rule": f'{rule}, "Movement"',
                         "about": "Put the car on the square its box reaches, then resolve: the camera says the square.",
                         "fields": [fixed, pose]})
        elif ph == "driving" and v.roll_needed:
            acts.append({"act": "drive_roll", "label": f"{v.roll_needed.title()} driving roll",
                         "rule": f'{rule}, "Gang Vehicle Templates", Driver Skill', "fields": [fixed]})
        elif ph == "collisions":
            mine = next(((sq, vs) for sq, vs in self.contested(state) if v in vs), None)
            if mine is not None:
                collider, _ = self._pair(state, *mine)
                if collider is v:
                    acts.append({"act": "collide", "label": f"Collide in square {_sq_label(mine[0])}",
                                 "rule": f'{rule}, "Gang Vehicle Templates", Collision chart', "fields": [fixed]})
                if v.kind.avoid:
                    acts.append({"act": "avoid", "label": "Avoid (one square; no shooting)", "rule": f'{rule}, "Notes"',
                                 "fields": [fixed, pose]})
        elif ph == "truck" and v.is_truck:
            acts.append({"act": "truck_sideways", "label": f"Move the truck sideways ({self.truck_sideways_squares(state):+d})",
                         "rule": f'{rule}, "Move sequence" 6',
                         "about": "Slide the truck across, pushing the cars it meets, then resolve.",
                         "fields": [fixed, pose]})
        elif ph == "bombs" and v.is_truck:
            acts.append({"act": "bombs", "label": "Drop the petrol bombs", "rule": f'{rule}, "Move sequence" 7',
                         "fields": [fixed]})
        elif ph == "gyro" and v.kind.flying:
            targets = [{"value": o.marker, "label": o.name} for o, _, _ in self._drop_targets(state, v)]
            acts.append({"act": "drop", "label": "Drop", "rule": f'{rule}, "Notes", The AutoGyro',
                         "fields": [fixed, {"name": "payload", "kind": "choice", "label": "drop",
                                            "choices": [{"value": "bomb", "label": "petrol bomb"},
                                                        {"value": "snake", "label": "snake"}]},
                                    {"name": "target", "kind": "choice", "label": "on", "choices": targets}]})
            acts.append({"act": "pass", "label": "Drop nothing", "rule": f'{rule}, "Notes", The AutoGyro',
                         "fields": [fixed]})
        elif ph == "shooting":
            shooters = ["max", "gunner"] if v.is_truck else [""]
            for s in shooters:
                if self._can_shoot(state, v, s if v.is_truck else ""):
                    continue
                rows = [t for t in self.targets(state, marker) if t["shootable"] and t.get("shooter", "") == s]
                if not rows:
                    continue
                if v.is_truck or self.truck_side(state, v):
                    fields = [fixed, *([{"name": "shooter", "kind": "fixed", "value": s}] if s else []),
                              {"name": "target", "kind": "choice", "label": "at",
                               "choices": [{"value": t["marker"], "label": t["label"]} for t in rows]}]
                else:
                    fields = [fixed, {"name": "at", "kind": "choice", "label": "at",
                                      "choices": [{"value": t["at"], "label": t["name"]} for t in rows
                                                  if t["at"] != "snake"]}]
                    snakes = [t for t in rows if t["at"] == "snake"]
                    if snakes:
                        fields[1]["choices"].append({"value": "snake", "label": "a snake"})
                        fields.append({"name": "target", "kind": "choice", "label": "snake in", "optional": True,
                                       "choices": [{"value": t["marker"], "label": t["name"]} for t in snakes]})
                acts.append({"act": "shoot", "label": f"Shoot{' (' + s + ')' if s else ''}",
                             "rule": f'{rule}, "Move sequence" 8', "fields": fields})
        return acts

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

    def board(self, state) -> dict:
        """Every square of the board (labelled column,row), the truck's four, and the petrol
        bomb squares once they are revealed (step 7)."""
        grid = self.grid(state)
        cells = []
        for c in range(D.BOARD_COLUMNS):
            for r in range(D.BOARD_ROWS):
                cells.append({"polygon": _ring(grid.polygon(c, r)), "label": _sq_label((c, r)), "kind": "square"})
        if state.truck_vehicle.square is not None:
            for k, sq in enumerate(self.truck_squares(state)):
                cells.append({"polygon": _ring(grid.polygon(*sq)), "kind": "truck",
                              "label": f"{'cab' if k < 2 else 'tanker'} {k + 1}" + (" Max" if k + 1 == D.MAX_SQUARE else "")})
        t = state.truck
        if t.bombs_revealed:
            for i, sq in enumerate(t.bomb_squares):
                if sq is not None and self.on_grid(sq):
                    cells.append({"polygon": _ring(grid.polygon(*sq)), "kind": "bomb", "label": f"bomb {i + 1}"})
        return {"cells": cells, "about": (f"turn {state.turn}, {state.phase}: the truck has gone {state.distance} of "
                                          f"{self.option('distance_squares')} squares; squares {state.square_mm:g} mm, "
                                          f"column 1 at the back, row 1 on the truck's right")}

