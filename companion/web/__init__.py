"""The table page: a Flask app (app factory, blueprints) over one live table."""

from __future__ import annotations

from flask import Flask

from ..live import LiveTable


def create_app(live: LiveTable, test_config: dict | None = None) -> Flask:
    """The companion's web app, showing `live`."""
    app = Flask(__name__)
    app.config.update(
        # How long the stream waits for a new snapshot before sending a keep-alive.
        STREAM_KEEPALIVE_S=5.0,
        # The most snapshots a second the stream sends one page.
        STREAM_MAX_RATE_HZ=30.0,
        # Stop a stream after this many seconds (None: when the page goes away).
        STREAM_MAX_S=None,
    )
    if test_config:
        app.config.update(test_config)
    app.extensions["live_table"] = live

    from . import api, pages
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    return app
