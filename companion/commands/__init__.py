"""The `companion` command's subcommands: one module each, each with `register(sub)`.

A module adds its subcommand(s) to the argparse sub-parsers and sets `func`
to a function of the parsed arguments returning the exit status.  Errors the
user can fix are raised as the project's own error classes (or CommandError)
and printed as one line by `companion.cli`.
"""

from __future__ import annotations

import importlib

from calibration.camera import CameraModel

#: Subcommand modules, in the order `companion --help` lists them.
MODULES = ("serve", "locate", "render", "markers", "calibrate", "measure", "rules", "scenario", "tray", "audit",
           "doctor")


class CommandError(Exception):
    """A command that cannot go on; the message says why."""


def load_camera(path: str | None) -> CameraModel | None:
    return CameraModel.from_yaml(path) if path else None


def register_all(sub) -> None:
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
