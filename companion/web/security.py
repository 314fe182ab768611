"""Who may change the game, and protection against cross-site requests.

- Every state-changing request (anything but GET/HEAD/OPTIONS) must carry the
  page's token in the `X-CSRF-Token` header (the token lives in the signed,
  SameSite=Strict session cookie; a page from another site can read neither),
  and, when the browser says where it comes from (`Origin`), come from this
  host.
- With a table PIN (LAN play), a visitor must give the PIN once (POST
  /api/login) before changing anything; without it the page is read-only.
  Wrong PINs are counted per address, and too many make it wait.
"""

from __future__ import annotations

import hmac
import secrets
import time
from urllib.parse import urlsplit

from flask import Flask, current_app, jsonify, request, session

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def csrf_token() -> str:
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


def can_change() -> bool:
    return current_app.config["PIN"] is None or bool(session.get("player"))


def refuse(status: int, message: str):
    response = jsonify({"error": message})
    response.status_code = status
    return response


def init_app(app: Flask) -> None:
    app.extensions["pin_failures"] = {}

    @app.before_request
    def guard():
        if request.method in SAFE_METHODS:
            return None
        origin = request.headers.get("Origin")
        if origin is not None and origin != "null":
            if urlsplit(origin).netloc != request.host:
                return refuse(403, f"refused: a request from another site ({origin})")
        elif origin == "null":
            return refuse(403, "refused: a request from an opaque origin")
        sent = request.headers.get("X-CSRF-Token", "")
        token = session.get("csrf")
        if not token or not hmac.compare_digest(sent, token):
            return refuse(403, "refused: the page's token is missing or old; reload the page")
        if request.path != "/api/login" and not can_change():
            return refuse(403, "this table needs its PIN to change anything; without it you can watch")
        return None

    @app.post("/api/login")
    def login():
        failures = app.extensions["pin_failures"]
        who = request.remote_addr or "?"
        count, since = failures.get(who, (0, 0.0))
        wait = current_app.config["PIN_LOCKOUT_S"] - (time.monotonic() - since)
        if count >= current_app.config["PIN_TRIES"] and wait > 0:
            return refuse(429, f"too many wrong PINs: wait {wait:.0f} s")
        body = request.get_json(silent=True)
        pin = body.get("pin") if isinstance(body, dict) else None
        expected = current_app.config["PIN"]
        if expected is None:
            return jsonify({"can_change": True})
        if not isinstance(pin, str) or not hmac.compare_digest(pin.strip(), expected):
            count = 1 if count >= current_app.config["PIN_TRIES"] else count + 1     # a lockout served
            failures[who] = (count, time.monotonic())
            return refuse(403, "that is not the table's PIN")
        failures.pop(who, None)
        session["player"] = True
        return jsonify({"can_change": True})

    @app.get("/api/session")
    def who_am_i():
        return jsonify({"csrf": csrf_token(), "can_change": can_change(),
                        "pin_needed": current_app.config["PIN"] is not None})
