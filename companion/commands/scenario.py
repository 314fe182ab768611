"""`companion scenario run FILE`: play a scenario's steps and print what happened."""

from __future__ import annotations

import argparse
import json

from . import CommandError


def register(sub) -> None:
    p = sub.add_parser("scenario", help="play a scenario file (rosters, actions, dice) and print the outcome",
                       description="Scenario files: docs/scenarios.md.")
    kinds = p.add_subparsers(dest="scenario_command", metavar="WHAT", required=True)
    run = kinds.add_parser("run", help="play it and print the outcome as JSON")
    run.add_argument("file", metavar="FILE", help="the scenario (JSON)")
    run.add_argument("--check", action="store_true", help="also check its \"expect\"; exit 1 when it differs")
    run.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from ..scenario import ScenarioError, check_expectations, load_scenario, run_scenario

    try:
        data = load_scenario(args.file)
        outcome = run_scenario(data, args.file)
    except ScenarioError as exc:
        raise CommandError(str(exc)) from None
    outcome.pop("log", None)
    print(json.dumps(outcome))
    if args.check:
        wrong = check_expectations(data, outcome)
        for w in wrong:
            print(f"companion: {args.file}: {w}", file=__import__("sys").stderr)
        return 1 if wrong else 0
    return 0
