"""JSON for programs and the page: the live table, the game, and the players' decisions.

Reading is open to anyone who can reach the page; every change is a POST that
the security module has already checked (page token, origin, PIN). Bodies are
JSON objects; a bad one gets a 400 naming the problem, a request the game
cannot take a 409 saying why, and never a traceback.
"""

from __future__ import annotations

import logging
import re
import threading
import time

import cv2
from flask import Blueprint, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

from calibration.tablefile import TableFileError, parse_table

from ..game import GameError, TableGame
from ..rules.base import DEFAULT_SYSTEM, RulesError
from .security import BadInput, answering_for, can_change, is_host, refuse, strict_json

bp = Blueprint("api", __name__, url_prefix="/api")
log = logging.getLogger(__name__)


def game() -> TableGame:
    return current_app.extensions["table_game"]


def live_table():
    return current_app.extensions["live_table"]


BadRequest = BadInput


def body() -> dict:
    """The request's JSON object, read strictly (see security.strict_json)."""
    if not request.is_json:
        raise BadRequest("send a JSON object (Content-Type: application/json)")
    data = strict_json(request.get_data(cache=True))
    if not isinstance(data, dict):
        raise BadRequest("send a JSON object (Content-Type: application/json)")
    return data


_WHOLE = re.compile(r"-?[0-9]{1,15}")


def _int(value, what: str) -> int:
    """A marker or count: a JSON whole number, or its digits (a query string's); never 4.9 or true."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        return int(value)
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:40] + "..."
    raise BadRequest(f"{what} must be a whole number, not {shown}")


@bp.errorhandler(BadInput)
def bad_request(exc):
    return jsonify({"error": str(exc)}), 400


@bp.errorhandler(GameError)
@bp.errorhandler(RulesError)
def cannot(exc):
    return jsonify({"error": str(exc)}), 409


@bp.errorhandler(HTTPException)
def http_error(exc):
    return jsonify({"error": f"{exc.name}: {exc.description}"}), exc.code


@bp.errorhandler(Exception)
def broken(exc):
    log.exception("the companion failed answering %s %s", request.method, request.path)
    return jsonify({"error": f"the companion failed ({type(exc).__name__}: {exc}); the game is as it was, "
                             f"and the log has the details"}), 500


# --- the live table ------------------------------------------------------------------

@bp.get("/state")
def state():
    """The current table snapshot: cars with their poses and doubt, anchors, source status."""
    return jsonify(live_table().snapshot())


class StreamSlots:
    """Open streams per client address and in all: each holds a server thread while open.

    The host's own browser (127.0.0.1, ::1) is bounded only by the total: the host may
    keep many pages open (a TV, the audit, the page tests), and a visitor cannot come from there."""

    def __init__(self, per_client: int, total: int, unbounded=("127.0.0.1", "::1"), visitors: int | None = None) -> None:
        self.per_client, self.total, self.unbounded = per_client, total, frozenset(unbounded)
        #: Streams open to visitors without the PIN, in all: a few addresses cannot take every
        #: slot from the players (who then polled at 1 Hz).
        self.visitors = total if visitors is None else visitors
        self.lock = threading.Lock()
        self.open: dict[str, int] = {}
        self.watching = 0

    def take(self, who: str, visitor: bool = False) -> tuple[int, str] | None:
        """A slot for `who` (None), or why not: (HTTP status, reason)."""
        with self.lock:
            if who not in self.unbounded and self.open.get(who, 0) >= self.per_client:
                return 429, (f"{self.per_client} live streams are already open from {who}; "
                             f"this page polls /api/state instead")
            if sum(self.open.values()) >= self.total:
                return 503, (f"the companion is already streaming to {self.total} pages; "
                             f"this page polls /api/state instead")
            if visitor and self.watching >= self.visitors:
                return 503, (f"the companion is already streaming to {self.visitors} pages without the "
                             f"table's PIN; this page polls /api/state instead (join with the PIN to stream)")
            self.open[who] = self.open.get(who, 0) + 1
            self.watching += visitor
            return None

    def give_back(self, who: str, visitor: bool = False) -> None:
        with self.lock:
            left = self.open.get(who, 0) - 1
            if left > 0:
                self.open[who] = left
            else:
                self.open.pop(who, None)
            self.watching -= visitor

    def count(self) -> int:
        with self.lock:
            return sum(self.open.values())


def stream_slots() -> StreamSlots:
    app = current_app
    slots = app.extensions.get("stream_slots")
    if slots is None:
        slots = app.extensions.setdefault("stream_slots", StreamSlots(
            app.config["STREAM_MAX_PER_CLIENT"], app.config["STREAM_MAX_TOTAL"],
            visitors=app.config.get("STREAM_MAX_VISITORS")))
    return slots


#: Seconds a refused page waits before it asks for a stream again (it polls meanwhile).
STREAM_RETRY_AFTER_S = {429: 60, 503: 20}


class SendLimit:
    """About `rate_hz` snapshots a second to a page at most (a bucket of `burst` sends,
    refilled at `rate_hz`), never two within half the gap that rate allows; otherwise a
    snapshot goes the moment it is published.

    A snapshot once waited for the next tick of a 30 Hz clock: with the camera's own 30 Hz
    at an arbitrary phase to it, every frame of a session waited the same 0 to 33 ms, 16 on
    average (bench/page.py --video 4k). The bucket lets a 30 Hz camera's jitter through
    without holding a frame, and still caps a pipeline running faster than a page needs."""

    def __init__(self, rate_hz: float, burst: float = 3.0) -> None:
        self.rate_hz, self.burst = float(rate_hz), float(burst)
        self._tokens, self._at, self._last = self.burst, None, None

    def _tokens_at(self, now: float) -> float:
        if self._at is None:
            return self._tokens
        return min(self.burst, self._tokens + (now - self._at) * self.rate_hz)

    def hold(self, now: float) -> float:
        """Seconds to wait before sending at `now` (0: send now)."""
        wait = max(0.0, (1.0 - self._tokens_at(now)) / self.rate_hz)
        if self._last is not None:
            wait = max(wait, self._last + 0.5 / self.rate_hz - now)
        return wait

    def sent(self, now: float) -> None:
        self._tokens, self._at, self._last = self._tokens_at(now) - 1.0, now, now


@bp.get("/stream")
def stream():
    """Server-sent events: every new snapshot, as it is made (throttled per page).

    A stream lasts STREAM_MAX_S at most (the browser opens it again), and only so many
    are open per client and in all: past that the answer is 429 or 503 with Retry-After,
    and the page polls /api/state meanwhile."""
    live = live_table()
    keepalive = current_app.config["STREAM_KEEPALIVE_S"]
    rate_hz = current_app.config["STREAM_MAX_RATE_HZ"]
    max_s = current_app.config["STREAM_MAX_S"]
    slots = stream_slots()
    who = request.remote_addr or "?"
    visitor = not can_change()
    refused = slots.take(who, visitor)
    if refused is not None:
        status, reason = refused
        return refuse(status, reason, STREAM_RETRY_AFTER_S[status])
    released = threading.Event()

    def release():
        if not released.is_set():
            released.set()
            slots.give_back(who, visitor)

    def events():
        try:
            started = time.monotonic()
            version, text = live.snapshot_text()
            yield f"retry: 1000\ndata: {text}\n\n"
            limit = SendLimit(rate_hz)
            while max_s is None or time.monotonic() - started < max_s:
                wait_s = keepalive if max_s is None else max(0.0, min(keepalive, max_s - (time.monotonic() - started)))
                # Woken the moment a snapshot is published (every page at once: they then ask
                # for the same newest snapshot, serialised once for all of them), and sent
                # then unless the page has had its share of this second.
                live.wait_for(version, wait_s)
                time.sleep(limit.hold(time.monotonic()))
                newest, text = live.snapshot_text()
                if newest == version:
                    yield ": keep-alive\n\n"
                    continue
                version = newest
                limit.sent(time.monotonic())
                yield f"data: {text}\n\n"
        finally:
            release()

    # No request context is kept: the generator needs only what it closed over.
    response = Response(events(), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    # The server closes the response when the page goes away, even before the first event.
    response.call_on_close(release)
    return response


def _jpeg(image) -> Response:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
    if not ok:
        raise GameError("the picture could not be encoded")
    return Response(data.tobytes(), mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.get("/camera.jpg")
def camera_view():
    """The camera's latest frame with anchors, markers, the table's edge and the cars drawn on it;
    `?camera=N`: camera N's (1, 2, ... as the snapshot's `cameras` name them; the first by default)."""
    from vision.overlay import annotate
    from vision.sources import in_colour

    from ..live import MultiLiveTable
    live = live_table()
    which = request.args.get("camera")
    if which is None:
        image, tracked = live.last_image()
    else:
        number = _int(which, "camera")
        if isinstance(live, MultiLiveTable):
            try:
                image, tracked = live.camera_image(number)
            except ValueError as exc:
                return jsonify({"error": str(exc)}), 404
        elif number == 1:
            image, tracked = live.last_image()
        else:
            return jsonify({"error": f"there is no camera {number}: this table has one camera"}), 404
    if image is None:
        return jsonify({"error": "no frame from the camera yet"}), 404
    return _jpeg(annotate(in_colour(image), tracked, live_table().table))


@bp.get("/rectified.jpg")
def rectified_view():
    """The latest frame mapped onto the table, far edge at the top, 0.5 px per mm."""
    from vision.sources import in_colour
    live = live_table()
    image, tracked = live.last_image()
    if image is None or tracked.located.table_pose is None:
        return jsonify({"error": "no frame with the table found yet"}), 404
    return _jpeg(live.rectify(in_colour(image), tracked.located.table_pose))


@bp.get("/measure")
def measure():
    """Between two cars as the camera sees them now, with doubt."""
    return jsonify(game().measure(_int(request.args.get("a"), "a"), _int(request.args.get("b"), "b")))


# --- the game -------------------------------------------------------------------------

@bp.get("/game")
def game_state():
    return jsonify(game().game_json())


@bp.get("/rules")
def rules():
    return jsonify(game().rule_systems())


@bp.get("/rosters/starter")
def starter_rosters():
    from flask import request
    return jsonify(game().starter_rosters(request.args.get("rules", DEFAULT_SYSTEM)))


@bp.post("/game")
def start_game():
    b = body()
    return jsonify(game().start(b.get("rules"), b.get("options"), b.get("rosters")))


@bp.post("/table")
def load_table_file():
    """A new table file (its TOML text): checked line by line, then the camera uses it."""
    text = body().get("text")
    if not isinstance(text, str) or not text.strip():
        raise BadRequest("send the table file's text as 'text'")
    table = _parsed_table(text)
    held = _held_for_host("load a table file", "table", {"text": text})
    if held is not None:
        return held
    game().load_table(table, "the host" if game().session is not None else None)
    return jsonify({"table": {"width_mm": table.width_mm, "depth_mm": table.depth_mm,
                              "cars": [c.name for c in table.cars], "anchors": list(table.anchor_ids)}})


def _parsed_table(text: str):
    try:
        return parse_table(text, "the table file")
    except TableFileError as exc:
        raise BadRequest(str(exc)) from None
    except RecursionError:             # tomllib recurses once per nested inline table or array
        raise BadRequest("the table file is nested too deeply to be a table file") from None


#: Changes held for the host's confirmation at once (a visitor cannot queue more).
MAX_HELD = 8


def _held_for_host(what: str, kind: str, body: dict):
    """Mid-game, a change to what the game measures with (the table file: anchors, a marker's
    place on a roof; a gate) from a device other than the host's is not made but held for the
    host to confirm (a 403 saying so); None: the host, or no game yet, makes it now."""
    if game().session is None or is_host():
        return None
    from .security import _device_label
    held = current_app.extensions.setdefault("held_for_host", {"next": 1, "items": []})
    with stream_slots().lock:                 # any lock will do: this is rare
        if len(held["items"]) >= MAX_HELD:
            return refuse(429, f"{MAX_HELD} changes already wait for the host's confirmation")
        item = {"id": held["next"], "what": what, "kind": kind, "body": body, "from": _device_label(),
                "t": round(time.time(), 3)}
        held["next"] += 1
        held["items"].append(item)
    game().note(f"{item['from']} asks to {what} mid-game: the host confirms it or not (Seats)", "warn")
    return refuse(403, f"mid-game, only the host may {what} (it changes what the game measures with): "
                       f"sent to the host to confirm", held=item["id"])


def held_for_host() -> list[dict]:
    """The changes waiting for the host (for the host's Seats panel)."""
    held = current_app.extensions.get("held_for_host", {"items": []})
    return [{k: v for k, v in i.items() if k != "body"} | ({"name": i["body"].get("name")} if i["kind"] != "table" else {})
            for i in held["items"]]


@bp.post("/held")
def confirm_held():
    """The host's answer to a change held for it: `{"id": N, "take": true}` makes it (recorded
    as confirmed by the host), `"take": false` drops it."""
    if not is_host():
        raise GameError("only the host confirms a change held for it")
    b = body()
    n, take = _int(b.get("id"), "id"), b.get("take")
    if not isinstance(take, bool):
        raise BadRequest(f"'take' is true or false, not {take!r}")
    held = current_app.extensions.get("held_for_host", {"items": []})
    item = next((i for i in held["items"] if i["id"] == n), None)
    if item is None:
        raise GameError(f"no change {n} waits for the host")
    out = {"taken": False}
    if take:
        got = item["body"]
        if item["kind"] == "table":
            game().load_table(_parsed_table(got["text"]), f"the host (asked from {item['from']})")
        elif item["kind"] == "gate":
            out = game().place_gate(got.get("name"), got.get("a"), got.get("b"), got.get("role", ""))
        else:
            out = game().remove_gate(got.get("name"))
        out = {**out, "taken": True}
    else:
        game().note(f"the host did not take the change asked from {item['from']} ({item['what']})")
    held["items"].remove(item)
    return jsonify(out)


@bp.get("/car/<marker>")
def car(marker):
    return jsonify(game().car(_int(marker, "the car")))


@bp.post("/preview")
def preview():
    return jsonify(game().preview(body()))


@bp.post("/checks")
def checks():
    """For one car, `{"marker": N}`: every action it can take now with the rules' verdict for
    each of its choices (a dry run, as /preview makes; nothing changes). A POST, as /preview
    is: only a page that may play asks the rules to play actions out."""
    return jsonify(game().checks(_int(body().get("marker"), "marker")))


@bp.post("/act")
def act():
    return jsonify(game().act(body()))


@bp.post("/round")
def start_round():
    orders = body().get("orders")
    return jsonify(game().start_round(orders))


@bp.post("/end_turn")
def end_turn():
    return jsonify(game().end_turn())


#: More dice than any roll of any rule system throws at once.
MAX_TYPED_DICE = 100


@bp.post("/dice/typed")
def typed_dice():
    faces = body().get("faces")
    if not isinstance(faces, list) or not faces or len(faces) > MAX_TYPED_DICE:
        raise BadRequest("send the faces as a list of whole numbers, e.g. {\"faces\": [4, 2]}")
    for face in faces:
        # 4.9, "4" and true are not a die's face (int() would take them as 4, 4 and 1).
        if isinstance(face, bool) or not isinstance(face, int):
            raise BadRequest(f"a die's face is a whole number, not {face!r}")
    return jsonify(game().answer_typed(faces))


@bp.post("/choice")
def choose():
    b = body()
    if "value" not in b:
        raise BadRequest('send the choice as {"player": NAME, "value": VALUE}')
    # Only from the device holding that player's seat (or taking it, free, now).
    refused, undo = answering_for(b.get("player"))
    if refused is not None:
        return refused
    try:
        return jsonify(game().answer_choice(b.get("player"), b["value"]))
    except BaseException:
        undo()
        raise


@bp.post("/place")
def place():
    """A piece the rules moved is in place (the camera confirms it), or stays where it stands
    where the book allows: `{"marker": N, "stay": false}`."""
    b = body()
    stay = b.get("stay", False)
    if not isinstance(stay, bool):
        raise BadRequest(f"'stay' is true or false, not {stay!r}")
    return jsonify(game().place(_int(b.get("marker"), "marker"), stay))


@bp.post("/redo_move")
def redo_move():
    """"Redo this move": `{"vehicle": N}`; its move starts again from where it began once the
    car is put down by its ghost."""
    return jsonify(game().redo_move(_int(body().get("vehicle"), "vehicle")))


@bp.post("/dice/virtual")
def virtual_dice():
    return jsonify(game().answer_virtual())


@bp.post("/cancel")
def cancel():
    return jsonify(game().cancel())


@bp.post("/undo")
def undo():
    return jsonify(game().undo())


@bp.post("/hold")
def hold():
    b = body()
    held = b.get("held", True)
    if not isinstance(held, bool):
        raise BadRequest(f"'held' is true or false, not {held!r}")
    return jsonify(game().hold(_int(b.get("vehicle"), "vehicle"), held))


@bp.post("/gates")
def place_gate():
    b = body()
    held = _held_for_host("place a gate", "gate", {k: b.get(k) for k in ("name", "a", "b", "role")})
    if held is not None:
        return held
    return jsonify(game().place_gate(b.get("name"), b.get("a"), b.get("b"), b.get("role", "")))


@bp.post("/gates/remove")
def remove_gate():
    name = body().get("name")
    held = _held_for_host("remove a gate", "gate/remove", {"name": name})
    if held is not None:
        return held
    return jsonify(game().remove_gate(name))


# --- the demo table ---------------------------------------------------------------------

def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRequest(f"{what} must be a number (millimetres or degrees), not {value!r}")
    return float(value)


@bp.post("/demo/move")
def demo_move():
    """Demo only: drive a car to {"vehicle", "x_mm", "y_mm", "heading_deg"} in the synthetic
    camera's frames (a real table's cars are moved by hand: 409 there)."""
    b = body()
    vehicle = _int(b.get("vehicle"), "vehicle")
    pose = [_number(b.get(k), k) for k in ("x_mm", "y_mm", "heading_deg")]
    return jsonify(game().move_demo_car(vehicle, *pose))
