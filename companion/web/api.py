"""JSON for programs and the page: the current snapshot, and a stream of them."""

from __future__ import annotations

import json
import time

from flask import Blueprint, Response, current_app, jsonify, stream_with_context

bp = Blueprint("api", __name__, url_prefix="/api")


def live_table():
    return current_app.extensions["live_table"]


@bp.get("/state")
def state():
    """The current table snapshot: cars with their poses and doubt, anchors, source status."""
    return jsonify(live_table().snapshot())


@bp.get("/stream")
def stream():
    """Server-sent events: every new snapshot, as it is made (throttled per page)."""
    live = live_table()
    keepalive = current_app.config["STREAM_KEEPALIVE_S"]
    min_gap = 1.0 / current_app.config["STREAM_MAX_RATE_HZ"]
    max_s = current_app.config["STREAM_MAX_S"]

    def events():
        started = time.monotonic()
        snap = live.snapshot()
        yield f"retry: 1000\ndata: {json.dumps(snap)}\n\n"
        version = snap["version"]
        sent_at = time.monotonic()
        while max_s is None or time.monotonic() - started < max_s:
            gap = min_gap - (time.monotonic() - sent_at)
            if gap > 0:
                time.sleep(gap)
            snap = live.wait_for(version, keepalive)
            if snap["version"] == version:
                yield ": keep-alive\n\n"
                continue
            version = snap["version"]
            sent_at = time.monotonic()
            yield f"data: {json.dumps(snap)}\n\n"

    return Response(stream_with_context(events()), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
