"""`companion locate`: each car's table position in an image, video or folder, as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from calibration.tablefile import load_table

from . import CommandError, load_camera


def register(sub) -> None:
    p = sub.add_parser("locate", help="print each car's table position in an image or video as JSON",
                       description="Print one JSON object for an image, or one per line for a video or folder "
                                   "with each car's id, name, x_mm, y_mm, heading_deg, sigma_mm and sigma_deg, "
                                   "and the cars missing and anchors seen.")
    p.add_argument("input", metavar="IMAGE_OR_VIDEO", help="an image, a video file or a folder of images")
    p.add_argument("--table", required=True, help="the table file (TOML)")
    p.add_argument("--camera", help="the camera's calibration (OpenCV YAML); without it the camera is estimated from the anchors")
    p.set_defaults(func=cmd_locate)


def cmd_locate(args: argparse.Namespace) -> int:
    from vision.locate import frame_checks
    from vision.pipeline import TablePipeline
    from vision.sources import ImageFolderSource, ImageSource, PrefetchSource, VideoSource, open_source

    table = load_table(args.table)
    camera = load_camera(args.camera)
    source = open_source(args.input, table)
    single = isinstance(source, ImageSource)
    video = isinstance(source, VideoSource)
    folder = isinstance(source, ImageFolderSource)
    source, camera, note = fit_camera_to_source(source, camera)
    if note:
        print(f"warning: {note}", file=sys.stderr, flush=True)
    # A video is one table over time: track it. Images in a folder may be
    # anything: look at each whole.
    pipeline = TablePipeline(table, camera,
                             full_scan_every=15 if video else 1)
    # Decoded on a thread of its own, as `serve` does: the next frame is read
    # while this one is located.
    if not single:
        source = PrefetchSource(source)
    said: set[str] = set()
    with source:
        for n, frame in enumerate(source):
            tracked = pipeline.process(frame.image, frame.index, frame.time_s, gray=frame.gray)
            if single and tracked.located.table_pose is None:
                # The size and sharpness check still says why, when it can tell.
                quality = frame_checks(frame.image, tracked.located, table, camera)[0]
                hint = "".join(f"; {a}" for a in quality.get("advice", []))
                raise CommandError(f"{args.input}: {tracked.located.error}{hint}")
            out = tracked.to_json()
            if folder and not single:
                out["image"] = frame.name
            # Every image of a folder; a video's first frame and every CHECK_EVERY_FRAMES
            # after (the checks cost 10-25 ms, a frame's whole budget).
            if not video or n % CHECK_EVERY_FRAMES == 0:
                quality, setup = frame_checks(frame.image, tracked.located, table, camera)
                out["quality"] = quality
                if setup is not None:
                    out["setup"] = setup
                news = [*(setup or {}).get("warnings", []),
                        *(quality["advice"] if quality["verdict"] != "ok" else [])]
                for line in news:
                    if line not in said:           # a video says each once, not every frame
                        said.add(line)
                        print(f"warning: {line}", file=sys.stderr, flush=True)
            print(json.dumps(out), flush=True)
    return 0


#: A video's size, sharpness and setup checks are made on every this many frames.
CHECK_EVERY_FRAMES = 30


def fit_camera_to_source(source, camera):
    """The source (its first frame read ahead, still to come), the camera file
    fitted to its frames' size, and a warning when the file had to be scaled to
    fit (CameraModel.fitted_to; a file that cannot fit is refused there)."""
    from vision.sources import PeekedSource

    if camera is None:
        return source, None, None
    peeked = PeekedSource(source)
    size = peeked.frame_size
    if size is None:
        return peeked, camera, None
    try:
        camera, note = camera.fitted_to(size)
    except Exception:
        peeked.close()
        raise
    return peeked, camera, note
