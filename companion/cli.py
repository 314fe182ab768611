"""The `companion` command: argument parsing and error reporting.

Each subcommand lives in `companion/commands/`; here they are gathered, and
every error the user can fix is printed as one line naming the problem.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from calibration.camera import CameraFileError
from calibration.table_pose import TablePoseError
from calibration.tablefile import TableFileError
from vision.detect import DetectionError
from vision.sources import SourceError

from .dice import DiceError
from .rules.base import RulesError
from .scene import SceneError

from .commands import CommandError, register_all

#: Errors that are the user's to fix: printed as one line, never a traceback.
USER_ERRORS = (TableFileError, CameraFileError, TablePoseError, SourceError, DetectionError, SceneError,
               RulesError, DiceError, CommandError)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="The table companion: tracks diecast cars on a real table by the ArUco "
                    "markers on their roofs and shows them on a web page.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    register_all(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except USER_ERRORS as exc:
        print(f"companion: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
