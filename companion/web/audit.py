"""The audit page: the game's timeline from its game file; any verdict with its frame,
its numbers and their doubt, measured again on request, and exported to share."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, render_template

from ..record import ReplayError
from ..store import StoreError

bp = Blueprint("audit", __name__)


def store():
    return current_app.extensions["table_game"].store


@bp.errorhandler(StoreError)
@bp.errorhandler(ReplayError)
def not_there(exc):
    return jsonify({"error": str(exc)}), 404


@bp.get("/audit")
def timeline_page():
    from ..audit import timeline
    s = store()
    events = timeline(s) if s is not None else []
    return render_template("audit.html", store=s, events=events, head=s.head() if s is not None else None)


@bp.get("/audit/<int:seq>")
def verdict_page(seq: int):
    from ..audit import verdict_view
    s = store()
    if s is None:
        return render_template("audit.html", store=None, events=[], head=None), 404
    return render_template("verdict.html", store=s, view=verdict_view(s, seq))


@bp.get("/api/audit/<int:seq>/frame.jpg")
def verdict_frame(seq: int):
    from flask import request

    from ..audit import drawn_frame
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    return Response(drawn_frame(s, seq, zoom=request.args.get("zoom") == "1"), mimetype="image/jpeg")


@bp.get("/api/audit/<int:seq>/remeasure")
def verdict_again(seq: int):
    from ..record import remeasure
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    return jsonify(remeasure(s, seq))


@bp.get("/api/audit/<int:seq>/export.html")
def verdict_export(seq: int):
    from ..audit import export_html
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    return Response(export_html(s, seq), mimetype="text/html",
                    headers={"Content-Disposition": f'attachment; filename="verdict-{seq}.html"'})
