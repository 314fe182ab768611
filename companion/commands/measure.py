"""`companion measure SCENE.json`: every pair of cars in a snapshot, measured."""

from __future__ import annotations

import argparse
import json


def register(sub) -> None:
    p = sub.add_parser("measure", help="measure every pair of cars in a scene file (distances, arcs, sight) as JSON",
                       description="Read a table snapshot (a scene file: rules, table, cars with their poses and "
                                   "footprints, terrain; examples/scenes/ holds some) and print the "
                                   "measurements between every pair of cars.")
    p.add_argument("scene", metavar="SCENE.json", help="the scene file")
    p.add_argument("--sight", choices=("any", "centre"), default="any",
                   help="line of sight between any parts (default) or centre to centre")
    p.add_argument("--cars-block-sight", action="store_true", help="other cars block line of sight too")
    p.add_argument("--grazing-blocks", action="store_true",
                   help="a line touching an obstacle's edge counts as blocked")
    p.set_defaults(func=cmd_measure)


def cmd_measure(args: argparse.Namespace) -> int:
    from ..measurements import measure_pairs
    from ..scene import load_scene

    scene = load_scene(args.scene)
    pairs = measure_pairs(scene, sight_mode=args.sight, cars_block_sight=args.cars_block_sight,
                          grazing_blocks=args.grazing_blocks)
    print(json.dumps({"rules": scene.rules, "pairs": pairs}))
    return 0
