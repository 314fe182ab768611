"""Frame sources behind one interface: a webcam, a video file, a folder of
images, a single image, or the built-in synthetic table.

`open_source("0")` opens webcam 0, `open_source("game.mp4")` a video,
`open_source("shots/")` a folder, `open_source("demo")` the synthetic table.
Every source gives :class:`Frame` objects from `read()` and `None` once it has
ended; a source that cannot be opened raises :class:`SourceError` saying why.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from calibration.tablefile import TableSpec

from .demo import DemoScript, demo_table
from .render import RenderedFrame, RenderOptions, TableRenderer

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}


class SourceError(RuntimeError):
    """A frame source that cannot be opened or read."""


@dataclass(frozen=True, eq=False)
class Frame:
    """One frame: its number in the source, the image (BGR), its time, and the
    truth behind it when the source is synthetic."""

    index: int
    image: np.ndarray
    time_s: float
    name: str = ""
    truth: RenderedFrame | None = None
    #: Wall-clock time (time.time()) the image came from the camera or file: made
    #: with the frame, right after its image was read or rendered.
    captured_at: float = field(default_factory=time.time)
    #: The image in 8-bit grey, when a reader thread made it already (PrefetchSource).
    gray: np.ndarray | None = field(default=None, repr=False)


class JpegGray(np.ndarray):
    """A frame decoded straight to grey from the camera's own JPEG, which it keeps (`jpeg`).

    All the tracker reads is grey, and a webcam's JPEG decodes to grey in two thirds of the
    time colour takes (a 4K frame: 17 ms of a core against 28): at 30 frames a second that
    is a third of a core, and the latency of every frame (bench/page.py --video 4k). The
    colour is decoded only when somebody looks (the Camera tab, a frame kept as evidence:
    `in_colour`), a few times a minute. Anything that takes an 8-bit grey image takes it."""

    jpeg: bytes | None = None
    _colour: np.ndarray | None = None       # in_colour's decode, kept with its frame

    def __array_finalize__(self, obj) -> None:
        # Never inherited by a slice or a copy: a crop's JPEG would be the whole frame's.
        self.jpeg = None
        self._colour = None


def gray_from_jpeg(data) -> JpegGray | None:
    """A JPEG (bytes, or OpenCV's buffer of them) decoded to grey, keeping the JPEG; None
    when it is not one OpenCV can decode (a frame a USB hiccup cut short)."""
    buf = np.frombuffer(data, np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) \
        else np.ascontiguousarray(data, np.uint8).reshape(-1)
    gray = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    if gray is None:
        return None
    out = gray.view(JpegGray)
    out.jpeg = buf.tobytes()
    return out


def in_colour(image: np.ndarray) -> np.ndarray:
    """The image in colour where it can be had: a JpegGray's decoded from its JPEG, any
    other image as it is (a grey one stays grey: drawing on it converts it)."""
    if isinstance(image, JpegGray) and image.jpeg:
        # Decoded once a frame, however many pages ask (two threads may both decode it: the
        # same picture, no harm).
        if image._colour is None:
            image._colour = cv2.imdecode(np.frombuffer(image.jpeg, np.uint8), cv2.IMREAD_COLOR)
        if image._colour is not None:
            return image._colour
    return image


class FrameSource(ABC):
    """Where frames come from."""

    #: Frames per second the source is meant to be played at, if it says.
    fps: float | None = None
    #: True for a live camera (frames come at the camera's own pace).
    live: bool = False

    def __init__(self, description: str) -> None:
        self.description = description

    @abstractmethod
    def read(self) -> Frame | None:
        """The next frame, or None when the source has ended."""

    def close(self) -> None:  # noqa: B027 (sources with nothing to release)
        pass

    def __enter__(self) -> "FrameSource":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self):
        while (frame := self.read()) is not None:
            yield frame

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description!r})"


class _CaptureSource(FrameSource):
    """Frames from an OpenCV VideoCapture (a camera or a video file)."""

    def __init__(self, capture: cv2.VideoCapture, description: str) -> None:
        super().__init__(description)
        self._cap = capture
        self._index = 0
        self._start = time.monotonic()
        fps = capture.get(cv2.CAP_PROP_FPS)
        self.fps = float(fps) if fps and 0 < fps < 1000 else None
        #: Frames that came but would not decode, skipped.
        self.skipped = 0

    def _fourcc(self) -> str:
        code = int(self._cap.get(cv2.CAP_PROP_FOURCC))
        return code.to_bytes(4, "little").decode("latin-1").upper() if code > 0 else ""

    #: Frames come as the stream's own JPEG and are decoded straight to grey (JpegGray).
    _raw_jpeg = False
    #: Frames in a row that would not decode before the source gives up on them.
    BAD_FRAMES_IN_A_ROW = 30

    def read(self) -> Frame | None:
        if self._cap is None:
            return None
        bad = 0
        while True:
            ok, image = self._cap.read()
            if not ok or image is None:
                return None
            if not (self._raw_jpeg and image.ndim == 2 and image.shape[0] == 1):
                break
            gray = gray_from_jpeg(image)
            if gray is not None:
                # The tracker reads `gray` as a plain array (slices of a JpegGray would each
                # call back into Python); `image` keeps the JPEG for whoever wants colour.
                frame = Frame(self._index, gray, self._time(), f"{self.description}#{self._index}",
                              gray=np.asarray(gray))
                self._index += 1
                return frame
            # A frame cut short (a USB hiccup) is skipped, not taken for the end of the stream.
            self.skipped += 1
            self._index += 1
            bad += 1
            if bad >= self.BAD_FRAMES_IN_A_ROW:
                raise SourceError(f"{self.description}: {bad} frames in a row are not JPEG pictures "
                                  f"OpenCV can decode (is it the camera it was?)")
        frame = Frame(self._index, image, self._time(), f"{self.description}#{self._index}")
        self._index += 1
        return frame

    def _time(self) -> float:
        return time.monotonic() - self._start

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class CameraSource(_CaptureSource):
    """A webcam by index (0 is the first), optionally asked for a resolution.

    `lazy_colour`: the camera is asked for Motion-JPEG (what a USB webcam sends 1080p and
    4K at 30 frames a second in) and, where OpenCV hands its JPEG over undecoded (the V4L2
    driver, Linux's), each frame is decoded straight to grey with its JPEG kept for colour
    on demand (JpegGray). Elsewhere, or if the camera will not, frames come in colour as
    OpenCV decodes them."""

    live = True

    def __init__(self, index: int, width: int | None = None, height: int | None = None,
                 lazy_colour: bool = False) -> None:
        cap = cv2.VideoCapture(index)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"camera {index}: cannot be opened (is it plugged in, and not in "
                              f"use by another program?)")
        if lazy_colour:
            cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"MJPG"))
        if width and height:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        # The driver's own queue kept to one frame where it allows (V4L2 does): the
        # newest picture of the table, not one from several frames ago.
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        super().__init__(cap, f"camera {index}")
        if lazy_colour and self._fourcc() == "MJPG" and cap.get(cv2.CAP_PROP_BACKEND) == cv2.CAP_V4L2:
            # V4L2 then hands each frame over as the camera's JPEG bytes, one row of them.
            self._raw_jpeg = bool(cap.set(cv2.CAP_PROP_CONVERT_RGB, 0))


class VideoSource(_CaptureSource):
    """A video file, frame by frame."""

    def __init__(self, path: str | Path, gray: bool = False, lazy_colour: bool = False) -> None:
        """`gray`: frames in 8-bit grey (image and gray alike), all the pipeline reads; an
        MJPEG video is then decoded straight to grey. `lazy_colour`: an MJPEG video's frames
        decoded straight to grey with their JPEG kept for colour on demand (JpegGray), any
        other video's in colour as before."""
        p = Path(path)
        if not p.is_file():
            raise SourceError(f"{p}: no such video file")
        cap = cv2.VideoCapture(str(p))
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{p}: not a video OpenCV can read")
        super().__init__(cap, str(p))
        self._gray = gray
        if (gray or lazy_colour) and self._fourcc() == "MJPG" and cap.get(cv2.CAP_PROP_BACKEND) == cv2.CAP_FFMPEG:
            # The demuxer's packets, each a whole JPEG, handed over undecoded.
            self._raw_jpeg = bool(cap.set(cv2.CAP_PROP_FORMAT, -1))

    def read(self) -> Frame | None:
        frame = super().read()
        if frame is not None and self._gray and frame.gray is None:
            gray = cv2.cvtColor(frame.image, cv2.COLOR_BGR2GRAY) if frame.image.ndim == 3 else frame.image
            frame = dataclasses.replace(frame, image=gray, gray=gray)
        return frame

    def _time(self) -> float:
        return self._index / self.fps if self.fps else float(self._index)


class ImageFolderSource(FrameSource):
    """Every image in a folder, in name order."""

    def __init__(self, path: str | Path) -> None:
        p = Path(path)
        if not p.is_dir():
            raise SourceError(f"{p}: no such folder")
        self.paths = sorted(q for q in p.iterdir() if q.suffix.lower() in IMAGE_SUFFIXES)
        if not self.paths:
            raise SourceError(f"{p}: no images in the folder (looked for "
                              f"{', '.join(sorted(IMAGE_SUFFIXES))})")
        super().__init__(str(p))
        self._index = 0

    def read(self) -> Frame | None:
        if self._index >= len(self.paths):
            return None
        path = self.paths[self._index]
        frame = Frame(self._index, read_image(path), float(self._index), path.name)
        self._index += 1
        return frame


class ImageSource(ImageFolderSource):
    """A single image file: one frame."""

    def __init__(self, path: str | Path) -> None:
        p = Path(path)
        if not p.is_file():
            raise SourceError(f"{p}: no such image file")
        FrameSource.__init__(self, str(p))
        self.paths = [p]
        self._index = 0


def read_image(path: str | Path) -> np.ndarray:
    """An image file as BGR pixels, or a SourceError naming the file."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise SourceError(f"{path}: not an image OpenCV can read (corrupt, or not an image)")
    return image


class SyntheticSource(FrameSource):
    """The built-in synthetic table: the demo's scripted game, rendered.

    With `paced`, frames come in real time at `fps` (as a camera's would);
    without, as fast as they render.  `duration_s` ends the source; by default
    it runs for ever.  `script` is what puts the cars in each frame (anything
    with `poses_at(t)`): by default the scripted convoy; the playable demo
    gives its cars that players move (vision.playable.PlayableCars).
    `projected`, when given, is asked before each frame for the synthetic projector's
    light, (vision.projector_sim.LightMaps, the projector's image) or None (nothing
    thrown), so the camera sees what the projector draws (`companion demo --projector`).
    """

    def __init__(self, table: TableSpec | None = None, fps: float = 15.0, paced: bool = True,
                 duration_s: float | None = None, options: RenderOptions = RenderOptions(),
                 seed: int = 0, script=None, renderer: TableRenderer | None = None,
                 name: str = "demo", projected=None) -> None:
        # `renderer`: one camera of several over the table (vision.multicam), instead of
        # the one overhead webcam; `name` labels its frames.
        self.table = renderer.table if renderer is not None else (table or demo_table())
        super().__init__(name)
        self.renderer = renderer or TableRenderer.overhead(self.table, options=options, seed=seed)
        self.script = script if script is not None else DemoScript(self.table)
        self.fps = fps
        self.paced = paced
        self.duration_s = duration_s
        self.projected = projected
        self._index = 0
        self._start = time.monotonic()
        self._rng = np.random.default_rng(seed)

    @property
    def camera(self):
        """The synthetic camera, as a calibration file would describe it."""
        return self.renderer.camera

    def read(self) -> Frame | None:
        t = self._index / self.fps
        if self.duration_s is not None and t > self.duration_s:
            return None
        if self.paced:
            delay = self._start + t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        light = self.projected() if self.projected is not None else None
        truth = self.renderer.render(self.script.poses_at(t), self._rng, projected=light)
        frame = Frame(self._index, truth.image, t, f"{self.description}#{self._index}", truth)
        self._index += 1
        return frame


class _CoreForReaders:
    """While frames are read ahead on threads of their own, OpenCV's own pool is
    given the other cores only: on two cores its second worker fought the reader
    for the core it decodes on, and locating a 1080p frame took 11 ms instead
    of 8 (bench.speed4k).  Counted, so the last reader closed gives the pool
    back as it was."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._readers = 0
        self._threads_before = 0

    def take(self) -> None:
        with self._lock:
            if self._readers == 0:
                self._threads_before = cv2.getNumThreads()
                cv2.setNumThreads(max(1, cv2.getNumberOfCPUs() - 1))
            self._readers += 1

    def give_back(self) -> None:
        with self._lock:
            self._readers -= 1
            if self._readers == 0:
                cv2.setNumThreads(self._threads_before)


_CORE_FOR_READERS = _CoreForReaders()


class PrefetchSource(FrameSource):
    """Reads another source ahead on a thread of its own.

    Decoding a 1080p frame takes a core several milliseconds; read ahead, it
    overlaps with the detection of the frame before (OpenCV lets go of
    Python's lock while it decodes), so the pipeline runs at the pace of the
    slower of the two, not their sum.

    A live camera is read one frame ahead, not `depth`: the next frame is
    taken from the camera (whose driver keeps one buffer, the newest) only once
    the pipeline has taken the last, so it is never older than one decode.
    Three decoded frames waiting put a 4K table three frames behind on a busy
    machine (bench/page.py --video 4k: taking the newest frame cut capture to
    drawn by a tenth to a quarter, p95); a file is read ahead `depth` frames."""

    def __init__(self, inner: FrameSource, depth: int = 3) -> None:
        super().__init__(inner.description)
        self.inner = inner
        self.fps = inner.fps
        self.live = inner.live
        #: Frames decoded ahead at most: one for a live camera (see above).
        self.depth = 1 if inner.live else depth
        self._queue: queue.Queue = queue.Queue(maxsize=self.depth)
        self._stop = threading.Event()
        self._closed = False
        _CORE_FOR_READERS.take()
        self._thread = threading.Thread(target=self._run, name="frame-reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                frame = self.inner.read()
                if frame is not None and frame.gray is None and frame.image.ndim == 3:
                    # The grey image the detector reads, made here too: a millisecond
                    # a 1080p frame off the thread that locates.
                    frame = dataclasses.replace(frame, gray=cv2.cvtColor(
                        frame.image, cv2.COLOR_BGR2GRAY if frame.image.shape[2] == 3 else cv2.COLOR_BGRA2GRAY))
                self._put(frame)
                if frame is None:
                    return
        except Exception as exc:            # handed to the reader, who reports it
            self._put(exc)

    def _put(self, item) -> None:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def read(self) -> Frame | None:
        if self._stop.is_set() and self._queue.empty():
            return None
        item = self._queue.get()
        if isinstance(item, Exception):
            self._stop.set()
            raise item
        if item is None:
            self._stop.set()
        return item

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.inner.close()
        if not self._closed:
            self._closed = True
            _CORE_FOR_READERS.give_back()


class PeekedSource(FrameSource):
    """Another source whose first frame has been read already, to learn the
    frames' size before anything is set up for them; that frame is still the
    first `read()` gives."""

    def __init__(self, inner: FrameSource) -> None:
        super().__init__(inner.description)
        self.inner = inner
        self.fps = inner.fps
        self.live = inner.live
        self._first: Frame | None = inner.read()
        self._started = False

    @property
    def frame_size(self) -> tuple[int, int] | None:
        """(width, height) of the first frame, or None when the source gave none."""
        if self._first is None:
            return None
        h, w = self._first.image.shape[:2]
        return int(w), int(h)

    def read(self) -> Frame | None:
        if not self._started:
            self._started = True
            return self._first
        return self.inner.read()

    def close(self) -> None:
        self.inner.close()


class LoopingSource(FrameSource):
    """A video file or a folder of images played again and again: when it ends,
    it is opened afresh with `reopen()` and goes on where it left off in frame
    numbers and time, so a tracker sees one continuous stream."""

    def __init__(self, first: FrameSource, reopen) -> None:
        super().__init__(f"{first.description} (looped)")
        self._source = first
        self._reopen = reopen
        self.fps = first.fps
        self.live = first.live
        self.loops = 0
        self._index = 0
        self._time_offset = 0.0
        self._last_time = 0.0

    def read(self) -> Frame | None:
        if self._source is None:
            return None
        frame = self._source.read()
        if frame is None:
            self._source.close()
            self._source = self._reopen()
            self.loops += 1
            step = 1.0 / self.fps if self.fps else 1.0
            self._time_offset = self._last_time + step
            frame = self._source.read()
            if frame is None:          # an empty file: nothing to loop
                return None
        time_s = frame.time_s + self._time_offset
        self._last_time = time_s
        out = dataclasses.replace(frame, index=self._index, time_s=time_s)
        self._index += 1
        return out

    def close(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None


def open_source(spec: str, table: TableSpec | None = None, lazy_colour: bool = False,
                **synthetic_kwargs) -> FrameSource:
    """Open a source from what a player types: `demo`, a camera index, a folder,
    an image or a video file. `lazy_colour`: a camera's or video's Motion-JPEG frames
    decoded straight to grey, their colour only when asked (JpegGray; what `serve` does)."""
    text = str(spec).strip()
    if text == "demo":
        return SyntheticSource(table, **synthetic_kwargs)
    if text.isdigit():
        return CameraSource(int(text), lazy_colour=lazy_colour)
    p = Path(text).expanduser()
    if p.is_dir():
        return ImageFolderSource(p)
    if not p.exists():
        raise SourceError(f"{text}: no such file, folder or camera (a camera is a number such "
                          f"as 0; the synthetic table is 'demo')")
    if p.suffix.lower() in IMAGE_SUFFIXES:
        return ImageSource(p)
    return VideoSource(p, lazy_colour=lazy_colour)
