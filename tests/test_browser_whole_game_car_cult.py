"""Three whole rounds of Car Cult played on its playable demo page in a real Chromium, as a group
of players would (docs/actions/car-cult.md; car-cult-2016-draft.txt): each round started from
the Round tab (the tied cars' d20s typed into the dice box), every car activated by its own
form, its ST allocated in its number fields, its move driven by dragging (and turning) the car on
the board with the Move form open, nothing measured before a move or an attack is declared
("No pre-measuring"), every die typed into the page's dice box, every choice answered on the
page by the player it is asked of, every piece the rules move put where the page draws it, and
each activation ended with the Round tab's button. After each activation the record and the
camera agree: every car in play stands in GET /api/game where the camera sees it (within
max(3 mm, 3 sigma) and 3 deg), nothing is out of place and nothing waits.

The demo's own start: its starter rosters (Player 1: the Interceptor, a rammer with a Gutsy
Gunner, a Fanatical Fixer and a Reinforced Ram; the War Rig, a gunship with a Dangerous Driver, a
Machine Gun and armour; the Hearse, a Four-Banger with a driver and a Machine Gun. Player 2: the
Rust Bucket, a mine-layer with a driver and Mines; the Buggy, a gunship), the cults facing each
other 8 in from the short edges, and the demo's terrain (a wrecked bus and a concrete wall,
blocking; a scrap field and soft sand, rough).

Round 1 (War Rig, Buggy, Rust Bucket, Interceptor by the tied d20s; the Hearse's single ST last).
The War Rig turns 45 deg, drives 6.3 in and turns back (two free turns), into the gap between
the bus and the scrap field. The Buggy drives into the concrete wall: it halts where it touched,
its engine's ST lost, and is put there (placement). The Rust Bucket drifts 1 in left as it
drives 10 in, laying a mine where its player picks it on the board. The Interceptor drifts
1.8 in. The Hearse drives 13 in into the scrap field (rough terrain, rolled for).
Round 2 (Interceptor, Hearse, Rust Bucket by the d20s, the War Rig, then the Buggy with no ST).
The Interceptor drives into the Rust Bucket: the mine goes off under it (each player places a
DT), the soft sand is rolled for, and it rams (put back where it touched); then the Reinforced
Ram's attack, a miss the Gutsy Gunner rerolls, its DT placed by both players. The Hearse down
shifts 2 (a d20), stands still and brakes, failing (Player 2 places the DT), then fires its
Machine Gun at the Buggy (a Crack Shot and a Crap Shot among the dice). The Rust Bucket down
shifts. The War Rig drives 7 in and fires at the Buggy (Player 2 places the DT). The Buggy
fires back at the Hearse.
Round 3 (no tie: Interceptor, War Rig, Hearse, Buggy, Rust Bucket). The Interceptor's Fanatical
Fixer swaps its engine's DT for the gunner's ST, it stands and brakes again, and rams the Rust
Bucket once more. The War Rig drives 6 in and its six hits fill the Buggy with DT: it explodes,
and the War Rig, within the blast, takes a DT. The Hearse's attack at the Rust Bucket, out of
range, is lost; it brakes. The Buggy, exploded, has no turn; the Rust Bucket activates and ends.

Every row of the actions page is used but a round's tie when a new tie comes after an
activation (that is option activation_timing "each_activation", not the default); the page's
"not reachable" rows (an attack on terrain, bonus ST from scenario rules) stay so: the draft
defines neither."""

from __future__ import annotations

import math

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import drag_car_to, open_action, open_demo, screen_point, tracked, wait_until_seen_at

pytestmark = pytest.mark.browser

#: Generous: the machine is small and other tests run beside this one (the page's answers, the
#: camera's frames). A car drives to where it is dragged at a hand's pace, 5 mm a frame, and a
#: busy machine renders few frames: a drive is allowed a minute and a second more per 2 mm.
WAIT_MS = 120000
MM = 25.4

INTERCEPTOR, RUST_BUCKET, WAR_RIG, BUGGY, HEARSE = 10, 11, 12, 13, 14
P1, P2 = "Player 1", "Player 2"
#: Where the Rust Bucket's player puts its mine: under its nose where its move ends (on its
#: route, as "Mines" requires), in the Interceptor's way.
MINE_AT = (740.0, 252.0)


def drive_ms(mm: float) -> float:
    """How long a drive of `mm` is waited for (see WAIT_MS)."""
    return 60000 + 500 * mm


@pytest.fixture
def car_cult_demo():
    """A demo of its own: Car Cult's game on its terrain, the cults where it begins."""
    yield from _demo("--rules", "car_cult", scripted=False)


class Table:
    """The page, and what the players do on it."""

    def __init__(self, page) -> None:
        self.page = page
        self.used: set[str] = set()            # what the game resolved, for the coverage check
        self.outcomes: list[dict] = []

    # --- reading ---------------------------------------------------------------------------

    def game(self) -> dict:
        return self.page.evaluate("window.companion.game")

    def fetch(self) -> dict:
        return self.page.evaluate("async () => (await fetch('api/game')).json()")

    def wait(self, condition: str) -> None:
        self.page.wait_for_function(
            f"(() => {{ const g = window.companion.game; return !!(g && g.game && ({condition})); }})()",
            timeout=WAIT_MS)

    def version(self) -> int:
        return self.page.evaluate("window.companion.game.version")

    def newer(self, version: int) -> None:
        self.wait(f"g.version > {version}")

    def car(self, marker: int) -> dict:
        return self.game()["game"]["state"]["vehicles"][str(marker)]

    # --- the tabs and the car's forms -------------------------------------------------------

    def tab(self, name: str) -> None:
        self.page.click(f'#tabs button[data-tab="{name}"]')

    def select(self, marker: int) -> None:
        self.tab("car")
        if self.page.evaluate("window.companion.selected") != marker:
            self.page.locator(f'#cars [data-car-id="{marker}"] .body').click()
        self.page.wait_for_selector(f'#car-sheet[data-car="{marker}"]', timeout=WAIT_MS)

    def open(self, marker: int, act: str) -> None:
        self.select(marker)
        open_action(self.page, act, WAIT_MS)

    def number(self, name: str, value: int) -> None:
        field = self.page.locator(f'#action-form input[name="{name}"]')
        field.fill(str(value))
        field.dispatch_event("change")

    def choose(self, name: str, value) -> None:
        self.page.select_option(f'#action-form select[name="{name}"]', str(value))

    def resolve(self, answers=()) -> dict:
        """Resolve the open form once the rules' own check says it is ready, then answer what
        the resolution asks, in order; the event it committed."""
        version = self.version()
        self.page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)
        self.page.click("#resolve:not([disabled])", timeout=WAIT_MS)
        self.page.wait_for_function(
            f"""(() => {{ const g = window.companion.game, e = document.getElementById('action-error');
                return (e && e.textContent.trim()) || (g && g.version > {version}); }})()""", timeout=WAIT_MS)
        error = self.page.inner_text("#action-error").strip()
        assert not error, error
        return self.answer(answers)

    def answer(self, answers) -> dict:
        """Each request the game waits for, answered on the page as the script says: ("dice",
        asked, faces) typed in; ("choice", player, purpose, value) by that player's button;
        ("place", name) the car dragged where the page draws it. Then nothing waits."""
        for step in answers:
            getattr(self, "_" + step[0])(*step[1:])
        self.wait("!g.pending")
        event = self.game()["last_outcome"]["event"]
        self.outcomes.append(event)
        return event

    def _dice(self, asked: str, faces: list[int]) -> None:
        self.wait(f"g.pending && g.pending.waiting === 'dice' && g.pending.asked.includes({asked!r})")
        pending = self.game()["pending"]
        assert len(pending["dice"]) == len(faces), pending
        self.page.wait_for_function(
            f"""(() => {{ const box = document.getElementById('dice');
                return !box.hidden && document.getElementById('dice-asked').textContent.includes({asked!r})
                    && document.querySelectorAll('#dice-inputs input').length === {len(faces)}; }})()""",
            timeout=WAIT_MS)
        inputs = self.page.locator("#dice-inputs input")
        for k, face in enumerate(faces):
            inputs.nth(k).fill(str(face))
        version = self.version()
        self.page.click("#dice-use")
        self.newer(version)

    def _choice(self, player: str, purpose: str, value) -> None:
        self.wait(f"g.pending && g.pending.waiting === 'choice' && g.pending.player === {player!r}"
                  f" && g.pending.purpose.includes({purpose!r})")
        self.page.wait_for_function(
            f"""(() => !document.getElementById('choice').hidden
                && document.getElementById('choice-asked').textContent.includes({purpose!r}))()""", timeout=WAIT_MS)
        assert self.page.inner_text("#choice-title").startswith(player)
        version = self.version()
        self.page.click(f'#choice-options button[data-choice="{value}"]:not([disabled])', timeout=WAIT_MS)
        self.newer(version)
        self.used.add("choice")

    def _place(self, name: str) -> None:
        """A piece the rules moved: the page says where (its name in the headline), the car is
        dragged onto the outline there; the table takes it once the camera sees it still there.
        A car the camera already sees within the tolerance is taken at once."""
        p = self.game()["pending"]
        if p is None or p["waiting"] != "placement":
            return                                  # already standing there: taken at once
        place = p["placement"]
        assert place["name"] == name, place
        self.page.wait_for_selector("#placement:not([hidden])", timeout=WAIT_MS)
        assert name in self.page.inner_text("#placement-asked"), self.page.inner_text("#placement-asked")
        snap(self.page, f"cc-whole-place-{name.lower().replace(' ', '-')}")
        x, y, h = place["to"]
        version = self.version()
        seen = tracked(self.page, place["marker"])
        drag_car_to(self.page, place["marker"], x, y,
                    timeout_ms=drive_ms(math.hypot(x - seen["x_mm"], y - seen["y_mm"])))
        self.newer(version)
        self.wait("!g.pending || g.pending.waiting !== 'placement'")
        self.used.add("placement")

    # --- what the players do -----------------------------------------------------------------

    def start_round(self, ties: dict[str, int]) -> None:
        """The Round tab's button; each tied car's d20 typed in as the page asks for it."""
        n = self.game()["game"]["round"]
        self.tab("round")
        version = self.version()
        self.page.click("#start-round:not([disabled])")
        self.newer(version)
        for _ in ties:
            self.wait("g.pending && g.pending.waiting === 'dice'")
            asked = self.game()["pending"]["asked"]
            name = asked.removeprefix("1d20 activation tie-break for ").strip()
            assert name in ties, asked
            self._dice(asked, [ties[name]])
        self.wait(f"!g.pending && g.game.round === {n + 1}")
        self.used.add("round")

    def activate(self, marker: int, downshift: int | None = None, answers=()) -> dict:
        self.open(marker, "activate")
        if downshift is not None:
            self.choose("downshift", downshift)
        event = self.resolve(answers)
        self.wait(f"g.game.active === {marker}")
        self.used.add("activate" + (" with a down shift" if downshift else ""))
        return event

    def allocate(self, marker: int, **st: int) -> dict:
        self.open(marker, "allocate")
        for track, n in st.items():
            self.number(f"st_{track}", n)
        event = self.resolve()
        assert event["detail"]["act"] == "allocate" and event["outcome"]["result"] == "allocated", event
        self.used.add("allocate")
        return event

    def move(self, marker: int, drive=None, mine: tuple[float, float] | None = None, answers=()) -> dict:
        """The Move form open, the mine's marker picked on the board, the car driven by `drive`
        (None: it stands where it is, a brake); resolved from the camera's path."""
        self.open(marker, "move")
        # Nothing measured before the move is declared: the form says it is ready, no numbers.
        self.page.wait_for_selector("#conditions", timeout=WAIT_MS)
        if mine is not None:
            self.page.click('#action-form button[data-pick="mine_1"]')
            self.page.wait_for_selector("#pick-hint:not([hidden])", timeout=WAIT_MS)
            self.page.mouse.click(*screen_point(self.page, *mine))
            self.page.wait_for_function(
                "(document.querySelector('#action-form [data-point=\"mine_1\"]') || {}).textContent?.includes('mm')",
                timeout=WAIT_MS)
        if drive is not None:
            drive()
        event = self.resolve(answers)
        assert event["detail"]["act"] == "move", event
        self.used.add("move: " + event["outcome"]["result"])
        return event

    def attack(self, marker: int, weapon: str, target: int, answers=()) -> dict:
        self.open(marker, "attack")
        self.choose("weapon", weapon)
        self.choose("target", target)
        # Declared before anything is measured: the form shows no range.
        assert "Range:" not in self.page.inner_text("#action-form")
        event = self.resolve(answers)
        assert event["detail"]["act"] == "attack", event
        self.used.add(f"attack: {weapon}")
        return event

    def fix(self, marker: int, a: str, b: str) -> dict:
        self.open(marker, "fix")
        self.choose("a", a)
        self.choose("b", b)
        event = self.resolve()
        assert event["outcome"]["result"] == "fixed", event
        self.used.add("fix")
        return event

    def end_turn(self, marker: int) -> None:
        """The Round tab's button; then the record and the camera agree."""
        self.tab("round")
        self.page.wait_for_selector("#end-turn:has-text('End this turn')", timeout=WAIT_MS)
        version = self.version()
        self.page.click("#end-turn")
        self.newer(version)
        self.wait(f"g.game.active === null && g.game.state.activated.includes({marker})")
        self.used.add("end turn")
        self.check_record_against_camera()

    def check_record_against_camera(self) -> None:
        """Every car in play stands in the record where the camera sees it; nothing waits."""
        g = self.fetch()
        assert g["pending"] is None, g["pending"]
        assert g["out_of_place"] == [], g["out_of_place"]
        seen = {c["id"]: c for c in self.page.evaluate("window.companion.last.cars")}
        for marker, v in g["game"]["state"]["vehicles"].items():
            if v["status"] == "exploded":
                continue
            c = seen[int(marker)]
            assert not c["stale"], c
            doubt = max(3.0, 3 * (c.get("sigma_mm") or 0.0))
            x, y, h = v["pose"][:3]
            off = math.hypot(x - c["x_mm"], y - c["y_mm"])
            turn = abs((h - c["heading_deg"] + 540.0) % 360.0 - 180.0)
            assert off <= doubt and turn <= 3.0, (v["name"], v["pose"], c, off, turn)

    # --- hands on the demo table --------------------------------------------------------------

    def drive(self, marker: int, ahead_in: float, left_in: float = 0.0) -> dict:
        """The car pushed straight along its nose (and slid sideways: drift) by a drag."""
        c = tracked(self.page, marker)
        a = math.radians(c["heading_deg"])
        x = c["x_mm"] + ahead_in * MM * math.cos(a) - left_in * MM * math.sin(a)
        y = c["y_mm"] + ahead_in * MM * math.sin(a) + left_in * MM * math.cos(a)
        return drag_car_to(self.page, marker, x, y, timeout_ms=drive_ms(math.hypot(x - c["x_mm"], y - c["y_mm"])))

    def turn(self, marker: int, degrees: int) -> dict:
        """The car turned where it stands by the demo bar's 15-degree buttons."""
        c = tracked(self.page, marker)
        button = "#demo-turn-left" if degrees > 0 else "#demo-turn-right"
        for _ in range(abs(degrees) // 15):
            self.page.click(f"{button}:not([disabled])")
        return wait_until_seen_at(self.page, marker, c["x_mm"], c["y_mm"], c["heading_deg"] + degrees,
                                  timeout_ms=drive_ms(abs(degrees) * 5 / 3))


def test_three_rounds_of_car_cult_on_the_demo_page_use_every_action(car_cult_demo, browser):
    page, errors = open_demo(browser, car_cult_demo)
    t = Table(page)
    g = t.game()
    assert g["game"]["rules"]["name"] == "car_cult" and g["game"]["premeasure"] is False
    assert {m: v["owner"] for m, v in g["game"]["state"]["vehicles"].items()} == {
        "10": P1, "12": P1, "14": P1, "11": P2, "13": P2}
    t.check_record_against_camera()

    # --- round 1 -------------------------------------------------------------------------------
    t.start_round({"Interceptor": 5, "War Rig": 20, "Rust Bucket": 10, "Buggy": 15})
    assert [o["vehicle"] for o in t.game()["game"]["order"]] == [WAR_RIG, BUGGY, RUST_BUCKET, INTERCEPTOR, HEARSE]

    # The War Rig: 3 ST on its engine (6-9 in, two turns free), into the gap above the bus.
    t.activate(WAR_RIG)
    t.allocate(WAR_RIG, engine=1, dangerous_driver=2)
    out = t.move(WAR_RIG, lambda: (t.turn(WAR_RIG, 45), t.drive(WAR_RIG, 6.3), t.turn(WAR_RIG, -45)))["outcome"]
    assert out["result"] == "moved" and out["move"]["turns"] == 2, out["move"]
    assert out["move"]["distance_in"] == pytest.approx(6.3, abs=0.1)
    t.end_turn(WAR_RIG)

    # The Buggy, 4 ST on its engine (9-12 in), drives 10 in into the concrete wall: it halts where
    # it touched (after about 9.27 in: no DT, that is past its minimum) and is put there.
    t.activate(BUGGY)
    t.allocate(BUGGY, engine=2, dangerous_driver=2)
    event = t.move(BUGGY, lambda: t.drive(BUGGY, 10), answers=[("place", "Buggy")])
    out = event["outcome"]
    assert out["result"] == "halted" and any("Concrete wall" in e for e in out["events"]), out
    assert [p["marker"] for p in event["placements"]] == [BUGGY]
    assert t.car(BUGGY)["components"]["engine"] == "....."
    t.end_turn(BUGGY)

    # The Rust Bucket lays a mine where its player picks it on the board, drifting 1 in left.
    t.activate(RUST_BUCKET)
    t.allocate(RUST_BUCKET, engine=2, dangerous_driver=1, mines=1)
    out = t.move(RUST_BUCKET, lambda: t.drive(RUST_BUCKET, 10, left_in=1), mine=MINE_AT)["outcome"]
    assert out["result"] == "moved" and out["mines_laid"] == [1], out
    assert out["move"]["drift_left_mm"] == pytest.approx(MM, abs=3)
    mine = t.game()["game"]["state"]["mines"][0]
    assert mine["at"] == pytest.approx(list(MINE_AT), abs=4), mine
    t.end_turn(RUST_BUCKET)

    # The Interceptor drifts 1.8 in left as it drives 11 in, into the Rust Bucket's lane.
    t.activate(INTERCEPTOR)
    t.allocate(INTERCEPTOR, engine=2, gutsy_gunner=1, fanatical_fixer=1)
    out = t.move(INTERCEPTOR, lambda: t.drive(INTERCEPTOR, 11, left_in=1.8))["outcome"]
    assert out["result"] == "moved" and out["move"]["drift_left_mm"] == pytest.approx(1.8 * MM, abs=3), out
    t.end_turn(INTERCEPTOR)

    # The Hearse: 3 more ST (12-16 in), 13 in into the scrap field: a d20 less 3 in.
    t.activate(HEARSE)
    t.allocate(HEARSE, engine=3, dangerous_driver=1)
    out = t.move(HEARSE, lambda: t.drive(HEARSE, 13), answers=[("dice", "rough terrain Scrap field", [15])])["outcome"]
    assert out["rolls"][0]["modifiers"][0]["value"] == -3 and out["rolls"][0]["passed"], out["rolls"]
    snap(page, "cc-whole-1-round-one")
    t.end_turn(HEARSE)
    assert "round 1 is over" in t.game()["game"]["turn_text"]

    # --- round 2 -------------------------------------------------------------------------------
    t.start_round({"Interceptor": 18, "Hearse": 12, "Rust Bucket": 3})
    assert [o["vehicle"] for o in t.game()["game"]["order"]] == [INTERCEPTOR, HEARSE, RUST_BUCKET, WAR_RIG, BUGGY]

    # The Interceptor rams the Rust Bucket: on the way the mine goes off (Player 1 places the
    # first DT, the layer's player the second) and the sand is rolled for; put where it touched.
    t.activate(INTERCEPTOR)
    t.allocate(INTERCEPTOR, gutsy_gunner=1, fanatical_fixer=1)
    event = t.move(INTERCEPTOR, lambda: t.drive(INTERCEPTOR, 8.8), answers=[
        ("place", "Interceptor"),
        ("dice", "mine 1 attack", [12]),
        ("choice", P1, "mine 1, the hit's first DT", "engine"),
        ("choice", P2, "mine 1", "reinforced_ram"),
        ("dice", "rough terrain Soft sand", [17])])
    out = event["outcome"]
    assert out["result"] == "rammed" and out["mines_triggered"] == [1], out
    assert t.game()["game"]["state"]["mines"] == []
    snap(page, "cc-whole-2-rammed")
    # The ram: Range 0, Damage its engine's 4 ST; a miss, rerolled by the Gutsy Gunner.
    out = t.attack(INTERCEPTOR, "reinforced_ram", RUST_BUCKET, answers=[
        ("dice", "Reinforced Ram attack", [6]),
        ("choice", P1, "a die to reroll", 1),
        ("dice", "Reinforced Ram reroll", [15]),
        ("choice", P2, "Reinforced Ram, hit 1, its first DT", "dangerous_driver"),
        ("choice", P1, "Reinforced Ram, hit 1", "engine"),
        ("choice", P1, "Reinforced Ram, hit 1", "engine"),
        ("choice", P1, "Reinforced Ram, hit 1", "engine")])["outcome"]
    assert out["result"] == "hit" and out["rerolled"] == 1 and out["damage_each"] == 4, out
    assert out["range_in"] == 0 and out["distance_in"] <= 0.1, out
    t.end_turn(INTERCEPTOR)

    # The Hearse down shifts 2 (both roll), stands and brakes (failed: Player 2 places the
    # DT), and fires at the Buggy across the end of the wall.
    t.activate(HEARSE, downshift=2, answers=[("dice", "down shift", [13, 13])])
    t.allocate(HEARSE, machine_gun=2, dangerous_driver=2)
    out = t.move(HEARSE, answers=[("dice", "braking", [3]), ("choice", P2, "braking", "engine")])["outcome"]
    assert out["result"] == "braked" and not out["rolls"][0]["passed"], out
    out = t.attack(HEARSE, "machine_gun", BUGGY, answers=[
        ("dice", "Machine Gun attack", [20, 1, 12, 5, 14, 8])])["outcome"]
    assert out["hits"] == 2 and out["line_of_sight"] is True, out
    assert [r.get("note") for r in out["rolls"][:2]] == ["Crack Shot", "Crap Shot"], out["rolls"]
    t.end_turn(HEARSE)

    # The Rust Bucket, stuck against the Interceptor, down shifts its engine empty: no move.
    t.activate(RUST_BUCKET, downshift=2, answers=[("dice", "down shift", [13, 13])])
    t.end_turn(RUST_BUCKET)

    # The War Rig drives 7 in along the gap and fires at the Buggy: Player 2 places each DT.
    t.activate(WAR_RIG)
    t.allocate(WAR_RIG, machine_gun=2, dangerous_driver=2)
    t.move(WAR_RIG, lambda: t.drive(WAR_RIG, 7))
    out = t.attack(WAR_RIG, "machine_gun", BUGGY, answers=[
        ("dice", "Machine Gun attack", [15, 20, 19, 3, 2, 1]),
        ("choice", P2, "Machine Gun, hit 1", "engine"),
        ("choice", P2, "Machine Gun, hit 2", "machine_gun"),
        ("choice", P2, "Machine Gun, hit 3", "dangerous_driver")])["outcome"]
    assert out["hits"] == 3, out
    t.end_turn(WAR_RIG)

    # The Buggy (no ST on its engine after the wall: 0-3 in, need not move) fires back.
    t.activate(BUGGY)
    t.allocate(BUGGY, engine=1, machine_gun=1)
    out = t.attack(BUGGY, "machine_gun", HEARSE, answers=[
        ("dice", "Machine Gun attack", [18, 4, 11]),
        ("choice", P1, "Machine Gun, hit 1", "machine_gun")])["outcome"]
    assert out["hits"] == 1, out
    t.end_turn(BUGGY)
    assert "round 2 is over" in t.game()["game"]["turn_text"]

    # --- round 3 -------------------------------------------------------------------------------
    t.start_round({})
    assert [o["vehicle"] for o in t.game()["game"]["order"]] == [INTERCEPTOR, WAR_RIG, HEARSE, BUGGY, RUST_BUCKET]

    # The Interceptor's fixer swaps the engine's DT for the gunner's ST; it stands and brakes
    # (12 in short), and rams the Rust Bucket again with its 5 ST.
    t.activate(INTERCEPTOR)
    t.allocate(INTERCEPTOR, gutsy_gunner=1, fanatical_fixer=1)
    assert t.car(INTERCEPTOR)["components"]["engine"] == "SSSSD"
    t.fix(INTERCEPTOR, "engine:5", "gutsy_gunner:1")
    assert t.car(INTERCEPTOR)["components"]["engine"] == "SSSSS"
    t.move(INTERCEPTOR, answers=[("dice", "braking", [20]), ("choice", P2, "braking", "fanatical_fixer")])
    out = t.attack(INTERCEPTOR, "reinforced_ram", RUST_BUCKET, answers=[
        ("dice", "Reinforced Ram attack", [12]),
        ("choice", P2, "its first DT", "mines"),
        ("choice", P1, "Reinforced Ram, hit 1", "engine"),
        ("choice", P1, "Reinforced Ram, hit 1", "engine"),
        ("choice", P1, "Reinforced Ram, hit 1", "mines"),
        ("choice", P1, "Reinforced Ram, hit 1", "mines")])["outcome"]
    assert out["result"] == "hit" and out["damage_each"] == 5, out
    t.end_turn(INTERCEPTOR)

    # The War Rig drives 6 in and fills the Buggy with DT: it explodes; the War Rig is within
    # the blast (5 in: its Straight Five's AZ) and takes a DT.
    t.activate(WAR_RIG)
    t.allocate(WAR_RIG, machine_gun=2, dangerous_driver=2)
    t.move(WAR_RIG, lambda: t.drive(WAR_RIG, 6))
    out = t.attack(WAR_RIG, "machine_gun", BUGGY, answers=[
        ("dice", "Machine Gun attack", [20, 19, 18, 17, 16, 15]),
        ("choice", P2, "Machine Gun, hit 1", "engine"),
        ("choice", P2, "Machine Gun, hit 2", "dangerous_driver"),
        ("choice", P2, "Machine Gun, hit 3", "engine"),
        ("choice", P2, "Machine Gun, hit 4", "engine"),
        ("choice", P2, "Machine Gun, hit 5", "engine")])["outcome"]
    assert out["hits"] == 6 and any("the Buggy explodes" in e for e in out["events"]), out
    assert any("the War Rig takes 1 DT" in e and "exploding" in e for e in out["events"]), out["events"]
    assert t.car(BUGGY)["status"] == "exploded"
    t.used.add("explosion")
    snap(page, "cc-whole-3-exploded", panel_top=True)
    t.end_turn(WAR_RIG)

    # The Hearse's shot at the far Rust Bucket is out of range: declared, measured, lost.
    t.activate(HEARSE)
    t.allocate(HEARSE, machine_gun=1, dangerous_driver=2)
    out = t.attack(HEARSE, "machine_gun", RUST_BUCKET)["outcome"]
    assert out["result"] == "no attack" and out["range"]["outcome"] == "out", out
    t.move(HEARSE, answers=[("dice", "braking", [18])])
    t.end_turn(HEARSE)

    # The Buggy has exploded: the Rust Bucket is up, and its activation ends the round.
    assert t.game()["game"]["up"] == P2 and "the Rust Bucket" in t.game()["game"]["turn_text"]
    t.activate(RUST_BUCKET)
    t.end_turn(RUST_BUCKET)
    assert "round 3 is over" in t.game()["game"]["turn_text"]

    # Every action kind of docs/actions/car-cult.md, and its parts, came up.
    assert t.used >= {
        "round", "activate", "activate with a down shift", "allocate", "move: moved", "move: halted", "move: braked",
        "move: rammed", "attack: machine_gun", "attack: reinforced_ram", "fix", "end turn", "choice", "placement",
        "explosion"}, t.used
    events = " ".join(e for o in t.outcomes for e in o["outcome"].get("events", []))
    for words in ("lays mine 1", "comes within 4 in of mine 1", "crosses Scrap field", "crosses Soft sand",
                  "Dangerous Driver", "down shifts 2 ST", "brakes", "rerolled", "the attack is lost", "fixer swaps"):
        assert words in events or any(words in str(o["outcome"]) for o in t.outcomes), words
    assert errors == [], errors
    page.close()
