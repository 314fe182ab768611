"""A whole game of Stop The Truck! played on its demo page (`companion demo --rules
stop_the_truck`) in a real Chromium, as a table of players plays it: three whole turns of the
book's sequence ("Move sequence"; TURN SEQUENCE) and a wrecked gang player's replacement coming
on after them (docs/actions/stop-the-truck.md). Every secret box and bomb square is picked on
the car's own form, every car dragged on the board into the square its move's form names, every
die typed into the page's dice box, every choice answered with the page's buttons, and every car
the rules move (a bump, a push, the truck's slide) dragged onto the outline the page draws.
After every resolution the record and the camera agree: each vehicle in play stands in GET
/api/game where the camera sees it (within max(3 mm, 3 sigma) and 3 degrees), nothing is out
of place and nothing waits.

The demo's starter rosters are the whole gang (the truck and four gang players); the auto-gyro
and a vehicle on the truck's side are Max's only if his roster has them (docs/stop-the-truck.md,
"Rosters"; "Notes", The AutoGyro: "Comes on The Truck's side"; "If Max is being overwhelmed ...
suggest one vehicle comes on on the Truck's side"). So the players first set the game up on the
Setup tab, in its roster form: Max also drives the Buggy (a Stock Car on his side) and flies the
Hearse (the Auto-Gyro), and the Rust Bucket (Open Dirt Buggy, Gang 1) and the War Rig (Bike,
Gang 2) are the gang; the cars stay where the demo stands them. (The starter rosters are left
as they are: the first activation's test plays them.) With that, every action of the actions
page is taken at least once:

- Start a turn and End the turn (each turn); Pick a box (every vehicle, each turn; the truck's
  petrol bomb square in turn 2); Declare speed (each turn);
- Move (every vehicle, each turn); Move off the board (the War Rig, turn 3: its box keeps it
  far slower than the truck); Come on (the War Rig's player brings on a Light Trike, between
  turns after turn 3: "come back on next turn");
- Driving roll (the Buggy's blue boxes, turns 1 and 2, and its red one, turn 3; the truck's
  blue slide, turn 3);
- Collide (the War Rig into the truck's square, turn 2, whose player then chooses on the page
  that it avoids; the Buggy into the Rust Bucket, turn 2: the Rust Bucket is bumped and put in
  its new square), Avoid (the War Rig, out of the truck's square);
- Slide the truck (turn 2, one row left; turn 3, one row right, shoving the Buggy: its push
  rolled and the Buggy put in its new square first, then the truck);
- Petrol bombs (turn 2, on the War Rig in the square the truck picked, moved with its slide);
- Drop (the Hearse's petrol bomb on the Rust Bucket, turn 1) and Drop nothing (turn 2);
- Shoot: a gang vehicle (the War Rig at petrol bomber 1, turn 1; the Rust Bucket at the
  truck's right tyres, turn 3), the truck (its rear crossbowman at the nearest, turn 1) and a
  vehicle on Max's side (the Buggy at the Rust Bucket, turn 1).

None is left out.
"""

from __future__ import annotations

import math

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import drag_car_to, open_demo, record_agrees_with_camera, tracked
from tests.test_browser_demo import open_action as open_form

pytestmark = pytest.mark.browser

#: Generous: a car drives where it is dragged at a hand's pace, slower on a busy machine.
WAIT_MS = 120000
TRUCK, RUST_BUCKET, WAR_RIG, BUGGY, HEARSE = 10, 11, 12, 13, 14


@pytest.fixture
def truck_demo():
    """A playable demo of its own whose game is Stop The Truck!, its cars where the game begins."""
    yield from _demo("--rules", "stop_the_truck", scripted=False)


def board_point(page, along: float, across: float) -> tuple[float, float]:
    """A point of the board (squares from its back right corner, along and across it) on the
    table, as the game laid the board from the truck's pose when it began."""
    s = state(page)
    x0, y0, h = s["board_origin"]
    a, side = math.radians(h), s["square_mm"]
    f, l = along * side, across * side
    return x0 + f * math.cos(a) - l * math.sin(a), y0 + f * math.sin(a) + l * math.cos(a)


def middle(page, column: int, row: int) -> tuple[float, float]:
    """The middle of square column,row (counted from 1, as the page labels them)."""
    return board_point(page, column - 0.5, row - 0.5)


# --- reading the game -----------------------------------------------------------------------

def api_game(page) -> dict:
    """GET /api/game, as the page's own fetch (reading only)."""
    return page.evaluate("async () => (await fetch('api/game')).json()")


def state(page) -> dict:
    return api_game(page)["game"]["state"]


def last_outcome(page) -> dict:
    """The outcome of the last resolution, once it is over: a car a resolution moved (a move's
    own car too) is taken when the camera sees it standing still, and only then is it done."""
    page.wait_for_function("window.companion.game && !window.companion.game.pending", timeout=WAIT_MS)
    g = api_game(page)
    assert g["pending"] is None, g["pending"]
    return g["last_outcome"]["event"]["outcome"]


def squares(page) -> dict[int, list[int] | None]:
    return {int(m): v["square"] for m, v in state(page)["vehicles"].items()}


def agree(page, when: str) -> None:
    """The record and the camera agree: nothing waits, nothing is out of place, and every vehicle
    in play stands in the game where the page's latest snapshot sees it (within its doubt)."""
    # A car a resolution moved is taken once the camera sees it standing still: wait for that.
    page.wait_for_function("window.companion.game && !window.companion.game.pending", timeout=WAIT_MS)
    g = api_game(page)
    record_agrees_with_camera(page, g, when)


def wait_version_after(page, version: int) -> None:
    page.wait_for_function(f"window.companion.game.version !== {version}", timeout=WAIT_MS)


def wait_phase(page, phase: str) -> None:
    page.wait_for_function("(p) => window.companion.game.game.state.phase === p", arg=phase, timeout=WAIT_MS)


# --- the page's controls ----------------------------------------------------------------------

def select(page, car: int) -> None:
    """Tap a car on the board: its card."""
    page.click(f'#cars [data-car-id="{car}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{car}"]', timeout=WAIT_MS)


def open_action(page, car: int, act: str) -> None:
    """The car's card, its action's button, the form the page draws for it."""
    select(page, car)
    open_form(page, act, WAIT_MS)


def options(page, field: str) -> list[str]:
    return page.eval_on_selector_all(f'#action-form select[name="{field}"] option', "os => os.map(o => o.value)")


def choose(page, field: str, value) -> None:
    """Pick an option of one of the form's menus (a square [column, row] is offered as "c,r")."""
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    assert text in options(page, field), (field, text, options(page, field))
    page.select_option(f'#action-form select[name="{field}"]', text)


def resolve(page) -> None:
    """Once the page's preview says the action holds, Resolve: the form closes (taken)."""
    page.wait_for_selector("#action-form #conditions.holds", timeout=WAIT_MS)
    version = page.evaluate("window.companion.game.version")
    page.click("#resolve:not([disabled])", timeout=WAIT_MS)
    page.wait_for_function("document.getElementById('action-form').hidden || "
                           "(document.getElementById('action-error') || {}).textContent", timeout=WAIT_MS)
    assert page.is_hidden("#action-form"), page.inner_text("#action-error")
    wait_version_after(page, version)


def dice(page, asked: str, *faces: int) -> None:
    """The dice box asks for these dice (its words include `asked`): the faces typed in, Use."""
    try:
        page.wait_for_function("""(t) => { const p = window.companion.game.pending;
            return p && p.waiting === 'dice' && p.asked.includes(t) && !document.getElementById('dice').hidden
                && document.getElementById('dice-asked').textContent.includes(t); }""", arg=asked, timeout=WAIT_MS)
    except Exception:
        pytest.fail(f"the dice box did not ask for {asked!r}: "
                    + repr(page.evaluate("JSON.stringify(window.companion.game.pending)")))
    inputs = page.locator("#dice-inputs input")
    assert inputs.count() == len(faces), (page.inner_text("#dice-asked"), faces)
    for i, face in enumerate(faces):
        inputs.nth(i).fill(str(face))
    version = page.evaluate("window.companion.game.version")
    page.click("#dice-use")
    wait_version_after(page, version)


def answer(page, player: str, value: str) -> None:
    """A choice the rules ask of one player, answered with that player's button."""
    page.wait_for_selector("#choice:not([hidden])", timeout=WAIT_MS)
    assert page.inner_text("#choice-title") == f"{player}, your choice"
    version = page.evaluate("window.companion.game.version")
    page.click(f'#choice-options button[data-choice="{value}"]')
    wait_version_after(page, version)


def put_in_place(page, name: str, square: list[int] | None = None, row: int | None = None) -> dict:
    """The rules moved a car: the page draws where and says so, naming it; the car is dragged
    onto that outline (its pose read from the game), and the game takes it once the camera sees
    it standing there. The placement."""
    page.wait_for_function("window.companion.game.pending && window.companion.game.pending.waiting === 'placement'",
                           timeout=WAIT_MS)
    p = page.evaluate("window.companion.game.pending.placement")
    assert p["name"] == name, p
    if square is not None:
        assert p["why"].endswith(f"into square {square[0]},{square[1]}"), p
    if row is not None:
        assert p["why"].endswith(f"into row {row}"), p
    page.wait_for_selector("#placement:not([hidden])", timeout=WAIT_MS)
    assert name in page.inner_text("#placement-asked"), page.inner_text("#placement-asked")
    page.wait_for_selector(f'#placement-layer .place-target[data-place-for="{p["marker"]}"]', timeout=WAIT_MS)
    seen = tracked(page, p["marker"])
    turn = abs((seen["heading_deg"] - p["to"][2] + 180) % 360 - 180)
    drag_car_to(page, p["marker"], p["to"][0], p["to"][1], None if turn < 1.0 else round(p["to"][2]),
                timeout_ms=WAIT_MS)
    page.wait_for_function("""(to) => { const p = window.companion.game.pending;
        return !p || p.waiting !== 'placement' || String(p.placement.to) !== String(to); }""",
                           arg=p["to"], timeout=WAIT_MS)
    return p


def start_turn(page, n: int) -> None:
    """The Round tab's start button: no play order is asked (the book's is lightest first)."""
    page.click('#tabs [data-tab="round"]')
    page.wait_for_selector("#start-round:not([disabled])", timeout=WAIT_MS)
    assert page.query_selector('#order-form select') is None     # no play order to give
    version = page.evaluate("window.companion.game.version")
    page.click("#start-round")
    wait_version_after(page, version)
    page.wait_for_function(f"window.companion.game.game.state.phase === 'select' && "
                           f"window.companion.game.game.state.turn === {n}", timeout=WAIT_MS)


def end_turn(page) -> None:
    """The Round tab's button, after shooting (whoever has not shot passes)."""
    page.click('#tabs [data-tab="round"]')
    page.wait_for_selector("#end-turn", state="visible", timeout=WAIT_MS)
    version = page.evaluate("window.companion.game.version")
    page.click("#end-turn")
    wait_version_after(page, version)
    wait_phase(page, "turn_over")


def pick_boxes(page, boxes: dict[int, str], bomb1: list[int] | None = None) -> None:
    """Every vehicle's player picks a box on its card's form, in secret (the truck's petrol bomb
    square too); then the truck declares its speed and the picks show."""
    for car, box in boxes.items():
        open_action(page, car, "select")
        choose(page, "box", box)
        if car == TRUCK and bomb1 is not None:
            choose(page, "bomb1", bomb1)
        resolve(page)
        page.wait_for_function(f"window.companion.game.game.state.vehicles['{car}'].selected", timeout=WAIT_MS)
        assert state(page)["vehicles"][str(car)]["box"] is None           # secret until declared
    assert all(e["detail"]["box"] == "(secret)" for e in api_game(page)["log"][:len(boxes)])
    open_action(page, TRUCK, "declare")
    resolve(page)
    wait_phase(page, "move")
    shown = {int(m): v["box"] for m, v in state(page)["vehicles"].items() if v["box"] is not None}
    assert shown == boxes, shown


def move(page, car: int, square: list[int]) -> None:
    """The next mover (lightest first): its Move form names the square its box reaches and the
    pose of its middle; the car is dragged there and the move resolved (a box needs no dice)."""
    page.wait_for_function(f"window.companion.game.game.state.next_to_move === {car}", timeout=WAIT_MS)
    open_action(page, car, "move")
    spec = page.evaluate("window.companion.car.actions.find(a => a.act === 'move')")
    assert spec["place"][0]["square"] == square, spec
    to = spec["place"][0]["pose"]
    drag_car_to(page, car, to[0], to[1], timeout_ms=WAIT_MS)
    page.wait_for_function("document.getElementById('preview').textContent.includes('Move: legal')",
                           timeout=WAIT_MS)
    resolve(page)
    out = last_outcome(page)
    assert out["result"] == "moved" and out["to_square"] == square, out
    agree(page, f"the {out['vehicle']} moved")


def drive_roll(page, car: int, asked: str, face: int) -> dict:
    open_action(page, car, "drive_roll")
    resolve(page)
    dice(page, asked, face)
    out = last_outcome(page)
    assert out["result"] == "rolled" and out["passed"], out
    agree(page, asked)
    return out


# --- the game ---------------------------------------------------------------------------------

def set_up_max_with_the_gyro(page) -> None:
    """Setup: the gang's rosters of the Buggy and the Hearse go; Max's roster gets them, the
    Buggy as a Stock Car on his side and the Hearse as the Auto-Gyro; the game starts anew."""
    page.click('#tabs [data-tab="setup"]')
    page.wait_for_selector('#roster-form fieldset.roster[data-roster="4"]', timeout=WAIT_MS)
    assert page.input_value("#setup-rules") == "stop_the_truck"
    for k in (4, 3):                     # Gang 4's (the Hearse) and Gang 3's (the Buggy)
        page.locator(f'#roster-form fieldset.roster[data-roster="{k}"]').get_by_role(
            "button", name="Remove this player", exact=True).click()
    page.wait_for_function("window.companionSetup.rosters.length === 3", timeout=WAIT_MS)
    max_roster = page.locator('#roster-form fieldset.roster[data-roster="0"]')
    for marker, label, template in ((BUGGY, "Buggy (marker 13)", "stock_car"),
                                    (HEARSE, "Hearse (marker 14)", "auto_gyro")):
        max_roster.locator('button[data-add="vehicles"]').click()
        item = max_roster.locator('[data-roster-list="vehicles"] .roster-item').last
        item.locator('select[data-roster-key="marker"]').select_option(label=label)
        item = max_roster.locator('[data-roster-list="vehicles"] .roster-item').last
        item.locator('input[data-roster-key="template"]').fill(template)
    rosters = page.evaluate("window.companionSetup.rosters")
    assert [(r["player"], [(v["marker"], v["template"]) for v in r["vehicles"]]) for r in rosters] == [
        ("Max", [(TRUCK, "the_truck"), (BUGGY, "stock_car"), (HEARSE, "auto_gyro")]),
        ("Gang 1", [(RUST_BUCKET, "open_dirt_buggy")]), ("Gang 2", [(WAR_RIG, "bike")])], rosters
    page.click("#setup-start")
    page.wait_for_selector("#confirm-end", state="visible", timeout=WAIT_MS)
    page.click("#confirm-end-yes")
    page.wait_for_function("window.companion.game.game && window.companion.game.game.state.vehicles['14']"
                           " && window.companion.game.game.state.vehicles['14'].template === 'auto_gyro'",
                           timeout=WAIT_MS)


def test_three_turns_of_the_chase_with_every_action_played_through_the_page(truck_demo, browser):
    page, errors = open_demo(browser, truck_demo)
    page.wait_for_function("window.companion.game.game && window.companion.game.game.rules.name === 'stop_the_truck'",
                           timeout=WAIT_MS)
    set_up_max_with_the_gyro(page)
    g = api_game(page)["game"]
    assert g["state"]["phase"] == "setup" and g["state"]["vehicles"]["13"]["owner"] == "Max"
    assert squares(page) == {TRUCK: [8, 5], RUST_BUCKET: [3, 3], WAR_RIG: [3, 7], BUGGY: [2, 5], HEARSE: [4, 2]}
    agree(page, "the start")

    # ============ Turn 1: the truck at speed 5; the gyro's bomb; three shots. ============
    start_turn(page, 1)
    agree(page, "turn 1 begins")
    pick_boxes(page, {TRUCK: "3:5", RUST_BUCKET: "3:6", WAR_RIG: "3:5 1R", BUGGY: "3:6 1R", HEARSE: "1:6"})
    assert state(page)["truck"]["speed"] == 5
    agree(page, "turn 1 declared")
    move(page, RUST_BUCKET, [4, 3])
    move(page, WAR_RIG, [3, 6])
    move(page, BUGGY, [3, 4])
    move(page, HEARSE, [5, 2])
    wait_phase(page, "driving")
    snap(page, "st-whole-1-turn-1-moved")
    drive_roll(page, BUGGY, "blue driving roll for the Buggy", 4)
    # No collision, no slide, no bomb square: on to the auto-gyro, over the Rust Bucket.
    wait_phase(page, "gyro")
    open_action(page, HEARSE, "drop")
    choose(page, "payload", "bomb")
    choose(page, "target", RUST_BUCKET)
    resolve(page)
    dice(page, "the Hearse drops a bomb on the Rust Bucket", 3)
    dice(page, "petrol bomb on the Rust Bucket", 2)
    out = last_outcome(page)
    assert out["result"] == "hit" and out["where"] == "adjacent", out
    agree(page, "turn 1, the drop")
    wait_phase(page, "shooting")
    # The Rust Bucket was bombed: no shot for it. The War Rig shoots petrol bomber 1.
    select(page, RUST_BUCKET)
    page.wait_for_function(f"window.companion.car && window.companion.car.card.marker === {RUST_BUCKET}",
                           timeout=WAIT_MS)
    assert [a["act"] for a in page.evaluate("window.companion.car.actions")] == []
    open_action(page, WAR_RIG, "shoot")
    choose(page, "at", "bomber1")
    resolve(page)
    dice(page, "the War Rig shoots at petrol bomber 1", 2)
    dice(page, "effect on petrol bomber 1", 4)
    assert state(page)["truck"]["bombers"] == [9, 10]
    agree(page, "turn 1, the War Rig's shot")
    # The Buggy, on Max's side, shoots the Rust Bucket ahead of it.
    open_action(page, BUGGY, "shoot")
    choose(page, "target", RUST_BUCKET)
    resolve(page)
    dice(page, "the Buggy shoots at", 2)
    dice(page, "effect on the Rust Bucket", 2)
    agree(page, "turn 1, the Buggy's shot")
    # The truck's rear crossbowman shoots the nearest car behind it.
    open_action(page, TRUCK, "shoot")
    choose(page, "shooter", "gunner")
    assert options(page, "target") == [str(RUST_BUCKET)]
    choose(page, "target", RUST_BUCKET)
    resolve(page)
    dice(page, "the crossbowman shoots at", 4)
    dice(page, "effect on the Rust Bucket", 2)
    assert state(page)["vehicles"][str(RUST_BUCKET)]["structure"] == 3
    agree(page, "turn 1, the crossbowman's shot")
    end_turn(page)
    agree(page, "turn 1 over")
    assert state(page)["distance"] == 5

    # ============ Turn 2: an avoid, a collision and its bump, the slide, a bomb, no drop. ============
    start_turn(page, 2)
    pick_boxes(page, {TRUCK: "3:4 1L", RUST_BUCKET: "4:6", WAR_RIG: "3:6 1R", BUGGY: "4:7 1R", HEARSE: "1:6"},
               bomb1=[4, 4])
    assert state(page)["truck"]["bomb_squares"] == "hidden"
    move(page, RUST_BUCKET, [6, 3])
    move(page, WAR_RIG, [5, 5])                        # into the truck's tanker square
    move(page, BUGGY, [6, 3])                          # into the Rust Bucket's square
    move(page, HEARSE, [7, 2])
    drive_roll(page, BUGGY, "blue driving roll for the Buggy", 4)
    wait_phase(page, "collisions")
    # The War Rig came into the truck's square: its collision, and its player may avoid it.
    open_action(page, WAR_RIG, "collide")
    resolve(page)
    assert "does the War Rig avoid the collision in square 5,5?" in page.inner_text("#choice-asked")
    answer(page, "Gang 2", "avoid")
    assert last_outcome(page)["result"] == "avoiding"
    open_action(page, WAR_RIG, "avoid")
    choose(page, "square", [4, 5])
    drag_car_to(page, WAR_RIG, *middle(page, 4, 5), timeout_ms=WAIT_MS)
    resolve(page)
    out = last_outcome(page)
    assert out["result"] == "avoided" and out["square"] == [4, 5], out
    agree(page, "turn 2, the War Rig avoids")
    # The Buggy into the Rust Bucket: front into its rear with its box's +1; 5 + 1 on the
    # standard chart: 1 point to the Rust Bucket, bumped away from the truck into square 6,2.
    open_action(page, BUGGY, "collide")
    resolve(page)
    dice(page, "collision: the Buggy into the Rust Bucket in square 6,3", 5)
    put_in_place(page, "Rust Bucket", square=[6, 2])
    out = last_outcome(page)
    assert out["result"] == "collided" and out["score"] == 6 and out["bumped"] == RUST_BUCKET, out
    assert out["placed"][0]["square"] == [6, 2]
    agree(page, "turn 2, the collision")
    snap(page, "st-whole-2-turn-2-bumped")
    # The truck slides one row left (its box's 1L): it is put there.
    wait_phase(page, "truck")
    open_action(page, TRUCK, "truck_sideways")
    resolve(page)
    put_in_place(page, "Interceptor", row=6)
    assert last_outcome(page)["row"] == 6 and state(page)["truck"]["row"] == 6
    agree(page, "turn 2, the truck's slide")
    # The bomb square, picked as 4,4, moved with the truck to 4,5: the War Rig's.
    wait_phase(page, "bombs")
    assert state(page)["truck"]["bomb_squares"] == [[4, 5], None]
    open_action(page, TRUCK, "bombs")
    resolve(page)
    dice(page, "petrol bomb on the War Rig (petrol bomber 1)", 2)
    assert last_outcome(page)["hit"] == [WAR_RIG]
    agree(page, "turn 2, the petrol bombs")
    # The Rust Bucket is next to the gyro: its player drops nothing.
    wait_phase(page, "gyro")
    open_action(page, HEARSE, "pass")
    resolve(page)
    assert last_outcome(page)["result"] == "passed"
    agree(page, "turn 2, the gyro passes")
    wait_phase(page, "shooting")
    end_turn(page)
    agree(page, "turn 2 over")
    s = state(page)
    assert s["distance"] == 9 and s["vehicles"][str(RUST_BUCKET)]["structure"] == 2
    assert s["vehicles"][str(WAR_RIG)]["structure"] == 2

    # ============ Turn 3: the War Rig falls off the board; the truck shoves the Buggy. ============
    start_turn(page, 3)
    pick_boxes(page, {TRUCK: "3:5 1R", RUST_BUCKET: "3:3 1L", WAR_RIG: "1:1", BUGGY: "4:4 2L", HEARSE: "1:6"})
    move(page, RUST_BUCKET, [4, 3])
    page.wait_for_function(f"window.companion.game.game.state.next_to_move === {WAR_RIG}", timeout=WAIT_MS)
    open_action(page, WAR_RIG, "move")
    spec = page.evaluate("window.companion.car.actions.find(a => a.act === 'move')")
    assert spec["label"] == "Move (1 green): off the board" and "place" not in spec, spec
    resolve(page)
    out = last_outcome(page)
    assert out["result"] == "off the board" and out["to_square"] is None, out
    assert state(page)["vehicles"][str(WAR_RIG)]["status"] == "out: drove off the board"
    # Its player takes it off the board, behind it.
    drag_car_to(page, WAR_RIG, *board_point(page, -1.0, 4.5), timeout_ms=WAIT_MS)
    agree(page, "turn 3, the War Rig is out")
    move(page, BUGGY, [5, 5])
    move(page, HEARSE, [8, 2])
    drive_roll(page, BUGGY, "red driving roll for the Buggy", 3)
    drive_roll(page, TRUCK, "blue driving roll for the Interceptor", 5)
    # The truck slides back one row right, into the Buggy's square: a collision on the heavy
    # chart (3 + its side ram +1: no damage), the Buggy shoved to 5,4 first, then the truck.
    wait_phase(page, "truck")
    open_action(page, TRUCK, "truck_sideways")
    resolve(page)
    dice(page, "collision: the Interceptor into the Buggy in square 5,5", 3)
    put_in_place(page, "Buggy", square=[5, 4])
    put_in_place(page, "Interceptor", row=5)
    out = last_outcome(page)
    assert out["pushed"] == [BUGGY] and [p["name"] for p in out["placed"]] == ["Buggy", "Interceptor"], out
    agree(page, "turn 3, the truck's shove")
    snap(page, "st-whole-3-turn-3-shoved")
    # Nobody under the gyro, no bomb square: shooting. The Rust Bucket shoots the right tyres: a miss.
    wait_phase(page, "shooting")
    open_action(page, RUST_BUCKET, "shoot")
    choose(page, "at", "tyre_right")
    resolve(page)
    dice(page, "the Rust Bucket shoots at the truck's right tyres", 9)
    assert last_outcome(page)["result"] == "missed"
    agree(page, "turn 3, the Rust Bucket's shot")
    end_turn(page)
    agree(page, "turn 3 over")
    s = state(page)
    assert s["turn"] == 3 and s["distance"] == 14 and not s["over"]
    assert squares(page) == {TRUCK: [8, 5], RUST_BUCKET: [4, 3], WAR_RIG: [4, 5], BUGGY: [5, 4], HEARSE: [8, 2]}

    # ============ Between turns: the War Rig's player comes back on, as a Light Trike. ============
    open_action(page, WAR_RIG, "enter")
    choose(page, "template", "light_trike")
    drag_car_to(page, WAR_RIG, *middle(page, 1, 5), timeout_ms=WAIT_MS)
    resolve(page)
    out = last_outcome(page)
    assert out["result"] == "entered" and out["square"] == [1, 5], out
    v = state(page)["vehicles"][str(WAR_RIG)]
    assert v["template"] == "light_trike" and v["status"] == "in play" and v["owner"] == "Gang 2", v
    agree(page, "the Light Trike comes on")
    snap(page, "st-whole-4-after-three-turns", panel_top=True)

    assert page.evaluate("window.companion.demo.errors") == 0
    assert errors == [], errors
    page.close()
