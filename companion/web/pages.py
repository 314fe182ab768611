"""The page players keep open beside the table."""

from __future__ import annotations

from flask import Blueprint, current_app, render_template

from .security import csrf_token

bp = Blueprint("pages", __name__)


@bp.get("/")
def table():
    live = current_app.extensions["live_table"]
    snap = live.snapshot()
    csrf_token()            # the page's session gets its token with the page
    # Only the synthetic demo table lets players move cars from the page.
    demo = current_app.extensions["table_game"].demo_mover is not None
    return render_template("table.html", snap=snap, table=live.table, car_colour=car_colour, demo=demo)


def car_colour(car_id: int) -> str:
    """A colour per car, the same on every page and every visit (golden-angle hues)."""
    return f"hsl({(car_id * 137.508) % 360:.0f} 70% 58%)"
