"""Square grids laid over the table, for square-based games.

A grid has an origin (the outer corner of square (0, 0)), a heading for its
columns' direction, a square size and a size in squares.  Columns count along
the heading, rows to its left; a grid may ride on a moving vehicle (Stop The
Truck's board is relative to the truck).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from shapely.geometry import Polygon

from .pose import Pose


@dataclass(frozen=True)
class SquareGrid:
    origin: Pose                # its x, y and heading; columns run along the heading
    square_mm: float
    columns: int
    rows: int

    def square_of(self, xy) -> tuple[int, int] | None:
        """The (column, row) a table point lies in, or None off the grid."""
        f, l = self.origin.to_local(xy)
        col, row = math.floor(f / self.square_mm), math.floor(l / self.square_mm)
        if 0 <= col < self.columns and 0 <= row < self.rows:
            return col, row
        return None

    def centre_of(self, column: int, row: int) -> np.ndarray:
        """The table point at a square's centre."""
        return self.origin.to_table((column + 0.5) * self.square_mm, (row + 0.5) * self.square_mm)

    def polygon(self, column: int, row: int) -> Polygon:
        s = self.square_mm
        o = self.origin
        return Polygon([o.to_table(column * s, row * s), o.to_table((column + 1) * s, row * s),
                        o.to_table((column + 1) * s, (row + 1) * s), o.to_table(column * s, (row + 1) * s)])
