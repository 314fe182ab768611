"""The table's layout as the game sees it: the table file in use, its terrain and gates,
and what counts as a point on this table. Gates placed on the page count from then on,
and the table-file lines to keep them are given back.
"""

from __future__ import annotations

import dataclasses
import math

from .geometry import Terrain


class LayoutError(ValueError):
    """A layout change that cannot be; the message says why."""


class TableLayout:
    def __init__(self, live) -> None:
        self.live = live
        self.table = live.table
        self.terrain = self._terrain(self.table)

    @staticmethod
    def _terrain(table) -> tuple[Terrain, ...]:
        return tuple(Terrain.from_points(t.points, t.kind, t.name) for t in table.terrain)

    def load(self, table) -> None:
        """Another table file: the camera uses it from the next frame."""
        self.live.replace_table(table)
        self.table = table
        self.terrain = self._terrain(table)

    def point(self, value, what: str) -> tuple[float, float]:
        """A point [x_mm, y_mm] on this table, or a LayoutError saying what is wrong with it."""
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            raise LayoutError(f"{what} must be a point [x_mm, y_mm], not {value!r}")
        x, y = float(value[0]), float(value[1])
        if not (math.isfinite(x) and math.isfinite(y)):
            raise LayoutError(f"{what} must be finite numbers, not {value!r}")
        if not (0 <= x <= self.table.width_mm and 0 <= y <= self.table.depth_mm):
            raise LayoutError(f"{what} ({x:.0f}, {y:.0f}) is off the {self.table.width_mm:g} x "
                              f"{self.table.depth_mm:g} mm table")
        return x, y

    def place_gate(self, name, a, b, role="") -> tuple[dict, str]:
        """A gate from two posts picked on the table: (the gate, the table-file lines)."""
        from calibration.tablefile import MIN_GATE_WIDTH_MM, GateSpec
        if not isinstance(name, str) or not name.strip():
            raise LayoutError("name the gate")
        name = name.strip()
        posts = [tuple(round(v, 1) for v in self.point(post, f"post {label}"))
                 for label, post in (("A", a), ("B", b))]
        width = math.hypot(posts[1][0] - posts[0][0], posts[1][1] - posts[0][1])
        if width < MIN_GATE_WIDTH_MM:
            raise LayoutError(f"its posts are {width:.0f} mm apart, too narrow for a car "
                              f"(at least {MIN_GATE_WIDTH_MM:g} mm)")
        if not isinstance(role, str):
            raise LayoutError("a gate's role is a word (start_finish, checkpoint, ...)")
        if self.table.gate(name) is not None:
            raise LayoutError(f"there is already a gate named '{name}'")
        gate = GateSpec(name, role.strip(), posts[0], posts[1])
        table = dataclasses.replace(self.table, gates=self.table.gates + (gate,))
        self.live.set_gates(table)
        self.table = table
        toml = (f'[[gate]]\nname = "{name}"\n' + (f'role = "{role.strip()}"\n' if role.strip() else "")
                + f"a_mm = [{posts[0][0]}, {posts[0][1]}]\nb_mm = [{posts[1][0]}, {posts[1][1]}]\n")
        return ({"name": name, "a": list(posts[0]), "b": list(posts[1]), "role": role.strip(),
                 "width_mm": round(width, 1)}, toml)

    def remove_gate(self, name) -> list[str]:
        if not isinstance(name, str) or self.table.gate(name) is None:
            raise LayoutError(f"there is no gate named {name!r}")
        table = dataclasses.replace(self.table, gates=tuple(g for g in self.table.gates if g.name != name))
        self.live.set_gates(table)
        self.table = table
        return [g.name for g in table.gates]
