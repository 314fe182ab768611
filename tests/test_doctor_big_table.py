"""`companion doctor` on a 6 x 4 ft table (issue 26): each car's roof marker size where it
stands and at the worst place the camera covers, with the fix in numbers, on a rendered
1080p frame (too small) and a 4K one (big enough); two cameras over the halves, their
overlap and the anchors each sees; a camera that sees too few anchors named with a FAIL;
one camera file or one source given for two cameras refused."""

from __future__ import annotations

import re
from dataclasses import replace

import cv2
import numpy as np
import pytest

from bench.scenes import WEBCAM_BIG, big_scene
from calibration.camera import CameraModel
from calibration.table_pose import TablePose
from companion.cli import main
from vision.coverage import coverage
from vision.quality import SIDE_OK_PX
from vision.render import CarTruth, TableRenderer, look_at

#: The benchmark's webcam, drawn with fewer samples per pixel: four renders, one of them 4K,
#: cost a busy test machine seconds each at three.
WEBCAM = replace(WEBCAM_BIG, supersample=2)
LINE = re.compile(r"^(OK|WARN|FAIL)\s+([^:]+): (.+)$")


def doctor(capsys, *argv: str):
    """The exit status, each check's [(status, said, fix)] by what it checks, and the output."""
    code = main(["doctor", *argv])
    out = capsys.readouterr().out
    checks: dict[str, list[list[str]]] = {}
    last = None
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            last = [m.group(1), m.group(3), ""]
            checks.setdefault(m.group(2), []).append(last)
        elif line.strip().startswith("fix: ") and last is not None:
            last[2] = line.strip()[5:]
    return code, checks, out


def table_toml(table) -> str:
    parts = [f'[table]\nwidth_mm = {table.width_mm}\ndepth_mm = {table.depth_mm}\ndictionary = "{table.dictionary}"\n']
    for a in table.anchors:
        parts.append(f"[[anchor]]\nid = {a.id}\nx_mm = {a.x_mm}\ny_mm = {a.y_mm}\nsize_mm = {a.size_mm}\n")
    for c in table.cars:
        parts.append(f'[[car]]\nid = {c.id}\nname = "{c.name}"\nlength_mm = {c.length_mm}\nwidth_mm = {c.width_mm}\n'
                     f"roof_mm = {c.roof_mm}\nmarker_mm = {c.marker_mm}\noffset_mm = [{c.offset_mm[0]}, "
                     f"{c.offset_mm[1]}]\n")
    return "\n".join(parts)


def cars_for(table) -> list[CarTruth]:
    w, d = table.width_mm, table.depth_mm
    # Car 10 in the far-right corner, where a camera in front of the table sees it smallest.
    return [CarTruth(10, w - 110, d - 120, 30.0), CarTruth(11, w / 2, d / 2, 0.0), CarTruth(12, 300, 400, 90.0)]


def write(folder, name, renderer, cars):
    frame = renderer.render(cars)
    image, camera = folder / f"{name}.png", folder / f"{name}.yml"
    cv2.imwrite(str(image), frame.image)
    renderer.camera.to_yaml(camera)
    return str(image), str(camera), frame


def portrait_camera(table, x0, x1, height_mm, size=(1920, 1080)):
    """A webcam over the part x0..x1 of the table, turned a quarter (the picture's long side
    from near to far edge, as two cameras over a 6 x 4 ft table's halves are best turned)."""
    d = table.depth_mm
    cx = (x0 + x1) / 2
    rvec, tvec = look_at((cx, d / 2 - 100, height_mm), (cx, d / 2, 0.0))
    r, _ = cv2.Rodrigues(rvec)
    turn = np.array([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]])
    r, tvec = turn @ r, turn @ tvec
    pts = np.array([[x0, 0, 0], [x1, 0, 0], [x1, d, 0], [x0, d, 0]]) @ r.T + tvec
    w, h = size
    f = min(0.94 * (w / 2) / np.max(np.abs(pts[:, 0] / pts[:, 2])),
            0.94 * (h / 2) / np.max(np.abs(pts[:, 1] / pts[:, 2])))
    k = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
    return CameraModel(k, np.array([-0.05, 0.01, 0, 0, 0]), size, source="half-table webcam"), \
        cv2.Rodrigues(r)[0].ravel(), tvec


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """One 6 x 4 ft table (3 cars, 20 mm markers), as a 1080p and a 4K webcam 1.7 m up see it,
    and as two 1080p webcams over its halves."""
    folder = tmp_path_factory.mktemp("big")
    hd = big_scene(3, n_cars=3, resolution=(1920, 1080), options=WEBCAM)
    table = hd.table
    (folder / "table.toml").write_text(table_toml(table), encoding="utf-8")
    cars = cars_for(table)
    out = {"table": str(folder / "table.toml"), "spec": table}
    out["hd"] = write(folder, "hd", hd.renderer, cars)
    # The 4K camera: the same view, its frame scaled up (a 4K renderer costs a busy machine
    # seconds to set up; the geometry is the same camera's at twice the pixels).
    uhd_image, uhd_camera = folder / "uhd.png", folder / "uhd.yml"
    cv2.imwrite(str(uhd_image), cv2.resize(cv2.imread(out["hd"][0]), (3840, 2160), interpolation=cv2.INTER_CUBIC))
    hd.renderer.camera.scaled_to((3840, 2160)).to_yaml(uhd_camera)
    out["uhd"] = (str(uhd_image), str(uhd_camera), None)
    halves = {}
    for name, (x0, x1) in (("left", (0.0, table.width_mm / 2 + 100)),
                           ("right", (table.width_mm / 2 - 100, table.width_mm))):
        cam, rvec, tvec = portrait_camera(table, x0, x1, 1500.0)
        renderer = TableRenderer(table, cam, rvec, tvec, WEBCAM, seed=1)
        halves[name] = (*write(folder, name, renderer, cars), TablePose(cam, rvec, tvec, (), 0.0, 0.0))
    out.update(halves)
    return out


def test_a_1080p_camera_over_6_by_4_ft_warns_for_the_car_in_the_far_corner_with_the_fix_in_numbers(capsys, big):
    image, camera, frame = big["hd"]
    code, checks, out = doctor(capsys, "--source", image, "--camera", camera, "--table", big["table"])
    assert code == 0, out                     # small markers warn; the table is still found
    (status, said, fix), = checks["marker size, car 10 (car 10)"]
    assert status in ("WARN", "FAIL"), out
    m = re.match(r"its 20 mm marker is ([\d.]+) px where it stands, ([\d.]+) px at the worst place the camera "
                 r"covers \(the far-(left|right) corner\); 20 px or more reads reliably", said)
    assert m, said
    here, worst = float(m.group(1)), float(m.group(2))
    # Where it stands: the rendered marker's own corners say how big it is.
    corners = frame.car_corners_px[10]
    true_side = float(np.mean(np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)))
    assert here == pytest.approx(true_side, abs=0.3)
    assert worst <= here + 0.05 and worst < SIDE_OK_PX
    # The fix: the marker size that is just enough, a camera of more pixels, a second camera.
    mk = re.search(r"(\d+) mm markers \(([\d.]+) px -> ([\d.]+) px\)", fix)
    assert mk, fix
    size = int(mk.group(1))
    assert worst * size / 20 >= SIDE_OK_PX > worst * (size - 1) / 20
    assert float(mk.group(3)) == pytest.approx(worst * size / 20, abs=0.06)
    res = re.search(r"a (\d+) x (\d+) camera with the same field of view \([\d.]+ px -> ([\d.]+) px\)", fix)
    assert res and int(res.group(1)) * 9 == int(res.group(2)) * 16 and float(res.group(3)) >= SIDE_OK_PX, fix
    assert "a second camera, the two over one half of the table each" in fix
    assert checks["coverage"][0][0] == "OK" and "8 of 8 anchors" in checks["coverage"][0][1]


def test_the_same_table_under_a_4k_camera_is_big_enough_for_every_car(capsys, big):
    image, camera, _ = big["uhd"]
    code, checks, out = doctor(capsys, "--source", image, "--camera", camera, "--table", big["table"])
    assert code == 0, out
    hd = doctor(capsys, "--source", big["hd"][0], "--camera", big["hd"][1], "--table", big["table"])[1]
    for car in (10, 11, 12):
        what = f"marker size, car {car} (car {car})"
        (status, said, fix), = checks[what]
        assert status == "OK" and not fix, out
        worst = float(re.search(r"([\d.]+) px at the worst place", said).group(1))
        assert worst >= SIDE_OK_PX
        # The same camera at twice the pixels: twice the size.
        assert worst == pytest.approx(2 * float(re.search(r"([\d.]+) px at the worst place", hd[what][0][1]).group(1)),
                                      abs=0.3)


def test_two_cameras_over_the_halves_say_their_overlap_and_the_anchors_each_sees(capsys, big):
    left, right = big["left"], big["right"]
    code, checks, out = doctor(capsys, "--source", left[0], "--camera", left[1], "--source", right[0],
                               "--camera", right[1], "--table", big["table"])
    assert code == 0, out
    assert checks["coverage (camera 1)"][0][0] == "OK"
    assert checks["coverage (camera 1)"][0][1].endswith("anchors 0, 3, 4, 5, 6"), out
    assert checks["coverage (camera 2)"][0][1].endswith("anchors 1, 2, 4, 5, 7"), out
    # Each camera's anchor check counts only the anchors in its view.
    assert checks["anchors (camera 1)"][0][:2] == ["OK", "5 of 8 seen, 5 in its view"], out
    (status, said, _), = checks["cameras together"]
    assert status == "OK" and said.endswith("together they see 100% of it; all see anchors 4, 5"), out
    overlap = float(re.search(r"overlap over ([\d,]+) mm²", said).group(1).replace(",", ""))
    # Against the cameras' true poses (doctor finds them from the anchors).
    truth = coverage([left[3], right[3]], big["spec"])
    assert overlap == pytest.approx(truth.overlap_mm2, rel=0.02)
    assert f"({truth.overlap_share:.0%} of the table)" in said
    assert checks["coverage"] == [["OK", "every part of the table is seen by a camera", ""]]
    assert checks["car 10 (car 10)"][0][1].endswith("by camera 2")
    assert checks["car 11 (car 11)"][0][1].endswith("by camera 1 and camera 2")
    assert checks["car 12 (car 12)"][0][1].endswith("by camera 1")
    # Two cameras over the halves: bigger than the one camera over all of it.
    one = doctor(capsys, "--source", big["hd"][0], "--camera", big["hd"][1], "--table", big["table"])[1]
    def worst(c):
        return float(re.search(r"([\d.]+) px at the worst place", c["marker size, car 10 (car 10)"][0][1]).group(1))
    assert worst(checks) > worst(one) * 1.1


def test_a_camera_that_sees_too_few_anchors_fails_naming_it(capsys, big, tmp_path):
    table = big["spec"]
    # A camera low over the middle: the anchors lie round the edges, out of its view.
    cam = CameraModel.from_fov(1920, 1080, 65.0, source="a webcam low over the middle")
    rvec, tvec = look_at((table.width_mm / 2, table.depth_mm / 2, 700.0), (table.width_mm / 2, table.depth_mm / 2, 0))
    middle = write(tmp_path, "middle", TableRenderer(table, cam, rvec, tvec, WEBCAM, seed=2), cars_for(table))
    left = big["left"]
    code, checks, out = doctor(capsys, "--source", left[0], "--camera", left[1], "--source", middle[0],
                               "--camera", middle[1], "--table", big["table"])
    assert code == 1, out
    (status, said, fix), = checks["coverage (camera 2)"]
    assert status == "FAIL" and said.startswith("camera 2 finds too few anchors to know where it is"), out
    assert "camera 2" in fix and "3 anchors" in fix
    assert checks["coverage (camera 1)"][0][0] == "OK"


def test_one_camera_file_or_one_source_for_two_cameras_is_refused(capsys, big):
    left, right = big["left"], big["right"]
    assert main(["doctor", "--source", left[0], "--camera", left[1], "--source", right[0], "--camera", left[1],
                 "--table", big["table"]]) == 2
    err = capsys.readouterr().err
    assert f"the camera file {left[1]} is given for camera 1 and camera 2" in err
    assert "each camera needs its own calibration" in err
    assert main(["doctor", "--source", left[0], "--source", left[0], "--table", big["table"]]) == 2
    assert f"--source {left[0]} is given for camera 1 and camera 2" in capsys.readouterr().err
    assert main(["doctor", "--source", "0", "--source", " 0", "--table", big["table"]]) == 2
    assert "is given for camera 1 and camera 2" in capsys.readouterr().err
    assert main(["doctor", "--source", left[0], "--camera", left[1], "--camera", right[1],
                 "--table", big["table"]]) == 2
    assert "2 --camera files for 1 --source" in capsys.readouterr().err


def test_a_camera_higher_than_it_needs_be_is_told_how_far_down_to_come(big):
    """A 2560 x 1440 camera 2.6 m over the table with a 60 degree lens, seeing far more than the table: the fix says to bring it
    down, to a height where the marker is big enough and every corner of the table still shows."""
    from companion.commands.doctor import CameraSeen, _size_fix
    from vision.coverage import smallest_marker_px

    table = big["spec"]
    car = table.car(10)
    cam = CameraModel.from_fov(2560, 1440, 60.0)
    rvec, tvec = look_at((table.width_mm / 2, table.depth_mm / 2 - 100, 2600.0),
                         (table.width_mm / 2, table.depth_mm / 2, 0.0))
    pose = TablePose(cam, rvec, tvec, (), 0.0, 0.0)
    worst = smallest_marker_px(pose, table, car).side_px
    assert worst < SIDE_OK_PX
    fix = _size_fix(table, car, worst, None, [CameraSeen("0", pose, None, (2560, 1440))])
    m = re.search(r"the camera lower, ([\d.]+) m -> ([\d.]+) m above the table \([\d.]+ px -> ([\d.]+) px\)", fix)
    assert m, fix
    assert float(m.group(1)) == pytest.approx(2.6, abs=0.01)
    # Along its line of sight (R's last row, in table axes) to the height it names.
    step = (float(m.group(2)) * 1000 - 2600.0) / pose.rotation[2, 2]
    down = TablePose(cam, rvec, tvec - [0, 0, step], (), 0.0, 0.0)
    assert down.camera_height_mm == pytest.approx(float(m.group(2)) * 1000)
    # Measured again at the height it names (to the centimetre it says): big enough...
    assert smallest_marker_px(down, table, car).side_px == pytest.approx(float(m.group(3)), abs=0.3)
    assert SIDE_OK_PX <= float(m.group(3)) < SIDE_OK_PX + 0.5     # and no lower than it takes
    # ... and the whole table, at the car's roof height, still in the picture.
    corners = np.array([(x, y, car.roof_mm) for x in (0, table.width_mm) for y in (0, table.depth_mm)])
    px = down.image_from_table(corners)
    assert np.all((px >= 0) & (px <= [2559, 1439]))


def test_cameras_that_do_not_overlap_warn_and_the_strip_between_them_is_named(big):
    """Two cameras over the outer parts of the table, 400 mm apart: no overlap (a car crossing
    is lost), no anchor both see, and the strip between them named as no camera's."""
    from types import SimpleNamespace

    from companion.commands.doctor import CameraSeen, _cameras_together

    table = big["spec"]
    w = table.width_mm
    views = []
    for x0, x1 in ((0.0, w / 2 - 200), (w / 2 + 200, w)):
        cam, rvec, tvec = portrait_camera(table, x0, x1, 1500.0)
        nothing = SimpleNamespace(cars=[], located=SimpleNamespace(anchors=()))
        views.append(CameraSeen("x", TablePose(cam, rvec, tvec, (), 0.0, 0.0), nothing, (1920, 1080)))
    checks = {}
    for c in _cameras_together(table, views):
        checks.setdefault(c.what, []).append(c)
    (together,) = checks["cameras together"]
    assert together.status == "WARN" and "overlap over 0 mm² (0% of the table)" in together.said
    assert together.said.endswith("no anchor is seen by all") and "a car crossing" in together.fix
    gaps = [c.said for c in checks["coverage"]]
    assert any(s.startswith("no camera sees the middle (about ") for s in gaps), gaps
    assert any(s.startswith("no camera sees the near edge") for s in gaps), gaps
    assert all(c.status == "WARN" for c in checks["coverage"])
    assert [c.status for c in checks["car 10 (car 10)"]] == ["WARN"]


def test_one_camera_over_half_the_table_names_the_parts_it_misses(capsys, big):
    left = big["left"]
    code, checks, out = doctor(capsys, "--source", left[0], "--camera", left[1], "--table", big["table"])
    assert code == 0, out
    first, *gaps = checks["coverage"]
    assert first[0] == "WARN" and first[1].startswith("the camera sees 5") and "5 of 8 anchors whole" in first[1], out
    named = {said.split(" (")[0] for _, said, _ in gaps}
    assert {"the camera does not see the near-right corner", "the camera does not see the right edge",
            "the camera does not see the far-right corner"} <= named, out
    assert not any("left" in n for n in named), out
    # The right third whole: its size said.
    assert any(said == "the camera does not see the right edge (about 610 x 406 mm)" for _, said, _ in gaps), out
    assert all("turn the camera towards" in fix for _, _, fix in gaps)
