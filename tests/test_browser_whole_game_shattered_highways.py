"""Shattered Highways on the playable demo page, in a real Chromium: three whole rounds played as
a group of players would (issue 23, "Done when"), every action kind of
docs/actions/shattered-highways.md but one taken through the page.

Everything is done on the page: the play orders chosen on the Round tab's form, the initiative
and every other roll typed in the dice box (three thrown with the page's virtual roll button), the
choices the rules ask a player answered with their buttons, cars dragged on the board, actions
picked on the selected car's card and their forms filled, Resolve and End this turn pressed; each
car the rules move is dragged where the game says (read from the game, the page's own text
checked to name it). After every activation the record and the camera agree: every car in the
fight stands, for GET /api/game, where the camera sees it (within max(3 mm, 3 sigma) and 3
degrees), nothing is out of place and nothing waits.

The demo (`companion demo --rules shattered_highways`): in the book's 2 in lanes, from the near
lane, Max's Interceptor (his hero drives), Buggy, Furiosa's War Rig (her hero drives), Max's
Hearse and Furiosa's Rust Bucket, all heading +x. The game, in short (each step says more):

Round 1 (Max first): the Interceptor's gunner hits the rig's trailer (the bonus on a 6: Furiosa
picks who inside takes it), its hero's pistol wounds Furiosa's hero, its passenger passes. The
War Rig shoots the Hearse's gunner (the bonus to the Hearse), its right gun jams on the Buggy,
its hero nudges the Buggy and the Hearse with one roll (a rig's multi-nudge): the Buggy into the
Interceptor, which fails to keep control and is knocked a section on (a chain), the Hearse three
sections back, the rig carrying on its Move; a trailer passenger climbs onto the tractor (a Board
between the rig's parts). The Buggy drives up beside the rig and hits the trailer. The Rust Bucket
shoots the Buggy and loses control on a 1 (put where the rules say). The Hearse backs off; its
passenger changes into the empty gunner's seat.
Round 2 (the play order changed on the form): the Interceptor hits the trailer, nudges the War
Rig back and carries on up beside it; its passenger boards the rig. The rig's gunner clears his
gun, its hero sideswipes the Buggy and the Interceptor at once (a rig's Ram): a perfect ram
wrecks the Buggy, whose crew leap from the wreck, and the trailer is dead: the rig drops back
unmanned at the end of its turn. The Hearse reaches the back edge. The Rust Bucket's Move fails
(put back where it stood).
Round 3 (Furiosa first): Max's two warriors aboard the rig act first (an Attack, a Pass), then
the rig decouples its dead trailer: each rider's player chooses where he leaps, and the Hearse,
in line behind, veers. On the Interceptor the hero changes seats and the gunner takes over
driving at -1 and rams the rig; the hero's pistol, at -1, attacks. The Hearse moves to rejoin.

Not reached: **Deploy the hidden buggy** ("Rig-only Add-ons"). The demo table has five cars and
the starter fleets field every one; a hidden buggy needs a sixth car of its own to come out of
the rig (the table's markers are all taken), and at 15 creation points it would take Furiosa's
fleet (War Rig 60, Rust Bucket 31) over its 100. tests/test_shattered_highways.py and scenario
27 play it.
"""

from __future__ import annotations

import math
import time

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import drag_car_to, open_action, open_demo, tracked

pytestmark = pytest.mark.browser

WAIT_MS = 60000
MAX, FURIOSA = "Max", "Furiosa"
INT, RB, RIG, BUG, HEA = 10, 11, 12, 13, 14
NAMES = {INT: "Interceptor", RB: "Rust Bucket", RIG: "War Rig", BUG: "Buggy", HEA: "Hearse"}
#: Where the demo stands each car (companion/rules/shattered_highways.py, DEMO_LANES).
START = {INT: (695.8, 304.8), BUG: (648.5, 355.6), RIG: (685.8, 406.4), HEA: (642.5, 457.2), RB: (697.3, 508.0)}
#: Half widths (the demo table's cars), for setting one car down beside another.
HALF = {INT: 16.0, RB: 15.5, RIG: 18.0, BUG: 15.0, HEA: 16.0}
#: The gap left between cars set down against each other: inside the book's contact (a
#: quarter inch, CONTACT_MM) however the camera reads them, never an overlap.
GAP = 3.0

#: Every action kind of docs/actions/shattered-highways.md (the rows of its tables), and the one
#: this game cannot reach from the demo's start (see the module's docstring).
KINDS = {"play orders", "between rounds", "two players aboard", "pass", "end turn", "unmanned",
         "move", "move to rejoin", "ram", "sideswipe", "nudge", "multi-nudge", "chain", "rest of move",
         "decouple", "shoot vehicle", "shoot rig part", "shoot warrior", "board", "board rig part",
         "leap from wreck", "change", "take over driving", "attack", "unjam", "cling", "lost control"}
UNREACHED = {"deploy"}


def w(player: str, marker: int, seat: str) -> str:
    """A warrior's id, as the forms' choices carry it (player:marker:seat where he started)."""
    return f"{player}:{marker}:{seat}"


def beside(marker: int, y: float, other: int, side: int) -> float:
    """The y of `other` set down against `marker` (standing at y), on its left (+1) or right (-1)."""
    return y + side * (HALF[marker] + GAP + HALF[other])


class Table:
    """The page, played as the players play it; what the test has seen done."""

    def __init__(self, page):
        self.page = page
        self.kinds: set[str] = set()
        self.placed: list[dict] = []          # each placement the rules asked for, as asked
        self.chosen: dict[int, tuple] = {}     # where the plan puts a car whose place is a player's choice
        self.virtual = 0

    # --- what the page shows -----------------------------------------------------------------
    def game(self) -> dict:
        return self.page.evaluate("window.companion.game")

    def version(self) -> int:
        return self.page.evaluate("window.companion.game.version")

    def state(self) -> dict:
        return self.game()["game"]["state"]

    def last_event(self) -> dict:
        return self.game()["log"][0]

    # --- answering a resolution ----------------------------------------------------------------
    def play_out(self, before: int, dice=(), choices=(), refused: str = "#action-error") -> None:
        """Something was sent that starts a resolution (the game's version was `before`): answer
        what it asks, as it asks, until nothing waits. Dice are typed in the page's dice box
        ("roll": its virtual roll button instead); choices by their buttons; a car the rules move
        is dragged where the game says it goes. Every die and choice given must be asked."""
        page, dice, choices = self.page, list(dice), list(choices)
        # Sent: taken (the game moves on) or refused (the page says why, nothing changes).
        page.wait_for_function("([v, box]) => window.companion.game.version > v || "
                               "document.querySelector(box).textContent", arg=[before, refused], timeout=WAIT_MS)
        assert not page.inner_text(refused), page.inner_text(refused)
        v = before
        while True:
            page.wait_for_function("(v) => window.companion.game && window.companion.game.version > v",
                                   arg=v, timeout=WAIT_MS)
            g = self.game()
            v, p = g["version"], g["pending"]
            if p is None:
                break
            if p["waiting"] == "dice":
                assert dice, f"the rules asked for a die the game's plan lacks: {p['asked']}"
                face = dice.pop(0)
                page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
                assert page.inner_text("#dice-asked"), p
                if face == "roll":
                    page.click("#dice-roll:not([disabled])")
                    self.virtual += 1
                else:
                    inputs = page.locator("#dice-inputs input")
                    assert inputs.count() == len(p["dice"]) == 1, p
                    inputs.first.fill(str(face))
                    page.click("#dice-use:not([disabled])")
            elif p["waiting"] == "choice":
                assert choices, f"the rules asked a choice the game's plan lacks: {p['purpose']}"
                value = choices.pop(0)
                page.wait_for_selector("#choice:not([hidden])", timeout=WAIT_MS)
                assert page.inner_text("#choice-title") == f"{p['player']}, your choice"
                page.click(f'#choice-options button[data-choice="{value}"]:not([disabled])', timeout=WAIT_MS)
            else:
                self.put(p["placement"])
        assert not dice and not choices, f"not asked for: dice {dice}, choices {choices}"

    def put(self, placement: dict) -> None:
        """A car the rules moved: the page says which and why; dragged where the game has it go."""
        page, name = self.page, placement["name"]
        # Shown, or already taken: a car the rules stop where the hand put it stands in place at
        # once, and the camera takes it (on a busy machine before this test looks).
        page.wait_for_function("([n, m]) => (!document.getElementById('placement').hidden && "
                               "document.getElementById('placement-asked').textContent.includes('the ' + n)) || "
                               "!(window.companion.game.pending && window.companion.game.pending.placement && "
                               "window.companion.game.pending.placement.marker === m)",
                               arg=[name, placement["marker"]], timeout=WAIT_MS)
        self.placed.append(placement)
        if page.evaluate("(m) => !!(window.companion.game.pending && window.companion.game.pending.placement && "
                         "window.companion.game.pending.placement.marker === m)", placement["marker"]):
            assert placement["why"] in page.inner_text("#placement-asked")
        else:
            return                             # taken where it stood
        if placement.get("chosen"):
            # Where the player chooses (a Nudge's push): the area is drawn, the car dragged where
            # the plan puts it, and "It's there" pressed; the rules then judge it.
            x, y = self.chosen.pop(placement["marker"])
            assert page.locator(f'#placement-layer .place-area[data-place-for="{placement["marker"]}"]').count() == 1
            assert page.is_hidden("#placement-demo")
            snap(page, "sh-whole-2-push-chosen", panel_top=True)
            self.drag(placement["marker"], x, y)
            page.click('#placement-stay:text("It\'s there")', timeout=WAIT_MS)
            return
        x, y, h = placement["to"][:3]
        seen = tracked(page, placement["marker"])
        turn = abs((seen["heading_deg"] - h + 540) % 360 - 180)
        self.drag(placement["marker"], x, y, h if turn > 2.0 else None)

    def drag(self, marker: int, x: float, y: float, heading: float | None = None) -> None:
        """A car dragged on the board (and turned, with `heading`), once the camera sees it there:
        a minute, and more for a long way (it drives at a hand's pace, slower on a busy machine)."""
        at = tracked(self.page, marker)
        far = math.hypot(at["x_mm"] - x, at["y_mm"] - y)
        try:
            drag_car_to(self.page, marker, x, y, heading, timeout_ms=WAIT_MS + 400 * far)
        except Exception:
            snap(self.page, "sh-whole-failed-drag")
            pytest.fail(f"the {NAMES[marker]} dragged to {x:.1f}, {y:.1f} is seen at {tracked(self.page, marker)}")

    # --- doing ----------------------------------------------------------------------------------
    def select(self, car: int) -> None:
        self.page.click(f'#cars [data-car-id="{car}"] .body')
        self.page.wait_for_selector(f'#car-sheet[data-car="{car}"]', timeout=WAIT_MS)

    def act(self, car: int, act: str, fields: dict | None = None, *, drags=(), dice=(), choices=(),
            label: str | None = None, result: str | None = None, kinds=()) -> dict:
        """Select the car, press the action's button, fill its form (every optional choice not
        given is left at "(any)"), drag the cars it reads from the table, resolve it once the page
        says its conditions hold, and answer what it asks. The event it made."""
        page = self.page
        self.select(car)
        button = f'#car-actions button[data-act="{act}"]'
        try:
            page.wait_for_selector(f"{button}:not([disabled])", timeout=WAIT_MS)
        except Exception:
            pytest.fail(f"{NAMES[car]}: {act} stayed greyed: " + page.inner_text("#car-actions"))
        open_action(page, act, WAIT_MS)
        if label is not None:
            assert page.inner_text(button) == label
        fields = dict(fields or {})
        for name, value in fields.items():
            page.select_option(f'#action-form select[name="{name}"]', "" if value is None else str(value))
        optional = page.eval_on_selector_all(
            "#action-form select", "ss => ss.filter(s => [...s.options].some(o => o.value === '')).map(s => s.name)")
        for name in optional:
            if name not in fields:
                page.select_option(f'#action-form select[name="{name}"]', "")
        for marker, x, y in drags:
            self.drag(marker, x, y)
        try:
            page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)
        except Exception:
            pytest.fail(f"{NAMES[car]}: {act} {fields}: " + page.inner_text("#preview"))
        before = self.version()
        page.click("#resolve:not([disabled])", timeout=WAIT_MS)
        self.play_out(before, dice, choices)
        event = self.last_event()
        assert event["kind"] == "action" and event["detail"]["act"] == act, event
        if result is not None:
            assert event["outcome"]["result"] == result, event["outcome"]
        self.kinds.update(kinds)
        return event

    def end_turn(self, dice=(), choices=(), then: int | None = None) -> dict:
        """End this turn (the Round tab's button), answer what the end of it asks, and check
        that the record and the camera agree; `then`: the car whose turn it is now."""
        page = self.page
        page.click('#tabs [data-tab="round"]')
        before = self.version()
        page.click("#end-turn:not([disabled])", timeout=WAIT_MS)
        self.play_out(before, dice, choices, refused="#order-error")
        event = self.last_event()
        assert event["kind"] == "end_turn", event
        assert self.game()["game"]["active"] == then, self.game()["game"]["turn_text"]
        self.kinds.add("end turn")
        self.check_record()
        return event

    def start_round(self, n: int, orders: dict, dice, first: int) -> dict:
        """The Round tab: each player's play order chosen on its form, Start round, the
        initiative typed in."""
        page = self.page
        page.click('#tabs [data-tab="round"]')
        page.wait_for_selector(f'#start-round:text("Start round {n}")', timeout=WAIT_MS)
        for player, order in orders.items():
            slots = page.locator(f'#order-form select[data-player="{player}"]')
            assert slots.count() == len(order), (player, slots.count())
            for k, marker in enumerate(order):
                slots.nth(k).select_option("" if marker is None else str(marker))
        before = self.version()
        page.click("#start-round:not([disabled])")
        self.play_out(before, dice, refused="#order-error")
        event = self.last_event()
        assert event["kind"] == "round" and event["outcome"]["round"] == n, event
        assert self.game()["game"]["active"] == first, self.game()["game"]["turn_text"]
        self.kinds.add("play orders")
        self.check_record()
        return event

    # --- the record and the camera ----------------------------------------------------------------
    def check_record(self) -> None:
        """GET /api/game: nothing waits, nothing is out of place, and every car in the fight is
        where the camera sees it (the page's latest snapshot), within max(3 mm, 3 sigma) and 3
        degrees. Waited for (a car just put down may be a frame behind), then asserted."""
        agree = """async () => {
            const g = await (await fetch('api/game')).json();
            const seen = Object.fromEntries(window.companion.last.cars.map(c => [String(c.id), c]));
            const bad = [];
            if (g.pending) bad.push('waiting: ' + g.pending.asked);
            if (g.out_of_place.length) bad.push('out of place: ' + JSON.stringify(g.out_of_place));
            for (const [m, v] of Object.entries(g.game.state.vehicles)) {
                if (v.destroyed || v.out_of_play || v.hidden || !v.pose) continue;
                const c = seen[m];
                if (!c || c.stale) { bad.push(v.name + ' unseen'); continue; }
                const mm = Math.hypot(c.x_mm - v.pose[0], c.y_mm - v.pose[1]);
                const deg = Math.abs(((c.heading_deg - v.pose[2]) % 360 + 540) % 360 - 180);
                if (mm > Math.max(3, 3 * c.sigma_mm) || deg > 3)
                    bad.push(`${v.name}: game ${v.pose}, camera ${[c.x_mm, c.y_mm, c.heading_deg]}`);
            }
            window.__recordDisagrees = bad;
            return bad.length === 0; }"""
        try:
            self.page.wait_for_function(agree, polling=250, timeout=WAIT_MS)
        except Exception:
            pytest.fail("the record and the camera disagree: " + str(self.page.evaluate("window.__recordDisagrees")))


@pytest.fixture
def sh_demo():
    """A playable Shattered Highways demo of its own, its cars where the game begins."""
    yield from _demo("--rules", "shattered_highways", scripted=False)


def test_three_whole_rounds_every_action_kind_through_the_page(sh_demo, browser):
    started = time.monotonic()
    page, errors = open_demo(browser, sh_demo)
    t = Table(page)
    assert t.state()["round"] == 0
    for car, (x, y) in START.items():
        seen = tracked(page, car)
        assert math.hypot(seen["x_mm"] - x, seen["y_mm"] - y) < 2.0, (NAMES[car], seen)
    t.check_record()
    # The one kind out of reach: the War Rig hides no buggy, so its card offers no Deploy.
    t.select(RIG)
    page.wait_for_selector('#car-actions button[data-act="move"]', timeout=WAIT_MS)
    for act in UNREACHED:
        assert page.locator(f'#car-actions button[data-act="{act}"]').count() == 0

    # ============ Round 1: the play orders as the form offers them; Max 5, Furiosa 2 ============
    t.start_round(1, {MAX: [INT, BUG, HEA], FURIOSA: [RIG, RB, None]}, dice=[5, 2], first=INT)

    # --- the Interceptor -------------------------------------------------------------------------
    # Its gunner aims at the War Rig's trailer (6 - 1 = 5 hits; 6 + 2 = 8); on the die's maximum
    # Max takes the bonus and Furiosa says who inside takes it: her trailer passenger 3 (6: out).
    t.act(INT, "shoot", {"warrior": w(MAX, INT, "W1"), "target": RIG, "at": "trailer"},
          dice=[6, 6, 6], choices=["yes", w(FURIOSA, RIG, "P3")], result="hit", kinds=["shoot rig part"])
    assert t.state()["vehicles"][str(RIG)]["hp"] == {"tractor": 25, "trailer": 17}
    assert w(FURIOSA, RIG, "P3") in t.state()["warriors_out"]
    # Max's hero's pistol (the rig is 2.7 in away, within its 3 in): 7 against Furiosa's hero's
    # 4; 4 + 1 = 5 against her tenacity of 2d6 (3 + 4): she shrugs it off.
    t.act(INT, "attack", {"warrior": w(MAX, INT, "D"), "target": w(FURIOSA, RIG, "D")},
          dice=[7, 4, 4, 3, 4], result="hit", kinds=["attack"])
    t.act(INT, "pass", {"warrior": w(MAX, INT, "P1")}, result="passed", kinds=["pass"])
    t.end_turn(then=RIG)

    # --- the War Rig ---------------------------------------------------------------------------
    # Its left gun at the Hearse's gunner (6 against 3 - 1 in the Rust Bucket's drag chains'
    # dust): 3 + 2 puts him out, and on the maximum Furiosa also does 1d6 - 1 (4 - 1) to the Hearse.
    e = t.act(RIG, "shoot", {"warrior": w(FURIOSA, RIG, "W1"), "target": HEA, "at": w(MAX, HEA, "W1")},
              dice=[6, 3, 3, 4], choices=["yes"], result="hit", kinds=["shoot warrior"])
    assert any("drag chains" in m["reason"] for r in e["outcome"]["rolls"] for m in r["modifiers"]), e["outcome"]
    # Its right gun at the Buggy: a 1 jams it.
    t.act(RIG, "shoot", {"warrior": w(FURIOSA, RIG, "W2"), "target": BUG, "at": "vehicle"},
          dice=[1], result="jammed", kinds=["shoot vehicle"])
    # The hero nudges the Buggy and the Hearse from the rig's sides with one roll. Set down by
    # hand first: the Interceptor knocked a section on (where it goes if it fails to keep control),
    # the Buggy against where the Interceptor stood, the Hearse three sections back, and the rig
    # where it carries on its Move. In position (6), 9 against 2 and 3 - 1: three sections each;
    # the Interceptor's hero fails to keep control (2).
    bug_pushed = (658.5, beside(INT, START[INT][1], BUG, +1))
    int_knocked = (745.0, 330.0)
    hea_pushed = (417.5, 440.0)
    rig_on = (725.8, 391.4)
    e = t.act(RIG, "nudge", {"target": BUG, "second_target": HEA, "into": INT},
              drags=[(INT, *int_knocked), (BUG, *bug_pushed), (HEA, *hea_pushed), (RIG, *rig_on)],
              dice=[6, 9, 2, 3, 2], result="nudged", kinds=["multi-nudge", "chain", "rest of move"])
    # Each car taken where it was set down, in turn, with the rules' words for why.
    assert [(p["name"], p["why"]) for p in e["placements"]] == [
        ("Buggy", "pushed by the War Rig's nudge (up to 3 sections)"),
        ("Hearse", "pushed by the War Rig's nudge (up to 3 sections)"),
        ("Interceptor", "knocked a section by the Buggy"),
        ("War Rig", "carries on its Move after the nudge")], e["placements"]
    # A trailer passenger climbs onto the tractor (a Board roll, 5), clinging on.
    t.act(RIG, "board", {"warrior": w(FURIOSA, RIG, "P1"), "target": RIG, "seat": None},
          dice=[5], result="boarded", kinds=["board rig part"])
    snap(page, "sh-whole-1-the-rig-nudged-two", panel_top=True)
    t.end_turn(then=BUG)

    # --- the Buggy -----------------------------------------------------------------------------
    # Up against the rig's right side, by its tail (4 moves), and its gunner hits the trailer for 8.
    rig_right = rig_on[1] - HALF[RIG]
    bug_beside = (665.0, rig_right - GAP - HALF[BUG])
    t.act(BUG, "move", {}, drags=[(BUG, *bug_beside)], dice=[4], result="moved", kinds=["move"])
    t.act(BUG, "shoot", {"warrior": w(MAX, BUG, "W1"), "target": RIG, "at": "trailer"},
          dice=[5, 6], result="hit")
    assert t.state()["vehicles"][str(RIG)]["hp"]["trailer"] == 1 + 8
    t.end_turn(then=RB)

    # --- the Rust Bucket -------------------------------------------------------------------------
    # Its rear gun at the Buggy (5 hits, 2 + 2); then it is driven 60 mm on, but the Move roll
    # is a 1: Lost Control, box 5 (on its left), and it is put where the rules say.
    t.act(RB, "shoot", {"warrior": w(FURIOSA, RB, "W1"), "target": BUG, "at": "vehicle"},
          dice=[5, 2], result="hit", kinds=["shoot vehicle"])
    e = t.act(RB, "move", {}, drags=[(RB, START[RB][0] + 60.0, START[RB][1])], dice=[1, 5],
              result="lost control", kinds=["lost control"])
    lost = t.placed[-1]
    assert lost["name"] == "Rust Bucket" and lost["why"] == "Lost Control: veers 2.0 in left (box 5)", lost
    assert lost["to"][:2] == pytest.approx([START[RB][0], START[RB][1] + 50.8], abs=0.5)
    assert [p["why"] for p in e["placements"]] == [lost["why"]]
    t.end_turn(then=HEA)

    # --- the Hearse ------------------------------------------------------------------------------
    # It backs off (4), and its passenger changes into the empty gunner's seat.
    hea_back = (192.5, 410.0)
    t.act(HEA, "move", {}, drags=[(HEA, *hea_back)], dice=[4], result="moved")
    t.act(HEA, "change", {"warrior": w(MAX, HEA, "P1"), "seat": "W1"}, result="changed", kinds=["change"])
    t.end_turn(then=None)

    # Between rounds nobody acts: the Interceptor's card says so.
    t.select(INT)
    page.wait_for_function("(document.getElementById('actions-why') || {}).textContent?.toLowerCase()"
                           ".startsWith('round 1 is over')", timeout=WAIT_MS)
    assert page.locator("#car-actions button[data-act]:not([disabled])").count() == 0
    t.kinds.add("between rounds")

    # ============ Round 2: Max's order changed on the form (the Hearse second); Max 4, Furiosa 1 =======
    t.start_round(2, {MAX: [INT, HEA, BUG], FURIOSA: [RIG, RB, None]}, dice=[4, 1], first=INT)
    order = [o["vehicle"] for o in t.game()["game"]["order"]]
    assert order == [INT, RIG, HEA, RB, BUG], order

    # --- the Interceptor -------------------------------------------------------------------------
    # Its gunner hits the trailer (8: 1 left).
    t.act(INT, "shoot", {"warrior": w(MAX, INT, "W1"), "target": RIG, "at": "trailer"}, dice=[5, 6], result="hit")
    # Its hero nudges the War Rig 30 mm back (5 in position; 9 against 3: three sections) and
    # carries on up beside it, by its nose; the clinging passenger on the rig holds on (4).
    # The push is the hero's player's choice after the rolls ("On a successful Nudge the
    # attacking player moves the defending player's vehicle"): asked on the page, the area drawn.
    rig_back = (rig_on[0] - 30.0, rig_on[1])
    int_beside = (750.0, rig_right - GAP - HALF[INT])
    t.chosen[RIG] = rig_back
    e = t.act(INT, "nudge", {"target": RIG}, drags=[(INT, *int_beside)],
              dice=[5, 9, 3, 4], result="nudged", kinds=["nudge", "cling"])
    assert [(q["name"], q["how"]) for q in e["placements"]][:1] == [("War Rig", "chosen")], e["placements"]
    # Its passenger boards the rig, into its empty passenger seat 3 (4).
    t.act(INT, "board", {"warrior": w(MAX, INT, "P1"), "target": RIG, "seat": "P3"}, dice=[4], result="boarded",
          kinds=["board"])
    t.end_turn(then=RIG)

    # --- the War Rig ------------------------------------------------------------------------------
    t.act(RIG, "unjam", {"warrior": w(FURIOSA, RIG, "W2"), "weapon": "right"}, result="unjammed", kinds=["unjam"])
    # The sideswipe, the rig not moved: in position (6), one Ram roll of 10 against the Buggy's
    # 1 (a perfect ram: 25, the Buggy is wrecked; the rig takes 3, its trailer's last point) and
    # the Interceptor's hero's 4 (3 + 1 rig against car); the clinger on the rig holds on twice.
    t.act(RIG, "ram", {"target": BUG, "second_target": INT, "third_target": None},
          dice=[6, 10, 1, 4, 4, 3, 5], result="rammed", kinds=["sideswipe"])
    vehicles = t.state()["vehicles"]
    assert vehicles[str(BUG)]["destroyed"] and vehicles[str(RIG)]["hp"]["trailer"] == 0
    # The Buggy's crew leap from the wreck (at -1): its driver into the rig's empty passenger
    # seat 1 (5 - 1), its gunner onto the Interceptor, clinging on (6 - 1).
    t.act(BUG, "board", {"warrior": w(MAX, BUG, "D"), "target": RIG, "seat": "P1"}, dice=[5],
          label="Leap from the wreck", result="boarded", kinds=["leap from wreck"])
    t.act(BUG, "board", {"warrior": w(MAX, BUG, "W1"), "target": INT, "seat": None}, dice=[6],
          label="Leap from the wreck", result="boarded")
    t.act(RIG, "pass", {"warrior": w(FURIOSA, RIG, "W1")}, result="passed")
    snap(page, "sh-whole-2-sideswipe-and-wreck")
    # The end of its turn: a dead trailer not cut loose leaves the rig unmanned: it drops back
    # a section (put there by hand) and keeps its line (5; 1-3 would lose it).
    end = t.end_turn(dice=[5], then=HEA)
    assert "the War Rig drags its dead trailer: unmanned until it decouples" in end["outcome"]["events"], end["outcome"]
    assert (t.placed[-1]["name"], t.placed[-1]["why"]) == ("War Rig", "unmanned: drops back 3.0 in"), t.placed[-1]
    t.kinds.add("unmanned")
    # The wreck is taken off the road ("removed from the play space").
    t.drag(BUG, 300.0, 150.0)

    # --- the Hearse --------------------------------------------------------------------------------
    # Back again, over the back edge (5): at the end of its turn it must Move to rejoin.
    hea_edge = (30.0, 400.0)
    t.act(HEA, "move", {}, drags=[(HEA, *hea_edge)], dice=[5], result="moved")
    end = t.end_turn(then=RB)
    assert "the Hearse is at the back edge: next turn it must Move to rejoin" in end["outcome"]["events"]

    # --- the Rust Bucket ------------------------------------------------------------------------------
    # Driven 60 mm on; a 2: the Move fails, and it is put back where it stood.
    rb_at = (START[RB][0], START[RB][1] + 50.8)
    t.act(RB, "move", {}, drags=[(RB, rb_at[0] + 60.0, rb_at[1])], dice=[2], result="failed: stays where it was")
    assert t.placed[-1]["why"] == "the Move failed: back where it stood", t.placed[-1]
    t.end_turn(then=None)          # the Buggy is a wreck: no turn for it

    # ============ Round 3: the Buggy gone, Max's form offers a blank; Furiosa 6, Max 3 ============
    t.start_round(3, {MAX: [INT, HEA, None], FURIOSA: [RIG, RB, None]}, dice=[3, 6], first=RIG)

    # --- the War Rig ------------------------------------------------------------------------------
    # Two players aboard: Max has fewer warriors on it, so his act first; Furiosa's wait.
    assert t.game()["game"]["up"] == MAX
    t.select(RIG)
    page.wait_for_function("(document.getElementById('why-decouple') || {}).textContent?.includes('act first')",
                           timeout=WAIT_MS)
    t.act(RIG, "attack", {"warrior": w(MAX, INT, "P1"), "target": w(FURIOSA, RIG, "P2")}, dice=[5, 2, 5],
          result="hit", kinds=["two players aboard"])
    t.act(RIG, "pass", {"warrior": w(MAX, BUG, "D")}, result="passed")
    assert t.game()["game"]["up"] == FURIOSA
    # Decoupled (6): each rider on the falling trailer, by his player's choice, leaps for the
    # tractor at -1 (Max's boarder 5 - 1 makes it, Furiosa's gunner 6 - 1) or stays (the Buggy's
    # driver); the Hearse, in line behind the trailer, veers clear (4).
    e = t.act(RIG, "decouple", {}, dice=[6, 5, 6, 4], choices=[RIG, "stay", RIG], result="decoupled",
              kinds=["decouple"])
    assert "the Hearse veers clear of the wreck" in e["outcome"]["events"], e["outcome"]
    snap(page, "sh-whole-3-decoupled", panel_top=True)
    t.end_turn(then=INT)

    # --- the Interceptor ---------------------------------------------------------------------------
    # The hero changes into the empty passenger seat, the gunner into the driver's seat, and at
    # -1 drives up against the rig and rams it (5 - 1 in position; 6 - 1 against 3: 4 damage); the
    # clingers on both roll to hold on (two of those dice thrown with the page's virtual roll:
    # whatever they show, nothing more follows). The hero, at -1, shoots his pistol at the rig's
    # gunner (8 - 1 against 2; the damage die thrown with the virtual roll too).
    t.act(INT, "change", {"warrior": w(MAX, INT, "D"), "seat": "P1"}, result="changed")
    t.act(INT, "change", {"warrior": w(MAX, INT, "W1"), "seat": "D"}, result="changed", kinds=["take over driving"])
    rig_dropped = (rig_back[0] - 76.2, rig_back[1])
    int_against = (rig_dropped[0] + 60.0, rig_right - GAP - HALF[INT])
    t.act(INT, "ram", {"target": RIG}, drags=[(INT, *int_against)], dice=[5, 6, 3, 4, 4, "roll", 5, "roll"],
          result="rammed", kinds=["ram"])
    t.act(INT, "attack", {"warrior": w(MAX, INT, "D"), "target": w(FURIOSA, RIG, "W1")}, dice=[8, 2, "roll"],
          result="hit")
    t.end_turn(then=RB)

    # --- the Rust Bucket: nothing to do --------------------------------------------------------------
    t.end_turn(then=HEA)

    # --- the Hearse ----------------------------------------------------------------------------------
    # At the back edge its only action is a Move to rejoin (4).
    e = t.act(HEA, "move", {}, drags=[(HEA, 180.0, hea_edge[1])], dice=[4], label="Move to rejoin",
              result="rejoined", kinds=["move to rejoin"])
    assert not t.state()["vehicles"][str(HEA)]["at_back_edge"]
    t.end_turn(then=None)
    snap(page, "sh-whole-4-three-rounds", panel_top=True)

    assert t.state()["round"] == 3 and t.state()["winner"] is None
    assert t.virtual == 3
    assert t.kinds == KINDS, sorted(KINDS - t.kinds)
    assert errors == [], errors
    print(f"three rounds in {time.monotonic() - started:.0f} s, {len(t.placed)} placements asked")
    page.close()
