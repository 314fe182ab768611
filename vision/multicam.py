"""Several cameras over one table: one pose per car, from every camera that sees it.

Each camera is its own TablePipeline (its own camera file, its own table pose
from the anchors it sees); the cameras share nothing but the table file, whose
anchors put every camera's view in the same table millimetres.  Per frame set:

- a car seen (fresh) by several cameras is one pose, combined by inverse
  covariance: position as a 2 x 2 covariance, heading as a variance;
- a car seen by one camera takes that camera's pose;
- when the set of cameras that see a car changes (it crosses from one view into
  the other, a camera is knocked or stops), the cameras' disagreement is not
  let through as a step: the new pose is offset to continue the old one and
  the offset fades over `blend_frames` frame sets (its size is added to the
  car's doubt while it lasts);
- a camera knocked (its table pose moved or could not be checked) or stopped
  (no frames) is left out; the cars only it saw stay where they were, stale,
  with the reason ("camera 2 was knocked", "camera 2 stopped").

Sigmas: TrackedCar gives sigma_mm as half a 95 % radius of a round spread, so a
camera's position covariance is s^2 I with s = 2 sigma_mm / 2.448 (2.448 per-axis
sigmas hold 95 % of a round 2-D Gaussian); the combined covariance is turned back
into half its 95 % radius.  sigma_deg is a plain 1-D sigma (2 sigma is 95 %):
variances add inversely as they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from calibration.camera import CameraFileError, CameraModel
from calibration.table_pose import MIN_ANCHORS
from calibration.tablefile import TableSpec

from .locate import ROUND_95, radius_95
from .pipeline import TablePipeline, TrackedFrame
from .track import TrackedCar

#: Frame sets over which a camera change's offset fades (a 1 mm disagreement
#: becomes steps of at most 0.1 mm).
BLEND_FRAMES = 10
#: Clean sightings in a row (marker whole and clear of the image's border) before a
#: camera joins a car's fusion: a view's edge, where a marker is cut or small, comes and
#: goes frame by frame, and each join or leave would shift the pose by the cameras'
#: disagreement (the demo's reviewer saw "camera 1" / "camera 1+camera 2" flicker).
JOIN_FRAMES = 3
#: A marker with a corner nearer the image's border than this many of its own sides is a
#: view-edge sighting: not trusted to join a fusion, and it leaves one another camera holds.
EDGE_SIDES = 1.0
#: A car that moved more than this in one frame set (a hand's drag) takes its new pose as
#: it is: a fade offset from where it stood would only pull it back towards there.
MOVED_MM = 8.0
#: Frame sets a change in which cameras share an anchor must hold before it is said (a hand
#: over an anchor for a moment is no change of setup).
ANCHOR_HOLD_SETS = 30
#: A camera that has not found its table pose after this many frames is refused.
POSE_WITHIN_FRAMES = 30
#: Frame sets without a frame from a camera before it is called stopped.
LOST_AFTER_SETS = 15
#: Clean (pose-checked, unmoved) frames a knocked camera needs before it is believed again.
SETTLE_FRAMES = 3


class MultiCameraError(ValueError):
    """A camera that cannot take part: the message names it and says what to do.
    `lasting` is True when more frames will not help (a frame of another size than
    its camera file): a live table stops that camera, where one still looking for
    its anchors keeps looking."""

    def __init__(self, message: str, lasting: bool = False) -> None:
        super().__init__(message)
        self.lasting = lasting


@dataclass(frozen=True)
class CameraStatus:
    """One camera's part in the latest frame set."""

    index: int
    name: str
    #: "starting" (no frame yet), "running", "no table" (its anchors not found yet),
    #: "knocked" (its view moved; left out until it settles), "stopped", "error".
    status: str
    detail: str = ""
    cars: tuple[int, ...] = ()           # cars it sees and that are fused from it now
    anchors: tuple[int, ...] = ()        # anchors it saw in its latest frame
    frames: int = 0

    @property
    def believed(self) -> bool:
        return self.status == "running"

    def to_json(self) -> dict:
        return {"index": self.index, "name": self.name, "status": self.status, "detail": self.detail,
                "cars": list(self.cars), "anchors": list(self.anchors), "frames": self.frames}


@dataclass(frozen=True, eq=False)
class FusedFrame:
    """One frame set through every camera."""

    frame: int
    time_s: float
    cars: tuple[TrackedCar, ...]
    cameras: tuple[CameraStatus, ...]
    #: Car id to the names of the cameras its pose is combined from (empty: stale).
    seen_by: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: Camera name to the cars it took with it (seen only by it, now stale).
    taken: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: The latest TrackedFrame of each camera (None before its first).
    views: tuple[TrackedFrame | None, ...] = ()
    _car_ids: tuple[int, ...] = ()

    @property
    def missing(self) -> tuple[int, ...]:
        known = {c.id for c in self.cars}
        return tuple(i for i in self._car_ids if i not in known)

    @property
    def stale(self) -> tuple[int, ...]:
        return tuple(c.id for c in self.cars if c.stale)

    def car(self, car_id: int) -> TrackedCar | None:
        return next((c for c in self.cars if c.id == car_id), None)

    def to_json(self) -> dict:
        return {"frame": self.frame, "time_s": round(self.time_s, 3),
                "cars": [{**c.to_json(), "cameras": list(self.seen_by.get(c.id, ()))} for c in self.cars],
                "missing": list(self.missing), "stale": list(self.stale),
                "cameras": [c.to_json() for c in self.cameras],
                "taken": {k: list(v) for k, v in self.taken.items()}}


@dataclass
class _Camera:
    index: int
    name: str
    pipeline: TablePipeline
    last: TrackedFrame | None = None
    frames: int = 0
    status: str = "starting"
    detail: str = ""
    clean_run: int = 0          # pose-checked unmoved frames in a row
    knocked: bool = False       # its view moved (or lost its anchors) and has not settled yet
    had_pose: bool = False
    idle_sets: int = 0          # frame sets without a frame from it
    stopped: bool = False
    size: tuple[int, int] | None = None   # its latest image's width and height

    def at_edge(self) -> set[int]:
        """The cars its latest frame saw near the image's border (a marker maybe cut)."""
        if self.last is None or self.size is None:
            return set()
        return edge_cars(self.last.located, self.size)


def edge_cars(located, size: tuple[int, int]) -> set[int]:
    """The cars a located frame of this (width, height) saw near the image's border: a marker
    with a corner within EDGE_SIDES of its own sides of it (maybe cut)."""
    w, h = size
    out = set()
    for car, det in zip(located.cars, located.car_detections):
        c = np.asarray(det.corners_px, float).reshape(-1, 2)
        side = float(np.mean(np.linalg.norm(c - np.roll(c, 1, axis=0), axis=1)))
        margin = EDGE_SIDES * side
        if (c[:, 0].min() < margin or c[:, 1].min() < margin or c[:, 0].max() > w - 1 - margin
                or c[:, 1].max() > h - 1 - margin):
            out.add(car.id)
    return out


@dataclass
class _CarState:
    x: float
    y: float
    heading: float
    sigma_mm: float
    sigma_deg: float
    seen_s: float
    cameras: tuple[int, ...]                  # camera indices fused last time it was seen
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: The last set's estimate from each camera that saw it (fused or not): (x, y, heading,
    #: var_xy, var_deg).
    per_camera: dict[int, tuple[float, float, float, float, float]] = field(default_factory=dict)
    #: How much of the old camera set's estimate the pose still carries (1 at a change,
    #: fading to 0), and that estimate's own sigmas: the pose's doubt moves from the old
    #: set's to the new set's as the offset fades, rather than adding the offset's size.
    weight: float = 0.0
    old_sigma: tuple[float, float] = (0.0, 0.0)
    #: The fused pose's own sigmas this set (without the fade).
    own_sigma: tuple[float, float] = (0.0, 0.0)


def position_variance(sigma_mm: float) -> float:
    """Per-axis variance (mm^2) of a round spread whose 95 % radius is 2 sigma_mm."""
    s = 2.0 * sigma_mm / ROUND_95
    return s * s


def sigma_from_covariance(cov: np.ndarray) -> float:
    """Half the 95 % radius of a 2-D Gaussian with this covariance (as sigma_mm is)."""
    return radius_95(cov) / 2.0


def _wrap(deg: float) -> float:
    d = (deg + 180.0) % 360.0 - 180.0
    return 180.0 if d == -180.0 else d


def combine(poses: Sequence[tuple[float, float, float, float, float]]) -> tuple[float, float, float, float, float]:
    """Inverse-covariance combination of (x, y, heading, var_xy, var_deg) poses, where
    var_xy is a per-axis variance of a round spread.  Returns the same five, var_xy
    as the combined covariance's per-axis variance (round in, round out)."""
    info = np.zeros((2, 2))
    vec = np.zeros(2)
    h_info, h_sum = 0.0, 0.0
    ref = poses[0][2]
    for x, y, h, var_xy, var_deg in poses:
        w = np.eye(2) / max(var_xy, 1e-12)
        info += w
        vec += w @ np.array([x, y])
        wh = 1.0 / max(var_deg, 1e-12)
        h_info += wh
        h_sum += wh * _wrap(h - ref)           # headings near 180 averaged without a wrap
    cov = np.linalg.inv(info)
    xy = cov @ vec
    return float(xy[0]), float(xy[1]), _wrap(ref + h_sum / h_info), float(cov[0, 0]), 1.0 / h_info


def combine_frames(frames: Sequence[dict], trusted: dict[int, Sequence[int]] | None = None
                   ) -> tuple[dict[int, tuple[float, float, float, float, float]], dict[int, tuple[int, ...]]]:
    """One frame set's own poses, without the tracker: `frames` holds each camera's frame's
    located cars by id (anything with x_mm, y_mm, heading_deg, sigma_mm, sigma_deg), in
    camera order. Returns ({car: (x, y, heading, sigma_mm, sigma_deg)}, {car: the indices
    of the frames its pose is combined from}). A car one frame sees keeps that frame's
    numbers untouched; one several see is combined by inverse covariance as `fuse`
    combines cameras (no fade, no averaging over frames), so the live table's verdict and
    the audit's, located again from the stored frames in the same order, are the same.

    `trusted` ({car: frame indices}, from the live fusion: MultiCamera's `seen_by`) keeps a
    car's pose to the frames the live fusion combined it from: a sighting at the edge of a
    camera's view, or one not yet joined (JOIN_FRAMES), is left out here as it is there, so
    a verdict is not moved by a cut marker the page never showed (a reviewer saw a recorded
    path step back 9 mm in the overlap). A car it does not name, or names none of whose
    frames see it, takes every frame that sees it. The audit needs no `trusted`: the record
    keeps only the frames `given` names."""
    given: dict[int, list[int]] = {}
    for k, cars in enumerate(frames):
        for car_id in cars:
            given.setdefault(car_id, []).append(k)
    for car_id, ks in given.items():
        keep = [k for k in ks if k in set((trusted or {}).get(car_id, ()))]
        if keep:
            given[car_id] = keep
    out = {}
    for car_id, ks in given.items():
        if len(ks) == 1:
            c = frames[ks[0]][car_id]
            out[car_id] = (c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg)
            continue
        cs = [frames[k][car_id] for k in ks]
        x, y, h, var_xy, var_deg = combine([(c.x_mm, c.y_mm, c.heading_deg, position_variance(c.sigma_mm),
                                             c.sigma_deg ** 2) for c in cs])
        out[car_id] = (x, y, h, sigma_from_covariance(np.eye(2) * var_xy), math.sqrt(var_deg))
    return out, {m: tuple(ks) for m, ks in given.items()}


class MultiCamera:
    """Frame sets in (one image per camera, None where a camera gave none), fused cars out."""

    def __init__(self, table: TableSpec, cameras: Sequence[CameraModel | None], *,
                 names: Sequence[str] | None = None, blend_frames: int = BLEND_FRAMES,
                 pose_within_frames: int = POSE_WITHIN_FRAMES, lost_after_sets: int = LOST_AFTER_SETS,
                 settle_frames: int = SETTLE_FRAMES, **pipeline_kwargs) -> None:
        if len(cameras) < 1:
            raise MultiCameraError("no camera given: give one --source per camera")
        names = list(names) if names is not None else [f"camera {i + 1}" for i in range(len(cameras))]
        if len(names) != len(cameras):
            raise MultiCameraError(f"{len(names)} names for {len(cameras)} cameras")
        same_file(cameras, names)
        self.table = table
        self.cameras = [_Camera(i, n, TablePipeline(table, c, **pipeline_kwargs))
                        for i, (c, n) in enumerate(zip(cameras, names))]
        #: 0: a camera change is taken at once (the benchmark's comparison).
        self.blend_frames = max(int(blend_frames), 0)
        self.pose_within_frames = pose_within_frames
        self.lost_after_sets = lost_after_sets
        self.settle_frames = settle_frames
        self._cars: dict[int, _CarState] = {}
        self._taken: dict[int, str] = {}         # car id to the stale reason it keeps
        self._runs: dict[int, dict[int, int]] = {}   # car to camera to its clean sightings in a row
        self._sets = 0
        self.last: FusedFrame | None = None

    # --- per camera ----------------------------------------------------------------

    def update(self, index: int, image: np.ndarray, frame: int = 0, time_s: float = 0.0,
               gray: np.ndarray | None = None) -> TrackedFrame:
        """Track one camera's frame (call `fuse` to combine the cameras' latest)."""
        cam = self.cameras[index]
        try:
            tracked = cam.pipeline.process(image, frame, time_s, gray=gray)
        except CameraFileError as exc:
            cam.status, cam.detail = "error", f"{cam.name}: {exc}"
            raise MultiCameraError(cam.detail, lasting=True) from None
        cam.last, cam.frames, cam.idle_sets, cam.stopped = tracked, cam.frames + 1, 0, False
        cam.size = (int(image.shape[1]), int(image.shape[0]))
        loc = tracked.located
        if loc.table_pose is None:
            cam.status = "no table"
            cam.detail = (f"{cam.name} sees anchors {_ids(loc.anchors)}: too few to find the table (it needs "
                          f"{MIN_ANCHORS}); put anchors in its view")
            if cam.frames >= self.pose_within_frames:
                cam.status = "error"
                cam.detail = (f"{cam.name} has not found the table in {cam.frames} frames: it sees "
                              f"{_ids(loc.anchors)} of the table file's anchors "
                              f"({_ids(a.id for a in self.table.anchors)}), and needs at least {MIN_ANCHORS}; "
                              f"put anchors in its view (or turn it so it sees them) and mark them in the "
                              f"table file")
                raise MultiCameraError(cam.detail)
            return tracked
        if loc.table_moved or not loc.pose_checked:
            cam.clean_run = 0
            cam.knocked = cam.knocked or cam.had_pose
        else:
            cam.clean_run += 1
            cam.knocked = cam.knocked and cam.clean_run < self.settle_frames
        if cam.knocked:
            cam.status = "knocked"
            if loc.table_moved:
                cam.detail = f"{cam.name}'s view moved (knocked): its cars wait until it holds still"
            elif not loc.pose_checked:
                cam.detail = (f"{cam.name} cannot check its table pose (it sees anchors {_ids(loc.anchors)}); "
                              f"its cars wait until it sees at least {MIN_ANCHORS}")
            else:
                cam.detail = (f"{cam.name} was knocked: believed again after "
                              f"{self.settle_frames - cam.clean_run} more steady frames")
        else:
            cam.status, cam.detail = "running", ""
        cam.had_pose = True
        return tracked

    def stop(self, index: int, why: str = "") -> None:
        """A camera's source ended or failed: its cars are no longer believed."""
        cam = self.cameras[index]
        cam.stopped, cam.status, cam.detail = True, "stopped", why or f"{cam.name} stopped"

    # --- the frame set -------------------------------------------------------------

    def process(self, images: Sequence[np.ndarray | None], frame: int = 0, time_s: float = 0.0) -> FusedFrame:
        """One frame set: each camera's image (None where it gave none), fused."""
        if len(images) != len(self.cameras):
            raise MultiCameraError(f"{len(images)} images for {len(self.cameras)} cameras")
        for i, image in enumerate(images):
            if image is not None:
                self.update(i, image, frame, time_s)
            else:
                cam = self.cameras[i]
                cam.idle_sets += 1
                if cam.idle_sets >= self.lost_after_sets and not cam.stopped:
                    self.stop(i, f"{cam.name} stopped: no frames for {cam.idle_sets} frame sets")
        return self.fuse(frame, time_s)

    def fuse(self, frame: int = 0, time_s: float = 0.0) -> FusedFrame:
        """Combine every camera's latest tracked frame."""
        self._sets += 1
        sightings: dict[int, dict[int, tuple[float, float, float, float, float]]] = {}
        stale_from: dict[int, list[int]] = {}     # car to the unbelieved cameras that see it
        edge: dict[int, set[int]] = {}           # car to the cameras that see it at their view's edge
        for cam in self.cameras:
            if cam.last is None:
                continue
            for car_id in cam.at_edge():
                edge.setdefault(car_id, set()).add(cam.index)
            for car in cam.last.cars:
                pose = (car.x_mm, car.y_mm, car.heading_deg, position_variance(car.sigma_mm),
                        car.sigma_deg ** 2)
                if cam.status == "running" and car.seen:
                    sightings.setdefault(car.id, {})[cam.index] = pose
                elif car.seen or car.why_stale == "table pose unchecked" or cam.status in ("knocked", "stopped"):
                    stale_from.setdefault(car.id, []).append(cam.index)
        out: list[TrackedCar] = []
        seen_by: dict[int, tuple[str, ...]] = {}
        taken: dict[str, list[int]] = {}
        for spec in self.table.cars:
            state = self._cars.get(spec.id)
            seen = sightings.get(spec.id)
            runs = self._runs.setdefault(spec.id, {})
            for cam in self.cameras:
                clean = bool(seen) and cam.index in seen and cam.index not in edge.get(spec.id, ())
                runs[cam.index] = runs.get(cam.index, 0) + 1 if clean else 0
            if seen:
                chosen = self._members(seen, state, runs)
                sightings[spec.id] = chosen
                out.append(self._fused(spec.id, spec.name, chosen, state, time_s, seen))
                seen = chosen
                seen_by[spec.id] = tuple(self.cameras[i].name for i in sorted(seen))
                self._taken.pop(spec.id, None)
                continue
            if state is None:
                continue
            why = self._why_stale(spec.id, state, stale_from.get(spec.id, []))
            for i in state.cameras:
                if self.cameras[i].status in ("knocked", "stopped", "error") and why.startswith(self.cameras[i].name):
                    taken.setdefault(self.cameras[i].name, []).append(spec.id)
            state.per_camera = {}
            out.append(TrackedCar(spec.id, spec.name, state.x, state.y, state.heading, state.sigma_mm,
                                  state.sigma_deg, False, max(time_s - state.seen_s, 0.0), 0, why))
        statuses = tuple(CameraStatus(c.index, c.name, c.status, c.detail,
                                      tuple(sorted(i for i, s in sightings.items() if c.index in s)),
                                      tuple(c.last.located.anchors) if c.last else (), c.frames)
                         for c in self.cameras)
        self.last = FusedFrame(frame, time_s, tuple(out), statuses, seen_by,
                               {k: tuple(v) for k, v in taken.items()},
                               tuple(c.last for c in self.cameras), self.table.car_ids)
        return self.last

    def _why_stale(self, car_id: int, state: _CarState, unbelieved: list[int]) -> str:
        """A stale car's reason: the camera that took it, or the tracker's own."""
        lost = [self.cameras[i] for i in state.cameras if self.cameras[i].status in ("knocked", "stopped", "error")]
        if lost and len(lost) == len(state.cameras):
            cam = lost[0]
            why = {"knocked": f"{cam.name} was knocked", "stopped": f"{cam.name} stopped",
                   "error": f"{cam.name} failed"}[cam.status]
            self._taken[car_id] = why
            return why
        if car_id in self._taken and not any(self.cameras[i].status == "running" for i in unbelieved):
            return self._taken[car_id]
        for cam in self.cameras:
            if cam.status == "running" and cam.last is not None:
                car = next((c for c in cam.last.cars if c.id == car_id), None)
                if car is not None and car.why_stale:
                    return car.why_stale
        return "not seen"

    def _members(self, seen: dict[int, tuple], state: _CarState | None, runs: dict[int, int]) -> dict[int, tuple]:
        """The cameras a car's pose is fused from this set (hysteresis): a camera already in
        its fusion stays while it sees the car clear of its view's edge; another joins only
        after JOIN_FRAMES clean sightings in a row. A car not fused last set (new, or back
        from stale) takes every clean sighting at once; with none, any sighting at all."""
        was = set(state.cameras) if state is not None and state.per_camera else set()
        clean = {i for i in seen if runs.get(i, 0) > 0}
        if was:
            chosen = {i for i in clean if i in was or runs[i] >= JOIN_FRAMES}
            chosen = chosen or (clean & was) or clean or (set(seen) & was) or set(seen)
        else:
            chosen = clean or set(seen)
        return {i: seen[i] for i in sorted(chosen)}

    def _fused(self, car_id: int, name: str, seen: dict[int, tuple], state: _CarState | None,
               time_s: float, every: dict[int, tuple] | None = None) -> TrackedCar:
        """`seen`: the sightings fused; `every`: all this set's believed sightings (kept to
        carry the car's motion across a later change of cameras)."""
        cams = tuple(sorted(seen))
        x, y, h, var_xy, var_deg = combine([seen[i] for i in cams])
        sigma_mm = sigma_from_covariance(np.eye(2) * var_xy)
        sigma_deg = math.sqrt(var_deg)
        offset, weight, old = (0.0, 0.0, 0.0), 0.0, (sigma_mm, sigma_deg)
        # Only a car fused last set continues: a stale car's old offset is not restarted.
        if state is not None and self.blend_frames and state.per_camera:
            keep = 1.0 - 1.0 / self.blend_frames
            offset = tuple(v * keep for v in state.offset)
            weight, old = state.weight * keep, state.old_sigma
            # Its motion since last set, from the cameras that saw it then and see it now
            # (the fused ones first: an edge sighting's own error is not motion).
            common = ([i for i in cams if i in state.cameras and i in state.per_camera]
                      or [i for i in cams if i in state.per_camera])
            moved = None
            if common:
                before = combine([state.per_camera[i] for i in common])
                now = combine([seen[i] for i in common])
                moved = (now[0] - before[0], now[1] - before[1], _wrap(now[2] - before[2]))
            if moved is not None and math.hypot(moved[0], moved[1]) > MOVED_MM:
                # Dragged: the new pose is the new pose, no pull back towards the old one.
                offset, weight = (0.0, 0.0, 0.0), 0.0
            elif cams != state.cameras:
                if moved is not None:
                    # The rest of the change is the cameras' disagreement: faded in, not stepped.
                    want = (state.x + moved[0], state.y + moved[1], _wrap(state.heading + moved[2]))
                    offset = (want[0] - x, want[1] - y, _wrap(want[2] - h))
                    # The pose now continues the old set's estimate, with that estimate's doubt.
                    weight, old = 1.0, state.own_sigma if state.weight == 0 else (
                        _mix(state.weight, state.old_sigma, state.own_sigma))
                else:
                    # No camera saw it both then and now: nothing carries the old offset on.
                    offset, weight = (0.0, 0.0, 0.0), 0.0
        own = (sigma_mm, sigma_deg)
        s_mm, s_deg = _mix(weight, old, own)
        # More disagreement than both sets' doubts allow: one of them is wrong by more than
        # its sigma says, so the excess goes into the doubt while the offset lasts.
        excess_mm = max(0.0, math.hypot(offset[0], offset[1]) - 2.0 * math.hypot(old[0], own[0]) * weight)
        excess_deg = max(0.0, abs(offset[2]) - 2.0 * math.hypot(old[1], own[1]) * weight)
        sigma_mm = math.hypot(s_mm, excess_mm / 2.0)
        sigma_deg = math.hypot(s_deg, excess_deg / 2.0)
        fx, fy, fh = x + offset[0], y + offset[1], _wrap(h + offset[2])
        frames = max((c.frames for i in cams for c in self.cameras[i].last.cars if c.id == car_id), default=1)
        self._cars[car_id] = _CarState(fx, fy, fh, sigma_mm, sigma_deg, time_s, cams, offset,
                                       dict(every if every is not None else seen), weight, old, own)
        return TrackedCar(car_id, name, fx, fy, fh, sigma_mm, sigma_deg, True, 0.0, frames)


def _mix(weight: float, old: tuple[float, float], new: tuple[float, float]) -> tuple[float, float]:
    """Sigmas of a pose carrying `weight` of an old estimate and the rest of a new one
    (linear: never less than the smaller, as if their errors were alike)."""
    return (weight * old[0] + (1.0 - weight) * new[0], weight * old[1] + (1.0 - weight) * new[1])


def same_file(cameras: Sequence[CameraModel | None], names: Sequence[str]) -> None:
    """Refuse one camera file given for two cameras (the same file, or two files alike
    to the last digit: two cameras never calibrate exactly alike)."""
    for i, a in enumerate(cameras):
        for j in range(i):
            b = cameras[j]
            if a is None or b is None or a.estimated or b.estimated:
                continue
            if (a.image_size == b.image_size and np.array_equal(a.camera_matrix, b.camera_matrix)
                    and np.array_equal(a.dist_coeffs, b.dist_coeffs)):
                same = "the same camera file" if a.source == b.source else f"identical camera files ({b.source}, {a.source})"
                raise MultiCameraError(
                    f"{names[j]} and {names[i]} have {same}: each camera needs its own calibration; "
                    f"calibrate each camera on its own (`companion calibrate`) and give its file after its --source")


def unshared_anchors(names: Sequence[str], seen: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], str]:
    """The cameras that see anchors but none another camera sees (their indices), and the
    warning that says so ("" when none): without an anchor two cameras see, their positions
    can disagree where a car crosses from one view to the other. A camera that sees no
    anchor at all is not counted here (it cannot find the table: said on its own)."""
    alone = tuple(i for i in range(len(names))
                  if seen[i] and not any(set(seen[i]) & set(seen[j]) for j in range(len(names)) if j != i))
    if not alone:
        return (), ""
    who = " and ".join(names[i] for i in alone)
    sees = "; ".join(f"{names[i]} sees anchors {_ids(sorted(seen[i]))}" for i in alone)
    verb = "shares" if len(alone) == 1 else "share"
    return alone, (f"{who} {verb} no anchor with another camera ({sees}): lay an anchor where the cameras' views "
                   f"overlap and add it to the table file (companion markers anchors prints it); an anchor two "
                   f"cameras see keeps their positions agreeing where a car crosses from one view to the other")


class SharedAnchorWatch:
    """Follows which cameras share no anchor with another, frame set by frame set, and says
    a change once it has held ANCHOR_HOLD_SETS sets: a camera that loses its shared anchors
    (turned, an anchor taken away) is warned about; one that gains one is said fixed. `said`
    is what was last said (the cameras alone), e.g. serve's check of the first frames."""

    def __init__(self, names: Sequence[str], hold_sets: int = ANCHOR_HOLD_SETS,
                 said: Sequence[int] = ()) -> None:
        self.names = list(names)
        self.hold_sets = max(int(hold_sets), 1)
        self.said: tuple[int, ...] = tuple(said)
        self._pending: tuple[int, ...] | None = None
        self._held = 0

    def update(self, seen: Sequence[Sequence[int] | None]) -> tuple[str, str] | None:
        """Each camera's anchors in its latest frame (None: not known now, a camera with no
        frame yet or stopped: nothing is judged). Returns (text, "warn" | "info") when what
        is said changes, else None."""
        if len(self.names) < 2 or any(s is None for s in seen):
            self._pending, self._held = None, 0
            return None
        alone, warning = unshared_anchors(self.names, seen)
        if alone == self.said:
            self._pending, self._held = None, 0
            return None
        self._held = self._held + 1 if alone == self._pending else 1
        self._pending = alone
        if self._held < self.hold_sets:
            return None
        fixed = [i for i in self.said if i not in alone]
        self.said, self._pending, self._held = alone, None, 0
        if warning:
            return warning, "warn"
        who = " and ".join(self.names[i] for i in fixed)
        return (f"{who} now {'shares' if len(fixed) == 1 else 'share'} an anchor with another camera: their "
                f"positions agree where a car crosses from one view to the other"), "info"


def _ids(ids) -> str:
    ids = list(ids)
    return ", ".join(map(str, ids)) if ids else "none"


# --- synthetic cameras (the demo, render, the tests and benchmarks) ------------------------

def demo_renderers(table: TableSpec, n: int = 2, options=None, seed: int = 0, width: int = 1920,
                   height: int = 1080, height_mm: float = 1300.0):
    """`n` synthetic webcams over strips of the table (vision.demo.demo_camera_regions),
    each a TableRenderer; the near ones lean back, the far ones forward, as cameras on
    booms at the table's sides would."""
    from .demo import demo_camera_regions
    from .render import RenderOptions, TableRenderer, region_camera

    out = []
    for i, region in enumerate(demo_camera_regions(table, n)):
        mid = (region[1] + region[3]) / 2
        camera, rvec, tvec = region_camera(table, region, width=width, height=height, height_mm=height_mm,
                                           behind_mm=100.0 if mid < table.depth_mm / 2 else -100.0,
                                           source=f"synthetic camera {i + 1}")
        out.append(TableRenderer(table, camera, rvec, tvec, options or RenderOptions(), seed=seed + i))
    return out


def view_source(renderer, script, fps: float = 15.0, paced: bool = True, name: str = "view",
                duration_s: float | None = None, seed: int = 0):
    """A frame source rendering `script`'s cars (anything with `poses_at(t)`) through one
    renderer: one camera of several over a synthetic table (as SyntheticSource is the one)."""
    from .sources import SyntheticSource

    return SyntheticSource(fps=fps, paced=paced, duration_s=duration_s, seed=seed, script=script,
                           renderer=renderer, name=name)
