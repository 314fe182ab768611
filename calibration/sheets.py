"""Printable marker sheets at exact physical size, as SVG.

Three kinds of sheet: the ChArUco board that calibrates the camera, the anchor
markers of a table file, and the cars' roof markers.  Every page is an SVG whose
root states its physical size (`width="210mm" height="297mm"
viewBox="0 0 210 297"` for A4), so one viewBox unit is one millimetre, and
every page carries a 100 mm check line: if the printout's line is not 100 mm
long, the printer scaled the page and the markers are the wrong size.

Markers are vector rectangles, one per run of black cells, taken from
`cv2.aruco.generateImageMarker` so they are exactly OpenCV's dictionary; the
board is drawn from `cv2.aruco.CharucoBoard`'s own geometry so it is exactly
what `cv2.aruco.CharucoDetector` expects.

Orientation (DESIGN.md): every marker is printed upright, its top edge (OpenCV's
corner 0 to corner 1) towards the top of the page, with an arrow above it
pointing at that edge.  An anchor's top edge faces the table's far side (+y); a
car's top edge goes towards the car's front.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

import cv2
import numpy as np

from .tablefile import DICTIONARY_SIZES, TableSpec

#: Paper sizes in millimetres, (width, height), portrait.
PAPER_SIZES_MM: dict[str, tuple[float, float]] = {
    "a4": (210.0, 297.0),
    "letter": (215.9, 279.4),
}
#: How a page of each size is named in messages.
PAPER_PAGE = {"a4": "an A4 page", "letter": "a US Letter page"}

#: Blank border on every side: most printers cannot print the outer 3-6 mm.
MARGIN_MM = 10.0
#: Header (title and instruction) and footer (the 100 mm check line) heights.
HEADER_MM = 13.0
FOOTER_MM = 12.0
CHECK_LINE_MM = 100.0

#: Cells of white around a marker, inside its cut line.  OpenCV finds a marker
#: by its black border's outline, which needs white around it; one cell is the
#: least that works, two survive a sloppy cut and a dark table mat.
DEFAULT_QUIET_CELLS = 2
#: Anchors are big (a 60 mm 4x4 marker has 10 mm cells, a dozen pixels on a
#: table view), so one cell of white is already a wide margin.
DEFAULT_ANCHOR_QUIET_CELLS = 1
#: Cells smaller than this neither print cleanly nor resolve on a webcam.
MIN_CELL_MM = 0.5

DEFAULT_CAR_MARKER_MM = 20.0
DEFAULT_MARKER_DICTIONARY = "DICT_4X4_50"

# Default ChArUco board.  5 x 7 squares of 30 mm is 150 x 210 mm: it fits both
# A4 (190 x 252 mm usable) and US Letter (195.9 x 234.4 mm usable) with the
# header and check line, and its 24 interior corners are plenty for one
# calibration view.  22 mm markers (0.73 of the square, near OpenCV's samples)
# leave 4 mm of white around each marker and cells of 3.1 mm, which a webcam
# resolves from a metre.  DICT_5X5_100 differs from the table's DICT_4X4_50, so
# a board left lying on the table is never taken for anchors or cars.
DEFAULT_BOARD_SQUARES_X = 5
DEFAULT_BOARD_SQUARES_Y = 7
DEFAULT_BOARD_SQUARE_MM = 30.0
DEFAULT_BOARD_MARKER_MM = 22.0
DEFAULT_BOARD_DICTIONARY = "DICT_5X5_100"

_FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"
# A sans-serif character is about 0.5-0.55 em wide on average; 0.6 errs on the
# wide side so estimated label widths never let neighbouring labels collide.
_CHAR_EM = 0.6
_CUT_STROKE = "#8c8c8c"
_CUT_WIDTH_MM = 0.2
_GAP_MM = 4.0          # between tiles, so each cut line can be cut on its own
_NAME_CHARS = 28       # longer car names are shortened on the label


class SheetError(ValueError):
    """A sheet that cannot be made as asked; the message names the problem."""


# --- small helpers -------------------------------------------------------------

def _n(value: float) -> str:
    """A coordinate in mm for SVG: 4 decimals (0.1 micrometre), no trailing zeros."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def paper_size_mm(paper: str) -> tuple[float, float]:
    """(width, height) of a paper size by name ("a4" or "letter", any case)."""
    key = str(paper).strip().lower()
    if key not in PAPER_SIZES_MM:
        raise SheetError(f"unknown paper '{paper}'; choose one of {', '.join(PAPER_SIZES_MM)}")
    return PAPER_SIZES_MM[key]


def aruco_dictionary(name: str) -> cv2.aruco.Dictionary:
    """OpenCV's predefined ArUco dictionary of that name (e.g. "DICT_4X4_50")."""
    if name not in DICTIONARY_SIZES:
        close = difflib.get_close_matches(str(name), sorted(DICTIONARY_SIZES), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise SheetError(f"unknown ArUco dictionary '{name}'{hint}")
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))


def _check_id(marker_id: int, dictionary_name: str, dictionary: cv2.aruco.Dictionary) -> None:
    count = dictionary.bytesList.shape[0]
    if not 0 <= marker_id < count:
        raise SheetError(f"marker id {marker_id} is not in {dictionary_name} (ids 0 to {count - 1})")


def marker_cells(dictionary_name: str, marker_id: int) -> np.ndarray:
    """The marker's cells, black border included, as a bool array (True = black).

    Row 0 is the marker's top edge (OpenCV's corner 0 to corner 1).  The array
    is `cv2.aruco.generateImageMarker` at one pixel per cell, so it is exactly
    what OpenCV's detector decodes.
    """
    dictionary = aruco_dictionary(dictionary_name)
    _check_id(marker_id, dictionary_name, dictionary)
    cells = dictionary.markerSize + 2
    image = cv2.aruco.generateImageMarker(dictionary, int(marker_id), cells, borderBits=1)
    return image < 128


def parse_ids(text: str) -> tuple[int, ...]:
    """Marker ids from a range list such as "10-29" or "10,12,14-16", in order.

    >>> parse_ids("10-12,20")
    (10, 11, 12, 20)
    """
    ids: list[int] = []
    parts = [p.strip() for p in str(text).split(",")]
    if not any(parts):
        raise SheetError("no marker ids given; write a range such as 10-29")
    for part in parts:
        m = re.fullmatch(r"(\d+)\s*(?:-\s*(\d+))?", part)
        if not m:
            raise SheetError(f"'{part}' is not a marker id or id range; write e.g. 10-29 or 10,12,14")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        if last < first:
            raise SheetError(f"id range '{part}' runs backwards; write the smaller id first ({last}-{first})")
        for marker_id in range(first, last + 1):
            if marker_id in ids:
                raise SheetError(f"marker id {marker_id} is asked for twice in '{text}'")
            ids.append(marker_id)
    return tuple(ids)


def _text_width_mm(text: str, font_mm: float) -> float:
    return len(text) * _CHAR_EM * font_mm


# --- the page --------------------------------------------------------------------

class _Page:
    """One SVG page in millimetres: header, content, and the 100 mm check line."""

    def __init__(self, paper: str, title: str, instruction: str) -> None:
        self.paper = paper.strip().lower()
        self.width_mm, self.height_mm = paper_size_mm(paper)
        self.title = title
        self.instruction = instruction
        self.body: list[str] = []

    @property
    def content_box_mm(self) -> tuple[float, float, float, float]:
        """(left, top, width, height) of the area free for markers."""
        left = MARGIN_MM
        top = MARGIN_MM + HEADER_MM
        return (left, top, self.width_mm - 2 * MARGIN_MM,
                self.height_mm - 2 * MARGIN_MM - HEADER_MM - FOOTER_MM)

    def text(self, x_mm: float, y_mm: float, content: str, font_mm: float, *,
             anchor: str = "start", bold: bool = False, css_class: str | None = None) -> None:
        attrs = [f'x="{_n(x_mm)}"', f'y="{_n(y_mm)}"', f'font-size="{_n(font_mm)}"']
        if anchor != "start":
            attrs.append(f'text-anchor="{anchor}"')
        if bold:
            attrs.append('font-weight="bold"')
        if css_class:
            attrs.append(f'class="{css_class}"')
        self.body.append(f"<text {' '.join(attrs)}>{escape(content)}</text>")

    def to_svg(self) -> str:
        w, h = self.width_mm, self.height_mm
        foot_y = h - MARGIN_MM - 3.0
        left = MARGIN_MM
        head = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{_n(w)}mm" '
            f'height="{_n(h)}mm" viewBox="0 0 {_n(w)} {_n(h)}" shape-rendering="crispEdges">',
            f"<title>{escape(self.title)}</title>",
            f'<rect x="0" y="0" width="{_n(w)}" height="{_n(h)}" fill="#ffffff"/>',
            f'<g font-family={quoteattr(_FONT)} fill="#000000">',
            f'<text x="{_n(left)}" y="{_n(MARGIN_MM + 4.5)}" font-size="4.5" font-weight="bold">'
            f"{escape(self.title)}</text>",
            f'<text x="{_n(left)}" y="{_n(MARGIN_MM + 9.5)}" font-size="3">{escape(self.instruction)}</text>',
            f'<text x="{_n(left)}" y="{_n(foot_y - 3.0)}" font-size="2.8">This line must measure '
            f"100 mm. If it does not, print again at 100 % / actual size (not &#8220;fit to page&#8221;).</text>",
            f'<text x="{_n(left + CHECK_LINE_MM + 3.0)}" y="{_n(foot_y + 1.0)}" font-size="2.8">100 mm</text>',
            "</g>",
            # The check line is exactly 100 units long with butt caps; the end
            # ticks are separate lines so they do not lengthen it.
            f'<line id="check-line" x1="{_n(left)}" y1="{_n(foot_y)}" x2="{_n(left + CHECK_LINE_MM)}" '
            f'y2="{_n(foot_y)}" stroke="#000000" stroke-width="0.3" stroke-linecap="butt"/>',
            f'<line x1="{_n(left)}" y1="{_n(foot_y - 2)}" x2="{_n(left)}" y2="{_n(foot_y + 2)}" '
            f'stroke="#000000" stroke-width="0.2"/>',
            f'<line x1="{_n(left + CHECK_LINE_MM)}" y1="{_n(foot_y - 2)}" x2="{_n(left + CHECK_LINE_MM)}" '
            f'y2="{_n(foot_y + 2)}" stroke="#000000" stroke-width="0.2"/>',
        ]
        body = [f'<g font-family={quoteattr(_FONT)} fill="#000000">', *self.body, "</g>"]
        return "\n".join(head + body + ["</svg>"]) + "\n"


def _cell_rects(black: np.ndarray, left_mm: float, top_mm: float, cell_mm: float) -> list[str]:
    """One rect per horizontal run of black cells.

    Edges are rounded once and shared by neighbouring runs, so adjacent rects
    meet exactly and no hairline of white shows between them.
    """
    rows, cols = black.shape
    xs = [round(left_mm + k * cell_mm, 4) for k in range(cols + 1)]
    ys = [round(top_mm + k * cell_mm, 4) for k in range(rows + 1)]
    rects = []
    for r in range(rows):
        c = 0
        while c < cols:
            if not black[r, c]:
                c += 1
                continue
            start = c
            while c < cols and black[r, c]:
                c += 1
            rects.append(f'<rect x="{_n(xs[start])}" y="{_n(ys[r])}" width="{_n(xs[c] - xs[start])}" '
                         f'height="{_n(ys[r + 1] - ys[r])}"/>')
    return rects


def _marker_group(dictionary_name: str, marker_id: int, left_mm: float, top_mm: float,
                  size_mm: float) -> str:
    black = marker_cells(dictionary_name, marker_id)
    rects = _cell_rects(black, left_mm, top_mm, size_mm / black.shape[0])
    return (f'<g id="marker-{marker_id}" class="marker" fill="#000000">'
            + "".join(rects) + "</g>")


def _up_arrow(centre_x_mm: float, bottom_mm: float, height_mm: float) -> str:
    """A filled arrow pointing up (towards the marker's top edge side of the page)."""
    head_w = height_mm * 0.9
    head_h = height_mm * 0.55
    stem_w = height_mm * 0.3
    x, b, t = centre_x_mm, bottom_mm, bottom_mm - height_mm
    pts = [(x, t), (x + head_w / 2, t + head_h), (x + stem_w / 2, t + head_h), (x + stem_w / 2, b),
           (x - stem_w / 2, b), (x - stem_w / 2, t + head_h), (x - head_w / 2, t + head_h)]
    return ('<polygon class="arrow" fill="#000000" points="'
            + " ".join(f"{_n(px)},{_n(py)}" for px, py in pts) + '"/>')


# --- marker tiles (anchors and cars) ---------------------------------------------

@dataclass(frozen=True)
class SheetMarker:
    """One marker to print: its id, the side of its black square, and its label.

    `label` is printed above the marker in bold and names the id;
    `arrow_caption` sits beside the arrow that points at the marker's top edge.
    """

    id: int
    size_mm: float
    label: str
    arrow_caption: str
    detail: str = ""


@dataclass(frozen=True)
class _Tile:
    marker: SheetMarker
    quiet_mm: float
    font_mm: float
    width_mm: float       # of the slot: the cut square or the label, whichever is wider
    height_mm: float      # label strip plus cut square

    @property
    def cut_mm(self) -> float:
        return self.marker.size_mm + 2 * self.quiet_mm

    # Label strip, from the cut line upwards: gap, arrow with its caption, gap,
    # the detail line (if any), the bold id line.
    ARROW_GAP_MM = 1.0
    ARROW_MM = 3.0
    LINE_GAP_MM = 1.2

    @classmethod
    def build(cls, marker: SheetMarker, quiet_mm: float, font_mm: float) -> "_Tile":
        cut = marker.size_mm + 2 * quiet_mm
        lines = [marker.label] + ([marker.detail] if marker.detail else [])
        label_w = max(_text_width_mm(s, font_mm) for s in lines)
        caption_half_w = 0.5 * cls.ARROW_MM + 1.0 + _text_width_mm(marker.arrow_caption, font_mm)
        width = max(cut, label_w, 2 * caption_half_w)
        label_h = cls.ARROW_GAP_MM + cls.ARROW_MM + cls.LINE_GAP_MM + len(lines) * 1.25 * font_mm
        return cls(marker, quiet_mm, font_mm, width, label_h + cut)

    def draw(self, page: _Page, dictionary_name: str, left_mm: float, top_mm: float) -> None:
        m = self.marker
        cx = left_mm + self.width_mm / 2
        cut_top = top_mm + self.height_mm - self.cut_mm
        cut_left = cx - self.cut_mm / 2
        arrow_bottom = cut_top - self.ARROW_GAP_MM
        page.body.append(_up_arrow(cx, arrow_bottom, self.ARROW_MM))
        page.text(cx + 0.5 * self.ARROW_MM + 1.0, arrow_bottom - 0.2, m.arrow_caption, self.font_mm)
        baseline = arrow_bottom - self.ARROW_MM - self.LINE_GAP_MM
        if m.detail:
            page.text(cx, baseline, m.detail, self.font_mm * 0.85, anchor="middle")
            baseline -= 1.25 * self.font_mm
        page.text(cx, baseline, m.label, self.font_mm, anchor="middle", bold=True, css_class="marker-id")
        page.body.append(f'<rect class="cut" x="{_n(cut_left)}" y="{_n(cut_top)}" width="{_n(self.cut_mm)}" '
                         f'height="{_n(self.cut_mm)}" fill="none" stroke="{_CUT_STROKE}" '
                         f'stroke-width="{_n(_CUT_WIDTH_MM)}"/>')
        page.body.append(_marker_group(dictionary_name, m.id, cut_left + self.quiet_mm,
                                       cut_top + self.quiet_mm, m.size_mm))


def marker_pages(markers: Sequence[SheetMarker], dictionary_name: str, *, paper: str = "a4",
                 title: str, instruction: str, quiet_cells: int = DEFAULT_QUIET_CELLS,
                 font_mm: float = 3.0, what: str = "marker") -> list[str]:
    """Pack markers onto as many pages as needed, in the order given; one SVG per page.

    Each marker gets `quiet_cells` cells of white on every side inside a thin
    grey cut line, and its label and top-edge arrow above the cut line (never in
    the white margin, which the detector needs clean).
    """
    paper_size_mm(paper)
    if not markers:
        raise SheetError(f"no {what}s to print")
    if isinstance(quiet_cells, bool) or not isinstance(quiet_cells, int) or quiet_cells < 1:
        raise SheetError(f"the white margin must be at least 1 marker cell wide, not {quiet_cells!r}")
    dictionary = aruco_dictionary(dictionary_name)
    cells = dictionary.markerSize + 2
    seen: set[int] = set()
    tiles = []
    for m in markers:
        _check_id(m.id, dictionary_name, dictionary)
        if m.id in seen:
            raise SheetError(f"{what} id {m.id} appears twice")
        seen.add(m.id)
        if not (math.isfinite(m.size_mm) and m.size_mm > 0):
            raise SheetError(f"{what} {m.id}: the marker size must be more than 0 mm, not {m.size_mm:g}")
        cell_mm = m.size_mm / cells
        if cell_mm < MIN_CELL_MM:
            raise SheetError(f"{what} {m.id}: a {m.size_mm:g} mm {dictionary_name} marker has "
                             f"{cell_mm:.2f} mm cells, too small to print and detect "
                             f"(at least {MIN_CELL_MM * cells:g} mm)")
        tiles.append(_Tile.build(m, quiet_cells * cell_mm, font_mm))

    probe = _Page(paper, title, instruction)
    left, top, width, height = probe.content_box_mm
    for t in tiles:
        if t.width_mm > width + 1e-9 or t.height_mm > height + 1e-9:
            raise SheetError(
                f"{what} {t.marker.id}: a {t.marker.size_mm:g} mm marker with its white margin and label "
                f"needs {t.width_mm:.1f} x {t.height_mm:.1f} mm, but {PAPER_PAGE[probe.paper]} "
                f"has room for {width:.1f} x {height:.1f} mm")

    # Shelf packing: left to right in rows, rows top to bottom, then a new page.
    placed: list[list[tuple[_Tile, float, float]]] = [[]]
    x, y, row_h = left, top, 0.0
    for t in tiles:
        if x > left and x + t.width_mm > left + width + 1e-9:
            x, y, row_h = left, y + row_h + _GAP_MM, 0.0
        if y + t.height_mm > top + height + 1e-9:
            placed.append([])
            x, y, row_h = left, top, 0.0
        placed[-1].append((t, x, y))
        x += t.width_mm + _GAP_MM
        row_h = max(row_h, t.height_mm)

    pages = []
    for n, items in enumerate(placed, start=1):
        suffix = f" (page {n} of {len(placed)})" if len(placed) > 1 else ""
        page = _Page(paper, title + suffix, instruction)
        for t, tx, ty in items:
            t.draw(page, dictionary_name, tx, ty)
        pages.append(page.to_svg())
    return pages


def car_sheets(ids: Iterable[int] | str, size_mm: float = DEFAULT_CAR_MARKER_MM, *,
               dictionary_name: str = DEFAULT_MARKER_DICTIONARY, paper: str = "a4",
               quiet_cells: int = DEFAULT_QUIET_CELLS) -> list[str]:
    """Roof markers for cars: each id at `size_mm`, packed onto pages; one SVG per page.

    `ids` is a sequence of ids or a range text such as "10-29".  The arrow
    above each marker points at its top edge, which goes towards the car's front.
    """
    id_list = parse_ids(ids) if isinstance(ids, str) else tuple(int(i) for i in ids)
    markers = [SheetMarker(i, float(size_mm), str(i), "front") for i in id_list]
    return marker_pages(markers, dictionary_name, paper=paper, quiet_cells=quiet_cells, what="car",
                        title=f"Car roof markers, {dictionary_name}, {float(size_mm):g} mm",
                        instruction=_CAR_INSTRUCTION)


def table_car_sheets(table: TableSpec, *, paper: str = "a4",
                     quiet_cells: int = DEFAULT_QUIET_CELLS) -> list[str]:
    """The roof markers of a table file's cars, each at its own marker_mm, named."""
    if not table.cars:
        raise SheetError(f"{table.source}: the table file has no [[car]] entries to print")
    markers = []
    for car in table.cars:
        name = car.name if len(car.name) <= _NAME_CHARS else car.name[:_NAME_CHARS - 1] + "\u2026"
        markers.append(SheetMarker(car.id, car.marker_mm, f"{car.id} {name}", "front",
                                   f"{car.marker_mm:g} mm"))
    return marker_pages(markers, table.dictionary, paper=paper, quiet_cells=quiet_cells, what="car",
                        title=f"Car roof markers, {table.dictionary}", instruction=_CAR_INSTRUCTION)


def _anchor_top(rotation_deg: float) -> str:
    """Where an anchor's top edge faces: the far side, or turned from it as the
    table file's rotation_deg says (anticlockwise seen from above)."""
    r = ((rotation_deg + 180.0) % 360.0) - 180.0
    if r == 0:
        return "top: far side (+y)"
    if r == -180.0:
        return "top: near side (turned 180 deg)"
    return f"top: far side turned {abs(r):g} deg {'left' if r > 0 else 'right'}"


def anchor_sheets(table: TableSpec, *, paper: str = "a4",
                  quiet_cells: int = DEFAULT_ANCHOR_QUIET_CELLS) -> list[str]:
    """A table's anchor markers, each at its size_mm, with where it goes; one SVG per page.

    The arrow above each marker points at its top edge, which faces the
    table's far side (+y) when the marker lies on the table.
    """
    if not table.anchors:
        raise SheetError(f"{table.source}: the table file has no [[anchor]] entries to print")
    markers = [SheetMarker(a.id, a.size_mm, f"anchor {a.id}", _anchor_top(a.rotation_deg),
                           f"centre at x {a.x_mm:g} mm, y {a.y_mm:g} mm")
               for a in table.anchors]
    return marker_pages(markers, table.dictionary, paper=paper, quiet_cells=quiet_cells, what="anchor",
                        font_mm=3.5, title=f"Anchor markers, {table.dictionary}",
                        instruction="Cut along the grey lines, keeping the white margin. Lay each flat "
                                    "with its arrow towards the table's far side (+y), or turned as "
                                    "its arrow's note says (rotation_deg in the table file).")


_CAR_INSTRUCTION = ("Cut along the grey lines, keeping the white margin. Stick each on the roof "
                    "with its arrow towards the car's front.")


# --- the ChArUco board -----------------------------------------------------------

def charuco_board(squares_x: int = DEFAULT_BOARD_SQUARES_X, squares_y: int = DEFAULT_BOARD_SQUARES_Y,
                  square_mm: float = DEFAULT_BOARD_SQUARE_MM, marker_mm: float = DEFAULT_BOARD_MARKER_MM,
                  dictionary_name: str = DEFAULT_BOARD_DICTIONARY) -> cv2.aruco.CharucoBoard:
    """The OpenCV board a sheet with these parameters shows, in millimetres.

    Give the same board to `cv2.aruco.CharucoDetector` to calibrate from the
    printout.  It uses OpenCV's current pattern (not `setLegacyPattern`), which
    differs from boards printed by OpenCV before 4.6 when `squares_y` is even.
    """
    for name, value in (("squares_x", squares_x), ("squares_y", squares_y)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 2:
            raise SheetError(f"a ChArUco board needs at least 2 squares each way; {name} is {value!r}")
    if not (math.isfinite(square_mm) and square_mm > 0):
        raise SheetError(f"the board's square size must be more than 0 mm, not {square_mm:g}")
    if not (math.isfinite(marker_mm) and 0 < marker_mm < square_mm):
        raise SheetError(f"the board's markers ({marker_mm:g} mm) must be smaller than its "
                         f"squares ({square_mm:g} mm) and more than 0 mm")
    dictionary = aruco_dictionary(dictionary_name)
    needed = squares_x * squares_y // 2
    available = dictionary.bytesList.shape[0]
    if needed > available:
        raise SheetError(f"a {squares_x} x {squares_y} board needs {needed} markers but {dictionary_name} "
                         f"holds only {available}; use a bigger dictionary or fewer squares")
    cell_mm = marker_mm / (dictionary.markerSize + 2)
    if cell_mm < MIN_CELL_MM:
        raise SheetError(f"{marker_mm:g} mm {dictionary_name} markers have {cell_mm:.2f} mm cells, "
                         f"too small to print and detect")
    return cv2.aruco.CharucoBoard((squares_x, squares_y), float(square_mm), float(marker_mm), dictionary)


def _dictionary_name_of(board: cv2.aruco.CharucoBoard) -> str:
    """The predefined dictionary's name whose bits the board uses."""
    d = board.getDictionary()
    for name in DICTIONARY_SIZES:
        ref = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))
        if ref.markerSize == d.markerSize and np.array_equal(ref.bytesList, d.bytesList):
            return name
    raise SheetError("the board's dictionary is not one of OpenCV's predefined dictionaries")


def board_svg_body(board: cv2.aruco.CharucoBoard, left_mm: float, top_mm: float) -> list[str]:
    """SVG elements drawing `board` with its top-left corner at (left_mm, top_mm).

    Drawn from the board's own geometry: each marker at its object points
    (corner 0 top-left, y down, as `CharucoBoard.generateImage` draws it) and
    a black square wherever no marker sits, since ChArUco markers fill exactly
    the white squares.
    """
    squares_x, squares_y = board.getChessboardSize()
    square_mm = board.getSquareLength()
    name = _dictionary_name_of(board)
    dictionary = board.getDictionary()
    cells = dictionary.markerSize + 2
    white = np.zeros((squares_y, squares_x), dtype=bool)
    markers = []
    for marker_id, corners in zip(board.getIds().reshape(-1), board.getObjPoints()):
        c = np.asarray(corners, dtype=np.float64).reshape(4, 3)[:, :2]
        (x0, y0), (x1, _), (x2, y2), (_, y3) = c
        if not (np.isclose(y0, c[1, 1]) and np.isclose(x0, c[3, 0]) and x1 > x0 and y3 > y0):
            raise SheetError("the board's markers are not upright squares; cannot draw them as rects")
        white[int((y0 + y2) / 2 // square_mm), int((x0 + x2) / 2 // square_mm)] = True
        black = marker_cells(name, int(marker_id))
        markers.extend(_cell_rects(black, left_mm + x0, top_mm + y0, (x1 - x0) / cells))
    xs = [round(left_mm + k * square_mm, 4) for k in range(squares_x + 1)]
    ys = [round(top_mm + k * square_mm, 4) for k in range(squares_y + 1)]
    squares = [f'<rect x="{_n(xs[i])}" y="{_n(ys[j])}" width="{_n(xs[i + 1] - xs[i])}" '
               f'height="{_n(ys[j + 1] - ys[j])}"/>'
               for j in range(squares_y) for i in range(squares_x) if not white[j, i]]
    return ['<g id="charuco-board" fill="#000000">', *squares, *markers, "</g>"]


def charuco_sheet(squares_x: int = DEFAULT_BOARD_SQUARES_X, squares_y: int = DEFAULT_BOARD_SQUARES_Y,
                  square_mm: float = DEFAULT_BOARD_SQUARE_MM, marker_mm: float = DEFAULT_BOARD_MARKER_MM,
                  dictionary_name: str = DEFAULT_BOARD_DICTIONARY, *, paper: str = "a4") -> str:
    """One page with the ChArUco calibration board centred on it, as SVG.

    The defaults (5 x 7 squares of 30 mm, 22 mm DICT_5X5_100 markers, 150 x
    210 mm) fit A4 and US Letter; see the DEFAULT_BOARD_* constants for why.
    """
    board = charuco_board(squares_x, squares_y, square_mm, marker_mm, dictionary_name)
    title = (f"ChArUco board {squares_x} x {squares_y}, squares {square_mm:g} mm, "
             f"markers {marker_mm:g} mm, {dictionary_name}")
    page = _Page(paper, title, f"Glue flat to a stiff board. Check: each square measures {square_mm:g} mm.")
    left, top, width, height = page.content_box_mm
    board_w, board_h = squares_x * square_mm, squares_y * square_mm
    if board_w > width + 1e-9 or board_h > height + 1e-9:
        raise SheetError(f"a {squares_x} x {squares_y} board of {square_mm:g} mm squares is "
                         f"{board_w:g} x {board_h:g} mm, but {PAPER_PAGE[page.paper]} has room "
                         f"for {width:.1f} x {height:.1f} mm")
    page.body.extend(board_svg_body(board, left + (width - board_w) / 2, top + (height - board_h) / 2))
    return page.to_svg()
