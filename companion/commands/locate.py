"""`companion locate`: each car's table position in an image, video or folder, as JSON."""

from __future__ import annotations

import argparse
import json

from calibration.tablefile import load_table

from . import CommandError, load_camera


def register(sub) -> None:
    p = sub.add_parser("locate", help="print each car's table position in an image or video as JSON",
                       description="Print one JSON object for an image, or one per line for a video or folder "
                                   "(DESIGN.md, outside contracts).")
    p.add_argument("input", metavar="IMAGE_OR_VIDEO", help="an image, a video file or a folder of images")
    p.add_argument("--table", required=True, help="the table file (TOML)")
    p.add_argument("--camera", help="the camera's calibration (OpenCV YAML); without it the camera is estimated from the anchors")
    p.set_defaults(func=cmd_locate)


def cmd_locate(args: argparse.Namespace) -> int:
    from vision.pipeline import TablePipeline
    from vision.sources import ImageFolderSource, ImageSource, VideoSource, open_source

    table = load_table(args.table)
    camera = load_camera(args.camera)
    source = open_source(args.input, table)
    single = isinstance(source, ImageSource)
    # A video is one table over time: track it. Images in a folder may be
    # anything: look at each whole.
    pipeline = TablePipeline(table, camera,
                             full_scan_every=15 if isinstance(source, VideoSource) else 1)
    with source:
        for frame in source:
            tracked = pipeline.process(frame.image, frame.index, frame.time_s)
            if single and tracked.located.table_pose is None:
                raise CommandError(f"{args.input}: {tracked.located.error}")
            out = tracked.to_json()
            if isinstance(source, ImageFolderSource) and not single:
                out["image"] = frame.name
            print(json.dumps(out), flush=True)
    return 0
