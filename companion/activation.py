"""Activations and paths: one lifecycle for every rule system's moves from the camera.

When an activation begins (a round starts, the last one ended, another car's turn
came), every car's pose is recorded: that is where it "stood", what the page draws as
its ghost, and what anything judged against where a car stood is judged from. From
then on the camera's poses of each car are kept as its path; a move reads the path
driven since the activation began, and once a move is committed that car's next
move in the same activation reads from where this one ended. A car put back where its
move began (a refused move, a player thinking again) and let go there starts that move
afresh; a car that only drives through its start on its way (a loop through two gates)
keeps its path. "Redo this move" asks for a fresh start without an exact re-placement: the
car put down near its ghost and let go starts again from the recorded pose.

No camera, no rules here: the table game feeds it poses ([x_mm, y_mm, heading_deg,
sigma_mm, sigma_deg] lists, as the camera gives them) and asks it.
"""

from __future__ import annotations

import math
from collections import deque

#: A car's path keeps a pose each time it has moved this far or turned this much.
PATH_STEP_MM = 5.0
PATH_STEP_DEG = 3.0
PATH_MAX_POINTS = 2000
#: A car put back this near where its move began (a refused move undone by hand, a player
#: thinking again) starts its move again from there: the way it went before is forgotten.
RESTART_MM = 4.0
RESTART_DEG = 4.0
#: After "redo this move", a car let go this near its ghost starts again from the recorded pose.
REDO_MM = 30.0
REDO_DEG = 15.0
#: A car is let go (standing still) when its last STILL_FRAMES sightings lie within STILL_MM
#: and STILL_DEG of each other.
STILL_FRAMES = 3
STILL_MM = 2.0
STILL_DEG = 2.0


def _turn(a: float, b: float) -> float:
    return abs((a - b + 180) % 360 - 180)


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
        #: Each car's last few sightings (is it standing still, let go by the hand?).
        self.recent: dict[int, deque] = {}
        #: Cars whose move a player asked to redo: started again once let go near the ghost.
        self.redo: set[int] = set()

    def begin(self, poses: dict[int, list[float]], active: int | None) -> None:
        """A new activation (or round, or a game started or resumed): every car's pose now is
        where it stood, and every path starts there."""
        self.number += 1
        self.start = {m: list(p) for m, p in poses.items()}
        self.paths = {m: [list(p)] for m, p in poses.items()}
        self.redo.clear()
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
        recent = self.recent.setdefault(marker, deque(maxlen=STILL_FRAMES))
        recent.append((pose[0], pose[1], pose[2]))
        first = path[0]
        near = math.hypot(pose[0] - first[0], pose[1] - first[1])
        turned = _turn(pose[2], first[2])
        if marker in self.redo and near <= REDO_MM and turned <= REDO_DEG and self.still(marker):
            self.redo.discard(marker)
            del path[1:]
            return
        if len(path) > 1 and near <= RESTART_MM and turned <= RESTART_DEG and self.still(marker):
            # Put back where its move began and let go there: the way it went is forgotten. A
            # car only passing through its start keeps moving, and keeps its path.
            del path[1:]
            return
        last = path[-1]
        if math.hypot(pose[0] - last[0], pose[1] - last[1]) >= PATH_STEP_MM \
                or abs((pose[2] - last[2] + 180) % 360 - 180) >= PATH_STEP_DEG:
            path.append(list(pose))
            del path[1:-PATH_MAX_POINTS]         # the start stays; the oldest steps go first

    def still(self, marker: int) -> bool:
        """Has the car stood still over its last few sightings (the hand let go)?"""
        recent = self.recent.get(marker)
        if recent is None or len(recent) < STILL_FRAMES:
            return False
        xs, ys = [p[0] for p in recent], [p[1] for p in recent]
        return (max(xs) - min(xs) <= STILL_MM and max(ys) - min(ys) <= STILL_MM
                and max(_turn(p[2], recent[0][2]) for p in recent) <= STILL_DEG)

    def redo_move(self, marker: int) -> list[float] | None:
        """A player redoes the car's move under way: once the car is put down near its ghost
        and let go, its move starts again from the recorded pose (no exact re-placement). Where
        it must go back to, or None if the car has no move under way."""
        path = self.paths.get(marker)
        if not path:
            return None
        self.redo.add(marker)
        return list(path[0])

    def moved(self, marker: int, pose: list[float] | None) -> None:
        """A move of this car was committed: its next move starts where it stands now."""
        if pose is not None:
            self.paths[marker] = [list(pose)]
            self.redo.discard(marker)

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
                "redo": sorted(self.redo),
                "start": {str(m): xyh(p) for m, p in sorted(self.start.items())},
                "move_from": {str(m): xyh(p[0]) for m, p in sorted(self.paths.items()) if p}}
