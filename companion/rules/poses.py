"""Poses as actions carry them, and the ground a car covers between two of them: what every
rule system that reads a move from the table shares."""

from __future__ import annotations

import math

from ..geometry import Pose, normalize_deg
from .base import RulesError


def parse_pose(raw, where: str) -> Pose:
    """An action's pose, `[x_mm, y_mm, heading_deg]` with optionally `sigma_mm, sigma_deg`
    (the camera's doubt); `where` names the field in the error a bad one gets."""
    if isinstance(raw, Pose):
        return raw
    if not isinstance(raw, (list, tuple)) or not 3 <= len(raw) <= 5 or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw):
        raise RulesError(f"{where}: a pose is [x_mm, y_mm, heading_deg] or [x_mm, y_mm, heading_deg, sigma_mm, "
                         f"sigma_deg] (the camera's doubt, about 95 %)")
    if len(raw) > 3 and (raw[3] < 0 or (len(raw) > 4 and raw[4] < 0)):
        raise RulesError(f"{where}: a pose's sigma_mm and sigma_deg are not negative")
    return Pose(*map(float, raw))


def interpolate(a: Pose, b: Pose, step_mm: float, step_deg: float) -> list[Pose]:
    """Poses from a to b (not a), straight and turning evenly, at most `step_mm` and
    `step_deg` apart: the ground between two poses a path was given by."""
    d = math.hypot(b.x_mm - a.x_mm, b.y_mm - a.y_mm)
    turn = normalize_deg(b.heading_deg - a.heading_deg)
    n = max(1, math.ceil(d / step_mm), math.ceil(abs(turn) / step_deg))
    return [Pose(a.x_mm + (b.x_mm - a.x_mm) * k / n, a.y_mm + (b.y_mm - a.y_mm) * k / n,
                 normalize_deg(a.heading_deg + turn * k / n), b.sigma_mm, b.sigma_deg) for k in range(1, n + 1)]
