"""The table's layout as the game sees it: the table file in use, its terrain and gates,
and what counts as a point on this table. Gates placed on the page count from then on,
and the table-file lines to keep them are given back.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re

from .geometry import Terrain


class LayoutError(ValueError):
    """A layout change that cannot be; the message says why."""


#: The longest gate name taken: it is shown on the board and in every verdict that names it.
MAX_GATE_NAME_CHARS = 40
#: A gate's name: letters (any script), digits, spaces and - ' . # ( ); no quotes or line breaks.
_GATE_NAME = re.compile(r"[^\W_][\w .'#()-]*", re.UNICODE)
#: A gate's role is one word of lowercase letters, digits and underscores.
_GATE_ROLE = re.compile(r"[a-z][a-z0-9_]{0,31}")


def gate_name(name) -> str:
    """A gate name as given on the page, checked; LayoutError says what is wrong with it."""
    if not isinstance(name, str) or not name.strip():
        raise LayoutError("name the gate")
    name = name.strip()
    if len(name) > MAX_GATE_NAME_CHARS:
        raise LayoutError(f"a gate's name is at most {MAX_GATE_NAME_CHARS} characters, not {len(name)}")
    if not _GATE_NAME.fullmatch(name):
        raise LayoutError(f"a gate's name is letters, digits, spaces and - ' . # ( ), starting with a letter "
                          f"or digit, not {name!r}")
    return name


def toml_text(text: str) -> str:
    """`text` as a TOML basic string: JSON's escapes are TOML's for every character a name holds."""
    return json.dumps(text, ensure_ascii=False)


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
        name = gate_name(name)
        posts = [tuple(round(v, 1) for v in self.point(post, f"post {label}"))
                 for label, post in (("A", a), ("B", b))]
        width = math.hypot(posts[1][0] - posts[0][0], posts[1][1] - posts[0][1])
        if width < MIN_GATE_WIDTH_MM:
            raise LayoutError(f"its posts are {width:.0f} mm apart, too narrow for a car "
                              f"(at least {MIN_GATE_WIDTH_MM:g} mm)")
        if not isinstance(role, str) or not (role.strip() == "" or _GATE_ROLE.fullmatch(role.strip())):
            raise LayoutError(f"a gate's role is one lowercase word (start_finish, checkpoint, ...), "
                              f"not {str(role)[:40]!r}")
        if self.table.gate(name) is not None:
            raise LayoutError(f"there is already a gate named '{name}'")
        gate = GateSpec(name, role.strip(), posts[0], posts[1])
        table = dataclasses.replace(self.table, gates=self.table.gates + (gate,))
        self.live.set_gates(table)
        self.table = table
        toml = (f"[[gate]]\nname = {toml_text(name)}\n" + (f"role = {toml_text(role.strip())}\n" if role.strip() else "")
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
