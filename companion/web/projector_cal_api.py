"""The projector's calibration and check, from the page (Setup's Projector box).

- `POST api/projector/calibrate`: throws the numbered dots on the projector page and reads
  them with the live camera, in the background (202 `{"started": true}`); the calibration
  is saved beside the table file (or `PROJECTOR_FILE`) only when it succeeded and passed
  its own check, so a failed one never replaces a good one.
- `POST api/projector/check`: throws check marks through the calibration and measures
  where they land (202 `{"started": true}`).
- `GET api/projector/status`: `{"calibrated", "busy", "step", "rms_mm", "coverage",
  "check", "error", "file", "saved"}`, in the players' words; `file` is the calibration's
  file in use (`serve --projector FILE`'s, else the one beside the table file; null when the
  table has no file and a calibration lasts until the companion stops), `saved` what became
  of the last calibration made here.

The POSTs are guarded as every other change is (companion/web/security.py: the page's
token, its origin, the table PIN); mid-game only the host calibrates or checks, as only
the host changes what the game measures with. `check_at_start(app)` is what `serve` calls
once the app is made: with a calibration, the check runs once; `watch_lines(app)` then
watches the projector's lines in the camera's frames during play.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, current_app, jsonify
from werkzeug.exceptions import HTTPException

from ..game import GameError
from ..projector_cal import ProjectorService
from ..rules.base import RulesError
from . import api
from .api import BadRequest, game
from .security import is_host

bp = Blueprint("projector_cal", __name__, url_prefix="/api/projector")

for _kind, _handler in ((BadRequest, api.bad_request), (GameError, api.cannot), (RulesError, api.cannot),
                        (HTTPException, api.http_error), (Exception, api.broken)):
    bp.register_error_handler(_kind, _handler)


def service(app=None) -> ProjectorService:
    """The app's projector service, made on first use (it then watches the camera for a
    knock, to check the projector again)."""
    app = app or current_app
    found = app.extensions.get("projector_cal")
    if found is None:
        display = app.config.get("PROJECTOR")
        if display is None:
            raise GameError("this companion has no projector display")
        live = app.extensions["live_table"]
        path = app.config.get("PROJECTOR_FILE")         # None: beside the table file in use
        found = ProjectorService(display, live, Path(path) if path else None,
                                 settle_frames=app.config.get("PROJECTOR_SETTLE_FRAMES", 3),
                                 settle_s=app.config.get("PROJECTOR_SETTLE_S", 0.4))
        found.watch_camera()
        app.extensions["projector_cal"] = found
    return found


def check_at_start(app) -> bool:
    """Start the projector's check once, in the background, when it is calibrated (what
    `serve` calls at start). False when there is nothing to check."""
    with app.app_context():
        svc = service(app)
        return svc.display.model is not None and svc.start("check")


def watch_lines(app):
    """Watch, during play, that the projector's lines land where they should
    (companion/projector_watch.py: read in the camera's frames every few seconds, no marks
    thrown); a moved projector is said on the check's line and the game's notes. Once per
    app; None when it has no projector display."""
    from ..projector_scene import SceneSource
    from ..projector_watch import ProjectorWatch
    from .projector_api import players_tools

    display = app.config.get("PROJECTOR")
    if display is None:
        return None
    found = app.extensions.get("projector_watch")
    if found is None:
        game_ = app.extensions["table_game"]
        source = SceneSource(game_)

        def scene():
            # What /api/projector/frame draws: the game's scene and the tools the players hold out.
            return list(source.scene()) + list(players_tools(app).shapes())

        found = ProjectorWatch(display, app.extensions["live_table"], scene, note=game_.note).start()
        app.extensions["projector_watch"] = found
    return found


def _host_mid_game(what: str) -> None:
    if game().session is not None and not is_host():
        raise GameError(f"mid-game, only the host may {what} (it changes where the table's drawings land)")


@bp.post("/calibrate")
def calibrate():
    _host_mid_game("calibrate the projector")
    if not service().start("calibrate"):
        raise GameError("the projector is busy being calibrated or checked; wait for it to finish")
    return jsonify({"started": True}), 202


@bp.post("/check")
def check():
    _host_mid_game("check the projector")
    svc = service()
    if svc.display.model is None:
        raise GameError("the projector is not calibrated yet: calibrate it first (Calibrate projector)")
    if not svc.start("check"):
        raise GameError("the projector is busy being calibrated or checked; wait for it to finish")
    return jsonify({"started": True}), 202


@bp.get("/status")
def status():
    return jsonify(service().status())
