"""The live table: frames in, the current table snapshot out.

A background thread reads the frame source, runs each frame through the
tracking pipeline and publishes a snapshot (a JSON-ready dict) with a version
number.  Readers either take the latest (`snapshot()`) or wait for the next
(`wait_for()`); the web page's stream does the latter.  A car not seen keeps
its last pose, marked stale with its age: nothing is moved without being seen.

When the source stops (a camera unplugged, a file ended, a read error), that is
said in the snapshot and the source is opened again with growing pauses
(back-off); the page and everything else keep running meanwhile.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from calibration.camera import CameraFileError, CameraModel
from calibration.tablefile import TableSpec
from vision.detect import DetectionError
from vision.gates import GateLocator, GatePosts
from vision.locate import frame_checks
from vision.pipeline import TablePipeline, TrackedFrame
from vision.sources import FrameSource, PrefetchSource, SourceError

from .geometry import Gate
from .race import gates_from_posts

log = logging.getLogger(__name__)

#: Pauses before reopening a stopped source, in seconds; the last repeats.
REOPEN_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0)
#: The size, sharpness and setup checks are made at most this often (s), and at
#: once when the camera or the table moved.
CHECK_EVERY_S = 1.0


class LiveTable:
    """Runs a frame source through the pipeline on a thread of its own.

    `source` is an open source, or a function that opens one (then a stopped
    source is reopened with back-off).
    """

    def __init__(self, source: FrameSource | Callable[[], FrameSource], table: TableSpec,
                 camera: CameraModel | None = None, *, paced: bool = False,
                 on_frame: Callable[[TrackedFrame], None] | None = None,
                 backoff_s: tuple[float, ...] = REOPEN_BACKOFF_S) -> None:
        if callable(source) and not isinstance(source, FrameSource):
            self._open: Callable[[], FrameSource] | None = source
            self.source: FrameSource | None = None
            self.description = "source"
        else:
            self._open = None
            self.source = source
            self.description = source.description
        self.table = table
        self.pipeline = TablePipeline(table, camera)
        self.gate_locator = GateLocator(table)
        self._gates: tuple[GatePosts, ...] = self.gate_locator.gates()
        self.camera_file = camera           # as given (the pipeline may estimate its own)
        self.paced = paced
        self.backoff_s = backoff_s
        self._on_frame = on_frame
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._version = 0
        self._status = "starting"
        self._error: str | None = None
        self._last: TrackedFrame | None = None
        self._moved_at: tuple[int, float] | None = None
        self._fps = 0.0
        self._reopens = 0
        self._annex: dict = {}
        self._listeners: list[Callable[[TrackedFrame], None]] = []
        self._last_image = None
        # The marker size and sharpness check and the setup check (vision.locate.frame_checks),
        # made at most every CHECK_EVERY_S (they cost 10-25 ms a frame).
        self._quality: dict | None = None
        self._setup: dict | None = None
        self._checked_at = -float("inf")
        self._snapshot = self._build_snapshot()

    # --- running -------------------------------------------------------------------

    def start(self) -> "LiveTable":
        self._thread = threading.Thread(target=self._run, name="live-table", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.source is not None:
            self.source.close()

    def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            if self.source is None:
                try:
                    self.source = PrefetchSource(self._open())
                    self.description = self.source.description
                except SourceError as exc:
                    attempt = self._wait_to_reopen(attempt, str(exc))
                    continue
            reason = self._play(self.source)
            self.source.close()
            if self._open is None or self._stop.is_set():
                self._set_status("ended" if reason.endswith("no more frames") else "error", reason)
                return
            self.source = None
            self._reopens += 1
            attempt = self._wait_to_reopen(0, reason)

    def _wait_to_reopen(self, attempt: int, reason: str) -> int:
        pause = self.backoff_s[min(attempt, len(self.backoff_s) - 1)]
        self._set_status("reopening", f"{reason}; trying again in {pause:g} s")
        self._stop.wait(pause)
        return attempt + 1

    def _play(self, source: FrameSource) -> str:
        """Run frames until the source stops; say why it stopped."""
        self._set_status("running", None)
        start = time.monotonic()
        first_time = None
        frames_at, recent = time.monotonic(), 0
        try:
            while not self._stop.is_set():
                frame = source.read()
                if frame is None:
                    return f"{source.description}: no more frames"
                if self.paced and not source.live:
                    first_time = frame.time_s if first_time is None else first_time
                    delay = start + frame.time_s - first_time - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                self.process(frame.image, frame.index, frame.time_s, frame.captured_at, gray=frame.gray)
                recent += 1
                now = time.monotonic()
                if now - frames_at >= 1.0:
                    self._fps, frames_at, recent = recent / (now - frames_at), now, 0
            return "stopped"
        except (SourceError, CameraFileError, DetectionError) as exc:
            return str(exc)
        except Exception as exc:  # keep the page alive and say what broke
            log.exception("the live table's source failed")
            return f"{type(exc).__name__}: {exc}"

    def process(self, image, frame_index: int, time_s: float, captured_at: float | None = None,
                gray=None) -> TrackedFrame:
        """Track one frame and publish the new snapshot (`gray`: the same image in
        grey, when the reader thread made it)."""
        captured = captured_at if captured_at is not None else time.time()
        tracked = self.pipeline.process(image, frame_index, time_s, gray=gray)
        gates = self.gate_locator.update(tracked.located)
        for listener in self._listeners:
            try:
                listener(tracked)
            except Exception:           # a listener's bug must not stop the camera
                log.exception("a frame listener failed")
        with self._cond:
            self._last = tracked
            if tracked.located.table_moved:
                # Kept, not just this frame's flag: a page that polls may miss the one frame.
                self._moved_at = (tracked.frame, time_s)
            self._gates = gates
            self._last_image = image
            self._captured_at = captured
            self._error = tracked.located.error
            self._publish()
        if self._checks_due(tracked):
            # After the poses are out, outside the lock: the checks cost 10-25 ms (more at 4K),
            # which held a frame in thirty that long on its way to the page; they follow in a
            # snapshot of their own.
            try:
                checks = frame_checks(image, tracked.located, self.table, self.camera_file)
            except Exception:       # a check's bug must not stop the camera
                log.exception("the frame checks failed")
                checks = None
            if checks:
                with self._cond:
                    self._quality, self._setup = checks
                    self._publish()
        if self._on_frame is not None:
            self._on_frame(tracked)
        return tracked

    def _checks_due(self, tracked: TrackedFrame) -> bool:
        now = time.monotonic()
        if now - self._checked_at >= CHECK_EVERY_S or tracked.located.table_moved:
            self._checked_at = now
            return True
        return False

    def add_frame_listener(self, listener: Callable[[TrackedFrame], None]) -> None:
        """Call `listener` with every tracked frame, before its snapshot is published."""
        self._listeners.append(listener)

    def nudge(self, annex: dict | None = None) -> None:
        """Publish a new snapshot now (something beside the camera changed), with `annex`
        merged into it (the game's version, say)."""
        with self._cond:
            if annex:
                self._annex.update(annex)
            self._publish()

    def replace_table(self, table: TableSpec) -> None:
        """Track another table from the next frame on (a new table file loaded)."""
        with self._cond:
            self.table = table
            self.pipeline = TablePipeline(table, self.camera_file)
            self._moved_at = None
            self._quality = self._setup = None
            self._checked_at = -float("inf")
            self.gate_locator = GateLocator(table)
            self._gates = self.gate_locator.gates()
            self._rectifier = None
            self._last = None
            self._publish()

    def set_gates(self, table: TableSpec) -> None:
        """The same table with other gates (placed on the page): the camera keeps going,
        marker posts already seen are kept."""
        with self._cond:
            self.table = table
            self.gate_locator.table = table
            self._gates = self.gate_locator.gates()
            self._publish()

    def rectify(self, image, table_pose):
        """The image mapped onto the table plane (far edge at the top), 0.5 px per mm."""
        from vision.overlay import Rectifier
        if getattr(self, "_rectifier", None) is None:
            self._rectifier = Rectifier(self.table)
        return self._rectifier(image, table_pose)

    def last_image(self):
        """The latest frame's image and its tracked frame (None, None before the first)."""
        with self._cond:
            return self._last_image, self._last

    def _set_status(self, status: str, error: str | None) -> None:
        with self._cond:
            self._status = status
            self._error = error
            self._publish()

    def _publish(self) -> None:
        self._version += 1
        self._snapshot = self._build_snapshot()
        self._snapshot_text = None
        self._cond.notify_all()

    # --- reading -------------------------------------------------------------------

    def gates(self) -> tuple[Gate, ...]:
        """The table's gates where their posts now stand (a marker gate as its posts
        were last seen; one whose posts have not been seen yet is left out)."""
        with self._cond:
            return gates_from_posts(self._gates)

    @property
    def version(self) -> int:
        return self._version

    def snapshot(self) -> dict:
        with self._cond:
            return self._snapshot

    def snapshot_text(self) -> tuple[int, str]:
        """The current snapshot as JSON text, made once per version however many pages
        stream it (each open page would otherwise serialise every frame again)."""
        with self._cond:
            if getattr(self, "_snapshot_text", None) is None:
                self._snapshot_text = json.dumps(self._snapshot)
            return self._version, self._snapshot_text

    def wait_for(self, after_version: int, timeout: float) -> dict:
        """The first snapshot newer than `after_version`, or the current one after `timeout`."""
        with self._cond:
            self._cond.wait_for(lambda: self._version > after_version or self._stop.is_set(), timeout)
            return self._snapshot

    def _build_snapshot(self) -> dict:
        last = self._last
        cars = []
        if last is not None:
            for car in last.cars:
                spec = self.table.car(car.id)
                cars.append({**car.to_json(), "length_mm": spec.length_mm, "width_mm": spec.width_mm})
        pose = self.pipeline.locator.table_pose
        return {
            **self._annex,
            "version": self._version,
            "frame": last.frame if last else -1,
            # Wall-clock time the frame was taken from the source (for the page's own
            # capture-to-drawing latency).
            "captured_at": round(getattr(self, "_captured_at", 0.0), 4),
            "time_s": round(last.time_s, 3) if last else 0.0,
            "cars": cars,
            "missing": list(last.missing) if last else list(self.table.car_ids),
            "missing_why": ({str(k): v for k, v in last.missing_why.items()} if last
                            else {str(i): "no frame yet" for i in self.table.car_ids}),
            # Whether this frame's anchors checked the table's pose (False: every car
            # is stale and its doubt grows), and when the camera or table last moved.
            "pose_checked": bool(last.located.pose_checked) if last else False,
            "table_moved": bool(last.located.table_moved) if last else False,
            "table_moved_at": (None if self._moved_at is None else
                               {"frame": self._moved_at[0], "time_s": round(self._moved_at[1], 3)}),
            "anchors": list(last.located.anchors) if last else [],
            # Whether the markers are big and sharp enough ({"verdict", "advice", ...}), and
            # anchors that disagree with the table file or a camera file that does not fit
            # ({"anchors", "warnings"}): made about once a second.
            "quality": self._quality,
            "setup": self._setup,
            # As a scene file's gates ({"name", "a", "b", "role"}), a marker gate's posts
            # as last seen (None before they are).
            "gates": [g.to_json() for g in self._gates],
            "table": {"width_mm": self.table.width_mm, "depth_mm": self.table.depth_mm,
                      "anchors": [{"id": a.id, "x_mm": a.x_mm, "y_mm": a.y_mm, "size_mm": a.size_mm}
                                  for a in self.table.anchors],
                      # Every configured car's name, so the page names a missing one.
                      "cars": [{"id": c.id, "name": c.name} for c in self.table.cars],
                      "terrain": [{"name": t.name, "kind": t.kind, "points": [list(pt) for pt in t.points]}
                                  for t in self.table.terrain]},
            "camera": None if pose is None else {
                "calibrated": not pose.camera.estimated, "source": pose.camera.source,
                "reprojection_px": round(pose.reprojection_px, 3),
                "reprojection_mm": round(pose.reprojection_mm, 3),
                "anchors_used": list(pose.anchors_used), "anchors_rejected": list(pose.anchors_rejected)},
            "source": {"description": self.description, "status": self._status,
                       "fps": round(self._fps, 1), "reopened": self._reopens},
            "error": self._error,
        }


# --- several cameras over one table ------------------------------------------------------

#: A camera of several that sends no frame for this long (s) while another does is stopped.
STALLED_S = 2.0


def _worst_quality(cams: list[dict]) -> dict | None:
    """Several cameras' picture checks as the page's one note: the worst camera's verdict,
    with the first camera's figures, and each camera's advice led by its name (a small
    marker in camera 2 is camera 2's to fix). None: no camera judged yet."""
    rank = {"ok": 0, "marginal": 1, "poor": 2}
    judged = [(c["name"], c["quality"]) for c in cams if c.get("quality") and c["quality"].get("verdict") in rank]
    if len(cams) < 2 or not judged:
        return None
    worst = max(judged, key=lambda nq: rank[nq[1]["verdict"]])[1]["verdict"]
    return {**judged[0][1], "verdict": worst,
            "advice": [f"{name}: {a}" for name, q in judged if q["verdict"] != "ok" for a in q.get("advice", [])],
            "cameras": {name: q["verdict"] for name, q in judged}}


#: Frames each camera of several keeps for a verdict's frame set: its latest and the one
#: before, enough to pair cameras running at about the same rate to within half a frame.
FRAME_HISTORY = 2


class _Feed:
    """One camera's source in a MultiLiveTable: opened, read and reopened on its own thread."""

    def __init__(self, index: int, source) -> None:
        self.index = index
        if callable(source) and not isinstance(source, FrameSource):
            self.open, self.source, self.description = source, None, f"source {index + 1}"
        else:
            self.open, self.source, self.description = None, source, source.description
        self.status = "starting"
        self.error: str | None = None
        self.fps = 0.0
        self.reopens = 0
        self.thread: threading.Thread | None = None
        self.image = None
        self.tracked: TrackedFrame | None = None
        self.coverage: list | None = None
        self.coverage_at = -float("inf")
        self.checks: tuple | None = None
        self.checked_at = -float("inf")
        self.frame_at: float | None = None      # time.monotonic() of its latest frame
        #: Its latest FRAME_HISTORY frames, oldest first: (image, tracked, capture time), so a
        #: verdict pairs each camera's frame nearest in time to the others' (fused_frame_set).
        self.history: deque = deque(maxlen=FRAME_HISTORY)


class MultiLiveTable(LiveTable):
    """Several cameras over one table (vision.multicam): each source runs on a thread of
    its own through its own camera's pipeline, and one snapshot holds the fused cars and
    a "cameras" list (name, status, what it covers of the table in table mm, the cars it
    sees). A camera that stops is reopened with back-off like a single one, and only its
    own cars go stale meanwhile. The frame the page's picture, the evidence and the
    rectified view come from is the first camera's that has the table."""

    def __init__(self, sources, table: TableSpec, cameras, *, names=None, paced: bool = False,
                 on_frame: Callable | None = None, backoff_s: tuple[float, ...] = REOPEN_BACKOFF_S,
                 descriptions=None) -> None:
        from vision.multicam import MultiCamera
        self._camera_files = list(cameras)
        self._names = list(names) if names is not None else [f"camera {i + 1}" for i in range(len(sources))]
        self.multi = MultiCamera(table, self._camera_files, names=self._names)   # refuses one file for two
        from vision.multicam import SharedAnchorWatch
        #: Which cameras share no anchor, followed (serve sets what its first frames said);
        #: a change is given to `on_note(text, kind)` (serve: the page's notes).
        self.anchor_watch = SharedAnchorWatch(self._names)
        self.on_note: Callable[[str, str], None] | None = None
        self._feeds = [_Feed(i, s) for i, s in enumerate(sources)]
        for feed, text in zip(self._feeds, descriptions or ()):
            feed.description = text         # a source opened later (by a function) says what it is
        self._fused = None
        self._multi_lock = threading.Lock()
        self._holding = False
        self._over_at: float | None = None     # time.monotonic() of the last frame, once every camera ended
        super().__init__(sources[0], table, cameras[0], paced=paced, on_frame=on_frame, backoff_s=backoff_s)
        self.pipeline = self.multi.cameras[0].pipeline
        self.description = self._describe()

    def _describe(self) -> str:
        return " + ".join(f"{n} ({f.description})" for n, f in zip(self._names, self._feeds))

    # --- running -------------------------------------------------------------------

    def start(self) -> "MultiLiveTable":
        for feed in self._feeds:
            feed.thread = threading.Thread(target=self._run_feed, args=(feed,), name=f"live-camera-{feed.index + 1}",
                                           daemon=True)
            feed.thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        for feed in self._feeds:
            if feed.thread is not None:
                feed.thread.join(timeout)
            if feed.source is not None:
                feed.source.close()

    def _run_feed(self, feed: _Feed) -> None:
        attempt = 0
        while not self._stop.is_set():
            if feed.source is None:
                try:
                    feed.source = PrefetchSource(feed.open())
                    feed.description = feed.source.description
                    self.description = self._describe()
                except SourceError as exc:
                    attempt = self._feed_reopen(feed, attempt, str(exc))
                    continue
            reason, lasting = self._play_feed(feed)
            feed.source.close()
            if feed.open is None or lasting or self._stop.is_set():
                self._feed_stopped(feed, "ended" if reason.endswith("no more frames") else "error", reason)
                self._hold_when_all_over()
                return
            feed.source = None
            feed.reopens += 1
            attempt = self._feed_reopen(feed, 0, reason)

    def _feed_reopen(self, feed: _Feed, attempt: int, reason: str) -> int:
        pause = self.backoff_s[min(attempt, len(self.backoff_s) - 1)]
        self._feed_stopped(feed, "reopening", f"{reason}; trying again in {pause:g} s")
        self._stop.wait(pause)
        return attempt + 1

    def _all_over(self) -> bool:
        """Every camera's source has ended or failed for good: no frame will come."""
        return all(f.status in ("ended", "error") for f in self._feeds)

    def _hold_when_all_over(self) -> None:
        """Once every camera has ended, the last thread to end publishes once a second until
        stopped, so the held cars' age keeps counting from when they were last seen."""
        with self._cond:
            if not self._all_over() or self._holding:
                return
            self._holding = True
            self._over_at = max((f.frame_at for f in self._feeds if f.frame_at is not None), default=time.monotonic())
        while not self._stop.wait(1.0):
            with self._cond:
                self._publish()

    def _feed_stopped(self, feed: _Feed, status: str, why: str) -> None:
        """The camera's cars are no longer believed ("camera 2 stopped")."""
        with self._multi_lock:
            self.multi.stop(feed.index, why)
            fused = self.multi.fuse(self.multi._sets, feed.tracked.time_s if feed.tracked else 0.0)
        with self._cond:
            feed.status, feed.error = status, why
            self._fused = fused
            self._publish()

    def _play_feed(self, feed: _Feed) -> tuple[str, bool]:
        """Run one camera's frames until its source stops: (why, whether reopening cannot help)."""
        from vision.multicam import MultiCameraError
        source = feed.source
        with self._cond:
            feed.status, feed.error = "running", None
        start, first_time = time.monotonic(), None
        frames_at, recent = time.monotonic(), 0
        try:
            while not self._stop.is_set():
                frame = source.read()
                if frame is None:
                    # Named as players know the camera (its folder or file is in the header).
                    return f"{self._names[feed.index]} stopped: no more frames", False
                if self.paced and not source.live:
                    first_time = frame.time_s if first_time is None else first_time
                    delay = start + frame.time_s - first_time - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                try:
                    self.process_camera(feed.index, frame.image, frame.index, frame.time_s, frame.captured_at,
                                        gray=frame.gray)
                except MultiCameraError as exc:
                    if exc.lasting:
                        return str(exc), True
                    with self._cond:            # still looking for its anchors: said, and it keeps looking
                        feed.error = str(exc)
                        self._publish()
                recent += 1
                now = time.monotonic()
                if now - frames_at >= 1.0:
                    feed.fps, frames_at, recent = recent / (now - frames_at), now, 0
            return "stopped", False
        except (SourceError, CameraFileError, DetectionError) as exc:
            return str(exc), False
        except Exception as exc:  # keep the page and the other cameras alive, and say what broke
            log.exception("camera %s's source failed", feed.index + 1)
            return f"{type(exc).__name__}: {exc}", False

    def process_camera(self, index: int, image, frame_index: int, time_s: float,
                       captured_at: float | None = None, gray=None):
        """Track one camera's frame, fuse every camera's latest, publish the snapshot."""
        feed = self._feeds[index]
        captured = captured_at if captured_at is not None else time.time()
        tracked = self.multi.update(index, image, frame_index, time_s, gray=gray)   # its own pipeline: no lock
        self._camera_extras(feed, image, tracked)
        now = time.monotonic()
        feed.frame_at = now
        with self._multi_lock:
            for other in self._feeds:
                # A camera whose frames stopped coming (unplugged, its reader stuck) while
                # this one's come: its cars are no longer believed, until it sends again.
                if (other is not feed and other.frame_at is not None and now - other.frame_at > STALLED_S
                        and not self.multi.cameras[other.index].stopped):
                    self.multi.stop(other.index, f"{self._names[other.index]} stopped: no frame for "
                                                 f"{now - other.frame_at:.0f} s")
            fused = self.multi.fuse(self.multi._sets, time_s)
            gates = self.gate_locator.update(tracked.located)
            # Each camera's anchors now (None: no frame yet, or not running: not judged).
            note = self.anchor_watch.update([c.anchors if c.frames and c.status not in ("starting", "stopped", "error")
                                             else None for c in fused.cameras])
        if note is not None and self.on_note is not None:
            try:
                self.on_note(*note)
            except Exception:
                log.exception("the anchor note failed")
        for listener in self._listeners:
            try:
                listener(fused)             # a listener reads `cars`: the fused ones
            except Exception:
                log.exception("a frame listener failed")
        with self._cond:
            feed.image, feed.tracked, feed.error = image, tracked, None
            feed.history.append((image, tracked, captured))
            if feed.status == "starting":          # frames given straight to process_camera
                feed.status = "running"
            self._fused = fused
            primary = self._primary()
            if primary is not None:
                self._last, self._last_image = primary.tracked, primary.image
                if primary.checks:
                    self._quality, self._setup = primary.checks
            if tracked.located.table_moved:
                self._moved_at = (tracked.frame, time_s)
            self._gates = gates
            self._captured_at = captured
            self._publish()
        if self._on_frame is not None:
            self._on_frame(fused)
        return fused

    def _camera_extras(self, feed: _Feed, image, tracked: TrackedFrame) -> None:
        """What the camera covers of the table (when its view first comes, moves, or each
        CHECK_EVERY_S), and its size, sharpness and setup checks as often."""
        now = time.monotonic()
        pose = tracked.located.table_pose
        if pose is not None and (tracked.located.table_moved or now - feed.coverage_at >= CHECK_EVERY_S):
            feed.coverage_at = now
            try:
                from vision.coverage import view_polygon_mm
                feed.coverage = [[round(x, 1), round(y, 1)] for x, y in
                                 view_polygon_mm(pose, image.shape[1::-1], table=self.table)]
            except Exception:           # a drawing aid: its bug must not stop the camera
                log.exception("the camera's coverage failed")
        if now - feed.checked_at >= CHECK_EVERY_S or tracked.located.table_moved:
            feed.checked_at = now
            try:
                feed.checks = frame_checks(image, tracked.located, self.table, self._camera_files[feed.index])
            except Exception:
                log.exception("the frame checks failed")

    def _primary(self) -> _Feed | None:
        """The first camera that has the table (else the first with a frame)."""
        with_frames = [f for f in self._feeds if f.tracked is not None]
        return next((f for f in with_frames if f.tracked.located.table_pose is not None),
                    with_frames[0] if with_frames else None)

    def add_frame_listener(self, listener) -> None:
        """Call `listener` with every fused frame set (its `cars` are the fused cars)."""
        self._listeners.append(listener)

    def replace_table(self, table: TableSpec) -> None:
        from vision.multicam import MultiCamera
        with self._multi_lock:
            self.multi = MultiCamera(table, self._camera_files, names=self._names)
            self._fused = None
        with self._cond:
            for feed in self._feeds:
                feed.tracked = feed.image = feed.coverage = feed.checks = None
        super().replace_table(table)
        self.pipeline = self.multi.cameras[0].pipeline
        self._rectifiers = {}

    # --- reading -------------------------------------------------------------------

    def rectify(self, image, table_pose):
        """The image mapped onto the table plane (as LiveTable's), the other believed cameras'
        latest frames filling what it does not show: the whole table the cameras see."""
        import numpy as np

        from vision.overlay import Rectifier
        out = super().rectify(image, table_pose)
        if len(self._feeds) < 2:
            return out
        rectifiers = self.__dict__.setdefault("_rectifiers", {})
        shown = None
        for name, other, tracked in self.frame_set():
            if other is image:
                continue
            if shown is None:           # where the given frame reaches (a remap of all-white)
                shown = super().rectify(np.full(image.shape[:2], 255, np.uint8), table_pose) == 255
            r = rectifiers.setdefault(name, Rectifier(self.table))
            pose = tracked.located.table_pose
            fill = ~shown & (r(np.full(other.shape[:2], 255, np.uint8), pose) == 255)
            out[fill] = r(other, pose)[fill]
            shown |= fill
        return out

    def _build_snapshot(self) -> dict:
        snap = super()._build_snapshot()
        fused = self._fused
        if fused is not None:
            snap["frame"] = fused.frame
            over = self._over_at is not None and self._all_over()
            # Every camera ended: the held cars' age counts on from their last sighting.
            since = time.monotonic() - self._over_at if over else 0.0
            snap["cars"] = [{**c.to_json(), "length_mm": self.table.car(c.id).length_mm,
                             "width_mm": self.table.car(c.id).width_mm,
                             **({"age_s": round(c.age_s + since, 2)} if over and c.stale else {}),
                             "cameras": list(fused.seen_by.get(c.id, ()))} for c in fused.cars]
            snap["missing"] = list(fused.missing)
            no_table = all(f.tracked is None or f.tracked.located.table_pose is None for f in self._feeds)
            snap["missing_why"] = {str(i): ("the table is not found yet (too few anchors in any camera's view)"
                                            if no_table else "not seen by any camera") for i in fused.missing}
            running = [f.tracked for f in self._feeds if f.tracked is not None
                       and fused.cameras[f.index].status == "running"]
            if self._all_over():
                # No frame will come: what the last frames said, as one camera's end leaves it
                # (not "too few anchors in view").
                running = [f.tracked for f in self._feeds if f.tracked is not None]
            snap["pose_checked"] = any(t.located.pose_checked for t in running)
            snap["table_moved"] = any(c.status == "knocked" for c in fused.cameras)
            snap["anchors"] = sorted({a for f in self._feeds if f.tracked is not None
                                      for a in f.tracked.located.anchors})
        cams = []
        for feed, name in zip(self._feeds, self._names):
            status = fused.cameras[feed.index] if fused is not None else None
            pose = feed.tracked.located.table_pose if feed.tracked is not None else None
            # The source's own trouble (reopening, ended) comes first, then the camera's.
            state = (feed.status if feed.status != "running" else status.status if status else "starting")
            cams.append({"name": name, "source": feed.description, "status": state,
                         "detail": feed.error or (status.detail if status else ""),
                         "coverage": feed.coverage or [], "cars": list(status.cars) if status else [],
                         "anchors": list(status.anchors) if status else [], "fps": round(feed.fps, 1),
                         "reopened": feed.reopens,
                         "calibrated": None if pose is None else not pose.camera.estimated,
                         "reprojection_mm": None if pose is None else round(pose.reprojection_mm, 3),
                         # As the snapshot's "camera" says them, for this camera (the page's picked one).
                         "reprojection_px": None if pose is None else round(pose.reprojection_px, 3),
                         "anchors_used": [] if pose is None else list(pose.anchors_used),
                         "anchors_rejected": [] if pose is None else list(pose.anchors_rejected),
                         "quality": feed.checks[0] if feed.checks else None})
        snap["cameras"] = cams
        quality = _worst_quality(cams)
        if quality is not None:
            snap["quality"] = quality
        statuses = [f.status for f in self._feeds]
        snap["source"] = {"description": self._describe(),
                          "status": "running" if "running" in statuses else statuses[0],
                          "fps": round(min(f.fps for f in self._feeds), 1),
                          "reopened": sum(f.reopens for f in self._feeds)}
        errors = [c["detail"] for c in cams if c["detail"] and c["status"] != "running"]
        snap["error"] = "; ".join(errors) or snap["error"]
        return snap

    def last_image(self):
        with self._cond:
            return self._last_image, self._last

    def frame_set(self) -> list[tuple[str, object, TrackedFrame]]:
        """The latest frame of each camera believed now (running, with the table), in camera
        order: (name, image, tracked frame): what the rectified view is drawn from."""
        with self._cond:
            fused = self._fused
            return [(self._names[f.index], f.image, f.tracked) for f in self._feeds
                    if f.tracked is not None and f.tracked.located.table_pose is not None
                    and fused is not None and fused.cameras[f.index].status == "running"]

    def fused_frame_set(self) -> tuple[list[tuple[str, object, TrackedFrame]], dict[int, tuple[int, ...]]]:
        """What a verdict is measured from (each frame's own located cars, combined by
        vision.multicam.combine_frames) and kept as its evidence: one frame of each camera
        believed now, in camera order, (name, image, tracked frame), taken as near the same
        instant as the frames kept allow: the camera whose latest frame is the oldest sets
        the instant, and each other camera gives its kept frame captured nearest it (a car
        moving is then where both cameras saw it at once, not where each saw it last).
        With it, read at the same moment, for each car the live fusion sees now, the
        indices of the frames its pose comes from (combine_frames' `trusted`): the evidence
        leaves out what the page's pose left out (a view edge's sighting, a camera not yet
        joined), and a frame that shows the car at its view's edge where another shows it
        clear of theirs."""
        from vision.multicam import edge_cars
        with self._cond:
            fused = self._fused
            feeds = [f for f in self._feeds if f.tracked is not None and f.tracked.located.table_pose is not None
                     and fused is not None and fused.cameras[f.index].status == "running" and f.history]
            if not feeds:
                return [], {}
            instant = min(f.history[-1][2] for f in feeds)
            views = []
            for f in feeds:
                # Nearest the instant; of two as near, the later.
                image, tracked, _ = min(reversed(f.history), key=lambda h: abs(h[2] - instant))
                if tracked.located.table_pose is None:
                    image, tracked = f.image, f.tracked
                views.append((self._names[f.index], image, tracked))
            at = {name: k for k, (name, _, _) in enumerate(views)}
            edges = [edge_cars(t.located, (im.shape[1], im.shape[0])) for _, im, t in views]
            trusted = {}
            for car, names in fused.seen_by.items():
                ks = tuple(at[n] for n in names if n in at)
                clear = tuple(k for k in ks if car not in edges[k])
                trusted[car] = clear or ks
            return views, trusted

    def camera_names(self) -> list[str]:
        return list(self._names)

    def camera_image(self, number: int):
        """Camera `number`'s (1, 2, ... as the snapshot's `cameras` name them) latest image and
        tracked frame (None, None before its first); a number no camera has is refused."""
        if not 1 <= number <= len(self._feeds):
            raise ValueError(f"there is no camera {number}: this table has cameras 1 to {len(self._feeds)}")
        with self._cond:
            feed = self._feeds[number - 1]
            return feed.image, feed.tracked

