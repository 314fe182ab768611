"""The projector's page and what it draws.

- `GET /projector`: the page a computer driving a projector over the table opens full screen.
- `GET /api/projector/frame`: the shapes to throw now, in projector pixels
  (`ProjectorDisplay.frame` of the scene `companion.projector_scene` makes from what the
  table page is given).
- `POST /api/projector/mode {"mode"}`: what it shows (everything, only placements, nothing).
- `POST /api/projector/hello {"width", "height"}`: the projector page's size in its own pixels
  (what a calibration pattern is drawn in when no synthetic projector fixes it).
- `POST /api/projector/tools {"page", "shapes": [{"kind", "name", "points", "closed"}]}`: the
  templates and the ruler a table page shows now, in table mm, drawn as "blast" and "ruler"
  shapes. Kept per page (this browser's device id and the page's own id), so pages never erase
  each other's; an empty list clears them. The answer `{"shapes", "pages", "resend_s",
  "forget_s"}` tells the page to say its tools again every `resend_s` while it has any: a page
  not heard from for `forget_s` (one that died without a word) is forgotten.
  A template is no change to the game, so nothing is noted in its log; like every POST it
  needs the page's token and, at a table with a PIN, the PIN (a read-only visitor's
  templates stay on its own screen).

The display lives in `app.config["PROJECTOR"]`. POSTs pass the same checks as every other
change (security.py: the page's token, its origin, the table's PIN).
"""

from __future__ import annotations

import json
import re

from flask import Blueprint, Response, current_app, jsonify, render_template

from ..projector import MODE_WORDS, MODES, ProjectorDisplay
from ..projector_scene import PlayersTools, SceneSource, read_tool_shapes
from . import api
from .api import BadRequest, body, game
from .security import csrf_token, device_id

bp = Blueprint("projector", __name__)

#: The largest projector page taken, in its own pixels (an 8K screen is 7680 wide).
MAX_SCREEN_PX = 16384
#: A page's own id (tools.js makes one per page load): short, plain letters.
_PAGE_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")


def display() -> ProjectorDisplay:
    return current_app.config["PROJECTOR"]


def players_tools(app=None) -> PlayersTools:
    """The tools the table pages have sent (`app`: for a caller outside a request, such as the
    projector's watch, whose scene should carry them too)."""
    ext = (app or current_app).extensions
    tools = ext.get("projector_tools")
    if tools is None:
        tools = ext.setdefault("projector_tools", PlayersTools())
    return tools


def _source() -> SceneSource:
    # One per app: it keeps the game's answers while nothing changes.
    src = current_app.extensions.get("projector_scene")
    if src is None or src.game is not game():
        src = current_app.extensions["projector_scene"] = SceneSource(game())
    return src


bp.register_error_handler(BadRequest, api.bad_request)


@bp.get("/projector")
def page():
    csrf_token()            # the page's session gets its token with the page
    return render_template("projector.html")


@bp.get("/api/projector/frame")
def frame():
    d = display()
    d.for_table(game().table)
    # The scene is made only when something of it can be thrown (no calibration, a pattern
    # shown or "nothing" chosen throw none of it).
    needed = d.model is not None and not d.showing_pattern and d.mode != "nothing"
    scene = tuple(_source().scene()) + players_tools().shapes() if needed else ()
    screen = d.screen_px
    # Mapping a board of squares through the lens takes a tenth of a second: a still table's
    # frame (the same scene, display and window) is answered with the one made before.
    # (The check's words are set without a new version: they are part of the key too.)
    key = (d.version, id(d.model), d.mode, d.check_text, d.pattern_why, scene, screen)
    held = current_app.extensions.get("projector_frame")
    if held is None or held[0] != key:
        out = d.frame(list(scene))
        out["screen_px"] = list(screen) if screen else None
        held = current_app.extensions["projector_frame"] = (key, json.dumps(out, separators=(",", ":")))
    return Response(held[1], mimetype="application/json")


@bp.post("/api/projector/mode")
def mode():
    m = body().get("mode")
    if m not in MODES:
        raise BadRequest(f"the projector can show {', '.join(repr(x) for x in MODES)}, not {m!r}")
    display().set_mode(m)
    game().note(f"the projector shows {MODE_WORDS[m]}")
    return jsonify({"mode": m, "words": MODE_WORDS[m]})


def _px(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= MAX_SCREEN_PX:
        raise BadRequest(f"{what} must be a number of pixels from 1 to {MAX_SCREEN_PX}, not {value!r}")
    return int(round(value))


@bp.post("/api/projector/hello")
def hello():
    b = body()
    size = (_px(b.get("width"), "width"), _px(b.get("height"), "height"))
    d = display()
    d.screen_px = size
    model = d.model
    return jsonify({"screen_px": list(size), "calibrated": model is not None,
                    "size_px": list(model.size_px) if model is not None else None})


@bp.post("/api/projector/tools")
def tools():
    b = body()
    page = b.get("page", "page")
    if not isinstance(page, str) or not _PAGE_ID.fullmatch(page):
        raise BadRequest("page must be the page's own id: 1 to 40 letters, digits, '-' or '_'")
    if "shapes" not in b:
        raise BadRequest('send "shapes": a list of the tools\' outlines (an empty list clears them)')
    table = game().table
    try:
        shapes = read_tool_shapes(b["shapes"], table.width_mm, table.depth_mm)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    kept = players_tools()
    kept.put(f"{device_id()}/{page}", shapes)
    # How often the page says them again, from the one place that also knows when they are
    # forgotten (tools.js waits for this, not a number of its own).
    return jsonify({"shapes": len(shapes), "pages": kept.pages(), "resend_s": kept.resend_s,
                    "forget_s": kept.forget_s})
