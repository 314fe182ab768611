"""`companion markers board|anchors|cars`: printable marker sheets at exact size, as SVG."""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable
from pathlib import Path

from calibration import sheets
from calibration.sheets import SheetError
from calibration.tablefile import load_table

from . import CommandError


def register(sub) -> None:
    p = sub.add_parser("markers", help="write printable marker sheets (ChArUco board, anchors, car roofs) as SVG",
                       description="Write marker sheets at exact physical size as SVG pages. Print them at "
                                   "100 % / actual size and check the 100 mm line on each page.")
    kinds = p.add_subparsers(dest="sheet", metavar="SHEET", title="sheets", required=True)

    board = kinds.add_parser("board", help="the ChArUco board for camera calibration",
                             description="One page with a ChArUco board drawn from OpenCV's CharucoBoard "
                                         "geometry. The defaults fit A4 and US Letter.")
    board.add_argument("--squares-x", type=int, default=sheets.DEFAULT_BOARD_SQUARES_X,
                       help=f"squares across (default {sheets.DEFAULT_BOARD_SQUARES_X})")
    board.add_argument("--squares-y", type=int, default=sheets.DEFAULT_BOARD_SQUARES_Y,
                       help=f"squares down (default {sheets.DEFAULT_BOARD_SQUARES_Y})")
    board.add_argument("--square-mm", type=float, default=sheets.DEFAULT_BOARD_SQUARE_MM,
                       help=f"side of a square in mm (default {sheets.DEFAULT_BOARD_SQUARE_MM:g})")
    board.add_argument("--marker-mm", type=float, default=sheets.DEFAULT_BOARD_MARKER_MM,
                       help=f"side of a marker in mm (default {sheets.DEFAULT_BOARD_MARKER_MM:g})")
    board.add_argument("--dictionary", default=sheets.DEFAULT_BOARD_DICTIONARY,
                       help=f"ArUco dictionary (default {sheets.DEFAULT_BOARD_DICTIONARY})")
    _common(board)
    board.set_defaults(func=cmd_board)

    anchors = kinds.add_parser("anchors", help="a table file's anchor markers, each at its size",
                               description="The anchors of a table file at their size_mm, with their ids, "
                                           "where each goes, and an arrow to the table's far side (+y).")
    anchors.add_argument("--table", required=True, help="the table file (TOML)")
    _quiet(anchors, sheets.DEFAULT_ANCHOR_QUIET_CELLS)
    _common(anchors)
    anchors.set_defaults(func=cmd_anchors)

    cars = kinds.add_parser("cars", help="car roof markers, by id range or from a table file",
                            description="Roof markers with a white margin, cut lines and an arrow to the "
                                        "car's front; give --ids (and --size), or --table for its cars.")
    cars.add_argument("--ids", help="marker ids, e.g. 10-29 or 10,12,14-16")
    cars.add_argument("--size", type=float, metavar="MM",
                      help=f"side of each marker in mm (default {sheets.DEFAULT_CAR_MARKER_MM:g})")
    cars.add_argument("--dictionary", help=f"ArUco dictionary (default {sheets.DEFAULT_MARKER_DICTIONARY})")
    cars.add_argument("--table", help="print the cars of this table file, each at its marker_mm, instead")
    _quiet(cars, sheets.DEFAULT_QUIET_CELLS)
    _common(cars)
    cars.set_defaults(func=cmd_cars)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", type=str.lower, choices=sorted(sheets.PAPER_SIZES_MM), default="a4",
                   help="paper size (default a4)")
    p.add_argument("--out", help="a .svg file or a folder (default: the current folder); "
                                 "several pages get -p1, -p2, ... added")


def _quiet(p: argparse.ArgumentParser, default: int) -> None:
    p.add_argument("--quiet-cells", type=int, default=default,
                   help=f"white margin around each marker, in marker cells (default {default})")


def _sheet_errors(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Report a sheet that cannot be made as one line, like every other user error."""
    @functools.wraps(func)
    def wrapper(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except SheetError as exc:
            raise CommandError(str(exc)) from None
    return wrapper


@_sheet_errors
def cmd_board(args: argparse.Namespace) -> int:
    svg = sheets.charuco_sheet(args.squares_x, args.squares_y, args.square_mm, args.marker_mm,
                               args.dictionary, paper=args.paper)
    stem = f"charuco-{args.squares_x}x{args.squares_y}-{args.square_mm:g}mm-{args.paper}"
    _write([svg], args.out, stem)
    return 0


@_sheet_errors
def cmd_anchors(args: argparse.Namespace) -> int:
    table = load_table(args.table)
    pages = sheets.anchor_sheets(table, paper=args.paper, quiet_cells=args.quiet_cells)
    _write(pages, args.out, f"{Path(args.table).stem}-anchors-{args.paper}")
    return 0


@_sheet_errors
def cmd_cars(args: argparse.Namespace) -> int:
    if args.table:
        clashing = [opt for opt, value in (("--ids", args.ids), ("--size", args.size),
                                           ("--dictionary", args.dictionary)) if value is not None]
        if clashing:
            raise CommandError(f"{', '.join(clashing)} cannot be combined with --table "
                               f"(the table file gives its cars' ids, sizes and dictionary)")
        table = load_table(args.table)
        pages = sheets.table_car_sheets(table, paper=args.paper, quiet_cells=args.quiet_cells)
        stem = f"{Path(args.table).stem}-cars-{args.paper}"
    else:
        if args.ids is None:
            raise CommandError("say which cars: --ids 10-29 (with --size MM), or --table T.toml")
        size_mm = sheets.DEFAULT_CAR_MARKER_MM if args.size is None else args.size
        ids = sheets.parse_ids(args.ids)
        pages = sheets.car_sheets(ids, size_mm, paper=args.paper, quiet_cells=args.quiet_cells,
                                  dictionary_name=args.dictionary or sheets.DEFAULT_MARKER_DICTIONARY)
        id_part = f"{ids[0]}-{ids[-1]}" if len(ids) > 1 else f"{ids[0]}"
        stem = f"cars-{id_part}-{size_mm:g}mm-{args.paper}"
    _write(pages, args.out, stem)
    return 0


def _targets(out: str | None, stem: str, count: int) -> list[Path]:
    """The file each page goes to: `out` is a .svg file or a folder (made if missing)."""
    if out is None:
        folder, stem_here = Path.cwd(), stem
    else:
        p = Path(out)
        if p.is_dir() or out.endswith(("/", os.sep)) or (not p.exists() and p.suffix == ""):
            folder, stem_here = p, stem
        elif p.suffix.lower() == ".svg":
            folder, stem_here = p.parent, p.stem
        else:
            raise CommandError(f"--out {out}: give a folder or a file name ending in .svg")
    if count == 1:
        return [folder / f"{stem_here}.svg"]
    return [folder / f"{stem_here}-p{n}.svg" for n in range(1, count + 1)]


def _write(pages: list[str], out: str | None, stem: str) -> None:
    paths = _targets(out, stem, len(pages))
    try:
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        for path, svg in zip(paths, pages):
            path.write_text(svg, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {exc.filename or paths[0]}: {exc.strerror or exc}") from None
    for path in paths:
        print(path, flush=True)
