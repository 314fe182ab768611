"""The projector's calibration (calibration/projector.py) and display (companion/projector.py):
a tilted, off-centre, lens-shifted projector with a bent lens is recovered from measured
pairs; a calibration from another table is refused; the display throws what its mode keeps,
masks last."""

import json

import cv2

import numpy as np
import pytest

from calibration.projector import ProjectorFileError, ProjectorModel, fit_projector, table_fingerprint
from calibration.tablefile import AnchorSpec
from companion.projector import ProjectorDisplay, TableShape, densify
from vision.demo import demo_table
from vision.projector_sim import demo_projector, rasterize


@pytest.fixture(scope="module")
def table():
    return demo_table()


@pytest.fixture(scope="module")
def truth(table):
    return demo_projector(table)


def grid(table, step=40.0, beyond=0.0):
    """Points over the table (and `beyond` mm past its edges: a pattern's dots also land
    off the table, where the projector spills over)."""
    return np.mgrid[step / 2 - beyond:table.width_mm + beyond:step,
                    step / 2 - beyond:table.depth_mm + beyond:step].reshape(2, -1).T


def test_a_tilted_off_centre_projector_with_a_bent_lens_is_recovered_to_a_quarter_of_a_millimetre(table, truth):
    pts = grid(table, beyond=30.0)
    model = fit_projector(pts, truth.table_to_projector(pts), truth.size_px, table_fingerprint(table))
    check = grid(table, 17.0)                       # other points than those fitted
    err_px = np.hypot(*(model.table_to_projector(check) - truth.table_to_projector(check)).T)
    mm_per_px = 1 / model.px_per_mm((table.width_mm / 2, table.depth_mm / 2))
    # A cubic lens correction: a higher order fits exact points better but follows the
    # camera's noise on real dots (0.6 mm with 0.5 mm of noise, against 0.25 for the cubic).
    assert err_px.max() * mm_per_px < 0.25 and np.percentile(err_px, 95) * mm_per_px < 0.06
    back = model.projector_to_table(truth.table_to_projector(check))
    assert np.hypot(*(back - check).T).max() < 0.25


def test_the_lens_correction_is_what_makes_it_right(table, truth):
    """A homography alone (a perfect lens) misses the barrel by millimetres at the edges."""
    pts = grid(table)
    flat = fit_projector(pts, truth.table_to_projector(pts), truth.size_px, lens=False)
    back = flat.projector_to_table(truth.table_to_projector(pts))
    assert np.hypot(*(back - pts).T).max() > 1.0


def test_measurement_noise_averages_out(table, truth):
    rng = np.random.default_rng(3)
    pts = grid(table, 30.0)
    seen = pts + rng.normal(0, 0.4, pts.shape)       # the camera's dot centres, 0.4 mm each
    model = fit_projector(seen, truth.table_to_projector(pts), truth.size_px)
    check = grid(table, 23.0)
    back = model.projector_to_table(truth.table_to_projector(check))
    assert np.hypot(*(back - check).T).max() < 0.4
    assert 0.3 < model.rms_mm < 0.8                  # it says how well it fits


def test_too_few_points_or_mismatched_lists_are_refused_by_name(truth):
    with pytest.raises(ValueError, match="too few"):
        fit_projector(np.zeros((5, 2)), np.zeros((5, 2)), truth.size_px)
    with pytest.raises(ValueError, match="12 table points but 11"):
        fit_projector(np.zeros((12, 2)), np.zeros((11, 2)), truth.size_px)


def test_coverage_names_the_parts_of_the_table_left_dark(table, truth):
    pts = grid(table)
    model = fit_projector(pts, truth.table_to_projector(pts), truth.size_px)
    whole = model.coverage(table.width_mm, table.depth_mm)
    assert whole.share == 1.0 and whole.missed == ()
    # The same projector on a table twice as wide: the right-hand half stays dark.
    wide = model.coverage(2 * table.width_mm, table.depth_mm)
    assert 0.4 < wide.share < 0.6
    assert "the near-right corner" in wide.missed and "the far-right corner" in wide.missed
    assert "the near-left corner" not in wide.missed
    assert "leaves out" in wide.words()


def test_a_calibration_is_kept_and_one_from_another_table_is_refused(tmp_path, table, truth):
    pts = grid(table)
    model = fit_projector(pts, truth.table_to_projector(pts), truth.size_px, table_fingerprint(table))
    path = model.save(tmp_path / "projector.json")
    again = ProjectorModel.load(path, table)
    assert np.allclose(again.table_to_projector(pts), model.table_to_projector(pts))
    moved = table.__class__(**{**table.__dict__, "anchors": (AnchorSpec(table.anchors[0].id, 10.0, 10.0, 40.0),
                                                             *table.anchors[1:])})
    with pytest.raises(ProjectorFileError, match="another table"):
        ProjectorModel.load(path, moved)
    before = path.read_text()
    (tmp_path / "bad.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ProjectorFileError, match="not a projector calibration"):
        ProjectorModel.load(tmp_path / "bad.json", table)
    with pytest.raises(ProjectorFileError, match="no projector calibration there"):
        ProjectorModel.load(tmp_path / "missing.json", table)
    assert path.read_text() == before


def test_the_display_throws_what_its_mode_keeps_with_masks_over_the_markers(table, truth):
    pts = grid(table)
    model = fit_projector(pts, truth.table_to_projector(pts), truth.size_px)
    display = ProjectorDisplay(model)
    template = TableShape("template", ((100, 100), (400, 100), (400, 200), (100, 200)), label="template")
    place = TableShape("placement", ((500, 300), (575, 300), (575, 335), (500, 335)), label="put it here")
    mask = TableShape("mask", ((150, 140), (170, 140), (170, 160), (150, 160)), filled=True)
    scene = [mask, template, place]
    shapes = display.frame(scene)["shapes"]
    assert [s["role"] for s in shapes] == ["template", "placement", "mask"]       # masks last
    # The template's corner lands where the truth says that table point is lit.
    corner = np.array(shapes[0]["points"][0])
    assert np.hypot(*(corner - truth.table_to_projector([(100, 100)])[0])) < 0.1
    display.set_mode("placements")
    assert [s["role"] for s in display.frame(scene)["shapes"]] == ["placement", "mask"]
    display.set_mode("nothing")
    assert display.frame(scene)["shapes"] == []
    with pytest.raises(ValueError, match="not 'all'"):
        display.set_mode("all")
    # A pattern takes over while shown, and the scene comes back when it goes.
    display.set_mode("everything")
    display.show_pattern([], "calibrating")
    assert display.frame(scene)["shapes"] == [] and display.frame(scene)["pattern"] == "calibrating"
    display.clear_pattern()
    assert len(display.frame(scene)["shapes"]) == 3
    # Uncalibrated, it throws nothing (it would not know where).
    assert ProjectorDisplay().frame(scene)["shapes"] == []


def test_a_mask_leaves_the_marker_dark_in_the_projector_image(table, truth):
    pts = grid(table)
    model = fit_projector(pts, truth.table_to_projector(pts), truth.size_px)
    big = TableShape("region", ((100, 100), (300, 100), (300, 300), (100, 300)), filled=True)
    mask = TableShape("mask", ((180, 180), (220, 180), (220, 220), (180, 220)), filled=True)
    img = rasterize(ProjectorDisplay(model).frame([big, mask])["shapes"], model.size_px)
    inside = np.round(model.table_to_projector([(200, 200)])[0]).astype(int)
    lit = np.round(model.table_to_projector([(130, 130)])[0]).astype(int)
    assert img[inside[1], inside[0]].max() == 0
    assert img[lit[1], lit[0]].max() == 255


def test_a_long_edge_is_cut_so_the_lens_bends_it(table):
    pts = densify(np.array([(0.0, 0.0), (100.0, 0.0)]), closed=False, step_mm=5.0)
    assert len(pts) == 21 and np.allclose(pts[-1], (100, 0))
    ring = densify(np.array([(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)]), closed=True, step_mm=5.0)
    assert len(ring) == 2 + 2 + 3


def test_a_roof_mask_keeps_the_roof_dark_though_its_light_leaves_through_other_pixels(table, truth):
    """Light toward a roof 35 mm up leaves the projector through other pixels than toward
    the table under it. The model finds the lens's place from its homography (square pixels,
    a lens shifted up or down only, as projectors are), and a roof's mask covers both."""
    from calibration.camera import CameraModel
    from vision.projector_sim import SyntheticProjector
    k = truth.lens.camera_matrix.copy()
    k[0, 2] = truth.size_px[0] / 2                     # shifted up or down only
    k[0, 0] = k[1, 1] = 0.9 * k[0, 0]
    proj = SyntheticProjector(CameraModel(k, truth.lens.dist_coeffs, truth.size_px), truth.rvec, truth.tvec)
    pts = grid(table, beyond=30.0)
    model = fit_projector(pts, proj.table_to_projector(pts), proj.size_px)
    rot = cv2.Rodrigues(proj.rvec)[0]
    assert np.linalg.norm(model.centre_mm() - (-rot.T @ proj.tvec)) < 80       # mm, from 1.5 m away
    roof = np.array([(1000.0, 700.0)])                  # far from the projector: a long shift
    shift_px = np.hypot(*(proj.table_to_projector(roof, 35.0) - proj.table_to_projector(roof))[0])
    assert shift_px > 10                                # the parallax is real
    assert np.hypot(*(model.table_to_projector(model.lifted(roof, 35.0)) - proj.table_to_projector(roof, 35.0))[0]) < 1
    # A filled region over the car, its roof marker masked at roof height: the roof stays dark.
    def square(half):
        return tuple((1000 + dx, 700 + dy) for dx, dy in ((-half, -half), (half, -half), (half, half), (-half, half)))

    marker, box = square(10.0), square(13.0)            # the mask 3 mm wider than the marker
    region = TableShape("region", ((900, 600), (1100, 600), (1100, 800), (900, 800)), filled=True)
    shapes = ProjectorDisplay(model).frame([region, TableShape("mask", box, filled=True, z_mm=35.0)])["shapes"]
    img = rasterize(shapes, model.size_px)
    corners_on_roof = proj.table_to_projector(np.array(marker + ((1000.0, 700.0),)), 35.0)
    for x, y in np.round(corners_on_roof).astype(int):
        assert img[y, x].max() == 0
    flat = rasterize(ProjectorDisplay(model).frame([region, TableShape("mask", box, filled=True)])["shapes"],
                     model.size_px)
    x, y = np.round(corners_on_roof[-1]).astype(int)
    assert flat[y, x].max() == 255                      # a mask on the table would light the roof


def test_a_new_table_file_drops_a_calibration_made_on_the_old_table_and_says_so(table, truth):
    pts = grid(table)
    display = ProjectorDisplay(fit_projector(pts, truth.table_to_projector(pts), truth.size_px,
                                             table_fingerprint(table)))
    display.for_table(table)
    assert display.model is not None and display.check_text == ""
    wider = table.__class__(**{**table.__dict__, "width_mm": table.width_mm + 300})
    display.for_table(wider)
    assert display.model is None and "another table" in display.check_text
    assert display.frame([TableShape("template", ((0, 0), (10, 0), (10, 10)))])["shapes"] == []
