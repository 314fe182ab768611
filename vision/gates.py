"""Gate posts found by the camera: a marker gate follows wherever its posts are put.

A gate in the table file either has measured posts (`a_mm`, `b_mm`: nothing to
see) or a flat marker at each post (`markers`).  A post marker lies on the table
like an anchor, so its corners are traced back through the lens to the table
plane (z = 0) and its centre is the post.  While a post stands still its
sightings are averaged (the marker's own noise shrinks; the table pose's doubt
does not); a sighting far from the average is the post moved, and is followed
at once.  A post not seen keeps where it was last seen: nothing moves a gate
but seeing it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.tablefile import GateSpec, TableSpec

from .locate import CENTRE_PER_EDGE_SIGMA, MIN_SIGMA_MM, UNREFINED_CENTRE_SIGMA_PX, FrameLocation, radius_95

#: A post marker whose measured side is off its printed size by more than this
#: fraction is not lying flat on the table (held up, on a stand, misprinted).
SIDE_TOLERANCE = 0.2
#: A sighting within this many sigmas (or this many mm) of the average is the post standing still.
STILL_SIGMAS = 3.0
STILL_MM = 1.0
#: The running average forgets beyond this many sightings (a slow nudge still shows).
MAX_SIGHTINGS = 60


@dataclass(frozen=True)
class PostSighting:
    """One post marker seen in one frame, in table mm, with its doubt."""

    marker_id: int
    x_mm: float
    y_mm: float
    #: About 95 % of errors fall within 2 sigma_mm (as for cars).
    sigma_mm: float
    #: The marker's side as measured on the table (its printed side if it lies flat).
    side_mm: float
    random_cov: np.ndarray      # (2, 2) the marker's own noise: averages away
    fixed_cov: np.ndarray       # (2, 2) the table pose's doubt: does not


def locate_posts(located: FrameLocation, table: TableSpec) -> tuple[dict[int, PostSighting], list[str]]:
    """The gate post markers a frame shows, on the table plane; and why any seen were not used.

    Needs the frame's table pose; a marker seen twice (a reflection, a spare
    print) is not trusted, as for cars."""
    pose = located.table_pose
    sizes = {i: g.marker_mm for g in table.gates if g.markers is not None for i in g.markers}
    if pose is None or not sizes:
        return {}, []
    counts: dict[int, int] = {}
    for d in located.detections:
        counts[d.id] = counts.get(d.id, 0) + 1
    dets = [d for d in located.detections if d.id in sizes and counts[d.id] == 1]
    problems = [f"post marker {i} is seen twice; neither is used" for i in sorted(sizes) if counts.get(i, 0) > 1]
    if not dets:
        return {}, problems
    corners_px = np.array([d.corners_px for d in dets])                     # (N, 4, 2)
    corners_mm = pose.table_from_image(corners_px.reshape(-1, 2), 0.0).reshape(len(dets), 4, 2)
    centres_px = corners_px.mean(axis=1)
    pose_cov = pose.table_covariance(centres_px, np.zeros(len(dets)))
    out: dict[int, PostSighting] = {}
    for i, det in enumerate(dets):
        c = corners_mm[i]
        side = float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)))
        printed = sizes[det.id]
        if abs(side - printed) > SIDE_TOLERANCE * printed:
            problems.append(f"post marker {det.id} measures {side:.0f} mm, not its {printed:g} mm: "
                            f"it is not lying flat on the table, so it is not used")
            continue
        # The centre of the four table-plane corners is the marker's centre: the
        # plane-to-plane mapping keeps straight lines, so no lens bias is left.
        centre = c.mean(axis=0)
        edge_px = CENTRE_PER_EDGE_SIGMA * det.edge_sigma_px if det.edge_sigma_px is not None \
            else UNREFINED_CENTRE_SIGMA_PX
        mm_per_px = pose.mm_per_px(float(centre[0]), float(centre[1]), 0.0)
        random_cov = np.eye(2) * (edge_px * mm_per_px) ** 2
        cov = random_cov + pose_cov[i]
        out[det.id] = PostSighting(det.id, float(centre[0]), float(centre[1]),
                                   max(radius_95(cov) / 2, MIN_SIGMA_MM), side, random_cov, pose_cov[i])
    return out, problems


@dataclass(frozen=True)
class GatePosts:
    """Where a gate's posts are now: measured, or as its markers were last seen."""

    name: str
    role: str
    a_mm: tuple[float, float] | None      # None: a post marker not seen yet
    b_mm: tuple[float, float] | None
    #: The worse post's doubt (95 % within twice it); 0 for measured posts.
    sigma_mm: float = 0.0
    markers: tuple[int, int] | None = None
    #: The latest frame in which a post of this gate was seen (-1: never, or measured).
    frame_seen: int = -1

    @property
    def placed(self) -> bool:
        """Both posts known (a marker gate's both posts seen at least once)."""
        return self.a_mm is not None and self.b_mm is not None

    def to_json(self) -> dict:
        """As a scene file's gate ({"name", "a", "b", "role"}), with where the posts come from."""
        rnd = (lambda p: None if p is None else [round(p[0], 2), round(p[1], 2)])
        return {"name": self.name, "role": self.role, "a": rnd(self.a_mm), "b": rnd(self.b_mm),
                "source": "measured" if self.markers is None else "markers",
                "markers": None if self.markers is None else list(self.markers),
                "sigma_mm": round(self.sigma_mm, 3) if self.placed else None, "frame_seen": self.frame_seen}


class _Post:
    """One post marker's running average."""

    def __init__(self, s: PostSighting, frame: int) -> None:
        self.xy = np.array([s.x_mm, s.y_mm])
        self.n = 1
        self.random_cov = s.random_cov
        self.fixed_cov = s.fixed_cov
        self.frame = frame

    def add(self, s: PostSighting, frame: int) -> None:
        new = np.array([s.x_mm, s.y_mm])
        gate = max(STILL_SIGMAS * self.sigma_mm, STILL_MM)
        if float(np.linalg.norm(new - self.xy)) > gate:
            self.__init__(s, frame)                  # the post was moved: follow it at once
            return
        self.n = min(self.n + 1, MAX_SIGHTINGS)
        self.xy = self.xy + (new - self.xy) / self.n
        self.random_cov = s.random_cov
        self.fixed_cov = s.fixed_cov
        self.frame = frame

    @property
    def sigma_mm(self) -> float:
        return max(radius_95(self.fixed_cov + self.random_cov / self.n) / 2, MIN_SIGMA_MM)


class GateLocator:
    """The table's gates, frame by frame: measured gates as the file says, marker
    gates wherever their posts were last seen.  (The geometry's `Gate` is made from
    these by `companion.race.gates_from_posts`: vision does not import companion.)"""

    def __init__(self, table: TableSpec) -> None:
        self.table = table
        self._posts: dict[int, _Post] = {}
        #: Why post markers seen in the latest frame were not used (empty when all were).
        self.problems: list[str] = []

    def update(self, located: FrameLocation) -> tuple[GatePosts, ...]:
        """Fold in one frame's detections; return every gate's posts as they now stand."""
        sightings, self.problems = locate_posts(located, self.table)
        for marker_id, s in sightings.items():
            post = self._posts.get(marker_id)
            if post is None:
                self._posts[marker_id] = _Post(s, located.frame)
            else:
                post.add(s, located.frame)
        return self.gates()

    def gates(self) -> tuple[GatePosts, ...]:
        return tuple(self._posts_of(g) for g in self.table.gates)

    def _posts_of(self, spec: GateSpec) -> GatePosts:
        if spec.markers is None:
            return GatePosts(spec.name, spec.role, spec.a_mm, spec.b_mm)
        a, b = (self._posts.get(i) for i in spec.markers)
        xy = (lambda p: None if p is None else (float(p.xy[0]), float(p.xy[1])))
        sigma = max((p.sigma_mm for p in (a, b) if p is not None), default=0.0)
        seen = max((p.frame for p in (a, b) if p is not None), default=-1)
        return GatePosts(spec.name, spec.role, xy(a), xy(b), sigma, spec.markers, seen)


def measured_gates(table: TableSpec) -> tuple[GatePosts, ...]:
    """The table's gates before any frame: measured posts only (marker posts unknown)."""
    return GateLocator(table).gates()


def track_with_gates(images, table: TableSpec, camera=None, fps: float = 30.0, **pipeline_kwargs):
    """Run images (a video's frames, in order) through the tracking pipeline and
    the gate locator: yields (TrackedFrame, the gates' posts) per frame.

    The loop a race needs, e.g. with `companion.race`:

        race, paths = RaceTracker.for_table(table), PathRecorder()
        for tracked, posts in track_with_gates(images, table, camera):
            race.update(tracked.frame, tracked.time_s, tracked.cars, gates_from_posts(posts))
            paths.update(tracked.cars)
    """
    from .pipeline import TablePipeline          # the pipeline is heavier than this module needs elsewhere
    pipeline = TablePipeline(table, camera, **pipeline_kwargs)
    gates = GateLocator(table)
    for i, image in enumerate(images):
        tracked = pipeline.process(image, i, i / fps)
        yield tracked, gates.update(tracked.located)
