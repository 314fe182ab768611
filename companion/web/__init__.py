"""The table page: a Flask app (app factory, blueprints) over one table game.

The web layer talks to the game object only (companion.game.TableGame), which
holds the live table; it never reaches into vision or hardware itself.
"""

from __future__ import annotations

import secrets

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from ..game import TableGame
from ..live import LiveTable
from . import security

#: The largest request body the companion takes, in bytes.
MAX_BODY_BYTES = 1_000_000
#: Server threads kept for everything but streams (`serve` adds STREAM_MAX_TOTAL to it).
API_THREADS = 16


def create_app(game: TableGame | LiveTable, test_config: dict | None = None) -> Flask:
    """The companion's web app for `game` (a bare live table gets a game of its own)."""
    if isinstance(game, LiveTable):
        game = TableGame(game)
    app = Flask(__name__)
    app.config.update(
        # How long the stream waits for a new snapshot before sending a keep-alive.
        STREAM_KEEPALIVE_S=5.0,
        # The most snapshots a second the stream sends one page.
        STREAM_MAX_RATE_HZ=30.0,
        # Stop a stream after this many seconds (None: when the page goes away): the browser
        # opens it again at once, and a client gone without a word does not keep its slot.
        STREAM_MAX_S=300.0,
        # Each open stream holds one of the server's threads for as long as it is open, so
        # they are bounded per client address and in all, well under the server's threads
        # (`serve` gives it STREAM_MAX_TOTAL + API_THREADS); past it a page polls /api/state.
        STREAM_MAX_PER_CLIENT=4,
        STREAM_MAX_TOTAL=24,
        # Of them, open to visitors without the PIN (watching): a few addresses cannot hold
        # every slot, and players keep at least STREAM_MAX_TOTAL - STREAM_MAX_VISITORS.
        STREAM_MAX_VISITORS=8,
        # The Host names answered (None: any); `serve --lan` adds this machine's own.
        ALLOWED_HOSTS=security.LOCAL_HOSTS,
        # The table's PIN: None lets anyone who can reach the page change the game
        # (127.0.0.1 only); with a PIN, visitors without it may watch but not change.
        PIN=None,
        # Wrong PINs from one address before it must wait, and how long.
        PIN_TRIES=5,
        PIN_LOCKOUT_S=30.0,
        # Wrong PINs from all addresses together within the window before no PIN is tried
        # (and the host is told; new players join with the join code the host's page shows):
        # 20 a minute leave a 6-digit PIN months of guessing.
        PIN_TOTAL_TRIES=20,
        PIN_TOTAL_WINDOW_S=60.0,
        SECRET_KEY=secrets.token_hex(32),
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_HTTPONLY=True,
        # The largest body taken (a table file is a few kB); `serve` tells waitress the
        # same, so a larger one is refused before it is spooled to disk.
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
    )
    if test_config:
        app.config.update(test_config)
    if app.config.get("PROJECTOR") is None:
        from ..projector import ProjectorDisplay
        app.config["PROJECTOR"] = ProjectorDisplay()      # no calibration yet: it throws nothing
    app.extensions["table_game"] = game
    app.extensions["live_table"] = game.live

    from . import api, audit, pages
    security.init_app(app)
    from . import idempotency; idempotency.init_app(app)   # after the security checks: a retried POST answered once
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(audit.bp)
    from . import tools_api; app.register_blueprint(tools_api.bp)  # the players' ruler, templates, put it back
    from . import projector_api; app.register_blueprint(projector_api.bp)  # the projector's page and frame
    from . import projector_cal_api; app.register_blueprint(projector_cal_api.bp)  # the projector calibrated and checked

    @app.errorhandler(HTTPException)
    def api_error(exc):
        # A path or method no route takes: programs under /api/ get JSON saying so, too.
        if request.path.startswith("/api/"):
            return jsonify({"error": f"{exc.name}: {exc.description}"}), exc.code
        return exc

    return app
