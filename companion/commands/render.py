"""`companion render`: the demo game on a synthetic table, to an image or a video."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from calibration.tablefile import TableSpec, load_table

from . import CommandError


def register(sub) -> None:
    p = sub.add_parser("render", help="render the demo game on a synthetic table to an image or video",
                       description="Render frames of the scripted demo game as a webcam 1.1 m above the table would see them.")
    p.add_argument("output", help="an image (.png, .jpg) or a video (.avi, .mp4)")
    p.add_argument("--table", help="the table file (default: the built-in demo table)")
    p.add_argument("--seconds", type=float, default=3.0, help="video length (default 3)")
    p.add_argument("--fps", type=float, default=15.0, help="video frame rate (default 15)")
    p.add_argument("--start", type=float, default=0.0, help="the game time of the first frame, in seconds")
    p.add_argument("--seed", type=int, default=0, help="seed for the sensor noise")
    p.add_argument("--camera-out", help="also write the synthetic camera's calibration YAML here")
    p.add_argument("--truth", help="also write the true poses here, one JSON line per frame")
    p.set_defaults(func=cmd_render)


def cmd_render(args: argparse.Namespace) -> int:
    import cv2

    from vision.demo import DemoScript, demo_table
    from vision.render import RenderOptions, TableRenderer

    table: TableSpec = load_table(args.table) if args.table else demo_table()
    renderer = TableRenderer.overhead(table, options=RenderOptions(), seed=args.seed)
    script = DemoScript(table)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    truth_lines = []
    if out.suffix.lower() in {".png", ".jpg", ".jpeg", ".bmp"}:
        frame = renderer.render(script.poses_at(args.start))
        if not cv2.imwrite(str(out), frame.image):
            raise CommandError(f"{out}: could not write the image")
        truth_lines.append(_truth_json(0, frame))
    else:
        w, h = renderer.camera.image_size
        fourcc = cv2.VideoWriter_fourcc(*("mp4v" if out.suffix.lower() == ".mp4" else "MJPG"))
        writer = cv2.VideoWriter(str(out), fourcc, args.fps, (w, h))
        if not writer.isOpened():
            raise CommandError(f"{out}: cannot write a video of that kind (try .avi or .mp4)")
        n = max(int(args.seconds * args.fps), 1)
        for i in range(n):
            frame = renderer.render(script.poses_at(args.start + i / args.fps))
            writer.write(frame.image)
            truth_lines.append(_truth_json(i, frame))
        writer.release()
    if args.camera_out:
        renderer.camera.to_yaml(args.camera_out)
    if args.truth:
        Path(args.truth).write_text("".join(json.dumps(t) + "\n" for t in truth_lines))
    print(f"wrote {out}" + (f", camera {args.camera_out}" if args.camera_out else "")
          + (f", truth {args.truth}" if args.truth else ""))
    return 0


def _truth_json(index: int, frame) -> dict:
    return {"frame": index, "cars": [{"id": c.id, "x_mm": round(c.x_mm, 3), "y_mm": round(c.y_mm, 3),
                                      "heading_deg": round(c.heading_deg, 3)}
                                     for c in frame.cars.values()]}


