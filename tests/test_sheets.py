"""Printable marker sheets: what a player would check with a ruler and a camera.

The sheets are rasterised by a tiny rasteriser for the SVG subset they use
(rects, lines, polygons; text is skipped) at a known resolution, and OpenCV's
own detectors must find every marker at its printed size.
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration import sheets
from calibration.sheets import SheetError
from calibration.tablefile import load_table
from companion.cli import main

SVG_NS = "{http://www.w3.org/2000/svg}"
DEMO_TABLE = Path(__file__).resolve().parents[1] / "vision" / "data" / "demo_table.toml"
PX_PER_MM = 8.0
PAGE_ATTRS = {"a4": ("210mm", "297mm", "0 0 210 297"),
              "letter": ("215.9mm", "279.4mm", "0 0 215.9 279.4")}


# --- a tiny rasteriser for the sheets' SVG subset ---------------------------------

def _gray(colour: str | None) -> int | None:
    if colour is None or colour == "none":
        return None
    m = re.fullmatch(r"#([0-9a-fA-F]{6})", colour)
    assert m, f"unexpected colour {colour!r}"
    r, g, b = (int(m.group(1)[i:i + 2], 16) for i in (0, 2, 4))
    return int(round(0.299 * r + 0.587 * g + 0.114 * b))


def rasterise(svg: str, px_per_mm: float = PX_PER_MM) -> np.ndarray:
    """A grayscale image of the page at `px_per_mm`; text is not drawn.

    Pixel (i, j) covers [j, j+1) x [i, i+1) page pixels, so a point at `p` mm
    lands at `p * px_per_mm - 0.5` in OpenCV's pixel-centre coordinates.
    """
    root = ET.fromstring(svg)
    vb = [float(v) for v in root.get("viewBox").split()]
    image = np.full((round(vb[3] * px_per_mm), round(vb[2] * px_per_mm)), 255, np.uint8)
    shift = 8

    def poly(points_mm, value):
        pts = np.round((np.asarray(points_mm, np.float64) * px_per_mm - 0.5) * (1 << shift)).astype(np.int32)
        cv2.fillPoly(image, [pts], int(value), lineType=cv2.LINE_8, shift=shift)

    def band(x1, y1, x2, y2, width, value):
        # A stroked segment with butt caps is a rectangle along it.
        d = np.array([x2 - x1, y2 - y1], np.float64)
        n = np.array([-d[1], d[0]]) / np.linalg.norm(d) * width / 2
        a, b = np.array([x1, y1]), np.array([x2, y2])
        poly([a + n, b + n, b - n, a - n], value)

    def walk(el, fill, stroke, stroke_w):
        fill = el.get("fill", fill)
        stroke = el.get("stroke", stroke)
        stroke_w = float(el.get("stroke-width", stroke_w))
        tag = el.tag.replace(SVG_NS, "")
        f = lambda k: float(el.get(k, 0))  # noqa: E731
        if tag == "rect":
            x, y, w, h = f("x"), f("y"), f("width"), f("height")
            if _gray(fill) is not None:
                poly([(x, y), (x + w, y), (x + w, y + h), (x, y + h)], _gray(fill))
            if _gray(stroke) is not None:
                for seg in ((x, y, x + w, y), (x + w, y, x + w, y + h), (x + w, y + h, x, y + h), (x, y + h, x, y)):
                    band(*seg, stroke_w, _gray(stroke))
        elif tag == "line":
            band(f("x1"), f("y1"), f("x2"), f("y2"), stroke_w, _gray(stroke))
        elif tag == "polygon":
            pts = [tuple(map(float, p.split(","))) for p in el.get("points").split()]
            if _gray(fill) is not None:
                poly(pts, _gray(fill))
        elif tag in ("svg", "g"):
            for child in el:
                walk(child, fill, stroke, stroke_w)
        elif tag not in ("text", "title"):
            raise AssertionError(f"the sheet uses <{tag}>, which the test rasteriser does not know")

    walk(root, "#000000", None, 1.0)
    return image


def detect(image: np.ndarray, dictionary_name: str) -> dict[int, np.ndarray]:
    """Detected markers: id -> corners (4, 2) in mm on the page."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(sheets.aruco_dictionary(dictionary_name), params)
    # A little blur, as ink and a lens give, so sub-pixel refinement has edges to work on.
    corners, ids, _ = detector.detectMarkers(cv2.GaussianBlur(image, (0, 0), 0.8))
    found: dict[int, np.ndarray] = {}
    for marker_id, c in zip([] if ids is None else ids.reshape(-1), corners):
        assert int(marker_id) not in found, f"marker {marker_id} found twice on one page"
        found[int(marker_id)] = (c.reshape(4, 2).astype(np.float64) + 0.5) / PX_PER_MM
    return found


def side_mm(corners_mm: np.ndarray) -> np.ndarray:
    return np.linalg.norm(corners_mm - np.roll(corners_mm, -1, axis=0), axis=1)


def elements(svg: str, tag: str) -> list[ET.Element]:
    return list(ET.fromstring(svg).iter(SVG_NS + tag))


def texts(svg: str) -> list[tuple[float, float, float, str, ET.Element]]:
    return [(float(t.get("x")), float(t.get("y")), float(t.get("font-size")), "".join(t.itertext()), t)
            for t in elements(svg, "text")]


def check_markers_on_pages(pages: list[str], dictionary_name: str, expected_mm: dict[int, float]) -> None:
    """Every expected id is found once, at its size, upright, labelled, with a clean white margin."""
    seen: dict[int, int] = {}
    for n, svg in enumerate(pages):
        image = rasterise(svg)
        found = detect(image, dictionary_name)
        cuts = [(float(r.get("x")), float(r.get("y")), float(r.get("width")))
                for r in elements(svg, "rect") if r.get("class") == "cut"]
        labels = [(x, y, s) for x, y, _, s, t in texts(svg) if t.get("class") == "marker-id"]
        arrows = [np.array([tuple(map(float, p.split(","))) for p in a.get("points").split()])
                  for a in elements(svg, "polygon") if a.get("class") == "arrow"]
        assert len(found) == len(cuts) == len(labels) == len(arrows), f"page {n + 1}"
        for marker_id, c in found.items():
            assert marker_id in expected_mm, f"unexpected marker {marker_id}"
            assert marker_id not in seen, f"marker {marker_id} on pages {seen[marker_id] + 1} and {n + 1}"
            seen[marker_id] = n
            # The printed side, as a ruler on the paper would measure it.
            np.testing.assert_allclose(side_mm(c), expected_mm[marker_id], atol=0.2,
                                       err_msg=f"marker {marker_id} side")
            # Upright: corner 0 -> 1 (the top edge) runs left to right at the top.
            assert c[1, 0] - c[0, 0] > 0.9 * expected_mm[marker_id] and abs(c[1, 1] - c[0, 1]) < 0.2
            assert c[3, 1] - c[0, 1] > 0.9 * expected_mm[marker_id]
            centre = c.mean(axis=0)
            top = c[:, 1].min()
            # Its label, centred just above, names this id.
            x, y, s = min(labels, key=lambda lab: abs(lab[0] - centre[0]) + abs(lab[1] - top))
            assert abs(x - centre[0]) < 0.5 and y < top
            assert re.search(rf"\b{marker_id}\b", s), f"label {s!r} above marker {marker_id}"
            # An arrow above it points up, at the top edge.
            arrow = min(arrows, key=lambda a: np.abs(a.mean(axis=0) - [centre[0], top]).sum())
            assert abs(arrow[:, 0].mean() - centre[0]) < 0.5 and arrow[:, 1].max() < top
            assert arrow[np.argmin(arrow[:, 1]), 0] == pytest.approx(centre[0], abs=0.2)
            # A cut square around it with at least one cell of white inside, all clean.
            cx, cy, cw = min(cuts, key=lambda r: abs(r[0] + r[2] / 2 - centre[0]) + abs(r[1] + r[2] / 2 - centre[1]))
            cell_mm = expected_mm[marker_id] / (sheets.aruco_dictionary(dictionary_name).markerSize + 2)
            quiet_mm = (cw - expected_mm[marker_id]) / 2
            assert quiet_mm >= cell_mm - 0.01
            assert np.allclose([cx + cw / 2, cy + cw / 2], centre, atol=0.2)
            ring = image[round((cy + 0.3) * PX_PER_MM):round((cy + cw - 0.3) * PX_PER_MM),
                         round((cx + 0.3) * PX_PER_MM):round((cx + cw - 0.3) * PX_PER_MM)].copy()
            inner = round((quiet_mm - 0.6) * PX_PER_MM)
            ring[inner:-inner, inner:-inner] = 255
            assert ring.min() == 255, f"marks in the white margin of marker {marker_id}"
        check_text_outside_cuts(svg, cuts)
    assert set(seen) == set(expected_mm), f"missing markers {sorted(set(expected_mm) - set(seen))}"


def check_text_outside_cuts(svg: str, cuts: list[tuple[float, float, float]]) -> None:
    """No label reaches into a cut square (where the detector needs white)."""
    for x, y, size, s, t in texts(svg):
        width = len(s) * 0.6 * size
        left = {"middle": x - width / 2, "end": x - width}.get(t.get("text-anchor"), x)
        top, bottom = y - size, y + 0.25 * size
        for cx, cy, cw in cuts:
            overlaps = left < cx + cw and cx < left + width and top < cy + cw and cy < bottom
            assert not overlaps, f"text {s!r} overlaps the cut square at ({cx:g}, {cy:g})"


# --- the page ----------------------------------------------------------------------

def all_kinds(paper: str) -> list[str]:
    table = load_table(DEMO_TABLE)
    return ([sheets.charuco_sheet(paper=paper)] + sheets.anchor_sheets(table, paper=paper)
            + sheets.car_sheets("10-29", paper=paper) + sheets.table_car_sheets(table, paper=paper))


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_every_page_states_its_physical_size(paper):
    for svg in all_kinds(paper):
        root = ET.fromstring(svg)
        assert (root.get("width"), root.get("height"), root.get("viewBox")) == PAGE_ATTRS[paper]
        assert root.get("shape-rendering") == "crispEdges"
        assert not list(root.iter(SVG_NS + "image")), "markers must be vectors, not raster images"


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_every_page_has_a_100_mm_check_line(paper):
    width_mm, height_mm = sheets.PAPER_SIZES_MM[paper]
    for svg in all_kinds(paper):
        (line,) = [el for el in elements(svg, "line") if el.get("id") == "check-line"]
        x1, y1, x2, y2 = (float(line.get(k)) for k in ("x1", "y1", "x2", "y2"))
        assert x2 - x1 == pytest.approx(100.0, abs=1e-9) and y1 == y2
        assert line.get("stroke-linecap") == "butt"   # round or square caps would add length
        assert 0 < x1 < x2 < width_mm and 0 < y1 < height_mm
        words = " ".join(s for *_, s, _ in texts(svg))
        assert "must measure 100 mm" in words and "100 % / actual size" in words


def test_check_line_rasterises_to_100_mm():
    image = rasterise(sheets.car_sheets([10])[0])
    (line,) = [el for el in elements(sheets.car_sheets([10])[0], "line") if el.get("id") == "check-line"]
    row = image[round(float(line.get("y1")) * PX_PER_MM)]
    dark = np.flatnonzero(row < 128)
    assert (dark[-1] - dark[0] + 1) / PX_PER_MM == pytest.approx(100.0, abs=2 / PX_PER_MM)


def test_marker_cells_are_opencvs_own():
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for marker_id in (0, 17, 49):
        expected = cv2.aruco.generateImageMarker(d, marker_id, 6, borderBits=1) == 0
        assert np.array_equal(sheets.marker_cells("DICT_4X4_50", marker_id), expected)


# --- markers a camera can read ------------------------------------------------------

@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_car_markers_are_detected_at_their_size(paper):
    pages = sheets.car_sheets("10-29", 20.0, paper=paper)
    check_markers_on_pages(pages, "DICT_4X4_50", {i: 20.0 for i in range(10, 30)})


def test_many_car_markers_spread_over_pages():
    pages = sheets.car_sheets("0-49", 25.0)
    assert len(pages) > 1
    check_markers_on_pages(pages, "DICT_4X4_50", {i: 25.0 for i in range(50)})


def test_car_markers_in_another_dictionary_and_one_cell_margin():
    pages = sheets.car_sheets([3, 99], 15.0, dictionary_name="DICT_5X5_100", quiet_cells=1)
    check_markers_on_pages(pages, "DICT_5X5_100", {3: 15.0, 99: 15.0})


def test_table_cars_each_at_their_marker_size():
    table = load_table(DEMO_TABLE)
    pages = sheets.table_car_sheets(table)
    check_markers_on_pages(pages, table.dictionary, {c.id: c.marker_mm for c in table.cars})
    words = " ".join(s for svg in pages for *_, s, _ in texts(svg))
    assert all(c.name in words for c in table.cars)


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_anchor_markers_are_detected_at_their_size(paper):
    table = load_table(DEMO_TABLE)
    pages = sheets.anchor_sheets(table, paper=paper)
    check_markers_on_pages(pages, table.dictionary, {a.id: a.size_mm for a in table.anchors})
    words = " ".join(s for svg in pages for *_, s, _ in texts(svg))
    assert "far side (+y)" in words
    for a in table.anchors:
        assert f"x {a.x_mm:g} mm, y {a.y_mm:g} mm" in words


# --- the ChArUco board ----------------------------------------------------------------

def board_origin_mm(svg: str, board: cv2.aruco.CharucoBoard) -> tuple[float, float]:
    """The board's top-left corner on the page: its top-left black square."""
    group = next(g for g in elements(svg, "g") if g.get("id") == "charuco-board")
    first = next(iter(group))
    assert float(first.get("width")) == pytest.approx(board.getSquareLength())
    return float(first.get("x")), float(first.get("y"))


@pytest.mark.parametrize("squares, square_mm, marker_mm, dictionary_name", [
    ((5, 7), 30.0, 22.0, "DICT_5X5_100"),      # the default board
    ((6, 8), 22.0, 16.0, "DICT_4X4_50"),       # even row count: OpenCV's post-4.6 pattern
    ((4, 5), 40.0, 30.0, "DICT_6X6_250"),
])
def test_board_matches_opencvs_generate_image(squares, square_mm, marker_mm, dictionary_name):
    svg = sheets.charuco_sheet(*squares, square_mm, marker_mm, dictionary_name)
    board = sheets.charuco_board(*squares, square_mm, marker_mm, dictionary_name)
    px_per_mm = 10.0
    image = rasterise(svg, px_per_mm)
    left_mm, top_mm = board_origin_mm(svg, board)
    w_px, h_px = round(squares[0] * square_mm * px_per_mm), round(squares[1] * square_mm * px_per_mm)
    x0, y0 = round(left_mm * px_per_mm), round(top_mm * px_per_mm)
    assert (x0, y0) == pytest.approx((left_mm * px_per_mm, top_mm * px_per_mm), abs=1e-6)
    ours = image[y0:y0 + h_px, x0:x0 + w_px] < 128
    theirs = board.generateImage((w_px, h_px), marginSize=0, borderBits=1) < 128
    # Same cells black everywhere: compare at every marker cell's and square's centre...
    cell_mm = marker_mm / (board.getDictionary().markerSize + 2)
    for corners in board.getObjPoints():
        (mx, my) = np.asarray(corners)[0, :2]
        k = np.arange(board.getDictionary().markerSize + 2) + 0.5
        xs = ((mx + k * cell_mm) * px_per_mm).astype(int)
        ys = ((my + k * cell_mm) * px_per_mm).astype(int)
        assert np.array_equal(ours[np.ix_(ys, xs)], theirs[np.ix_(ys, xs)])
    # Squares: sample inside each square's margin, between its edge and where a marker would sit.
    inset_mm = (square_mm - marker_mm) / 4
    sx = ((np.arange(squares[0]) * square_mm + inset_mm) * px_per_mm).astype(int)
    sy = ((np.arange(squares[1]) * square_mm + inset_mm) * px_per_mm).astype(int)
    assert np.array_equal(ours[np.ix_(sy, sx)], theirs[np.ix_(sy, sx)])
    assert ours[np.ix_(sy, sx)].sum() == (squares[0] * squares[1] + 1) // 2  # half the squares are black
    # ...and every pixel, except where the two round an edge to different pixels.
    edges = cv2.dilate(cv2.morphologyEx(ours.astype(np.uint8), cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)),
                       np.ones((3, 3), np.uint8)).astype(bool)
    assert not np.any((ours != theirs) & ~edges)


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_board_is_detected_with_all_its_corners(paper):
    svg = sheets.charuco_sheet(paper=paper)
    board = sheets.charuco_board()
    image = cv2.GaussianBlur(rasterise(svg), (0, 0), 0.8)
    corners, ids, _, marker_ids = cv2.aruco.CharucoDetector(board).detectBoard(image)
    assert marker_ids is not None and sorted(marker_ids.reshape(-1)) == list(range(17))
    expected = np.asarray(board.getChessboardCorners())[:, :2]
    assert ids is not None and sorted(ids.reshape(-1)) == list(range(len(expected))) and len(expected) == 24
    left_mm, top_mm = board_origin_mm(svg, board)
    found_mm = (corners.reshape(-1, 2).astype(np.float64) + 0.5) / PX_PER_MM
    np.testing.assert_allclose(found_mm, expected[ids.reshape(-1)] + [left_mm, top_mm], atol=0.1)


def test_default_board_fits_both_papers_with_room():
    for paper in ("a4", "letter"):
        svg = sheets.charuco_sheet(paper=paper)
        board = sheets.charuco_board()
        left_mm, top_mm = board_origin_mm(svg, board)
        width_mm, height_mm = sheets.PAPER_SIZES_MM[paper]
        assert left_mm >= sheets.MARGIN_MM and left_mm + 150 <= width_mm - sheets.MARGIN_MM
        assert top_mm >= sheets.MARGIN_MM + sheets.HEADER_MM
        assert top_mm + 210 <= height_mm - sheets.MARGIN_MM - sheets.FOOTER_MM


# --- errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("10-5", "runs backwards"),
    ("x", "'x' is not a marker id"),
    ("10-", "'10-' is not a marker id"),
    ("-3", "'-3' is not a marker id"),
    ("1,,2", "'' is not a marker id"),
    ("", "no marker ids"),
    ("3,1-4", "asked for twice"),
])
def test_malformed_id_ranges(text, message):
    with pytest.raises(SheetError, match=re.escape(message)):
        sheets.parse_ids(text)


def test_id_ranges():
    assert sheets.parse_ids("10-29") == tuple(range(10, 30))
    assert sheets.parse_ids(" 7 ") == (7,)
    assert sheets.parse_ids("10-12, 20,4") == (10, 11, 12, 20, 4)


@pytest.mark.parametrize("call, message", [
    (lambda: sheets.car_sheets([50]), "marker id 50 is not in DICT_4X4_50 (ids 0 to 49)"),
    (lambda: sheets.car_sheets("48-52"), "marker id 50 is not in DICT_4X4_50"),
    (lambda: sheets.car_sheets([1], 300.0), "car 1: a 300 mm marker"),
    (lambda: sheets.car_sheets([1], 180.0, paper="letter"), "a US Letter page has room for 195.9 x 234.4 mm"),
    (lambda: sheets.car_sheets([1], 2.0), "too small to print"),
    (lambda: sheets.car_sheets([1], -5.0), "more than 0 mm"),
    (lambda: sheets.car_sheets([1], quiet_cells=0), "at least 1 marker cell"),
    (lambda: sheets.car_sheets([1, 1]), "car id 1 appears twice"),
    (lambda: sheets.car_sheets([1], dictionary_name="DICT_4X4_5O"), "did you mean 'DICT_4X4_50'"),
    (lambda: sheets.car_sheets([1], paper="a3"), "unknown paper 'a3'"),
    (lambda: sheets.charuco_sheet(10, 10), "is 300 x 300 mm, but an A4 page has room"),
    (lambda: sheets.charuco_sheet(12, 12, 10.0, 8.0, "DICT_4X4_50"), "needs 72 markers but DICT_4X4_50 holds only 50"),
    (lambda: sheets.charuco_sheet(5, 7, 30.0, 30.0), "must be smaller than its squares"),
    (lambda: sheets.charuco_sheet(1, 7), "at least 2 squares"),
])
def test_errors_name_the_problem(call, message):
    with pytest.raises(SheetError, match=re.escape(message)) as err:
        call()
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value)


def test_big_anchor_that_does_not_fit(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text('[table]\nwidth_mm = 2000\ndepth_mm = 2000\n'
                    + "".join(f"[[anchor]]\nid = {i}\nx_mm = {200 + 500 * i}\ny_mm = 500\nsize_mm = 300\n"
                              for i in range(3)))
    with pytest.raises(SheetError, match=r"anchor 0: a 300 mm marker .* an A4 page has room"):
        sheets.anchor_sheets(load_table(path))


# --- the command -------------------------------------------------------------------

def run(capsys, *argv: str) -> tuple[int, list[str], str]:
    code = main(["markers", *argv])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_cli_cars_into_a_folder(tmp_path, capsys):
    code, out, _ = run(capsys, "cars", "--ids", "10-29", "--size", "20", "--out", str(tmp_path / "sheets"))
    assert code == 0
    assert out == [str(tmp_path / "sheets" / "cars-10-29-20mm-a4.svg")]
    svg = Path(out[0]).read_text()
    assert ET.fromstring(svg).get("width") == "210mm"
    assert set(detect(rasterise(svg), "DICT_4X4_50")) == set(range(10, 30))


def test_cli_pages_of_one_file_name(tmp_path, capsys):
    code, out, _ = run(capsys, "cars", "--ids", "0-49", "--size", "25", "--paper", "letter",
                       "--out", str(tmp_path / "roofs.svg"))
    assert code == 0 and len(out) > 1
    assert out == [str(tmp_path / f"roofs-p{n}.svg") for n in range(1, len(out) + 1)]
    assert all(ET.fromstring(Path(p).read_text()).get("width") == "215.9mm" for p in out)


def test_cli_board_and_anchors(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "board", "--paper", "letter")
    assert code == 0 and out == [str(tmp_path / "charuco-5x7-30mm-letter.svg")]
    code, out, _ = run(capsys, "board", "--squares-x", "4", "--squares-y", "6", "--square-mm", "35",
                       "--marker-mm", "26", "--dictionary", "DICT_4X4_50", "--out", "b.svg")
    assert code == 0 and out == ["b.svg"]
    assert "ChArUco board 4 x 6, squares 35 mm, markers 26 mm, DICT_4X4_50" in Path("b.svg").read_text()
    code, out, _ = run(capsys, "anchors", "--table", str(DEMO_TABLE), "--out", "anchors")
    assert code == 0 and out and all(Path(p).name.startswith("demo_table-anchors-a4") for p in out)
    code, out, _ = run(capsys, "cars", "--table", str(DEMO_TABLE), "--out", "cars")
    assert code == 0 and out == [str(Path("cars") / "demo_table-cars-a4.svg")]


@pytest.mark.parametrize("argv, message", [
    (["cars", "--ids", "10-5"], "id range '10-5' runs backwards"),
    (["cars", "--ids", "x"], "'x' is not a marker id"),
    (["cars", "--ids", "45-55"], "marker id 50 is not in DICT_4X4_50"),
    (["cars", "--ids", "1", "--size", "300"], "car 1: a 300 mm marker"),
    (["cars"], "say which cars"),
    (["cars", "--table", str(DEMO_TABLE), "--ids", "1-3"], "--ids cannot be combined with --table"),
    (["board", "--squares-x", "9", "--squares-y", "9"], "is 270 x 270 mm, but an A4 page has room"),
    (["board", "--dictionary", "DICT_9X9_50"], "unknown ArUco dictionary 'DICT_9X9_50'"),
    (["anchors", "--table", "nowhere.toml"], "nowhere.toml: no such table file"),
    (["cars", "--ids", "1", "--out", "sheet.png"], "give a folder or a file name ending in .svg"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == []
    assert err.count("\n") == 1 and err.startswith("companion: error: ") and message in err
    assert not list(tmp_path.iterdir()), "nothing is written when the command fails"


# --- a real renderer --------------------------------------------------------------------

@pytest.mark.browser
def test_chromium_draws_the_page_at_its_physical_size(tmp_path):
    """A real browser honours width="210mm": markers come out 20 mm at 96 CSS px per inch."""
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("no Chromium")
    path = tmp_path / "cars.svg"
    path.write_text(sheets.car_sheets("10-29", 20.0)[0])
    scale = 3
    px_per_mm = 96 / 25.4 * scale
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 794, "height": 1123}, device_scale_factor=scale)
            page.goto(path.as_uri())
            png = page.screenshot()
        finally:
            browser.close()
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_GRAYSCALE)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    corners, ids, _ = cv2.aruco.ArucoDetector(sheets.aruco_dictionary("DICT_4X4_50"), params).detectMarkers(image)
    assert ids is not None and sorted(ids.reshape(-1)) == list(range(10, 30))
    for c in corners:
        np.testing.assert_allclose(side_mm(c.reshape(4, 2) / px_per_mm), 20.0, atol=0.2)
