"""Stop The Truck! as a newcomer reads it (the usability pass): each box said in the book's
words, with a warning before a box that drives the car off the board is locked in; each thing
said once in an outcome; squares, not table coordinates, in the forms; each shoot field its own
label; board labels that fit a phone's squares; lengths in inches, as the book measures.

The board is tests/test_stop_the_truck.py's: squares of 100 mm, the truck in row 5, columns 5-8."""

from __future__ import annotations

import re

from tests.test_stop_the_truck import Game, at, specs


def box_choices(g, marker: int) -> list[dict]:
    spec = next(s for s in specs(g, marker) if s["act"] == "select")
    return next(f for f in spec["fields"] if f["name"] == "box")["choices"]


# --- 1. the boxes in the book's words, and the warning before a car drives off ------------

def test_each_box_says_its_gear_speed_and_sideways_move_in_words():
    """"Gears": "a forward speed (in squares) and a sideways move (in squares)"; "Some boxes are
    coloured RED and these require a driving roll"; "+1 or +2 ... a modifier to collision damage"."""
    g = Game({10: at(6, 2)})
    g.round()
    labels = {c["value"]: c["label"] for c in box_choices(g, 10)}
    assert labels["2:4 1L"].startswith("gear 2: 4 squares forward, 1 left, blue (a driving roll")
    assert labels["1:1 2R"].startswith("gear 1: 1 square forward, 2 right, red (a driving roll)")
    assert labels["4:8"].startswith("gear 4: 8 squares forward, green, +1 to collision rolls")
    assert labels["ES"].startswith("emergency stop")
    truck = {c["value"]: c["label"] for c in box_choices(g, 1)}
    assert truck["2:3 1L"] == "gear 2: speed 3, 1 left, yellow"


def test_a_box_that_may_drive_the_car_off_the_board_says_so_and_is_not_the_first():
    """The bike in column 2: 1 forward less the truck's speed. The truck, in gear 2, may go 2 to 5
    this turn (its gears 1-3), so 1 forward is off the back of the board at 3 or more ("Any
    vehicle that 'drives' off the edge of the board ... is out of the game"), 3 forward at 5 only;
    an emergency stop (0 forward) is off at every speed. The form's first choice, the one a player
    who picks nothing gets, keeps the car on the board."""
    g = Game({10: at(2, 4)})
    g.round()
    choices = box_choices(g, 10)
    labels = {c["value"]: c["label"] for c in choices}
    assert labels["1:1"].endswith("- off the board (out of the game) if the truck goes 3, 4 or 5")
    assert labels["1:3"].endswith("- off the board (out of the game) if the truck goes 5")
    assert labels["ES"].endswith("- off the board: out of the game")
    assert "off the board" not in labels["2:4"]
    assert "off the board" not in choices[0]["label"]
    warned = [("off the board" in c["label"]) for c in choices]
    assert warned == sorted(warned)             # the safe boxes first


def test_once_the_truck_declares_the_card_says_where_the_box_takes_the_car():
    g = Game({10: at(2, 4), 14: at(3, 2)})
    g.round()
    g.picks({10: "1:1", 14: "2:4"}, truck="2:3")
    assert g.rules.card(g.st, 10)["goes to"] == "off the board: out of the game"
    assert g.rules.card(g.st, 14)["goes to"] == "square 4,2"


# --- 2. each thing said once in an outcome ----------------------------------------------------

def test_the_steps_passed_are_one_line_in_players_words():
    """The last car moves and the turn goes on to shooting, every step between with nothing to do:
    one line says so, in the words the page uses for the steps, not a "step: driving" a step."""
    g = Game({10: at(2, 4), 11: at(3, 2)})
    g.round()
    g.picks({10: "2:3", 11: "2:3"}, truck="2:3")
    g.act(act="move", vehicle=10, to=at(2, 4))
    out = g.act(act="move", vehicle=11, to=at(3, 2))
    assert g.st.phase == "shooting"
    assert not [e for e in out["events"] if e.startswith("step:")], out["events"]
    steps = [e for e in out["events"] if e.startswith("on to ")]
    assert steps == ["on to shooting (driving rolls, collisions, the truck's sideways move, petrol bombs, "
                     "the auto-gyro: nothing to do)"], out["events"]
    assert sum("the truck" in e and "row" in e for e in out["events"]) == 0


def test_out_of_the_game_is_said_once():
    """The page's headline prints the outcome's events and each hurt piece's condition: a car that
    drove off the board is out of the game in the event, and its condition (its tracks) does not
    change, so the page does not say it again; a wrecked car's condition gives its tracks only."""
    g = Game({10: at(2, 4), 11: at(3, 2)})
    before = g.rules.condition(g.st, 10)
    g.round()
    g.picks({10: "1:1", 11: "2:3"}, truck="2:3")
    out = g.act(act="move", vehicle=10)
    said = " ".join(out["events"]) + " " + (g.rules.condition(g.st, 10) or "")
    assert said.count("out of the game") == 1, said
    assert g.rules.condition(g.st, 10) == before


# --- 3. squares, not table coordinates ---------------------------------------------------------

COORDINATES = re.compile(r"\bx \d+(?:\.\d+)? ?mm|\by \d+(?:\.\d+)? ?mm")


def test_the_move_and_the_slide_name_squares_not_coordinates():
    """The move form names the square (the book's grid: columns from the back, rows across), and
    the truck's slide its row; neither gives "about x 267 mm, y 254 mm"."""
    g = Game({11: at(6, 3), 12: at(6, 7)})
    g.round()
    g.picks({11: "2:4", 12: "2:3"}, truck="2:3 1L")
    g.act(act="move", vehicle=12, to=at(6, 7))          # the harpoon van first: lighter
    move = next(s for s in specs(g, 11) if s["act"] == "move")
    assert "square 7,3" in move["about"] and not COORDINATES.search(move["about"]), move["about"]
    assert "mm" not in move["about"]
    g.act(act="move", vehicle=11, to=at(7, 3))
    g.drive_rolls()
    assert g.st.phase == "truck"
    slide = next(s for s in specs(g, 1) if s["act"] == "truck_sideways")
    assert "row 6" in slide["about"] and "mm" not in slide["about"], slide["about"]


# --- 4. each shoot field its own label ------------------------------------------------------

def _shoot_labels(g, marker: int) -> list[str]:
    spec = next(s for s in specs(g, marker) if s["act"] == "shoot")
    return [f["label"] for f in spec["fields"] if f["kind"] != "fixed"]


def test_every_shoot_field_says_what_it_is():
    """The truck's shoot: who shoots, at which car, and where on it (the car, its harpoonist, its
    snake); a gang car's: what it shoots at (a part of the truck, a car on Max's side, a snake) and
    which one. No two fields of a form share a label."""
    from tests.test_stop_the_truck import shoot_setup
    g = shoot_setup({10: at(10, 4), 15: at(11, 6)})
    truck, bike = _shoot_labels(g, 1), _shoot_labels(g, 10)
    assert truck == ["who shoots", "at which car", "aim at (the car, its harpoonist or its snake)"], truck
    assert bike == ["shoot at", "which one"], bike
    for labels in (truck, bike):
        assert len(set(labels)) == len(labels)


# --- 6. lengths in inches, as the book measures ---------------------------------------------

MM = re.compile(r"\d\s?mm\b")


def test_refusals_and_judgements_give_lengths_in_inches():
    """The book measures in squares and inches ("Concept and Board Layout"), and the page's units
    are inches: a car put in the wrong square is refused with its margin in inches (it said
    "38.1 mm inside"), as is the move's judgement; the arcs a target list gives say inches too."""
    import pytest

    from companion.geometry import Pose
    from companion.rules.base import RulesError

    g = Game({10: at(3, 3), 15: at(9, 6)})
    g.round()
    g.picks({10: "2:4", 15: "2:3"}, truck="2:3")
    with pytest.raises(RulesError) as refused:
        g.act(act="move", vehicle=10, to=at(5, 3, dx=-12))
    text = str(refused.value)
    assert "square 5,3" in text and not MM.search(text), text
    assert re.search(r"\d\.\d\d in inside", text), text           # 38 mm inside: 1.50 in
    judged = g.rules.judge_move(g.st, 10, Pose(*at(5, 3)))
    assert judged["reasons"] and not any(MM.search(r) for r in judged["reasons"]), judged
    assert re.search(r"\d\.\d\d in\b", " ".join(judged["reasons"]))
    about = g.rules.board(g.st)["about"]
    assert "squares 3.94 in" in about and not MM.search(about), about
    for t in g.rules.targets(g.st, 1):
        assert not MM.search(t.get("arc_text", "")), t


# --- 5. board labels that fit a phone's squares ---------------------------------------------

#: A phone 390 px wide shows the 1219 mm demo table: a 3 in square is about 22 px, and the page's
#: smallest label is 11 px, about 6.6 px a character (0.6 em): 3 characters to a square.
PHONE_SQUARE_CHARS = 3


def test_the_truck_squares_and_the_reach_do_not_print_over_the_square_labels():
    """On a phone "tanker 4" ran over "tanker 3", and a car's reach ("2:3 1L" a square) over the
    squares' own "column,row". The truck's squares say "cab", "Max", "3", "4" (Max "Occupies the
    second square"; the tanker "squares 3 and 4"); the squares a car may reach are tinted, and
    only the box it picked is labelled, at the square's top, clear of the square's label."""
    g = Game({11: at(3, 3)}, extra={11: {"gear": 2}})
    truck = [c["label"] for c in g.rules.board(g.st)["cells"] if c["kind"] == "truck"]
    assert truck == ["cab", "Max", "3", "4"]
    assert all(len(t) <= PHONE_SQUARE_CHARS for t in truck)
    g.round()
    cells = g.rules.overlays(g.st, 11)["cells"]
    assert len(cells) > 3 and all(c["label"] == "" and c["label_at"] == "top" for c in cells)
    g.picks({11: "2:4"})
    cells = g.rules.overlays(g.st, 11)["cells"]
    assert [(c["label"], c["label_at"], c["square"]) for c in cells] == [("gear 2", "top", [4, 3])]
