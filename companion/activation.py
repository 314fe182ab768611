"""Activations and paths: one lifecycle for every rule system's moves from the camera.

When an activation begins (a round starts, the last one ended, another car's turn
came), every car's pose is recorded: that is where it "stood", what the page draws as
its ghost, and what anything judged against where a car stood is judged from. From
then on the camera's poses of each car are kept as its path; a move reads the path
driven since the activation began, and once a move is committed that car's next
move in the same activation reads from where this one ended. A car put back where its
move began (a refused move, a player thinking again) starts that move afresh.

No camera, no rules here: the table game feeds it poses ([x_mm, y_mm, heading_deg,
sigma_mm, sigma_deg] lists, as the camera gives them) and asks it.
"""

from __future__ import annotations

import math

#: A car's path keeps a pose each time it has moved this far or turned this much.
PATH_STEP_MM = 5.0
PATH_STEP_DEG = 3.0
PATH_MAX_POINTS = 2000
#: A car put back this near where its move began (a refused move undone by hand, a player
#: thinking again) starts its move again from there: the way it went before is forgotten.
RESTART_MM = 4.0
RESTART_DEG = 4.0


class Activations:
    """Where each car stood when the activation under way began, the way each has driven
    since, and which cars the game holds (their game pose does not follow the camera)."""

    def __init__(self) -> None:
        #: marker -> the pose it stood at when the activation began.
        self.start: dict[int, list[float]] = {}
        #: marker -> its path since the activation began or its last committed move; the
        #: first pose is where this move starts from.
        self.paths: dict[int, list[list[float]]] = {}
        #: The car whose activation is under way (the rules say), or None between activations.
        self.active: int | None = None
        #: How many activations (or rounds) have begun: the page knows a new one by it.
        self.number = 0
        #: Cars the table holds where they stood: the active car, and any a player held.
        self.held: set[int] = set()

    def begin(self, poses: dict[int, list[float]], active: int | None) -> None:
        """A new activation (or round, or a game started or resumed): every car's pose now is
        where it stood, and every path starts there."""
        self.number += 1
        self.start = {m: list(p) for m, p in poses.items()}
        self.paths = {m: [list(p)] for m, p in poses.items()}
        if self.active is not None:
            self.held.discard(self.active)
        self.active = active
        if active is not None:
            self.held.add(active)

    def seen(self, marker: int, pose: list[float]) -> None:
        """The camera's pose of a car in a frame: its path grows when it has moved 5 mm or
        turned 3 degrees since the last pose kept. A car first seen now stood here."""
        path = self.paths.get(marker)
        if not path:
            self.paths[marker] = [list(pose)]
            self.start.setdefault(marker, list(pose))
            return
        first = path[0]
        if len(path) > 1 and math.hypot(pose[0] - first[0], pose[1] - first[1]) <= RESTART_MM \
                and abs((pose[2] - first[2] + 180) % 360 - 180) <= RESTART_DEG:
            del path[1:]
            return
        last = path[-1]
        if math.hypot(pose[0] - last[0], pose[1] - last[1]) >= PATH_STEP_MM \
                or abs((pose[2] - last[2] + 180) % 360 - 180) >= PATH_STEP_DEG:
            path.append(list(pose))
            del path[1:-PATH_MAX_POINTS]         # the start stays; the oldest steps go first

    def moved(self, marker: int, pose: list[float] | None) -> None:
        """A move of this car was committed: its next move starts where it stands now."""
        if pose is not None:
            self.paths[marker] = [list(pose)]

    def path(self, marker: int, now: list[float]) -> list[list[float]]:
        """The way the car went since its move could begin, ending at `now`."""
        return [list(p) for p in self.paths.get(marker, [])] + [list(now)]

    def stood(self, marker: int) -> list[float] | None:
        """Where the car's move under way started: the activation's start, or where its
        last committed move in this activation ended."""
        path = self.paths.get(marker)
        return list(path[0]) if path else None

    def hold(self, marker: int, held: bool) -> None:
        if held:
            self.held.add(marker)
        else:
            self.held.discard(marker)

    def to_json(self) -> dict:
        """For the page: where each car stood (its ghost), and where its current move began."""
        def xyh(p):
            return [round(p[0], 2), round(p[1], 2), round(p[2], 2)]
        return {"number": self.number, "active": self.active, "held": sorted(self.held),
                "start": {str(m): xyh(p) for m, p in sorted(self.start.items())},
                "move_from": {str(m): xyh(p[0]) for m, p in sorted(self.paths.items()) if p}}
