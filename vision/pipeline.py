"""The per-frame pipeline: detect, locate, track, as fast as the frames come.

Most frames are searched only where the cars and the anchors were (a few small
regions); the table's pose is solved again from the anchors found there every
frame, so a knocked camera is noticed at once.  Each of those frames also
searches one band of the frame's rows, the bands taking turns, so that the
whole frame is searched every `full_scan_every` frames (a car put down is found
as soon as a whole-frame scan that often would find it) without any one frame
paying for a whole scan (its OpenCV search runs on a thread of its own while
the frame's markers are followed).  At once after a car or an anchor goes missing from
its region, and whenever the regions do not show enough anchors to check the
table's pose, the whole frame is scanned.
"""

from __future__ import annotations

import dataclasses
import math
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from calibration.camera import CameraModel
from calibration.tablefile import TableSpec

from .detect import MIN_REDUCED_SIDE_PX, MarkerDetection, MarkerDetector, to_gray
from .locate import FrameLocation, Locator, merge_regions, region_around
from .track import TrackedCar, Tracker, TrackerSettings


@dataclass(frozen=True, eq=False)
class TrackedFrame:
    """One frame through the pipeline."""

    frame: int
    time_s: float
    cars: tuple[TrackedCar, ...]
    located: FrameLocation
    full_scan: bool
    #: Every configured car's id (the table file's order).
    _car_ids: tuple[int, ...] = ()

    @property
    def missing(self) -> tuple[int, ...]:
        """Configured cars with no pose (never believed seen yet): every car is in
        `cars` or here."""
        known = {c.id for c in self.cars}
        ids = self._car_ids or self.located.missing + tuple(c.id for c in self.located.cars)
        return tuple(i for i in ids if i not in known)

    @property
    def missing_why(self) -> dict[int, str]:
        """Why each missing car has no pose."""
        loc = self.located
        located = {c.id for c in loc.cars}
        out = {}
        for i in self.missing:
            if i in loc.duplicate_ids:
                out[i] = "seen twice: two markers carry this id"
            elif loc.table_pose is None:
                out[i] = "the table is not found yet (too few anchors in view)"
            elif i in located:
                out[i] = "seen, but the table's pose could not be checked on this frame"
            else:
                out[i] = "not seen"
        return out

    @property
    def stale(self) -> tuple[int, ...]:
        return tuple(c.id for c in self.cars if c.stale)

    def to_json(self) -> dict:
        out = self.located.to_json()
        out["cars"] = [c.to_json() for c in self.cars]
        out["missing"] = list(self.missing)
        out["missing_why"] = {str(k): v for k, v in self.missing_why.items()}
        out["stale"] = list(self.stale)
        out["scan"] = "full" if self.full_scan else "regions"
        return out


class TablePipeline:
    """Frames in, tracked cars out."""

    def __init__(self, table: TableSpec, camera: CameraModel | None = None, *,
                 full_scan_every: int = 15, tracker: TrackerSettings = TrackerSettings(),
                 detector: MarkerDetector | None = None) -> None:
        self.table = table
        self.locator = Locator(table, camera, detector)
        self.tracker = Tracker(table, tracker)
        self.full_scan_every = max(int(full_scan_every), 1)
        self._since_full = self.full_scan_every          # the first frame is a full scan
        self._regions: dict[int | tuple[str, int], tuple[float, float, float, float]] = {}
        self._last_seen: dict[int, tuple[np.ndarray, float, int]] = {}   # corners, side, frames lost
        self._motion: dict[int, np.ndarray] = {}    # each car's last step in pixels
        self._full_next = True
        #: Which of full_scan_every region frames this is, for the bands' turns.
        self._band = 0
        #: A car marker's side in pixels, at the largest the view shows one (bands overlap by it).
        self._marker_px = 0.0
        #: The band search's thread and its own detector, made at the first band.
        self._band_pool: ThreadPoolExecutor | None = None
        self._band_detector: MarkerDetector | None = None
        #: Markers seen last frame, to follow where they were: key to (id, corners).
        self._follow: dict[int | tuple[str, int], tuple[int, np.ndarray]] = {}

    @property
    def camera(self) -> CameraModel | None:
        return self.locator.camera

    def process(self, image: np.ndarray, frame: int = 0, time_s: float = 0.0,
                gray: np.ndarray | None = None) -> TrackedFrame:
        """Track one frame.  `gray`, when given, is the same image in 8-bit grey
        (made on a reader thread): all the detector reads."""
        if gray is not None:
            image = gray
        h, w = image.shape[:2]
        if self.locator.camera is not None:
            self.locator.camera.check_frame(image)
        full = (self._full_next or self.full_scan_every == 1
                or self.locator.table_pose is None or not self._regions)
        if not full:
            gray = to_gray(image)
            # This frame's band is searched on a thread of its own while the markers
            # are followed here (OpenCV lets go of Python's lock as it searches).
            band = self._start_band(gray)
            detections = self._with_band(gray, self._follow_and_search(gray), band)
            located = self.locator.locate_detections(detections, (w, h), frame)
            # Too few anchors in the regions to check the table: look at the whole
            # frame before calling the pose unchecked.
            full = not located.pose_checked or located.table_pose is None
            self._since_full += 1
            image = gray
        if full:
            located = self.locator.locate(image, frame, look_again={
                car_id: region_around(corners) for car_id, (corners, _, _) in self._last_seen.items()})
            self._since_full = 1
            located = self._follow_missed(image, located, (w, h), frame)
            self._choose_search_size(located)
        cars = self.tracker.update(located, time_s)
        self._plan(located, full)
        return TrackedFrame(frame, time_s, cars, located, full, self.table.car_ids)

    def _follow_and_search(self, gray: np.ndarray) -> list[MarkerDetection]:
        """This frame's markers: those that stood still, followed where they were
        (MarkerDetector.follow, a fraction of a millisecond); the rest searched
        for in their regions."""
        keys = [k for k in self._follow if k in self._regions]
        followed, _ = self.locator.detector.follow(gray, [self._follow[k] for k in keys])
        found = [d for d in followed if d is not None]
        search = [self._regions[k] for k, d in zip(keys, followed) if d is None]
        search += [r for k, r in self._regions.items() if k not in self._follow]
        if not search:
            return found
        # A merged region may hold a marker already followed: the same id within
        # a few pixels is that marker, not a second copy.
        kept = list(found)
        for d in self.locator.detector.detect_regions(gray, merge_regions(search)):
            if not any(f.id == d.id and np.linalg.norm(f.centre_px - d.centre_px) < 0.5 * f.side_px
                       for f in found):
                kept.append(d)
        return kept

    def band_count(self, height: int) -> int:
        """How many bands a whole-frame search is split into: at most full_scan_every,
        and each band at least three overlaps high (every band searches its
        overlap again: thin bands would cost more in all than the whole scan)."""
        return max(1, min(self.full_scan_every, int(height // (3 * self._overlap_px(height)))))

    def _overlap_px(self, height: int) -> float:
        # A car marker's size and the context OpenCV needs round it: 2.5 sides, for a marker turned 45 degrees.
        return 2.5 * (self._marker_px or 0.05 * height)

    def band_rows(self, height: int, band: int) -> tuple[int, int]:
        """Rows y0, y1 of band `band` of band_count: an equal share of the frame,
        widened on each side so a marker across a share's edge lies whole in one band."""
        n, overlap = self.band_count(height), self._overlap_px(height)
        return (max(int(band * height / n - overlap / 2), 0),
                min(int(math.ceil((band + 1) * height / n + overlap / 2)), height))

    def _start_band(self, gray: np.ndarray) -> Future | None:
        """This frame's share of a whole-frame search, started: one band, at the
        whole frame's search size, OpenCV's search of it on the band thread (its
        own detector, a twin of the locator's).  None on frames that do none:
        the bands are spread evenly over full_scan_every region frames."""
        tick, every = self._band, self.full_scan_every
        self._band = (tick + 1) % every
        n = self.band_count(gray.shape[0])
        band = tick * n // every
        if tick > 0 and (tick - 1) * n // every == band:
            return None
        if self._band_pool is None:
            self._band_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="band-search")
            self._band_detector = self.locator.detector.twin()
        return self._band_pool.submit(self._band_detector.band_outlines, gray, self.band_rows(gray.shape[0], band),
                                      self.locator.detector.search_reduce)

    def _with_band(self, gray: np.ndarray, detections: list[MarkerDetection], band: Future | None
                   ) -> list[MarkerDetection]:
        """The band's markers refined here: a marker found there again (the same id
        within half a side) is the one already found, anything else is added (a
        car put down, a second copy of an id)."""
        if band is None:
            return detections
        kept = list(detections)
        for d in self.locator.detector.finish_band(gray, band.result(), known=detections):
            if not any(f.id == d.id and np.linalg.norm(f.centre_px - d.centre_px) < 0.5 * f.side_px
                       for f in detections):
                kept.append(d)
        return kept

    def _follow_missed(self, image: np.ndarray, located: FrameLocation, size: tuple[int, int],
                       frame: int) -> FrameLocation:
        """A car the whole-frame search missed (OpenCV drops a candidate now and
        then to a frame's noise), followed where it stood last frame: a car that
        stood still is found as every frame between full scans finds it."""
        found = {c.id for c in located.cars}
        keys = [k for k in self._follow if not isinstance(k, tuple) and k not in found]
        if not keys or located.table_pose is None:
            return located
        followed, _ = self.locator.detector.follow(image, [self._follow[k] for k in keys])
        extra = [d for d in followed if d is not None and not any(
            o.id == d.id and math.dist(o.centre_px, d.centre_px) < 0.5 * d.side_px for o in located.detections)]
        if not extra:
            return located
        again = self.locator.locate_detections(list(located.detections) + extra, size, frame)
        return dataclasses.replace(again, table_moved=again.table_moved or located.table_moved)

    def _choose_search_size(self, located: FrameLocation) -> None:
        """Search whole frames at half size when every marker of the table would
        still be MIN_REDUCED_SIDE_PX across at full size (a 4K view): a quarter
        of the pixels, the outlines then refitted on the full frame, and
        anything missed looked for again full size round where it was.  The
        smallest marker's size is judged from the smallest seen, scaled by the
        table's smallest marker (a car not yet seen may carry it)."""
        if located.table_pose is None or not located.detections:
            # The view is lost or new (a camera moved, raised, swapped): full size
            # until the markers are seen again.
            self.locator.detector.search_reduce = 1
            return
        sizes = {a.id: a.size_mm for a in self.table.anchors}
        sizes.update({c.id: c.marker_mm for c in self.table.cars})
        sizes.update({i: g.marker_mm for g in self.table.gates
                      if g.markers is not None and g.marker_mm for i in g.markers})
        px_per_mm = [d.side_px / sizes[d.id] for d in located.detections if d.id in sizes]
        if not px_per_mm:
            return
        smallest_px = min(px_per_mm) * min(sizes.values())
        self._marker_px = max(px_per_mm) * max((c.marker_mm for c in self.table.cars), default=0.0)
        self.locator.detector.search_reduce = 2 if smallest_px >= MIN_REDUCED_SIDE_PX else 1

    def _plan(self, located: FrameLocation, full: bool) -> None:
        """Where to look next frame: around each car seen, wide enough for it to
        move; around a car lost lately, wider each frame it stays lost."""
        seen = {d.id: d for d in located.car_detections}
        newly_lost = [i for i in self._regions if i not in seen and not isinstance(i, tuple)]
        for car_id, det in seen.items():
            before = self._last_seen.get(car_id)
            # Pixels moved since the frame before, if it was seen there: where to look next.
            self._motion[car_id] = (det.centre_px - before[0].mean(axis=0)
                                    if before is not None and before[2] == 0 else np.zeros(2))
            self._last_seen[car_id] = (det.corners_px, det.side_px, 0)
        self._regions = {}
        self._follow = {car_id: (car_id, det.corners_px) for car_id, det in seen.items()}
        for car_id, (corners, side, lost) in list(self._last_seen.items()):
            if car_id not in seen:
                lost += 1
                if lost > LOST_REGION_FRAMES:
                    del self._last_seen[car_id]     # the regular full scans will find it
                    self._motion.pop(car_id, None)
                    continue
                self._last_seen[car_id] = (corners, side, lost)
            # A car driving is looked for where its last step puts it, a side round
            # (the context OpenCV needs) and half its step more (a hand speeding up
            # or turning): a third of the pixels of a region wide enough for any
            # move, searched every frame it drives.  A car standing may be picked
            # up and put down anywhere near (a car at a brisk 0.5 m/s moves about
            # 20 px between frames at 30 fps); a lost one, wider each frame.
            step = self._motion.get(car_id, np.zeros(2)) if lost == 0 else np.zeros(2)
            speed = float(np.hypot(*step))
            if speed >= DRIVING_PX:
                margin = max(side, 24.0) + 0.5 * speed
                # Followed where its last step puts it: a car driving steadily is
                # found there with no search at all (the follow checks its cells).
                if car_id in seen:
                    self._follow[car_id] = (car_id, corners + step)
            else:
                step = np.zeros(2)
                margin = min(max(2.0 * side, 40.0) + 20.0 * lost, 300.0)
            self._regions[car_id] = region_around(corners + step, margin)
        # Anchors too, every frame, where the pose just solved puts them: the
        # table's pose is checked from them.  An anchor does not drive: a knock of
        # a few pixels stays inside (a larger one leaves too few anchors, and the
        # frame is scanned whole).  OpenCV needs about half a side of context
        # round a marker to find it.  (Keyed apart from cars: a table may give a
        # car an anchor's id.)
        pose = located.table_pose
        if pose is not None:
            anchors = self.table.anchors
            # Every anchor's corners projected in one call (one per anchor costs more than the rest of the plan).
            projected = pose.image_from_table(np.array(
                [(x, y, 0.0) for anchor in anchors for x, y in anchor.corners_mm()])).reshape(-1, 4, 2)
            sides = np.linalg.norm(projected[:, 0] - projected[:, 1], axis=1)
            lows, highs = projected.min(axis=1), projected.max(axis=1)
            cars = {id(c) for c in located.car_detections}
            others: dict[int, list[MarkerDetection]] = {}
            for d in located.detections:
                if id(d) not in cars:
                    others.setdefault(d.id, []).append(d)
            for anchor, corners, side, low, high in zip(anchors, projected, sides.tolist(), lows, highs):
                pad = max(0.6 * side, 20.0)
                self._regions[("anchor", anchor.id)] = (low[0] - pad, low[1] - pad, high[0] + pad, high[1] + pad)
                # Followed from where it was seen, if it was seen where the pose puts it.
                if anchor.id in pose.anchors_used:
                    centre = corners.mean(axis=0)
                    near = [d for d in others.get(anchor.id, ())
                            if math.dist(d.centre_px, centre) < 0.5 * side]
                    if len(near) == 1:
                        self._follow[("anchor", anchor.id)] = (anchor.id, near[0].corners_px)
        # A car that slipped out of its region (lifted, fast, covered) is also
        # looked for over the whole frame next time, as is any frame that lost the table.
        self._full_next = (bool(newly_lost) and not full) or located.table_pose is None


#: A car whose marker moved this many pixels since the frame before is driving:
#: looked for where its step predicts (past the follow's FOLLOW_MAX_SHIFT_PX).
DRIVING_PX = 1.5
#: How many frames a lost car's region is kept (widening) before only full scans look for it.
LOST_REGION_FRAMES = 30
