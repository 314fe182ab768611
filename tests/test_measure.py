"""`companion measure SCENE.json` and the scene file's errors."""

from __future__ import annotations

import json

import pytest

from companion.cli import main
from companion.scene import SceneError, parse_scene
from tests.conftest import EXAMPLES

SCENE = json.loads((EXAMPLES / "scenes" / "convoy.json").read_text())


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_measure_prints_every_pair_with_the_design_keys(capsys):
    code, out, _ = run(capsys, "measure", str(EXAMPLES / "scenes" / "convoy.json"))
    assert code == 0
    pairs = {(p["from"], p["to"]): p for p in json.loads(out)["pairs"]}
    assert set(pairs) == {(a, b) for a in (10, 11, 12) for b in (10, 11, 12) if a != b}
    for p in pairs.values():
        assert {"distance_mm", "distance_in", "in_front_arc", "in_rear_arc", "line_of_sight"} <= set(p)
    # The Interceptor (x 262.5-337.5) and the Rust Bucket (x 416.4-488.4) in line: 78.9 mm, 3.106 in.
    ahead = pairs[(10, 11)]
    assert ahead["distance_mm"] == pytest.approx(78.9) and ahead["distance_in"] == pytest.approx(78.9 / 25.4, abs=1e-4)
    assert ahead["in_front_arc"] and not ahead["in_rear_arc"]
    assert pairs[(11, 10)]["in_rear_arc"] and not pairs[(11, 10)]["in_front_arc"]
    assert ahead["line_of_sight"]
    # The burnt-out bus stands between the Interceptor and the War Rig, but past its
    # sides some line is clear; centre to centre it blocks.
    # Their x spans overlap (332.5-337.5), so the gap is the y gap: 402 - 316.
    assert pairs[(10, 12)]["distance_mm"] == pytest.approx(86.0)
    assert pairs[(10, 12)]["line_of_sight"]
    code, out, _ = run(capsys, "measure", str(EXAMPLES / "scenes" / "convoy.json"), "--sight", "centre")
    centre = {(p["from"], p["to"]): p for p in json.loads(out)["pairs"]}
    assert not centre[(10, 12)]["line_of_sight"] and centre[(10, 12)]["sight_blocked_by"] == ["burnt-out bus"]


@pytest.mark.parametrize("change, message", [
    (lambda s: s.pop("rules"), "missing field 'rules'"),
    (lambda s: s.update(rules="chess"), "unknown rule system 'chess'"),
    (lambda s: s["cars"][1].pop("width_mm"), "car Rust Bucket: missing field 'width_mm'"),
    (lambda s: s["cars"][0].update(length_mm=-75), "car Interceptor: field 'length_mm' must be more than 0, not -75"),
    (lambda s: s["cars"][2].update(x_mm=None, y_mm=None), "car War Rig: no pose (missing fields 'x_mm', 'y_mm')"),
    (lambda s: s["cars"][2].pop("heading_deg"), "car War Rig: no pose (missing field 'heading_deg')"),
    (lambda s: s["cars"][0].update(sigma_mm=-1), "car Interceptor: field 'sigma_mm' must not be negative"),
    (lambda s: s["cars"][1].update(id=10), "car Rust Bucket: id 10 appears twice"),
    (lambda s: s["table"].pop("depth_mm"), "table: missing field 'depth_mm'"),
    (lambda s: s["terrain"][0].update(kind="lava"), "terrain burnt-out bus: field 'kind' must be one of"),
    (lambda s: s["terrain"][0].update(points=[[0, 0], [1, 1]]), "terrain burnt-out bus: field 'points'"),
])
def test_scene_mistakes_name_the_car_and_the_field(change, message):
    scene = json.loads(json.dumps(SCENE))
    change(scene)
    with pytest.raises(SceneError) as caught:
        parse_scene(scene, "convoy.json")
    assert message in str(caught.value) and str(caught.value).startswith("convoy.json")


def test_measure_errors_are_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"rules": "shattered_highways", "table": {"width_mm": 1000, "depth_mm": 800}, "cars": [{"id": 1}]}')
    code, out, err = run(capsys, "measure", str(bad))
    assert code == 2 and out == "" and "car 1: no pose" in err and err.count("\n") == 1
    code, _, err = run(capsys, "measure", str(tmp_path / "none.json"))
    assert code == 2 and "no such scene file" in err
