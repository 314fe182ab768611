"""The audit page: the game's timeline from its game file; any verdict with its frame,
its numbers and their doubt, measured again on request, and exported to share."""

from __future__ import annotations

import collections
import threading

from flask import Blueprint, Response, current_app, jsonify, render_template
from werkzeug.exceptions import HTTPException

from ..record import ReplayError
from ..store import StoreError

bp = Blueprint("audit", __name__)

#: Event numbers beyond any game (and beyond SQLite's integers) are simply not there.
MAX_SEQ = 2 ** 31
#: Exported pages, frames and re-measurements kept, keyed by the game's head: each is a
#: replay of the game, and a refreshed or shared link should not replay it again.
CACHED_ANSWERS = 16


def store():
    return current_app.extensions["table_game"].store


@bp.errorhandler(StoreError)
@bp.errorhandler(ReplayError)
def not_there(exc):
    return jsonify({"error": str(exc)}), 404


@bp.errorhandler(HTTPException)
def http_error(exc):
    return jsonify({"error": f"{exc.name}: {exc.description}"}), exc.code


class AnswerCache:
    """The last few replayed answers, each under the game's head hash when it was made:
    a new event changes the head, so nothing stale is served."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.answers: collections.OrderedDict = collections.OrderedDict()
        self.made = 0                    # answers computed (the tests count replays by it)

    def get(self, key, make):
        with self.lock:
            if key in self.answers:
                self.answers.move_to_end(key)
                return self.answers[key]
        value = make()
        with self.lock:
            self.made += 1
            self.answers[key] = value
            while len(self.answers) > self.size:
                self.answers.popitem(last=False)
        return value


def cached(kind: str, seq: int, make, *extra):
    s = store()
    cache = current_app.extensions.setdefault("audit_cache", AnswerCache(CACHED_ANSWERS))
    return cache.get((str(s.path), s.head(), kind, seq, *extra), make)


@bp.get("/audit")
def timeline_page():
    from ..audit import timeline
    s = store()
    events = timeline(s) if s is not None else []
    return render_template("audit.html", store=s, events=events, head=s.head() if s is not None else None)


@bp.get(f"/audit/<int(max={MAX_SEQ}):seq>")
def verdict_page(seq: int):
    from ..audit import verdict_view
    s = store()
    if s is None:
        return render_template("audit.html", store=None, events=[], head=None), 404
    return render_template("verdict.html", store=s, view=verdict_view(s, seq))


@bp.get(f"/api/audit/<int(max={MAX_SEQ}):seq>/frame.jpg")
def verdict_frame(seq: int):
    from flask import request

    from ..audit import drawn_frame
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    zoom = request.args.get("zoom") == "1"
    return Response(cached("frame", seq, lambda: drawn_frame(s, seq, zoom=zoom), zoom), mimetype="image/jpeg")


@bp.get(f"/api/audit/<int(max={MAX_SEQ}):seq>/remeasure")
def verdict_again(seq: int):
    from ..record import remeasure
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    return jsonify(cached("remeasure", seq, lambda: remeasure(s, seq)))


@bp.get(f"/api/audit/<int(max={MAX_SEQ}):seq>/export.html")
def verdict_export(seq: int):
    from ..audit import export_html
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    return Response(cached("export", seq, lambda: export_html(s, seq)), mimetype="text/html",
                    headers={"Content-Disposition": f'attachment; filename="verdict-{seq}.html"'})
