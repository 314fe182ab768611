"""Car Cult on the page (issue 23), through the page's own server on the demo table as the camera
sees it: a down shift that rolls asks for its die and its outcome reads as every roll does (the
page's outcome box reads each roll's modifiers: a row without them threw "reading 'map'" and left
"Waiting for the dice first" with no dice box); without pre-measuring the preview refuses what
the resolution refuses (an allocation of more ST than were generated), and the live ruler judges
the declared move as its resolution will (too far: refused; into another car: halted there); the
board draws the mines and the routes they were laid along whichever car is selected; and the
demo table carries the draft's own terrain (rough and blocking, no gates).

Worked from car-cult-2016-draft.txt, "Down Shift", "Car Movement/Engines", "Core Mechanics" ("No
pre-measuring") and "Building a Car Cult" (Mines)."""

from __future__ import annotations

import copy
import math

import pytest
import shapely

from companion.commands.serve import with_scenery
from companion.geometry import Pose
from companion.rules.base import rule_system
from companion.scenario import load_scenario, run_scenario
from companion.scene import parse_scene
from vision.demo import demo_table

from test_car_cult import POSES, SCENARIOS, page  # noqa: F401 (page is a fixture)

MM = 25.4
ROLL_KEYS = {"asked", "face", "total", "modifiers"}


def _started(c, h):
    """Starter rosters, round 1 (the four tied cars' d20s typed): the War Rig (2 ST, Straight
    Five: 3-6 in, 4 ST generated) is up."""
    rosters = c.get("/api/rosters/starter?rules=car_cult").get_json()
    c.post("/api/game", json={"rules": "car_cult", "rosters": rosters}, headers=h)
    g = c.post("/api/round", json={"orders": {}}, headers=h).get_json()
    for face in (5, 20, 10, 15):
        g = c.post("/api/dice/typed", json={"faces": [face]}, headers=h).get_json()
    assert [o["vehicle"] for o in g["game"]["order"]][0] == 12 and g["pending"] is None
    return g


# --- the down shift that rolls ---------------------------------------------------------------

def test_a_down_shift_that_rolls_asks_for_its_die_and_its_outcome_reads_like_every_roll(page):
    c, h, _film = page
    _started(c, h)
    # 2 ST off the engine: more than the one free, so each rolls ("Down Shift": "roll one D20 for
    # each ST being removed that turn").
    g = c.post("/api/act", json={"act": "activate", "vehicle": 12, "downshift": 2}, headers=h).get_json()
    p = g["pending"]
    assert p["waiting"] == "dice" and p["dice"] == ["d20", "d20"] and p["so_far"] == [], p
    assert p["asked"] == "2d20 down shift (2 rolled of 2, 10+ each) for War Rig"
    g = c.post("/api/dice/typed", json={"faces": [4, 12]}, headers=h).get_json()
    assert g["pending"] is None
    out = g["last_outcome"]["event"]["outcome"]
    assert out["result"] == "activated" and any("failed down shift" in e for e in out["events"])
    # Every roll as the outcome box reads one: asked, face, total and its modifiers (none here).
    assert out["rolls"] and all(ROLL_KEYS <= set(r) and isinstance(r["modifiers"], list) for r in out["rolls"]), \
        out["rolls"]
    assert g["game"]["state"]["vehicles"]["12"]["components"]["engine"] == "....D"
    # The page is not stuck: the War Rig's actions are offered again.
    acts = [a["act"] for a in c.get("/api/car/12").get_json()["actions"]]
    assert "allocate" in acts


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_roll_of_every_worked_scenario_has_the_documented_shape(path):
    """docs/scenarios.md, "The outcome": `rolls` are `{"asked", "face", "total", "modifiers":
    [{"value", "reason"}]}` (the page's outcome box reads each one so)."""
    out = run_scenario(load_scenario(path), str(path))
    for n, step in enumerate(out["steps"]):
        for r in step.get("rolls", []) if isinstance(step, dict) else []:
            assert ROLL_KEYS <= set(r) and all({"value", "reason"} <= set(m) for m in r["modifiers"]), (n, r)


# --- one judgement on the page, without pre-measuring ------------------------------------------

def _drive(film, marker, start, to, others):
    """Frames 5 mm apart from `start` to `to` (x, y, heading), then three at rest."""
    n = max(1, int(math.dist(start[:2], to[:2]) // 5))
    for k in range(1, n + 1):
        f = k / n
        film(others + [(marker, start[0] + (to[0] - start[0]) * f, start[1] + (to[1] - start[1]) * f, start[2])])
    for _ in range(3):
        film(others + [(marker, *to)])


def test_the_preview_refuses_what_the_resolution_refuses_without_premeasuring(page):
    c, h, film = page
    _started(c, h)
    c.post("/api/act", json={"act": "activate", "vehicle": 12}, headers=h)
    # More ST than the 4 generated: each field within its own maximum, the sum not. The preview
    # used to say "Ready to declare" of it (no dry run without pre-measuring).
    over = {"act": "allocate", "vehicle": 12, "st_engine": 2, "st_machine_gun": 2, "st_dangerous_driver": 1}
    pre = c.post("/api/preview", json=over, headers=h).get_json()
    r = c.post("/api/act", json=over, headers=h)
    assert r.status_code == 409
    assert pre["ok"] is False and pre["why"] == r.get_json()["error"] == "the War Rig allocates 5 ST but generated 4"
    assert "judged" not in pre and "needs" in pre and pre["needs"] is None     # nothing measured or rolled
    ok = {"act": "allocate", "vehicle": 12, "st_machine_gun": 2}
    assert c.post("/api/preview", json=ok, headers=h).get_json()["ok"] is True
    c.post("/api/act", json=ok, headers=h)

    # The move is declared (its band drawn): the ruler judges it as it will resolve.
    others = [p for p in POSES if p[0] != 12]
    # 7 in west: past its 6 in maximum.
    _drive(film, 12, (900.0, 650.0, 180.0), (900.0 - 7 * MM, 650.0, 180.0), others)
    pre = c.post("/api/preview", json={"act": "move", "vehicle": 12}, headers=h).get_json()
    assert pre["ok"] is False and "its maximum is 6 in" in pre["why"], pre
    assert pre["judged"]["legal"] is False and pre["judged"]["fix"][0].startswith("bring it ")
    # Back, and 4.5 in west: the Hearse (at 700, its front at 740) is touched on the way: taken,
    # but it halts there (it used to say "the rules take this move").
    _drive(film, 12, (900.0 - 7 * MM, 650.0, 180.0), (900.0, 650.0, 180.0), others)
    others = [p for p in POSES if p[0] not in (12, 14)] + [(14, 700.0, 650.0, 0.0)]
    _drive(film, 12, (900.0, 650.0, 180.0), (900.0 - 4.5 * MM, 650.0, 180.0), others)
    pre = c.post("/api/preview", json={"act": "move", "vehicle": 12}, headers=h).get_json()
    assert pre["ok"] is True and pre["judged"]["legal"] is True, pre
    assert pre["judged"]["halts"].startswith("it halts where it touches the Hearse, after "), pre["judged"]
    g = c.post("/api/act", json={"act": "move", "vehicle": 12}, headers=h).get_json()
    # The resolution halts it there and asks for it to be put where it touched, in players' words.
    p = g["pending"] or {}
    placed = [e for e in g["log"] if e.get("detail", {}).get("act") == "move"]
    if p:
        assert p["waiting"] == "placement" and p["asked"] == "put the War Rig here: halted where it touched the Hearse"
        assert p["placement"]["to"][0] == pytest.approx(pre["judged"]["halt_at"][0], abs=0.5)
    else:                                     # the camera already saw it there: taken at once
        assert placed and placed[0]["outcome"]["result"] == "halted"
        assert placed[0]["placements"][0]["why"] == "halted where it touched the Hearse"


# --- the board: mines and their routes --------------------------------------------------------

def test_the_board_draws_the_mines_and_the_routes_they_were_laid_along():
    path = next(p for p in SCENARIOS if p.stem == "cc-05-mines-along-the-route")
    data = load_scenario(path)
    rules = rule_system("car_cult", data.get("options"))
    from companion.dice import FixedChoices, FixedDice
    from companion.session import GameSession
    session = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)), FixedDice(data["dice"]),
                          FixedChoices(data.get("choices", [])))
    laid = None
    for step in data["steps"]:
        if "round" in step:
            session.start_round(step["round"])
        elif step.get("end_turn"):
            session.end_turn()
        elif "act" in step:
            session.act({k: v for k, v in step.items() if not k.startswith("expect")})
            if laid is None and session.state.mines:
                laid = rules.board(session.state)
    # Just laid: the Dust Devil's route with both markers on it, and the two markers.
    assert [(c["kind"], c["label"]) for c in laid["cells"]] == [
        ("hazard", "Dust Devil's mines"), ("mine", "mine 1"), ("mine", "mine 2")]
    route = shapely.Polygon(laid["cells"][0]["polygon"])
    for cell in laid["cells"][1:]:
        assert route.contains(shapely.Polygon(cell["polygon"]).centroid)
    # After the game: mine 2 went off and was removed; mine 1 and its route are still drawn.
    board = rules.board(session.state)
    assert [(c["kind"], c["label"]) for c in board["cells"]] == [("hazard", "Dust Devil's mines"), ("mine", "mine 1")]
    assert "routes they were laid along" in board["about"]


# --- the demo table --------------------------------------------------------------------------

def test_the_demo_carries_the_drafts_terrain_and_no_gates():
    """"There are two types of terrain, Rough and Blocking" ("Down Shift"): the demo has both,
    as the rules read them (a rough piece rolls, a blocking one halts), and no gates (the draft
    has none); every piece on the table, clear of where the cars start and of a first move of
    up to 6 in (the starter Straight Fives' maximum with 2 ST) straight ahead."""
    rules = rule_system("car_cult")
    t = with_scenery(demo_table(), rules)
    assert t.gates == ()
    assert sorted(x.kind for x in t.terrain) == ["blocking", "blocking", "rough", "rough"]
    layout = rules.demo_layout([(c.id, c.name, c.length_mm, c.width_mm) for c in t.cars], (t.width_mm, t.depth_mm))
    scene = parse_scene({"rules": "car_cult", "table": {"width_mm": t.width_mm, "depth_mm": t.depth_mm},
                         "cars": [{"id": c.id, "name": c.name, "x_mm": layout[c.id][0], "y_mm": layout[c.id][1],
                                   "heading_deg": layout[c.id][2], "length_mm": c.length_mm, "width_mm": c.width_mm}
                                  for c in t.cars],
                         "terrain": [{"kind": x.kind, "name": x.name, "points": [list(p) for p in x.points]}
                                     for x in t.terrain]})
    rosters = rules.starter_rosters([(c.id, c.name) for c in t.cars])
    state = rules.new_game(rosters, scene)
    from companion.rules.car_cult import ROUGH_KINDS
    assert sorted(x.kind in ROUGH_KINDS for x in state.terrain) == [False, False, True, True]
    assert sum(x.blocks_sight for x in state.terrain) == 2
    table = shapely.box(0, 0, t.width_mm, t.depth_mm)
    for x in state.terrain:
        assert table.contains(x.polygon), x.name
    for v in state.vehicles.values():
        p = v.pose
        sweep = shapely.union_all([v.footprint(Pose(*p.to_table(k * MM, 0.0), p.heading_deg)).polygon
                                   for k in (0, 2, 4, 6)]).convex_hull
        for x in state.terrain:
            assert sweep.distance(x.polygon) > 10, (v.name, x.name)


def test_the_demo_scenery_scales_to_another_table():
    rules = rule_system("car_cult")
    small = rules.demo_scenery((914.4, 609.6))
    assert small["gates"] == [] and len(small["terrain"]) == 4
    for x in small["terrain"]:
        assert all(0 <= px <= 914.4 and 0 <= py <= 609.6 for px, py in x["points"]), x["name"]
