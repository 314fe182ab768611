"""The table page: a Flask app (app factory, blueprints) over one table game.

The web layer talks to the game object only (companion.game.TableGame), which
holds the live table; it never reaches into vision or hardware itself.
"""

from __future__ import annotations

import secrets

from flask import Flask

from ..game import TableGame
from ..live import LiveTable


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
        # Stop a stream after this many seconds (None: when the page goes away).
        STREAM_MAX_S=None,
        # The table's PIN: None lets anyone who can reach the page change the game
        # (127.0.0.1 only); with a PIN, visitors without it may watch but not change.
        PIN=None,
        # Wrong PINs from one address before it must wait, and how long.
        PIN_TRIES=5,
        PIN_LOCKOUT_S=30.0,
        SECRET_KEY=secrets.token_hex(32),
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_HTTPONLY=True,
        MAX_CONTENT_LENGTH=1_000_000,
    )
    if test_config:
        app.config.update(test_config)
    app.extensions["table_game"] = game
    app.extensions["live_table"] = game.live

    from . import api, audit, pages, security
    security.init_app(app)
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(audit.bp)
    return app
