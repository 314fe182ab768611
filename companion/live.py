"""The live table: frames in, the current table snapshot out.

A background thread reads the frame source, locates the cars and publishes a
snapshot (a JSON-ready dict) with a version number.  Readers either take the
latest (`snapshot()`) or wait for the next (`wait_for()`); the web page's
stream does the latter.  A car not found in the latest frame keeps its last
pose, marked stale with its age: nothing is moved without being seen.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from calibration.camera import CameraFileError, CameraModel
from calibration.tablefile import TableSpec
from vision.locate import CarLocation, FrameLocation, Locator
from vision.sources import FrameSource, SourceError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SeenCar:
    """A car's last located pose and when (source time) it was seen."""

    location: CarLocation
    seen_s: float


class LiveTable:
    """Runs a frame source through the locator on a thread of its own."""

    def __init__(self, source: FrameSource, table: TableSpec, camera: CameraModel | None = None,
                 *, paced: bool = False, on_frame: Callable[[FrameLocation], None] | None = None) -> None:
        self.source = source
        self.table = table
        self.locator = Locator(table, camera)
        self.paced = paced and not source.live and bool(source.fps)
        self._on_frame = on_frame
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._version = 0
        self._seen: dict[int, SeenCar] = {}
        self._status = "starting"
        self._error: str | None = None
        self._frame = -1
        self._time_s = 0.0
        self._last: FrameLocation | None = None
        self._fps = 0.0
        self._snapshot = self._build_snapshot()

    # --- running -------------------------------------------------------------------

    def start(self) -> "LiveTable":
        self._thread = threading.Thread(target=self._run, name="live-table", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.source.close()

    def _run(self) -> None:
        self._set_status("running")
        start = time.monotonic()
        frames_at, recent = time.monotonic(), 0
        try:
            while not self._stop.is_set():
                frame = self.source.read()
                if frame is None:
                    self._set_status("ended", f"{self.source.description}: no more frames")
                    return
                if self.paced and self.source.fps:
                    delay = start + frame.time_s - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                self.process(frame.image, frame.index, frame.time_s)
                recent += 1
                now = time.monotonic()
                if now - frames_at >= 1.0:
                    self._fps, frames_at, recent = recent / (now - frames_at), now, 0
        except (SourceError, CameraFileError) as exc:
            self._set_status("error", str(exc))
        except Exception as exc:  # keep the page alive and say what broke
            log.exception("the live table stopped")
            self._set_status("error", f"the live table stopped: {type(exc).__name__}: {exc}")

    def process(self, image, frame_index: int, time_s: float) -> FrameLocation:
        """Locate one frame and publish the new snapshot."""
        located = self.locator.locate(image, frame_index)
        with self._cond:
            for car in located.cars:
                self._seen[car.id] = SeenCar(car, time_s)
            self._frame, self._time_s, self._last = frame_index, time_s, located
            self._error = located.error
            self._publish()
        if self._on_frame is not None:
            self._on_frame(located)
        return located

    def _set_status(self, status: str, error: str | None = None) -> None:
        with self._cond:
            self._status = status
            if error is not None:
                self._error = error
            self._publish()

    def _publish(self) -> None:
        self._version += 1
        self._snapshot = self._build_snapshot()
        self._cond.notify_all()

    # --- reading -------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    def snapshot(self) -> dict:
        with self._cond:
            return self._snapshot

    def wait_for(self, after_version: int, timeout: float) -> dict:
        """The first snapshot newer than `after_version`, or the current one after `timeout`."""
        with self._cond:
            self._cond.wait_for(lambda: self._version > after_version or self._stop.is_set(), timeout)
            return self._snapshot

    def _build_snapshot(self) -> dict:
        cars = []
        for spec in self.table.cars:
            seen = self._seen.get(spec.id)
            if seen is None:
                continue
            age = max(self._time_s - seen.seen_s, 0.0)
            cars.append({**seen.location.to_json(), "length_mm": spec.length_mm,
                         "width_mm": spec.width_mm, "stale": age > 0, "age_s": round(age, 2)})
        last = self._last
        pose = self.locator.table_pose
        return {
            "version": self._version,
            "frame": self._frame,
            "time_s": round(self._time_s, 3),
            "cars": cars,
            "missing": [i for i in self.table.car_ids if i not in self._seen],
            "anchors": list(last.anchors) if last else [],
            "table": {"width_mm": self.table.width_mm, "depth_mm": self.table.depth_mm,
                      "anchors": [{"id": a.id, "x_mm": a.x_mm, "y_mm": a.y_mm, "size_mm": a.size_mm}
                                  for a in self.table.anchors]},
            "camera": None if pose is None else {
                "calibrated": not pose.camera.estimated, "source": pose.camera.source,
                "reprojection_px": round(pose.reprojection_px, 3),
                "reprojection_mm": round(pose.reprojection_mm, 3)},
            "source": {"description": self.source.description, "status": self._status,
                       "fps": round(self._fps, 1)},
            "error": self._error,
        }
