"""Alpha Destructicus as a newcomer at the table meets it: what the headline says of a car that
exploded, what the board draws for a car that cannot move, where the Speed Freak reminder shows,
who is asked to draw a chip, the words of the round's log line, a penetrating hit on a bared side
and a drive whose camera path runs into a car."""

from __future__ import annotations

import math

from companion.dice import ChoiceRequest, DiceRequest, DiceThrow, FixedChoices, FixedDice, Placed, PlacementRequest
from companion.geometry import Pose
from companion.rules.base import rule_system
from companion.scene import parse_scene
from companion.session import GameSession
from tests.test_alpha_destructicus import BASE, session, working


def run(gen, faces=(), choices=()):
    """A resolution played to its end: dice from `faces`, choices in order, every piece put where asked."""
    faces, choices = list(faces), list(choices)
    answer = None
    try:
        while True:
            req = gen.send(answer)
            if isinstance(req, DiceRequest):
                answer = DiceThrow((faces.pop(0),) * len(req.dice), tuple(req.dice))
            elif isinstance(req, ChoiceRequest):
                answer = choices.pop(0) if choices else req.options[0]["value"]
            elif isinstance(req, PlacementRequest):
                answer = Placed((req.x_mm, req.y_mm, req.heading_deg, 0.0, 0.0), "as asked")
            else:
                raise AssertionError(req)
    except StopIteration as stop:
        return stop.value


def test_an_exploded_car_is_a_wreck_removed_from_play_not_off_the_table():
    """ "Spectacular Explosion ... Remove the wreck from play after the explosion" ("Penetrating Hit
    Table"): the headline's words for what the car has left are the book's."""
    s = session(prep=working(10, 12))
    rules, st = s.rules, s.state
    events, rolls = [], []
    run(rules._explode(st, st.vehicles[12], 150.0, 2, events, rolls, {}), faces=[1] * 20)
    assert st.vehicles[12].removed
    said = rules.condition(st, 12)
    assert "off the table" not in said and said == "wreck removed from play"


def test_a_rammer_wrecked_by_the_ram_it_won_breaches_no_wall():
    """ "By winning a ram against the building, a vehicle may breach the building and continue
    through" ("Terrain"): the Horse (cavalry, the bike table) rams the Bank and wins, but the Bank's
    roll beats its armour (none): a bike hit, 4, Crashed: "Cavalry ... are simply removed from
    play". Gone, it continues through nothing: no breach."""
    s = session()
    rules, st = s.rules, s.state
    horse = st.vehicles[14]
    # Against the Bank's south wall (y 650), facing it, and counted as having driven 2 in.
    horse.pose = Pose(450.0, 650.0 - 25.0 - 1.0, 90.0)
    st.acting, st.drove, st.ground_mm, st.spent_mm = "Ix", 14, 50.8, 50.8
    st.freaks["Ix"].aboard, st.freaks["Ix"].seat, st.freaks["Ix"].pos = 14, "driver", None
    events, rolls = [], []
    # rammer 6 (+1 its turn, -2 cavalry, -1 under 6 in) = 4; Bank 2 (-1 terrain, +1 more armour) = 2;
    # the Bank's 2 against the Horse's armour 0: a bike hit, 4 (Crashed).
    out = run(rules._ram(st, horse, "Bank", events, rolls, known_contact=True), faces=[6, 2, 4, 6, 6, 6, 6])
    assert out == "won", events
    assert horse.removed, events
    assert st.terrain["Bank"].breached == [], events
    assert not any("breach" in e for e in events), events
    assert any("goes no further" in e for e in events), events
    assert rules.condition(st, 14) == "removed from play"


def test_a_car_whose_engine_is_destroyed_draws_no_reach_and_a_broken_one_only_after_a_repair():
    """ "If the engine of a vehicle is not repaired, the vehicle may not move" ("Vehicle
    Components"): the board draws what the drive would allow."""
    s = session()
    rules, st = s.rules, s.state
    rhino = st.vehicles[10]
    assert rhino.engine.status == "damaged"         # "starts broken": one repair away
    (reach,) = rules.overlays(st, 10)["move_regions"]
    assert reach["name"] == "reach once the engine is repaired"
    rhino.engine.status = "destroyed"
    assert rules.overlays(st, 10)["move_regions"] == []
    # Zed, acting, has fired already: no repair this turn, so no reach either.
    rhino.engine.status = "damaged"
    st.acting, st.exclusive = "Zed", "fire"
    assert rules.overlays(st, 10)["move_regions"] == []
    rhino.engine.status = "working"
    assert rules.overlays(st, 10)["move_regions"][0]["name"] == "reach this turn"


def test_the_speed_freak_reminder_shows_on_the_card_and_the_turn_while_he_drives_short():
    s = session(prep=working(10))
    rules, st = s.rules, s.state
    assert rules.card(st, 10)["speed_freak"] is None           # nobody acting yet
    s.act({"act": "activate", "freak": "Zed"})
    card = rules.card(st, 10)
    assert "Zed must drive the Rhinocerator at least 6 in this turn if possible (0.0 in so far" in card["speed_freak"]
    assert "Speed Freak: Zed must drive the Rhinocerator at least 6 in" in rules.turn_text(st)
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [200.0 + 7 * 25.4, 200.0, 0.0]})
    assert rules.card(st, 10)["speed_freak"] is None
    assert "Speed Freak" not in rules.turn_text(st)


def test_the_chip_is_asked_of_the_player_who_moved_last():
    """Nobody chooses a blind draw; the book does not say who draws. Asking the first player every
    time named him as choosing every time: the bag goes to the player whose freak moved last."""
    rules = rule_system("alpha_destructicus")
    state = rules.new_game(BASE["rosters"], parse_scene(BASE))
    s = GameSession(rules, state, FixedDice([]), FixedChoices([]))
    s.start_round({})
    assert s.pending.player == "Ann"                 # before anyone moved: the first player
    s.choose("Ann", "Bob")
    s.act({"act": "activate", "freak": "Grub"})
    s.end_turn()
    assert isinstance(s.pending, ChoiceRequest) and s.pending.player == "Bob"
    s.choose("Bob", "Ann")
    s.act({"act": "activate", "freak": "Ix"})
    s.end_turn()
    assert s.pending.player == "Ann"


def test_the_rounds_log_line_does_not_say_the_round_twice():
    s = session()
    first = s.log[-1].to_json()["outcome"]["events"][0]
    assert "round" not in first and first.startswith("6 chips in the bag")


def test_a_natural_six_that_strips_the_last_point_reads_the_armour_it_had():
    """Unoccupied: "If there was no armor on this side to begin with, the vehicle is destroyed"
    ("Penetrating Hit Table"). With natural_six_strips_armour the six takes the point first; the
    side had 1 to begin with: its armour goes and it burns, it is not destroyed."""
    s = session({"natural_six_strips_armour": True})
    rules, st = s.rules, s.state
    king = st.vehicles[12]
    for f in st.aboard(12):
        f.aboard, f.seat, f.pos = None, None, (900.0, 600.0)
    king.armour["back"] = 1
    events = []
    run(rules._hit(st, king, 2, "back", events, [], {}, "a test gun"), faces=[6])
    assert not king.destroyed and king.burning and king.armour["back"] == 0, events
    # Bare to begin with: destroyed, and the words say why (unoccupied).
    events = []
    run(rules._hit(st, king, 2, "back", events, [], {}, "a test gun"), faces=[4])
    assert king.destroyed
    assert any("bare back, unoccupied" in e for e in events), events


def test_a_curved_camera_path_into_a_car_is_a_contact_its_chord_would_miss():
    """The table hands the drive the camera's path (a pose every 5 mm, activation.py); contact is
    looked for along all of it, not between its ends: an arc bulging 11 mm into the King Rhino."""
    s = session(prep=working(10), dice=[3] * 12)
    rules, st = s.rules, s.state
    st.vehicles[10].pose = Pose(200.0, 200.0, 0.0)
    king = st.vehicles[12]
    king.pose = Pose(350.0, 200.0 + 18 + 50 + 17, 0.0)    # its near side 50 mm left of the Rhinocerator's way
    pts = []
    for i in range(61):
        t = i / 60
        pts.append([200.0 + 300 * t, 200.0 + 61 * math.sin(math.pi * t),
                    math.degrees(math.atan2(61 * math.pi * math.cos(math.pi * t) / 300, 1)) if i else 0.0, 1.0, 0.5])
    chord = rules._path_contact(st, st.vehicles[10], [Pose(*pts[0]), Pose(*pts[-1])])
    assert chord is None
    found = rules._path_contact(st, st.vehicles[10], [Pose(*p) for p in pts])
    assert found is not None and found["thing"] == 12
