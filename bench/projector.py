"""The projector's light on the tracked table: does tracking keep its figures, and does
the camera see the light where the rules put it?

    python -m bench.projector [--seeds 4] [--seed 500] [--frames 4] [--levels easy,hard]

For each level (bench/scenes.py: "hard" is the webcam-like rendering: noise 5, blur,
a light gradient, JPEG 75), `--seeds` bench tables with 12 cars, a webcam at a random
offset and the demo's synthetic projector (vision/projector_sim.py demo_projector:
off-centre, tilted, lens-shifted, barrel) over each. Every frame of cars at random
poses is rendered four times with the same sensor noise: without the projector;
with a busy projected scene (a move template ahead of every car, weapon arcs, a grid
of squares over the whole table) and the companion's masks (companion/projector_scene.py:
every roof marker and anchor, a roof's mask also where the light toward the roof
leaves the projector); the same with the roof masks laid on the table only (no
parallax); and with no masks. Each frame is located alone (as bench/accuracy.py and
bench/sigma.py do) and, per variant: cars found over cars in view, position and
heading error p95, the share of errors within 2 sigma. The projector draws through a
model fitted to the synthetic projector itself (what is measured here is tracking
under light, not the calibration: tests/test_projector_accuracy.py measures that).

The shared machinery (the busy scene, finding a thrown edge in a camera frame) is used
by tests/test_projector_accuracy.py too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time

import cv2
import numpy as np

from calibration.projector import ProjectorModel, fit_projector, table_fingerprint
from companion.projector import ProjectorDisplay, TableShape
from vision.locate import Locator
from vision.projector_sim import LightMaps, SyntheticProjector, demo_projector, rasterize
from vision.render import CarTruth, TableRenderer

# --- the scene the projector throws (table mm) ---------------------------------------------


def rect(cx: float, cy: float, heading_deg: float, length: float, width: float) -> tuple:
    """A rectangle's corners (table mm) centred at (cx, cy), its length along the heading."""
    t = math.radians(heading_deg)
    f, left = np.array([math.cos(t), math.sin(t)]), np.array([-math.sin(t), math.cos(t)])
    c = np.array([cx, cy])
    return tuple(tuple(map(float, c + sf * length / 2 * f + sl * width / 2 * left))
                 for sf, sl in ((1, 1), (1, -1), (-1, -1), (-1, 1)))


def template(x: float, y: float, heading_deg: float, length: float = 150.0, width: float = 40.0,
             label: str = "move template") -> TableShape:
    """A straight move template laid from a point along a heading (its near end at the point)."""
    t = math.radians(heading_deg)
    cx, cy = x + length / 2 * math.cos(t), y + length / 2 * math.sin(t)
    return TableShape("template", rect(cx, cy, heading_deg, length, width), label=label)


def arc(x: float, y: float, heading_deg: float, reach: float = 250.0, half_deg: float = 30.0,
        label: str = "weapon arc") -> TableShape:
    """A weapon's arc: a sector from (x, y), `half_deg` either side of the heading, out to its reach."""
    angles = np.radians(heading_deg + np.linspace(-half_deg, half_deg, int(2 * half_deg / 2) + 1))
    rim = [(x + reach * math.cos(a), y + reach * math.sin(a)) for a in angles]
    return TableShape("arc", ((x, y), *rim), label=label)


def squares(width_mm: float, depth_mm: float, anchors, side: float = 40.0, nx: int = 11, ny: int = 7,
            clear_mm: float = 12.0) -> list[TableShape]:
    """A grid of squares over the whole table, edge to edge, leaving out those over an
    anchor (a mask would cut them): the near and far corners are reached by squares
    beside the corner anchors."""
    out = []
    for y in np.linspace(side / 2 + 8, depth_mm - side / 2 - 8, ny):
        for x in np.linspace(side / 2 + 8, width_mm - side / 2 - 8, nx):
            # An anchor's sticker is its marker and half as much again of white margin.
            reach = lambda a: 0.75 * a.size_mm + clear_mm + side / 2  # noqa: E731
            if any(abs(x - a.x_mm) < reach(a) and abs(y - a.y_mm) < reach(a) for a in anchors):
                continue
            out.append(TableShape("square", rect(float(x), float(y), 0.0, side, side), label="square"))
    return out


def masks(table, poses, flat: bool = False) -> list[TableShape]:
    """The companion's own masks (companion/projector_scene.py: black over every roof
    marker and anchor, a margin wider; a roof's mask carries its height, so the display
    also covers where the projector's light toward the roof leaves it) for cars standing
    at `poses`. `flat`: the roof masks laid on the table only (no parallax), to show what
    that height is for."""
    from companion.projector_scene import build_scene

    live = {"cars": [{"id": p.id, "x_mm": p.x_mm, "y_mm": p.y_mm, "heading_deg": p.heading_deg} for p in poses]}
    out = [s for s in build_scene(None, None, live, table) if s.role == "mask"]
    return [dataclasses.replace(s, z_mm=0.0) for s in out] if flat else out


def busy_scene(table, poses, with_masks: bool = True, arcs_every: int = 2, flat_masks: bool = False
               ) -> list[TableShape]:
    """What a busy turn throws: a template ahead of every car, arcs from every other car,
    squares over the whole table, and (normally) the masks."""
    shapes = []
    for k, p in enumerate(poses):
        spec = table.car(p.id)
        t = math.radians(p.heading_deg)
        front = (p.x_mm + spec.length_mm / 2 * math.cos(t), p.y_mm + spec.length_mm / 2 * math.sin(t))
        shapes.append(template(*front, p.heading_deg, label=f"{spec.name}'s move template"))
        if k % arcs_every == 0:
            shapes.append(arc(*front, p.heading_deg + 180.0 * (k % 4 == 2), label=f"{spec.name}'s arc"))
    shapes += squares(table.width_mm, table.depth_mm, table.anchors)
    if with_masks:
        shapes += masks(table, poses, flat=flat_masks)
    return shapes


# --- the projector's model ------------------------------------------------------------------


def exact_model(table, projector: SyntheticProjector, step_mm: float = 40.0) -> ProjectorModel:
    """The model fitted straight to the synthetic projector (no camera in between)."""
    xs = np.arange(0, table.width_mm + 1, step_mm)
    ys = np.arange(0, table.depth_mm + 1, step_mm)
    pts = np.array([(x, y) for y in ys for x in xs], float)
    return fit_projector(pts, projector.table_to_projector(pts), projector.size_px, table_fingerprint(table))


def lit_frame(renderer: TableRenderer, maps: LightMaps, display: ProjectorDisplay, scene, cars, seed: int):
    """The camera's frame with the projector throwing `scene` (and the projector's image)."""
    shapes = display.frame(scene)["shapes"]
    thrown = rasterize(shapes, maps.projector.size_px)
    return renderer.render(cars, np.random.default_rng(seed), projected=(maps, thrown)), thrown


# --- the camera measuring the light -------------------------------------------------------


def grey(image: np.ndarray) -> np.ndarray:
    return image.astype(np.float32).mean(axis=2) if image.ndim == 3 else image.astype(np.float32)


def edge_samples(shape: TableShape, step_mm: float = 10.0, keep_off_mm: float = 6.0):
    """Points along each edge of a shape (table mm) with the edge's unit normal, kept
    `keep_off_mm` from its corners (where two strokes meet the peak is not one edge's)."""
    pts = np.asarray(shape.points_mm, float)
    ends = np.vstack([pts, pts[:1]]) if shape.closed else pts
    out = []
    for a, b in zip(ends[:-1], ends[1:]):
        length = float(np.hypot(*(b - a)))
        if length < 1e-9:
            continue
        d = (b - a) / length
        n = np.array([-d[1], d[0]])
        if length <= 2 * keep_off_mm + 1:
            if length >= 4.0:              # a short piece of an arc's rim: its middle
                out.append((a + d * length / 2, n))
            continue
        for s in np.arange(keep_off_mm, length - keep_off_mm + 1e-9, step_mm):
            out.append((a + d * s, n))
    return out


def _segments(shapes) -> np.ndarray:
    from companion.projector_watch import segments
    return np.concatenate([segments(s) for s in shapes] or [np.zeros((0, 2, 2))])


def _distance_to_segments(p: np.ndarray, segs: np.ndarray) -> np.ndarray:
    a, b = segs[:, 0], segs[:, 1]
    ab = b - a
    t = np.clip(np.einsum("ij,ij->i", p - a, ab) / np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-12), 0, 1)
    return np.hypot(*(a + t[:, None] * ab - p).T)


def find_stroke(diff: np.ndarray, pose, point_mm: np.ndarray, normal: np.ndarray, search_mm: float = 5.0,
                step_mm: float = 0.1, min_peak: float = 8.0) -> float | None:
    """Where, along the normal through `point_mm`, the camera sees the stroke: the
    sub-pixel centre of the light's peak in `diff` (the lit frame minus the unlit one),
    found in camera pixels and taken back to table mm on z = 0 through the camera model
    and the table's pose. Returns the signed offset (mm) from `point_mm`, or None when no
    light stands out there."""
    t = np.arange(-search_mm, search_mm + step_mm / 2, step_mm)
    line = point_mm + t[:, None] * normal
    px = pose.image_from_table(np.column_stack([line, np.zeros(len(t))])).astype(np.float32)
    prof = cv2.remap(diff, px[:, 0].reshape(1, -1), px[:, 1].reshape(1, -1), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=0).ravel()
    k = int(np.argmax(prof))
    floor = float(np.percentile(prof, 10))
    peak = float(prof[k]) - floor
    if peak < min_peak or k in (0, len(t) - 1):
        return None
    # The peak's centre in camera pixels: the weighted middle of what stands above half of it.
    half = floor + peak / 2
    lo, hi = k, k
    while lo > 0 and prof[lo - 1] > half:
        lo -= 1
    while hi < len(t) - 1 and prof[hi + 1] > half:
        hi += 1
    w = prof[lo:hi + 1] - half
    centre_px = (px[lo:hi + 1] * w[:, None]).sum(axis=0) / w.sum()
    seen = pose.table_from_image(centre_px.reshape(1, 2))[0]
    return float((seen - point_mm) @ normal)


def edge_errors(diff: np.ndarray, pose, shapes, avoid=(), step_mm: float = 10.0, clear_mm: float = 7.0):
    """Every sampled point of every shape's edges: (shape label, point, offset mm or None).
    Points within `clear_mm` of another shape's stroke, or inside an `avoid` box
    (x0, y0, x1, y1: a car, a mask) are left out: the peak there is not this edge's alone."""
    out = []
    for i, shape in enumerate(shapes):
        others = _segments([s for j, s in enumerate(shapes) if j != i])
        for p, n in edge_samples(shape, step_mm):
            if len(others) and _distance_to_segments(p, others).min() < clear_mm:
                continue
            if any(x0 <= p[0] <= x1 and y0 <= p[1] <= y1 for x0, y0, x1, y1 in avoid):
                continue
            out.append((shape.label, p, find_stroke(diff, pose, p, n)))
    return out


# --- the benchmark ----------------------------------------------------------------------------

#: Without the projector; with the companion's masks (over each marker and where the
#: light toward its roof leaves the projector); with the roof masks on the table only
#: (no parallax); with no masks at all.
VARIANTS = ("off", "on, masked", "on, masks on the table only", "on, no masks")


def _heading_error(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def measure(level: str, seeds: list[int], frames: int, cars: int = 12) -> dict:
    """Per variant: cars found, position/heading p95, share within 2 sigma (single frames)."""
    from .scenes import random_poses, random_scene

    rows = {v: {"found": 0, "in_view": 0, "pos": [], "head": [], "cov_pos": [], "cov_head": []} for v in VARIANTS}
    for seed in seeds:
        scene = random_scene(level, cars, seed)
        table, renderer = scene.table, scene.renderer
        projector = demo_projector(table)
        maps = LightMaps(renderer, projector)
        display = ProjectorDisplay(exact_model(table, projector))
        locator = Locator(table, renderer.camera)
        rng = np.random.default_rng(seed + 7)
        for i in range(frames):
            poses = random_poses(table, rng)
            noise = int(rng.integers(1 << 30))       # the same sensor noise for the three variants
            for v in VARIANTS:
                if v == "off":
                    frame = renderer.render(poses, np.random.default_rng(noise))
                else:
                    scene = busy_scene(table, poses, with_masks=v != "on, no masks",
                                       flat_masks=v == "on, masks on the table only")
                    frame, _ = lit_frame(renderer, maps, display, scene, poses, noise)
                located = locator.locate(frame.image)
                r = rows[v]
                r["in_view"] += len(frame.visible_cars)
                r["found"] += len({c.id for c in located.cars} & set(frame.visible_cars))
                for car in located.cars:
                    t = frame.cars[car.id]
                    d = math.hypot(car.x_mm - t.x_mm, car.y_mm - t.y_mm)
                    h = _heading_error(car.heading_deg, t.heading_deg)
                    r["pos"].append(d)
                    r["head"].append(h)
                    r["cov_pos"].append(d <= 2 * car.sigma_mm)
                    r["cov_head"].append(h <= 2 * car.sigma_deg)
    out = {"level": level, "seeds": seeds, "frames": frames}
    for v, r in rows.items():
        p = lambda xs, q=95: round(float(np.percentile(xs, q)), 3) if xs else None  # noqa: E731
        out[v] = {"cars_found": f"{r['found']} of {r['in_view']}",
                  "found_share": round(r["found"] / max(r["in_view"], 1), 4),
                  "position_p95_mm": p(r["pos"]), "heading_p95_deg": p(r["head"]),
                  "within_2_sigma": [round(float(np.mean(r["cov_pos"])), 3) if r["cov_pos"] else None,
                                     round(float(np.mean(r["cov_head"])), 3) if r["cov_head"] else None]}
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--seed", type=int, default=500, help="first scene's seed")
    ap.add_argument("--frames", type=int, default=4, help="frames of random poses per scene")
    ap.add_argument("--cars", type=int, default=12)
    ap.add_argument("--levels", default="easy,hard", help="bench/scenes.py levels, comma-separated")
    args = ap.parse_args(argv)
    seeds = list(range(args.seed, args.seed + args.seeds))
    for level in args.levels.split(","):
        t0 = time.process_time()
        res = measure(level, seeds, args.frames, args.cars)
        res["cpu_s"] = round(time.process_time() - t0, 1)
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
