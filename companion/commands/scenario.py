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
    run.add_argument("--game", metavar="GAME.db", help="record its events into this game file (a new one)")
    run.add_argument("--through-camera", action="store_true",
                     help="play it as a table plays it: cars moved in rendered frames and tracked, every step "
                          "through the page's requests; expected poses match within 1 mm and 1 degree")
    run.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    import sys

    from ..scenario import ScenarioError, ScenarioStopped, check_expectations, load_scenario, run_scenario

    store = None
    stopped = None
    try:
        data = load_scenario(args.file)
        if args.game:
            from ..store import GameStore, StoreError
            try:
                store = GameStore(args.game)
            except StoreError as exc:
                raise CommandError(str(exc)) from None
        if args.through_camera:
            from ..camera_scenario import run_through_camera
            outcome = run_through_camera(data, args.file, store=store)
        else:
            outcome = run_scenario(data, args.file, store)
    except ScenarioStopped as exc:
        # A step came out other than the file says: what was played up to it is still
        # printed and, with --check, every expectation is reported, not just this one.
        stopped, outcome = exc, exc.outcome
        if not args.check:
            outcome.pop("log", None)
            print(json.dumps(outcome))
            raise CommandError(str(exc)) from None
    except ScenarioError as exc:
        raise CommandError(str(exc)) from None
    finally:
        if store is not None:
            store.close()
    outcome.pop("log", None)
    print(json.dumps(outcome))
    if args.check:
        if args.through_camera:
            from ..camera_scenario import POSE_TOLERANCE
            wrong = check_expectations(data, outcome, POSE_TOLERANCE)
        else:
            wrong = check_expectations(data, outcome)
        total = len(data.get("expect") or {})
        if stopped is not None:
            print(f"companion: {stopped}", file=sys.stderr)
        for w in wrong:
            print(f"companion: {args.file}: {w}", file=sys.stderr)
        if not total:
            print(f"companion: {args.file}: nothing to check: the scenario has no \"expect\"", file=sys.stderr)
            return 1
        how = " through the camera" if args.through_camera else ""
        verdict = "failed" if wrong or stopped else "passed"
        print(f"companion: {args.file}: {verdict}{how}: {total - len(wrong)} of {total} expectations held"
              + (" (the run stopped at the step above)" if stopped else ""), file=sys.stderr)
        return 1 if wrong or stopped else 0
    return 0
