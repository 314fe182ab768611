"""A piece the rules move waits to be put where they say, through the table game as the page
drives it: the camera seeing it there, standing still, takes it, and the record keeps the
camera's pose; nothing else happens meanwhile; an undo puts pieces back the same way."""

import json
from pathlib import Path

import pytest

from companion.camera_scenario import CameraRun
from companion.game import GameError

SCENARIO = Path(__file__).resolve().parent.parent / "examples" / "scenarios" / "04-lost-control.json"


@pytest.fixture()
def lost_control():
    """The Interceptor's Move roll comes up 1: Lost Control sends it to box 1, and the game
    waits for it to be put there (04-lost-control, played through the camera up to that)."""
    run = CameraRun(json.loads(SCENARIO.read_text()), str(SCENARIO))
    run.film.slide(10, [680, 430, 0], "the move")
    run.film.read()
    run.game.act({"act": "move", "vehicle": 10})
    run.game.answer_typed([1])
    run.game.answer_typed([1])
    return run


def test_the_page_is_told_where_the_rules_put_the_car_and_why(lost_control):
    pending = lost_control.game.game_json()["pending"]
    assert pending["waiting"] == "placement"
    p = pending["placement"]
    assert p["marker"] == 10 and p["name"] == "Interceptor"
    assert p["to"][:2] == pytest.approx([714.3, 349.2], abs=1.0)     # from where the camera saw it start
    assert "Lost Control" in p["why"] and "box 1" in p["why"]
    assert " in " in p["why"] and not any(ch.isdigit() for ch in p["why"].split("(")[-1].replace("box 1", ""))
    assert p["seen"]["off_mm"] == pytest.approx(((714.3 - 680) ** 2 + (430 - 349.2) ** 2) ** 0.5, abs=2)
    assert pending["asked"].startswith("put the Interceptor here: Lost Control")


def test_nothing_else_is_done_while_a_placement_waits(lost_control):
    game = lost_control.game
    before = game.game_json()
    with pytest.raises(GameError, match="waiting for put the Interceptor here"):
        game.act({"act": "move", "vehicle": 11})
    with pytest.raises(GameError, match="not the Rust Bucket"):
        game.place(11)
    with pytest.raises(GameError, match=r"stands \d+ mm .* from where the rules put it"):
        game.place(10)                        # still where the hand left it
    with pytest.raises(GameError, match="does not let it stay"):
        game.place(10, stay=True)
    after = game.game_json()
    assert after["pending"]["placement"]["to"] == before["pending"]["placement"]["to"]
    assert len(after["log"]) == len(before["log"])


def test_put_where_the_page_shows_the_camera_takes_it_and_the_record_keeps_its_pose(lost_control):
    run, game = lost_control, lost_control.game
    to = game.game_json()["pending"]["placement"]["to"]
    run.film.slide(10, [to[0] + 4, to[1] - 3, to[2] + 2], "put where the page shows")
    g = game.game_json()
    assert g["pending"] is None
    event = game.session.log[-1]
    assert event.outcome["result"] == "lost control"
    (placed,) = [p for p in event.placements if p["marker"] == 10]
    assert placed["how"] == "camera"
    truth = run.film.pose(10)
    pose = g["game"]["state"]["vehicles"]["10"]["pose"]
    assert pose[0] == pytest.approx(truth[0], abs=1.0) and pose[1] == pytest.approx(truth[1], abs=1.0)
    assert placed["placed"][:2] == pytest.approx(pose[:2], abs=0.01)


def test_an_undo_asks_for_the_car_back_where_its_turn_had_it(lost_control):
    run, game = lost_control, lost_control.game
    to = game.game_json()["pending"]["placement"]["to"]
    run.film.slide(10, to, "put where the page shows")
    assert game.game_json()["pending"] is None
    game.undo()
    pending = game.game_json()["pending"]
    assert pending["waiting"] == "placement" and pending["placement"]["put_back"]
    # Asked in one plain sentence (it once said "put the Interceptor back back where it stood").
    assert pending["asked"].startswith("put the Interceptor back where it stood before the undone "), pending["asked"]
    assert pending["placement"]["to"][:2] == pytest.approx([600.0, 400.0], abs=1.5)
    with pytest.raises(GameError, match="to be put back"):
        game.act({"act": "move", "vehicle": 10})
    with pytest.raises(GameError, match="cannot stay"):
        game.place(10, stay=True)
    run.film.slide(10, [601, 399, 1], "put back by its ghost")
    assert game.game_json()["pending"] is None
    run.film.slide(10, [680, 430, 0], "the move again")
    run.film.read()
    game.act({"act": "move", "vehicle": 10})
    game.answer_typed([8])
    assert game.game_json()["pending"] is None
    assert game.session.log[-1].outcome["result"] == "moved"


def test_a_held_car_moved_with_no_move_resolved_keeps_the_turn_from_ending():
    """The usability pass: the Interceptor pushed 30 mm before its crew acted, then its hero
    unjammed instead of moving, and ending the turn let go of it where the hand had left it (a
    free move). The end of the turn is refused until it is back, the Round tab is told so before
    anyone presses it, and a new round is greyed while this one is played, in the rules' words."""
    run = CameraRun(json.loads(SCENARIO.read_text()), str(SCENARIO))
    game = run.game
    checks = game.game_json()["turn_checks"]
    assert checks["round"] is None and "start the first round" in checks["end_turn"]
    offered = game.session.rules.round_orders(game.session.state)
    g = game.start_round({p: [c["value"] for c in cars] for p, cars in offered.items()})
    for face in (6, 1):                       # initiative: Max 6, Joe 1
        if g["pending"]:
            g = game.answer_typed([face])
    assert g["pending"] is None
    active = game.session.rules.active_marker(game.session.state)
    assert active is not None
    name = game.session.rules.pieces(game.session.state)[active].name
    start = run.film.pose(active)
    checks = game.game_json()["turn_checks"]
    assert checks["end_turn"] is None
    assert checks["round"] and "round" in checks["round"]
    run.film.slide(active, [start[0] + 30, start[1], start[2]], "pushed before its crew acted")
    said = game.game_json()["turn_checks"]["end_turn"]
    assert said and f"the {name} stands 30 mm from where the game has it" in said
    before = len(game.session.log)
    with pytest.raises(GameError, match=f"cannot end the turn now: the {name} stands 30 mm"):
        game.end_turn()
    assert len(game.session.log) == before
    run.film.slide(active, start, "put back on its outline")
    assert game.game_json()["turn_checks"]["end_turn"] is None
    game.end_turn()
    assert game.session.log[-1].kind == "end_turn"
