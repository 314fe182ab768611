"""`companion rules list|judge-move`: the rule systems and their readings; judging a move."""

from __future__ import annotations

import argparse
import json

from . import CommandError


def register(sub) -> None:
    p = sub.add_parser("rules", help="list the rule systems and their options; judge a move",
                       description="The rule systems the companion serves, with the readings of "
                                   "ambiguous rules each takes.")
    kinds = p.add_subparsers(dest="rules_command", metavar="WHAT", required=True)
    listing = kinds.add_parser("list", help="each rule system, with its options and the rules they read")
    listing.add_argument("--json", action="store_true", help="as JSON")
    listing.set_defaults(func=cmd_list)
    judge = kinds.add_parser("judge-move", help="is a Move from the scene's pose to another legal?",
                             description="Prints {\"legal\", \"reasons\", ...} for the Move action.")
    judge.add_argument("scene", metavar="SCENE.json", help="a scene file whose cars give their 'class'")
    judge.add_argument("--car", type=int, required=True, help="the moving car's id")
    judge.add_argument("--to", required=True, metavar="X_MM,Y_MM,HEADING_DEG", help="where it ends")
    judge.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                       help="a rule option (JSON value), e.g. template_keeps=\"whole_car\"")
    judge.set_defaults(func=cmd_judge)


def cmd_list(args: argparse.Namespace) -> int:
    from ..rules.base import rule_systems

    systems = [cls().describe() for cls in rule_systems()]
    if args.json:
        print(json.dumps({"rules": systems}, indent=1))
        return 0
    for s in systems:
        print(f"{s['name']}: {s['title']} ({s['rulebook']})")
        for o in s["options"]:
            choices = f" [{', '.join(map(str, o['choices']))}]" if o["choices"] else ""
            print(f"  {o['name']} = {o['default']!r}{choices}")
            print(f"      {o['rule']}: {o['doc']}")
    return 0


def _options(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            out[name] = value
    return out


def cmd_judge(args: argparse.Namespace) -> int:
    from ..geometry import Pose
    from ..rules.base import RulesError, rule_system
    from ..scene import load_scene

    scene = load_scene(args.scene)
    raw = json.loads(open(args.scene, encoding="utf-8").read())
    try:
        x, y, h = (float(v) for v in args.to.split(","))
    except ValueError:
        raise CommandError(f"--to {args.to}: give X_MM,Y_MM,HEADING_DEG, e.g. 400,300,0") from None
    rules = rule_system(scene.rules, _options(args.option))
    try:
        state = (rules.new_game(raw["rosters"], scene) if raw.get("rosters")
                 else rules.game_from_scene(scene, raw["cars"]))
    except RulesError as exc:
        raise CommandError(f"{args.scene}: {exc}") from None
    pieces = rules.pieces(state)
    if args.car not in pieces or pieces[args.car].pose is None:
        raise CommandError(f"{args.scene}: no car {args.car} on the table")
    judged = rules.judge_move(state, args.car, Pose(x, y, h))
    if judged is None:
        raise CommandError(f"{rules.title} judges no move by where a car ends: its moves are resolved as they are played")
    print(json.dumps(judged))
    return 0
