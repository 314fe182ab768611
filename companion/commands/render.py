"""`companion render`: the demo game on a synthetic table, to an image or a video."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from calibration.tablefile import TableSpec, load_table

from . import CommandError


def register(sub) -> None:
    p = sub.add_parser("render", help="render the demo game on a synthetic table to an image or video",
                       description="Render frames of the scripted demo game as a webcam 1.1 m above the table would see "
                                   "them (with --cameras 2 or 3: as that many 1080p webcams, each over a strip of a "
                                   "6 x 4 ft table, would see them, with the table file to serve them with).")
    p.add_argument("output", help="an image (.png, .jpg) or a video (.avi, .mp4)")
    p.add_argument("--table", help="the table file (default: the built-in demo table)")
    p.add_argument("--seconds", type=float, default=3.0, help="video length (default 3)")
    p.add_argument("--fps", type=float, default=15.0, help="video frame rate (default 15)")
    p.add_argument("--start", type=float, default=0.0, help="the game time of the first frame, in seconds")
    p.add_argument("--seed", type=int, default=0, help="seed for the sensor noise")
    p.add_argument("--camera-out", help="also write the synthetic camera's calibration YAML here")
    p.add_argument("--truth", help="also write the true poses here, one JSON line per frame")
    p.add_argument("--cameras", type=int, default=1, choices=(1, 2, 3),
                   help="render through this many 1080p cameras, each over a strip of the table (default 1); "
                        "with 2 or 3 the built-in table is 6 x 4 ft, and OUTPUT, --camera-out get -camera1, "
                        "-camera2, ... before their suffix, and the table file is written beside OUTPUT "
                        "(OUTPUT's name with -table.toml) unless --table names one")
    p.set_defaults(func=cmd_render)


def cmd_render(args: argparse.Namespace) -> int:
    from vision.demo import demo_table
    from vision.render import RenderOptions, TableRenderer

    if args.cameras > 1:
        return _render_cameras(args)
    table: TableSpec = load_table(args.table) if args.table else demo_table()
    renderer = TableRenderer.overhead(table, options=RenderOptions(), seed=args.seed)
    return _render(args, table, renderer, Path(args.output), args.camera_out, args.truth)


def _render_cameras(args: argparse.Namespace) -> int:
    """The demo game through several cameras over strips of the table, one output each."""
    from vision.demo import big_demo_table
    from vision.multicam import demo_renderers
    from vision.render import RenderOptions

    table: TableSpec = load_table(args.table) if args.table else big_demo_table()
    out = Path(args.output)
    for i, renderer in enumerate(demo_renderers(table, args.cameras, RenderOptions(), seed=args.seed)):
        tag = f"-camera{i + 1}"
        camera_out = Path(args.camera_out) if args.camera_out else None
        _render(args, table, renderer, out.with_name(out.stem + tag + out.suffix),
                camera_out.with_name(camera_out.stem + tag + camera_out.suffix) if camera_out else None,
                args.truth if i == 0 else None)
    if not args.table:
        # The frames are of the built-in table, which no file holds: without it they cannot be served.
        table_out = out.with_name(out.stem + "-table.toml")
        table_out.write_text(table_toml(table))
        print(f"wrote {table_out} (serve the frames with --table {table_out})")
    return 0


def table_toml(table: TableSpec) -> str:
    """The table file (as calibration.tablefile reads it) of `table`: its size, anchors, cars,
    terrain and point gates."""
    def num(v: float) -> str:
        return repr(float(v))
    parts = [f'[table]\nwidth_mm = {num(table.width_mm)}\ndepth_mm = {num(table.depth_mm)}\n'
             f'dictionary = "{table.dictionary}"\nroof_sigma_mm = {num(table.roof_sigma_mm)}\n']
    for a in table.anchors:
        parts.append(f"[[anchor]]\nid = {a.id}\nx_mm = {num(a.x_mm)}\ny_mm = {num(a.y_mm)}\n"
                     f"size_mm = {num(a.size_mm)}\nrotation_deg = {num(a.rotation_deg)}\n")
    for c in table.cars:
        parts.append(f"[[car]]\nid = {c.id}\nname = {json.dumps(c.name)}\nlength_mm = {num(c.length_mm)}\n"
                     f"width_mm = {num(c.width_mm)}\nroof_mm = {num(c.roof_mm)}\nmarker_mm = {num(c.marker_mm)}\n"
                     f"offset_mm = [{num(c.offset_mm[0])}, {num(c.offset_mm[1])}]\n")
    for t in table.terrain:
        points = ", ".join(f"[{num(x)}, {num(y)}]" for x, y in t.points)
        parts.append(f"[[terrain]]\nname = {json.dumps(t.name)}\nkind = {json.dumps(t.kind)}\n"
                     f"points = [{points}]\n")
    return "\n".join(parts)


def _render(args, table, renderer, out: Path, camera_out, truth_path) -> int:
    import cv2

    from vision.demo import DemoScript
    script = DemoScript(table)
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
    if camera_out:
        renderer.camera.to_yaml(camera_out)
    if truth_path:
        Path(truth_path).write_text("".join(json.dumps(t) + "\n" for t in truth_lines))
    print(f"wrote {out}" + (f", camera {camera_out}" if camera_out else "")
          + (f", truth {truth_path}" if truth_path else ""))
    return 0


def _truth_json(index: int, frame) -> dict:
    return {"frame": index, "cars": [{"id": c.id, "x_mm": round(c.x_mm, 3), "y_mm": round(c.y_mm, 3),
                                      "heading_deg": round(c.heading_deg, 3)}
                                     for c in frame.cars.values()]}


