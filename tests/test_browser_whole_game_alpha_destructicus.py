"""Three whole rounds of Alpha Destructicus played on its playable demo page, as a group of
players would: the chips drawn from the bag by hand (the page asks whose came out), cars
dragged and turned on the board, dice typed into the page's dice box, the choices the rules
ask answered on the page, every piece the rules move put where the page draws it, and the
freaks on foot sent to points picked on the board (docs/actions/alpha-destructicus.md;
alpha-destructicus.txt). After each activation the record and the camera agree: every car in
play stands in GET /api/game where the camera sees it (within max(3 mm, 3 sigma) and 3 deg),
nothing is out of place and nothing waits.

Every action kind of docs/actions/alpha-destructicus.md is used, from the demo's own start
(its starter rosters: Player 1 drives the Interceptor (a Dragster), the War Rig (Sarge) and the
Hearse (Waldo); Player 2 the Rust Bucket (King Rhino) and the Buggy (Rhinocerator), with Freak
2.3 on foot; every engine starts broken; the arena of demo_scenery):

Round 1. Freak 2.2: Move this freak (activate), Repair, Drive the Buggy through the West gate
(Player 2 scores). Freak 1.3: Drive the Hearse past Freak 2.3, who grabs hold of it out of his
turn (Grab hold); a second Drive in the same turn; Fire at the Buggy (its side armour takes
it). Freak 2.3, clinging on: Jack the Hearse (he wins; Freak 1.3 is thrown out), then Drive it
6.5 in (Speed Freak: "must ALWAYS move at least 6" in that vehicle if possible"). Freak 1.1:
Repair, Drive the Interceptor with its Booster through the Near gate. Freak 1.2: Repair, a
Stunt (push it), Drive the War Rig through the East gate, turned and stopped against the Rust
Bucket's tail, then Ram it: the Rust Bucket's horns go, and its roll leaves the War Rig badly
shaken. Freak 2.1: a Pass (End turn with nobody chosen).
Round 2. Freak 2.1: Repair, Drive the Rust Bucket through the Far gate. Freak 1.2: the War
Rig's Forced move (6 in straight ahead, put where the page shows). Freak 1.1: Drive with
Concentrate to the ramp's foot, turned across it; a Stunt (panic turn) to face the ramp, put
there; Jump (his player says how far; the landing put there). Freak 2.3: Get out of the
Hearse, Walk through the Teleporter (in at the Bank, out into the Saloon), Building guns at
the War Rig (a penetrating hit: Side blown off, Player 1 chooses the flamethrower). Freak 1.3:
Climb in to the empty Hearse, Drive it in Reverse its whole 6 in. Freak 2.2: Move this freak; End
turn is refused (Speed Freak: his Buggy works and has not moved), so he drives it 6.3 in.
Round 3. Freak 2.3 walks out of the Saloon (Walk); the other five chips are passes, each
player saying which freak takes his chip.

The Jump button is for a car already standing at a ramp's foot facing up it: a drive that
reaches the foot jumps by itself ("Jumping"), so here the Interceptor drives to the foot
turned across it (not facing up it: no jump yet) and a panic turn faces it up the ramp.

Speed Freak ("Characters") holds every driver of a working vehicle to 6 in a turn unless the way
is blocked (option speed_freak, `refuse` by default): every driver here drives at least 6 in,
or is stopped by the rules (the Interceptor's landing ends its move; the War Rig's forced move
is its 6 in), or gets out before he ends his turn (Freak 2.3, round 2)."""

from __future__ import annotations

import math

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import drag_car_to, open_demo, screen_point, tracked, turn_car_to, wait_until_seen_at
from tests.test_browser_demo import open_action as open_form

pytestmark = pytest.mark.browser

#: Generous: the machine is small and other tests run beside this one; a car drives to where it
#: is dragged at a hand's pace.
WAIT_MS = 60000

INTERCEPTOR, RUST_BUCKET, WAR_RIG, BUGGY, HEARSE = 10, 11, 12, 13, 14
P1, P2 = "Player 1", "Player 2"


@pytest.fixture
def ad_server():
    """A demo of its own: Alpha Destructicus's game on its arena, the cars where it begins."""
    yield from _demo("--rules", "alpha_destructicus", scripted=False)


# --- reading the game -----------------------------------------------------------------------

def game(page) -> dict:
    """GET /api/game, as the page's own session reads it."""
    return page.evaluate("async () => (await fetch('api/game')).json()")


def state(page) -> dict:
    return game(page)["game"]["state"]


def pending(page) -> dict | None:
    return page.evaluate("window.companion.game.pending")


def last_event_n(page) -> int:
    return page.evaluate("(window.companion.game.log[0] || {n: 0}).n")


#: The record against the camera: every car in play where the camera sees it (max(3 mm, 3 sigma),
#: 3 deg), nothing out of place, nothing waiting. Empty when they agree, else what disagrees.
DISAGREE_JS = """async () => {
    const g = await (await fetch('api/game')).json();
    const out = [];
    if (g.pending) out.push('waiting: ' + g.pending.asked);
    for (const o of g.out_of_place) out.push('out of place: ' + o.text);
    const cars = window.companion.last.cars;
    for (const [m, v] of Object.entries(g.game.state.vehicles)) {
        if (v.destroyed || v.removed || !v.pose) continue;
        const c = cars.find((c) => c.id === Number(m));
        if (!c || c.stale) { out.push(`the ${v.name} is not seen`); continue; }
        const mm = Math.hypot(c.x_mm - v.pose[0], c.y_mm - v.pose[1]);
        const deg = Math.abs((((c.heading_deg - v.pose[2]) % 360) + 540) % 360 - 180);
        const doubt = Math.max(3, 3 * (c.sigma_mm || 0));
        if (mm > doubt || deg > 3) out.push(`the ${v.name}: the record has ${v.pose}, the camera sees ` +
            `${c.x_mm.toFixed(1)},${c.y_mm.toFixed(1)},${c.heading_deg.toFixed(1)} (${mm.toFixed(1)} mm, ${deg.toFixed(1)} deg)`);
    }
    return out.join('; ');
}"""


def agree(page, errors: list, when: str) -> None:
    """After an activation: the record and the camera agree, and the page raised no error. The
    camera's newest frames may not be in the record yet: asked again after a few more frames
    (waited for, not for a time), a bounded number of times."""
    for _ in range(20):
        off = page.evaluate(DISAGREE_JS)
        if not off:
            break
        seen = page.evaluate("window.companion.updates")
        page.wait_for_function("([n]) => window.companion.updates >= n + 3", arg=[seen], timeout=WAIT_MS)
    else:
        pytest.fail(f"{when}: the record and the camera disagree: {off}")
    assert errors == [], (when, errors)


# --- moving cars on the board ---------------------------------------------------------------

def _turn(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def put_car(page, car: int, x: float, y: float, h: float) -> dict:
    """A hand moves the car to (x, y) facing h: slid there by a drag, then turned by its handle
    (each only if needed); waits until the camera sees it there."""
    now = tracked(page, car)
    far, turn = math.hypot(now["x_mm"] - x, now["y_mm"] - y), _turn(now["heading_deg"], h)
    # A minute, or longer for a long way: the demo moves a car at most 5 mm and 3 deg a frame,
    # and a busy machine renders few frames (allowed: one every 3 s).
    wait_ms = max(WAIT_MS, 3000.0 * (far / 5.0 + turn / 3.0))
    try:
        if far > 0.5:
            drag_car_to(page, car, x, y, timeout_ms=wait_ms)
        if turn > 0.5:
            turn_car_to(page, car, h)
        return wait_until_seen_at(page, car, x, y, h, timeout_ms=wait_ms)
    except Exception:
        snap(page, "ad-whole-stuck")
        pytest.fail(f"car {car} sent to {(round(x, 1), round(y, 1), round(h, 1))} from {now}: the camera sees "
                    f"{tracked(page, car)}; the demo says {page.inner_text('#demo-bar')!r}")


def ahead(pose: dict, mm: float) -> tuple[float, float]:
    a = math.radians(pose["heading_deg"])
    return pose["x_mm"] + mm * math.cos(a), pose["y_mm"] + mm * math.sin(a)


# --- the page's controls --------------------------------------------------------------------

def open_action(page, car: int, act: str) -> None:
    """Select the car (its card) and open one of its actions' forms."""
    page.click('#tabs [data-tab="car"]')
    select_car(page, car)
    try:
        open_form(page, act, WAIT_MS)
    except Exception:
        pytest.fail(f"{act} of car {car} is not offered; the page says {page.inner_text('#car-actions')!r}")
    page.wait_for_selector("#action-form:not([hidden]) #preview", timeout=WAIT_MS)


def select_car(page, car: int) -> None:
    """A tap on the car where it shows: the selected car's turn handle may lie over another car
    (the War Rig's, against the Rust Bucket's tail), so the tap goes on the part in view, along
    its length from the middle out."""
    if page.evaluate("window.companion.selected") != car:
        c = tracked(page, car)
        for along in (0.0, 0.35, -0.35):
            x, y = screen_point(page, *ahead(c, along * c["length_mm"]))
            if page.evaluate("([x, y, id]) => !!document.elementFromPoint(x, y)?.closest(`#cars [data-car-id='${id}']`)",
                             [x, y, car]):
                page.mouse.click(x, y)
                break
        else:
            pytest.fail(f"the {c['name']} is covered on the board")
    page.wait_for_selector(f'#car-sheet[data-car="{car}"]', timeout=WAIT_MS)


def choose_field(page, name: str, value: str) -> None:
    page.select_option(f'#action-form select[name="{name}"]', value)


def pick_point(page, name: str, x: float, y: float) -> None:
    """'Pick on the table', then a tap on the board there."""
    page.click(f'#action-form button[data-pick="{name}"]')
    page.wait_for_selector("#pick-hint:not([hidden])", timeout=WAIT_MS)
    page.mouse.click(*screen_point(page, x, y))
    page.wait_for_function(f"""() => {{ const s = document.querySelector('#action-form [data-point="{name}"]');
        return s && s.textContent !== 'not picked'; }}""", timeout=WAIT_MS)
    shown = page.inner_text(f'#action-form [data-point="{name}"]')
    px, py = (float(v) for v in shown.strip("() mm").split(","))
    assert math.hypot(px - x, py - y) < 3.0, (shown, x, y)


def resolve(page, *steps) -> dict:
    """Press Resolve (once the page says the action's conditions hold), answer what the rules
    ask in order, and wait until it is committed with nothing left waiting: the event."""
    page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)
    n0 = last_event_n(page)
    page.click("#resolve:not([disabled])", timeout=WAIT_MS)
    return answer(page, n0, steps)


def answer(page, n0: int, steps) -> dict:
    for step in steps:
        {"die": type_die, "choice": choose, "place": place}[step[0]](page, *step[1:])
    try:
        page.wait_for_function("([n0]) => { const g = window.companion.game;"
                               " return g.log.length && g.log[0].n > n0 && !g.pending; }", arg=[n0], timeout=WAIT_MS)
    except Exception:
        pytest.fail(f"not committed: waiting for {pending(page)}; the page says "
                    f"{page.inner_text('#action-error') if page.is_visible('#action-error') else ''!r}")
    event = page.evaluate("window.companion.game.log[0]")
    assert event["n"] == n0 + 1, event
    return event


def type_die(page, face: int, asked_has: str) -> None:
    """The dice box asks a d6 (its words include `asked_has`): the face typed in and used."""
    page.wait_for_function("([has]) => { const p = window.companion.game.pending;"
                           " return p && p.waiting === 'dice' && p.asked.includes(has); }", arg=[asked_has],
                           timeout=WAIT_MS)
    page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
    assert asked_has in page.inner_text("#dice-asked"), page.inner_text("#dice-asked")
    k = len(pending(page)["so_far"])
    page.fill("#dice-inputs input", str(face))
    page.click("#dice-use")
    page.wait_for_function("([k]) => { const p = window.companion.game.pending;"
                           " return !p || p.so_far.length > k; }", arg=[k], timeout=WAIT_MS)


def choose(page, player: str, value, asked_has: str) -> None:
    """A choice the rules ask of `player`: his button pressed on the page."""
    page.wait_for_function("([has]) => { const p = window.companion.game.pending;"
                           " return p && p.waiting === 'choice' && p.purpose.includes(has); }", arg=[asked_has],
                           timeout=WAIT_MS)
    page.wait_for_selector("#choice:not([hidden])", timeout=WAIT_MS)
    asked = page.inner_text("#choice-asked")
    assert asked.startswith(f"{player} chooses") and asked_has in asked, asked
    k = len(pending(page)["choices_so_far"])
    page.click(f'#choice-options button[data-choice="{value}"]')
    page.wait_for_function("([k]) => { const p = window.companion.game.pending;"
                           " return !p || (p.choices_so_far || []).length > k; }", arg=[k], timeout=WAIT_MS)


def place(page, why_has: str, shot: str | None = None) -> None:
    """The rules moved a car: the page says which and why while it waits; the car is put where
    the game asks (its outline on the board), and the game takes it from the camera."""
    page.wait_for_function("([has]) => { const p = window.companion.game.pending;"
                           " return p && p.waiting === 'placement' && p.placement.why.includes(has); }",
                           arg=[why_has], timeout=WAIT_MS)
    p = pending(page)["placement"]
    page.wait_for_selector("#placement:not([hidden])", timeout=WAIT_MS)
    headline = page.inner_text("#placement-asked")
    assert f"the {p['name']} here" in headline and why_has in headline, headline
    if shot:
        snap(page, shot)
    put_car(page, p["marker"], *p["to"])
    page.wait_for_function("([why]) => { const p = window.companion.game.pending;"
                           " return !p || p.waiting !== 'placement' || p.placement.why !== why; }",
                           arg=[p["why"]], timeout=WAIT_MS)


def draw_chip(page, player: str, in_bag: int, drawer: str) -> None:
    """The question whose chip came out of the bag (the header says a chip is being drawn), asked of
    `drawer`: the player whose freak moved last (the first player before anyone has)."""
    page.wait_for_function("() => { const p = window.companion.game.pending;"
                           " return p && p.waiting === 'choice' && p.purpose.includes('whose chip came out'); }",
                           timeout=WAIT_MS)
    assert "draw a chip from the bag" in page.inner_text("#turn"), page.inner_text("#turn")
    choose(page, drawer, player, f"{in_bag} chips in it")


def start_round(page, n: int, first: str, drawer: str) -> None:
    page.click('#tabs [data-tab="round"]')
    page.click("#start-round:not([disabled])", timeout=WAIT_MS)
    n0 = last_event_n(page)
    draw_chip(page, first, 6, drawer)
    answer(page, n0, ())
    s = state(page)
    assert s["round"] == n and s["chip"] == first, s


def end_turn(page, label: str | None, *steps) -> dict:
    """End turn (or pass) from the Round tab, its button saying `label` (None: not checked); the
    steps answer what it asks (which freak takes a passed chip, whose chip comes out next)."""
    page.click('#tabs [data-tab="round"]')
    page.wait_for_selector("#end-turn", timeout=WAIT_MS)
    if label is not None:
        assert page.inner_text("#end-turn") == label, page.inner_text("#end-turn")
    n0 = last_event_n(page)
    page.click("#end-turn")
    return answer(page, n0, steps)


def end_turn_refused(page, why_has: str) -> None:
    """The Round tab's End this turn greyed by the rules, their reason beside it (its words
    include `why_has`)."""
    page.click('#tabs [data-tab="round"]')
    page.wait_for_selector("#end-turn[disabled]", timeout=WAIT_MS)
    why = page.inner_text("#end-turn-why")
    assert why_has in why and "drive on, or say the way was blocked" in why, why


def drawn(player: str, in_bag: int, drawer: str):
    """The next chip drawn, asked of `drawer`: the player whose freak has just moved (or passed)."""
    return ("choice", drawer, player, f"{in_bag} chips in it")


# --- the game ---------------------------------------------------------------------------------

def test_three_rounds_of_alpha_destructicus_with_every_action_on_the_demo_page(ad_server, browser):
    page, errors = open_demo(browser, ad_server)
    assert page.evaluate("window.companion.game.game.rules.name") == "alpha_destructicus"
    s = state(page)
    assert s["round"] == 0 and sorted(s["terrain"]) == ["Bank", "Saloon", "barrier: Tyre stack", "forest: Pines",
                                                       "lava: Lava pit", "ramp: Jump"]
    kinds: set[str] = set()

    def acted(event: dict) -> dict:
        kinds.add(event["detail"]["act"])
        return event["outcome"]

    # ================= Round 1 =================
    start_round(page, 1, P2, P1)

    # Freak 2.2 takes the chip (Move this freak), gets the Buggy going and drives it south
    # through the West gate.
    open_action(page, BUGGY, "activate")
    assert page.input_value('#action-form select[name="freak"]') == "Freak 2.2"
    acted(resolve(page))
    open_action(page, BUGGY, "repair")
    acted(resolve(page, ("die", 5, "repair the Buggy's engine")))
    open_action(page, BUGGY, "drive")
    b = tracked(page, BUGGY)
    put_car(page, BUGGY, b["x_mm"], 250.0, b["heading_deg"])
    out = acted(resolve(page))
    assert out["result"] == "moved" and [x["gate"] for x in out["scored"]] == ["West gate"], out
    end_turn(page, "End this turn", drawn(P1, 5, P2))
    agree(page, errors, "round 1, the Buggy")

    # Freak 1.3 swings the Hearse round and past Freak 2.3, who grabs hold of it out of his turn.
    assert any(c["label"] == "Freak 2.3" for c in page.evaluate("window.companion.game.game.board.cells"))
    open_action(page, HEARSE, "drive")
    h = tracked(page, HEARSE)
    put_car(page, HEARSE, h["x_mm"], h["y_mm"], 135.0)
    put_car(page, HEARSE, h["x_mm"] - 120 * math.sqrt(0.5), h["y_mm"] + 120 * math.sqrt(0.5), 135.0)
    out = acted(resolve(page))
    assert out["result"] == "moved", out
    open_action(page, HEARSE, "grab")
    assert page.input_value('#action-form select[name="freak"]') == "Freak 2.3"
    out = acted(resolve(page, ("die", 5, "grab hold of the Hearse")))
    assert out["result"] == "clinging", out
    snap(page, "ad-whole-1-grabbed")
    # A second drive in the same turn, from where the first ended, with him clinging on.
    open_action(page, HEARSE, "drive")
    h = tracked(page, HEARSE)
    put_car(page, HEARSE, h["x_mm"], h["y_mm"], 180.0)
    put_car(page, HEARSE, 330.0, h["y_mm"], 180.0)
    out = acted(resolve(page))
    assert out["result"] == "moved", out
    assert state(page)["freaks"]["Freak 2.3"]["seat"] == "clinging"
    # The Hearse's strafe-o-matic at the Buggy: 2 + 1 against its side armour 3.
    open_action(page, HEARSE, "shoot")
    choose_field(page, "target", str(BUGGY))
    out = acted(resolve(page, ("die", 2, "strafe-o-matic: strength 1 at the Buggy's side")))
    assert out["result"] == "armour", out
    end_turn(page, "End this turn", drawn(P2, 4, P1))
    agree(page, errors, "round 1, the Hearse")

    # Freak 2.3, clinging on, jacks the Hearse: 6 against 1 + 1; Freak 1.3 is thrown out.
    open_action(page, HEARSE, "jack")
    out = acted(resolve(page, ("die", 6, "jacking the Hearse (jacker)"), ("die", 1, "jacking the Hearse (driver"),
                        ("die", 6, "resilience against being thrown out")))
    assert out["result"] == "jacked", out
    s = state(page)
    assert s["vehicles"]["14"]["driver"] == "Freak 2.3" and s["freaks"]["Freak 1.3"]["pos"] is not None
    # At the wheel of a working Hearse, a Speed Freak "must ALWAYS move at least 6" in that vehicle
    # if possible" ("Characters"): he swings it round and drives it 6.5 in east along the track.
    open_action(page, HEARSE, "drive")
    h = tracked(page, HEARSE)
    put_car(page, HEARSE, h["x_mm"], h["y_mm"], 0.0)
    put_car(page, HEARSE, h["x_mm"] + 165.0, h["y_mm"], 0.0)
    out = acted(resolve(page))
    assert out["result"] == "moved" and out["moved_in"] >= 6.0, out
    end_turn(page, "End this turn", drawn(P1, 3, P2))
    agree(page, errors, "round 1, the jacking")

    # Freak 1.1 repairs the Interceptor and fires its booster through the Near gate (15.6 in).
    open_action(page, INTERCEPTOR, "repair")
    acted(resolve(page, ("die", 5, "repair the Interceptor's engine")))
    open_action(page, INTERCEPTOR, "drive")
    page.check('#action-form input[name="booster"]')
    i = tracked(page, INTERCEPTOR)
    put_car(page, INTERCEPTOR, 700.0, i["y_mm"], i["heading_deg"])
    out = acted(resolve(page))
    assert [x["gate"] for x in out["scored"]] == ["Near gate"], out
    assert any("booster fires" in e for e in out["events"]), out
    end_turn(page, "End this turn", drawn(P1, 2, P1))
    agree(page, errors, "round 1, the Interceptor")

    # Freak 1.2: the War Rig repaired, pushed (+6 in straight ahead), driven north through the
    # East gate, turned west and stopped against the Rust Bucket's tail; then it rams it.
    open_action(page, WAR_RIG, "repair")
    acted(resolve(page, ("die", 5, "repair the War Rig's engine")))
    open_action(page, WAR_RIG, "stunt")
    choose_field(page, "stunt", "push_it")
    acted(resolve(page, ("die", 5, "push it")))
    open_action(page, WAR_RIG, "drive")
    w, rb = tracked(page, WAR_RIG), tracked(page, RUST_BUCKET)
    row = rb["y_mm"]
    put_car(page, WAR_RIG, w["x_mm"], row, 180.0)
    # Its nose 1.5 mm short of the Rust Bucket's tail: in contact (within 3 mm), not into it.
    put_car(page, WAR_RIG, rb["x_mm"] + rb["length_mm"] / 2 + w["length_mm"] / 2 + 1.5, row, 180.0)
    out = acted(resolve(page))
    assert out["result"] == "moved" and [x["gate"] for x in out["scored"]] == ["East gate"], out
    open_action(page, WAR_RIG, "ram")
    choose_field(page, "target", str(RUST_BUCKET))
    choose_field(page, "terrain", "")                          # a vehicle, no terrain
    out = acted(resolve(page, ("die", 1, "ram roll (the rammer) for War Rig"), ("die", 1, "ram roll (the one rammed) for Rust Bucket"),
                        ("die", 2, "glancing hit table for the War Rig")))
    assert out["result"] == "won" and "glancing hit 2: badly shaken" in out["events"], out
    s = state(page)
    assert s["vehicles"]["12"]["pending"] == "badly shaken"
    assert [c["status"] for c in s["vehicles"]["11"]["components"]] == ["damaged", "destroyed"]
    # The last chip is Player 2's: drawn without a question.
    end_turn(page, "End this turn")
    agree(page, errors, "round 1, the War Rig")

    # Freak 2.1 passes: the chip goes on him (his player's last freak: nothing asked).
    out = end_turn(page, "Pass (end the turn)")["outcome"]
    kinds.add("pass")
    assert any("Player 2 passes: the chip goes on Freak 2.1" in e for e in out["events"]), out
    assert "round 1 is over" in out["events"], out
    agree(page, errors, "round 1 over")
    assert state(page)["scores"] == {P1: 2, P2: 1}

    # ================= Round 2 =================
    start_round(page, 2, P2, P2)

    # Freak 2.1 repairs the Rust Bucket and drives it away west through the Far gate.
    open_action(page, RUST_BUCKET, "repair")
    acted(resolve(page, ("die", 5, "repair the Rust Bucket's engine")))
    open_action(page, RUST_BUCKET, "drive")
    r = tracked(page, RUST_BUCKET)
    put_car(page, RUST_BUCKET, 700.0, r["y_mm"], r["heading_deg"])
    out = acted(resolve(page))
    assert [x["gate"] for x in out["scored"]] == ["Far gate"], out
    end_turn(page, "End this turn", drawn(P1, 5, P2))
    agree(page, errors, "round 2, the Rust Bucket")

    # Freak 1.2's turn begins with the War Rig's forced move: 6 in straight ahead, put there.
    open_action(page, WAR_RIG, "forced")
    assert [a for a in page.locator("#car-actions button[data-act]").evaluate_all("bs => bs.map(b => b.dataset.act)")
            if a in ("drive", "stunt", "ram")] == []
    w = tracked(page, WAR_RIG)
    out = acted(resolve(page, ("place", "badly shaken: it moved 6 in straight ahead", "ad-whole-2-forced-move")))
    pose = state(page)["vehicles"]["12"]["pose"]
    assert math.hypot(pose[0] - ahead(w, 152.4)[0], pose[1] - ahead(w, 152.4)[1]) < 3.0, (pose, w)
    end_turn(page, "End this turn", drawn(P1, 4, P1))
    agree(page, errors, "round 2, the forced move")

    # Freak 1.1 concentrates and drives the Interceptor to the ramp's foot, turned across it
    # (not facing up it: no jump yet); a panic turn faces it up the ramp, and it jumps.
    open_action(page, INTERCEPTOR, "drive")
    page.check('#action-form input[name="concentrate"]')
    i = tracked(page, INTERCEPTOR)
    foot = 880.0 - i["length_mm"] / 2 - 1.5                    # the ramp's bottom edge is x = 880 mm
    put_car(page, INTERCEPTOR, foot, i["y_mm"], 90.0)
    out = acted(resolve(page))
    assert out["result"] == "moved" and out["turning_in"] == 3.0 and any("concentrates" in e for e in out["events"]), out
    open_action(page, INTERCEPTOR, "stunt")
    choose_field(page, "stunt", "panic_turn")
    choose_field(page, "turn_deg", "-90")
    out = acted(resolve(page, ("die", 5, "panic turn"), ("place", "Panic Turn: it snapped round 90 deg clockwise")))
    assert out["result"] == "success", out
    open_action(page, INTERCEPTOR, "jump")
    choose_field(page, "ramp", "ramp: Jump")
    out = acted(resolve(page, ("choice", P1, "7", "how far the Interceptor jumps off ramp: Jump"),
                        ("die", 5, "the jump off ramp: Jump"),
                        ("place", "it jumped off ramp: Jump and landed 7.00 in on", "ad-whole-3-jump-landing")))
    assert out["result"] == "landed" and out["distance_in"] == 7.0, out
    end_turn(page, "End this turn", drawn(P2, 3, P1))
    agree(page, errors, "round 2, the jump")

    # Freak 2.3 gets out of the Hearse, walks in at the Bank's door and out into the Saloon
    # (the teleporter), and works the Saloon's guns at the War Rig's bare top.
    open_action(page, HEARSE, "leave")
    h = tracked(page, HEARSE)
    pick_point(page, "to", h["x_mm"] + 10.0, 290.0)
    acted(resolve(page))
    open_action(page, HEARSE, "walk")
    pick_point(page, "to", 860.0, 480.0)
    choose_field(page, "teleport_in", "Bank")
    choose_field(page, "teleport_out", "Saloon")
    out = acted(resolve(page))
    assert any("through Bank and out of Saloon" in e for e in out["events"]), out
    home = page.evaluate("""() => { const c = window.companion.game.game.board.cells.find(c => c.label === 'Freak 2.3');
        return c.polygon; }""")
    assert 800 < sum(p[0] for p in home) / 8 < 920 and 430 < sum(p[1] for p in home) / 8 < 530, home
    open_action(page, WAR_RIG, "defend")
    choose_field(page, "building", "Saloon")
    choose_field(page, "target", str(WAR_RIG))
    out = acted(resolve(page, ("die", 4, "Saloon's guns: strength 1 at the War Rig's top"),
                        ("die", 1, "penetrating hit table for the War Rig"),
                        ("choice", P1, "flamethrower", "which component of the War Rig is destroyed")))
    assert out["result"] == "penetrating", out
    assert state(page)["vehicles"]["12"]["components"][1]["status"] == "destroyed"
    # (The page's button says "Pass" while a freak on foot moves: no car is his; see the report.)
    end_turn(page, None, drawn(P1, 2, P2))
    agree(page, errors, "round 2, the Saloon's guns")

    # Freak 1.3 climbs into the empty Hearse and backs it away west: its whole reverse, 6 in
    # ("Vehicles in reverse have a base movement of 6""), as Speed Freak asks of him.
    open_action(page, HEARSE, "board")
    choose_field(page, "seat", "driver")
    acted(resolve(page))
    open_action(page, HEARSE, "drive")
    page.check('#action-form input[name="reverse"]')
    h = tracked(page, HEARSE)
    put_car(page, HEARSE, *ahead(h, -152.4), h["heading_deg"])
    out = acted(resolve(page))
    assert out["result"] == "moved" and out["moved_in"] == pytest.approx(6.0, abs=0.05), out
    assert state(page)["vehicles"]["14"]["driver"] == "Freak 1.3"
    end_turn(page, "End this turn")
    agree(page, errors, "round 2, the Hearse backs away")

    # Freak 2.2 takes the last chip. His Buggy's engine works and nothing stands in its way, so he
    # may not end his turn at its wheel without driving it 6 in (Speed Freak): the page greys End
    # turn and says why. He drives it on south, 6.3 in.
    open_action(page, BUGGY, "activate")
    acted(resolve(page))
    end_turn_refused(page, "Speed Freak: Freak 2.2 drove the Buggy only 0.00 in")
    open_action(page, BUGGY, "drive")
    b = tracked(page, BUGGY)
    put_car(page, BUGGY, *ahead(b, 160.0), b["heading_deg"])
    out = acted(resolve(page))
    assert out["result"] == "moved" and out["moved_in"] >= 6.0, out
    out = end_turn(page, "End this turn")["outcome"]
    assert "round 2 is over" in out["events"], out
    agree(page, errors, "round 2 over")
    assert state(page)["scores"] == {P1: 2, P2: 2}

    # ================= Round 3 =================
    start_round(page, 3, P2, P2)
    # Freak 2.3 stands on foot, drawn on the board: a tap on him selects the car whose card
    # offers his actions (the War Rig, the nearest).
    page.click('#tabs [data-tab="car"]')
    freak = page.locator('#board-cells polygon.cell.freak[data-cell^="Freak 2.3"]')
    assert freak.get_attribute("data-select") == str(WAR_RIG)
    box = freak.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector(f'#car-sheet[data-car="{WAR_RIG}"]', timeout=WAIT_MS)
    open_action(page, WAR_RIG, "walk")
    choose_field(page, "teleport_in", "")                      # on foot, no teleporter
    choose_field(page, "teleport_out", "")
    pick_point(page, "to", 860.0, 580.0)
    out = acted(resolve(page))
    assert out["result"] == "walked", out
    end_turn(page, None, drawn(P1, 5, P2))
    agree(page, errors, "round 3, Freak 2.3 walks")
    end_turn(page, "Pass (end the turn)", ("choice", P1, "Freak 1.2", "which freak takes the chip"), drawn(P1, 4, P1))
    end_turn(page, "Pass (end the turn)", ("choice", P1, "Freak 1.3", "which freak takes the chip"), drawn(P2, 3, P1))
    end_turn(page, "Pass (end the turn)", ("choice", P2, "Freak 2.1", "which freak takes the chip"), drawn(P1, 2, P2))
    end_turn(page, "Pass (end the turn)")
    out = end_turn(page, "Pass (end the turn)")["outcome"]
    assert "round 3 is over" in out["events"], out
    agree(page, errors, "round 3 over")
    s = state(page)
    assert s["round"] == 3 and not s["over"] and s["bag"] == [] and all(f["moved"] for f in s["freaks"].values())
    snap(page, "ad-whole-4-three-rounds", panel_top=True)

    every = {"activate", "walk", "board", "leave", "drive", "forced", "stunt", "grab", "jump", "jack", "shoot",
             "ram", "repair", "defend", "pass"}
    assert kinds == every, every ^ kinds
    assert errors == [], errors
    page.close()
