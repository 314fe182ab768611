"""Stop The Truck! on the playable demo page, in a real Chromium: the first turn's first moves
played as the players would, every pick through the page's own forms and the first car moved
by dragging it on the board into the square its box reaches (docs/stop-the-truck.md, "A turn";
docs/actions/stop-the-truck.md).

The demo (`companion demo --rules stop_the_truck`) stands the truck (the Interceptor, marker 10)
in the middle of the table facing +x and the gang in squares 3,3 (Rust Bucket, 11), 3,7 (War
Rig, 12), 2,5 (Buggy, 13) and 4,2 (Hearse, 14). The truck picks gear 2's box of 3 squares; the
Rust Bucket picks 4 forward, so, the board counted relative to the truck, it must end one
square ahead, in 4,3 (the same turn as tests/test_stop_the_truck.py's
`test_a_turn_on_the_demo_table_through_the_page`)."""

from __future__ import annotations

import math
import re

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import ARRIVE_MM, drag_car_to, open_action, open_demo, tracked

pytestmark = pytest.mark.browser

WAIT_MS = 30000
TRUCK = 10
#: Each vehicle's secret pick: the truck declares speed 3; the Rust Bucket gains one square.
BOXES = {10: "2:3", 11: "2:4", 12: "2:3", 13: "2:3", 14: "2:3 1L"}
FIRST, FIRST_SQUARE = 11, [4, 3]


@pytest.fixture
def truck_demo():
    """A playable demo of its own whose game is Stop The Truck!, its cars where the game begins."""
    yield from _demo("--rules", "stop_the_truck", scripted=False)


def _state(page, path: str):
    return page.evaluate(f"window.companion.game.game.state{path}")


def _open_action(page, car: int, act: str) -> None:
    """Select the car on the board (a tap) and open one of its card's action forms."""
    page.click(f'#cars [data-car-id="{car}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{car}"]', timeout=WAIT_MS)
    open_action(page, act, WAIT_MS)


def _resolve(page) -> None:
    """Resolve the open form once the page says its conditions hold."""
    page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)
    page.click("#resolve:not([disabled])", timeout=WAIT_MS)
    # Taken: the form closes; refused: it stays open and says why.
    page.wait_for_function("document.getElementById('action-form').hidden || "
                           "(document.getElementById('action-error') || {}).textContent", timeout=WAIT_MS)
    assert page.is_hidden("#action-form"), page.inner_text("#action-error")


def _cell_centre(page, label: str) -> tuple[float, float]:
    """The middle of a square the page draws among the selected car's overlays (table mm)."""
    return tuple(page.evaluate("""(label) => {
        const p = [...document.querySelectorAll('#overlays polygon.cell')].find(c => c.dataset.cell === label);
        const depth = Number(document.getElementById('board').dataset.depthMm);
        const pts = p.points, xs = [], ys = [];
        for (let i = 0; i < pts.numberOfItems; i++) { xs.push(pts.getItem(i).x); ys.push(depth - pts.getItem(i).y); }
        return [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2]; }""", label))


def test_the_first_turn_is_picked_declared_and_the_first_car_dragged_into_its_square(truck_demo, browser):
    page, errors = open_demo(browser, truck_demo)
    assert _state(page, ".phase") == "setup"
    squares = page.evaluate("Object.fromEntries(Object.entries(window.companion.game.game.state.vehicles)"
                            ".map(([m, v]) => [m, v.square]))")
    assert squares == {"10": [8, 5], "11": [3, 3], "12": [3, 7], "13": [2, 5], "14": [4, 2]}

    # 1. The turn begins on the Round tab (snakes first: there are none; no play order is asked).
    page.click('#tabs button[data-tab="round"]')
    page.wait_for_selector("#start-round:not([disabled])", timeout=WAIT_MS)
    assert page.inner_text("#start-round") == "Start turn 1"           # the book's word
    page.click("#start-round:not([disabled])", timeout=WAIT_MS)
    page.wait_for_function("window.companion.game.game.state.phase === 'select' && "
                           "window.companion.game.game.state.turn === 1", timeout=WAIT_MS)

    # 2. Every vehicle's player picks a box in secret on its card's form.
    for car, box in BOXES.items():
        _open_action(page, car, "select")
        options = page.eval_on_selector_all('#action-form select[name="box"] option', "os => os.map(o => o.value)")
        assert box in options, (car, options)
        page.select_option('#action-form select[name="box"]', box)
        _resolve(page)
        page.wait_for_function(f"window.companion.game.game.state.vehicles['{car}'].selected", timeout=WAIT_MS)
        # Secret: the state says only that it picked, the log shows the box as "(secret)".
        assert _state(page, f".vehicles['{car}'].box") is None
    picks = page.evaluate("window.companion.game.log.filter(e => e.detail && e.detail.act === 'select')"
                          ".map(e => e.detail.box)")
    assert picks == ["(secret)"] * len(BOXES), picks

    # 3. The truck declares its speed: the picks are shown, the lightest gang car moves first.
    _open_action(page, TRUCK, "declare")
    _resolve(page)
    page.wait_for_function("window.companion.game.game.state.phase === 'move'", timeout=WAIT_MS)
    assert _state(page, ".truck.speed") == 3
    assert _state(page, ".next_to_move") == FIRST
    shown = page.evaluate("Object.fromEntries(Object.entries(window.companion.game.game.state.vehicles)"
                          ".map(([m, v]) => [m, v.box]))")
    assert shown == {str(m): b for m, b in BOXES.items()}, shown       # each form's pick, now shown

    # 4. The first mover: its card draws the one square its box reaches; its Move form names it.
    _open_action(page, FIRST, "move")
    label = f"{FIRST_SQUARE[0]},{FIRST_SQUARE[1]}"
    spec = page.evaluate("window.companion.car.actions.find(a => a.act === 'move')")
    assert spec["place"][0]["square"] == FIRST_SQUARE, spec
    page.wait_for_selector('#overlays polygon.cell[data-kind="reach"]', timeout=WAIT_MS)
    reach = page.eval_on_selector_all('#overlays polygon.cell[data-kind="reach"]', "ps => ps.map(p => p.dataset.cell)")
    assert reach == ["gear 2"], reach                     # the square is labelled by the box's gear
    to = _cell_centre(page, "gear 2")
    assert math.dist(to, spec["place"][0]["pose"][:2]) < 0.5, (to, spec["place"])
    # Not there yet: the page says so.
    page.wait_for_selector("#conditions.fails", timeout=WAIT_MS)
    assert "Move: not legal" in page.inner_text("#preview")
    assert f"put it in square {label}" in page.inner_text("#conditions")

    # A quarter of the way there (still clearly in its own square: half way is the squares'
    # edge, too close to call), the live ruler says it is not legal yet and what would make it so.
    start = tracked(page, FIRST)
    drag_car_to(page, FIRST, start["x_mm"] + (to[0] - start["x_mm"]) / 4, start["y_mm"] + (to[1] - start["y_mm"]) / 4, 0.0)
    try:
        page.wait_for_function("(l) => { const r = document.getElementById('ruler-text');"
                               " return !r.hidden && r.textContent.includes('not legal here') && r.textContent.includes('→ move it')"
                               " && r.textContent.includes('into square ' + l); }", arg=label, timeout=WAIT_MS)
    except Exception:
        pytest.fail("the ruler did not say what would make the move legal: "
                    + repr(page.evaluate("[document.getElementById('ruler-text').hidden, document.getElementById('ruler-text').textContent,"
                                         " JSON.stringify(window.companion.ruler), JSON.stringify(window.companion.game.game.activation)]"))
                    + f" | car seen at {tracked(page, FIRST)}")
    assert re.search(r"→ move it \d+\.\d\d in (forward|back)", page.inner_text("#ruler-text")), page.inner_text("#ruler-text")
    # On the squares' edge, the ruler says what the rules called: never a bare "it may stop
    # here" for a call inside the camera's doubt.
    edge = drag_car_to(page, FIRST, (start["x_mm"] + to[0]) / 2, (start["y_mm"] + to[1]) / 2, 0.0)
    page.wait_for_function("(p) => { const r = window.companion.ruler.result; const t = r && r.action && r.action.to;"
                           " return t && Math.hypot(t[0] - p[0], t[1] - p[1]) < 0.5"
                           " && document.getElementById('ruler-text').textContent.includes(' · '); }",
                           arg=[edge["x_mm"], edge["y_mm"]], timeout=WAIT_MS)
    judged, said = page.evaluate("[window.companion.ruler.result.judged, document.getElementById('ruler-text').textContent]")
    call = judged["verdict"]["outcome"]
    assert ("too close to call" in said) == (call == "too close to call"), (call, said)
    assert ("not legal here" in said) == (not judged["legal"]), (judged, said)
    # Dragged on the board to the middle of the square, facing along the board as it did.
    drag_car_to(page, FIRST, *to, 0.0)
    assert math.dist((start["x_mm"], start["y_mm"]), to) > 70      # it really went a square
    page.wait_for_function("document.getElementById('preview').textContent.includes('Move: legal')",
                           timeout=WAIT_MS)
    snap(page, "stop-the-truck-1-first-move-dragged")
    _resolve(page)                                        # a green box: no dice

    page.wait_for_function(f"window.companion.game.log.some(e => e.detail && e.detail.act === 'move' && "
                           f"e.detail.vehicle === {FIRST})", timeout=WAIT_MS)
    # The page says how it went; the record holds the square the camera put it in.
    said = f"the Rust Bucket moves 4 green (gear 2) to square {label}"
    page.wait_for_function("(said) => !document.getElementById('outcome').hidden && "
                           "document.getElementById('outcome').textContent.includes(said)", arg=said, timeout=WAIT_MS)
    entry = page.evaluate("window.companion.game.log.find(e => e.detail && e.detail.act === 'move')")
    assert entry["outcome"]["result"] == "moved" and entry["outcome"]["to_square"] == FIRST_SQUARE, entry
    assert entry["outcome"]["square_verdict"]["outcome"] == "in", entry
    moved = _state(page, f".vehicles['{FIRST}']")
    assert moved["moved"] and moved["square"] == FIRST_SQUARE, moved
    pose = moved["pose"]
    assert math.hypot(pose[0] - to[0], pose[1] - to[1]) < ARRIVE_MM + 0.5, (pose, to)
    # The next lightest goes on.
    assert _state(page, ".phase") == "move" and _state(page, ".next_to_move") not in (None, FIRST)
    snap(page, "stop-the-truck-2-first-move-resolved", panel_top=True)
    assert errors == [], errors
    page.close()
