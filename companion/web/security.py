"""Who may change the game, and protection against cross-site requests and a hostile LAN.

- Every request must name this machine in its `Host` header: without --lan only
  localhost, 127.0.0.1 and [::1]; with --lan also the machine's own names and
  addresses (`ALLOWED_HOSTS`). A page on another site whose name was pointed at
  127.0.0.1 (DNS rebinding) sends its own name, and is refused with 421.
- Every state-changing request (anything but GET/HEAD/OPTIONS) must carry the
  page's token in the `X-CSRF-Token` header (the token lives in the signed,
  SameSite=Strict session cookie; a page from another site can read neither),
  and, when the browser says where it comes from (`Origin`), come from this
  host.
- With a table PIN (LAN play), a visitor must give the PIN once (POST
  /api/login) before changing anything; without it the page is read-only.
  Wrong PINs are counted per address, and too many make that address wait;
  they are also counted for every address together (many addresses are cheap on
  a LAN), and too many make every new login wait while the host is told.
- JSON bodies are read strictly (`strict_json`): no NaN, Infinity or numbers
  beyond a double, no nesting deeper than a game needs, no broken text.
"""

from __future__ import annotations

import collections
import hmac
import json
import logging
import math
import secrets
import threading
import time
from urllib.parse import urlsplit

from flask import Flask, current_app, jsonify, request, session

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
#: The names a browser on this machine uses for it.
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: Deeper than any roster, action or table file needs; json's own limit is Python's stack.
MAX_JSON_DEPTH = 32
#: Whole numbers a browser's JSON keeps exactly (2**53); larger ones are not a face, a marker or a count.
MAX_JSON_INT = 2 ** 53
#: The longest PIN taken (a PIN given with --pin must fit too).
MAX_PIN_CHARS = 64

log = logging.getLogger(__name__)


class BadInput(ValueError):
    """A request whose body or headers cannot be taken; the message says why (a 400)."""


def _no_constant(name: str):
    raise BadInput(f"{name} is not a number JSON allows here; send a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadInput(f"the number {text[:40]} is too large; send a finite number")
    return value


def strict_json(raw: bytes | str):
    """The JSON value in `raw`, or BadInput saying what is wrong with it."""
    try:
        value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except BadInput:
        raise
    except RecursionError:
        raise BadInput(f"the JSON is nested too deeply (at most {MAX_JSON_DEPTH} levels)") from None
    except ValueError as exc:            # JSONDecodeError, UnicodeDecodeError, int digits limit
        raise BadInput(f"the body is not valid JSON ({str(exc)[:120]})") from None
    _check_json(value)
    return value


def _check_json(value) -> None:
    # Iterative: a value json could parse may still be too deep for the code that uses it.
    todo = [(value, 1)]
    while todo:
        v, depth = todo.pop()
        if depth > MAX_JSON_DEPTH:
            raise BadInput(f"the JSON is nested too deeply (at most {MAX_JSON_DEPTH} levels)")
        if isinstance(v, dict):
            for k, item in v.items():
                _check_text(k)
                todo.append((item, depth + 1))
        elif isinstance(v, list):
            todo.extend((item, depth + 1) for item in v)
        elif isinstance(v, str):
            _check_text(v)
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_JSON_INT:
            raise BadInput(f"the whole number {str(v)[:30]}... is too large (at most 2**53)")


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:           # a lone surrogate ("\ud800"): not text any store or page can keep
        raise BadInput("the JSON holds a broken character (a lone \\ud800-\\udfff escape)") from None


def csrf_token() -> str:
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


def can_change() -> bool:
    return current_app.config["PIN"] is None or bool(session.get("player"))


def refuse(status: int, message: str, retry_after_s: float | None = None):
    response = jsonify({"error": message})
    response.status_code = status
    if retry_after_s is not None:
        response.headers["Retry-After"] = str(max(1, math.ceil(retry_after_s)))
    return response


def host_name(host: str) -> str:
    """The name in a Host header, without its port: "[::1]:8765" -> "::1"."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    return host.rstrip(".")


def lan_hosts(extra=()) -> frozenset[str]:
    """The names and addresses of this machine a phone on the LAN may use in its Host
    header: the local ones, its host names, and every address they or its route out have."""
    import socket
    names = set(LOCAL_HOSTS) | {h.lower() for h in extra}
    try:
        hostname = socket.gethostname()
        names |= {hostname.lower(), f"{hostname.lower()}.local", socket.getfqdn().lower()}
        for info in socket.getaddrinfo(hostname, None):
            names.add(info[4][0].lower())
    except OSError:
        pass
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))        # no packet is sent: it only picks a route
            names.add(s.getsockname()[0])
        except OSError:
            pass
    return frozenset(n for n in names if n)


def _same(sent: str, expected: str) -> bool:
    # compare_digest takes only ASCII str; bytes compare any text in constant time.
    return hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


class PinGuard:
    """Wrong PINs counted per address and for all addresses together.

    Per address: `tries` wrong PINs make that address wait `lockout_s`. All together:
    `total_tries` wrong PINs within `window_s` make every new login wait until the oldest
    leaves the window (players already in stay in), and the host is told once per siege."""

    def __init__(self, tries: int, lockout_s: float, total_tries: int, window_s: float) -> None:
        self.tries, self.lockout_s = tries, lockout_s
        self.total_tries, self.window_s = total_tries, window_s
        self.lock = threading.Lock()            # waitress answers logins on many threads at once
        self.per_address: dict[str, tuple[int, float]] = {}
        self.recent: collections.deque[float] = collections.deque()
        self.alarmed = False

    def wait_s(self, who: str, now: float) -> tuple[float, str]:
        """How long `who` must wait before a guess (0: it may guess now), and why."""
        while self.recent and now - self.recent[0] >= self.window_s:
            self.recent.popleft()
        if len(self.recent) >= self.total_tries:
            return (self.window_s - (now - self.recent[0]),
                    f"too many wrong PINs on this table from all addresses ({len(self.recent)} in the last "
                    f"{self.window_s:.0f} s): every new login waits")
        self.alarmed = False
        count, since = self.per_address.get(who, (0, 0.0))
        wait = self.lockout_s - (now - since)
        if count >= self.tries and wait > 0:
            return wait, "too many wrong PINs"
        return 0.0, ""

    def failed(self, who: str, now: float) -> bool:
        """Count a wrong PIN; True when it starts a siege the host must hear of."""
        count, since = self.per_address.get(who, (0, 0.0))
        count = 1 if count >= self.tries else count + 1     # a lockout served
        self.per_address[who] = (count, now)
        if len(self.per_address) > 10_000:                  # forget addresses whose wait is long over
            self.per_address = {a: v for a, v in self.per_address.items() if now - v[1] < self.lockout_s}
        self.recent.append(now)
        if len(self.recent) >= self.total_tries and not self.alarmed:
            self.alarmed = True
            return True
        return False

    def passed(self, who: str) -> None:
        self.per_address.pop(who, None)


def tell_host(app: Flask, text: str) -> None:
    """Something the host must know (the PIN under attack): the log, the page's notes,
    and whatever else `serve` hooked in (its console)."""
    log.warning("%s", text)
    game = app.extensions.get("table_game")
    if game is not None:
        game.note(text, "warn")
    for hook in app.extensions.get("host_alarms", ()):
        hook(text)


def init_app(app: Flask) -> None:
    cfg = app.config
    guard_pins = PinGuard(cfg["PIN_TRIES"], cfg["PIN_LOCKOUT_S"], cfg["PIN_TOTAL_TRIES"], cfg["PIN_TOTAL_WINDOW_S"])
    app.extensions["pin_guard"] = guard_pins
    app.extensions.setdefault("host_alarms", [])

    @app.before_request
    def guard():
        allowed = current_app.config["ALLOWED_HOSTS"]
        if allowed is not None and host_name(request.host) not in allowed:
            return refuse(421, f"refused: this companion does not answer to the name {request.host[:80]!r} "
                               f"(open it at its own address; a page on another site may not reach it)")
        if request.method in SAFE_METHODS:
            return None
        origin = request.headers.get("Origin")
        if origin is not None and origin != "null":
            try:
                netloc = urlsplit(origin).netloc
            except ValueError:
                netloc = None
            if netloc != request.host:
                return refuse(403, f"refused: a request from another site ({origin[:80]})")
        elif origin == "null":
            return refuse(403, "refused: a request from an opaque origin")
        sent = request.headers.get("X-CSRF-Token", "")
        if not sent.isascii() or len(sent) > 200:
            return refuse(400, "refused: the page's token (X-CSRF-Token) must be plain ASCII text; reload the page")
        token = session.get("csrf")
        if not token or not _same(sent, token):
            return refuse(403, "refused: the page's token is missing or old; reload the page")
        if request.path != "/api/login" and not can_change():
            return refuse(403, "this table needs its PIN to change anything; without it you can watch")
        return None

    @app.post("/api/login")
    def login():
        expected = current_app.config["PIN"]
        if expected is None:
            return jsonify({"can_change": True})
        if request.mimetype != "application/json":
            return refuse(400, 'send the PIN as JSON: {"pin": "123456"} (Content-Type: application/json)')
        try:
            body = strict_json(request.get_data(cache=True))
        except BadInput as exc:
            return refuse(400, str(exc))
        pin = body.get("pin") if isinstance(body, dict) else None
        if not isinstance(pin, str):
            return refuse(400, 'send the PIN as text: {"pin": "123456"}')
        pin = pin.strip()
        if not pin.isascii() or not pin.isprintable() or len(pin) > MAX_PIN_CHARS:
            return refuse(400, f"a table PIN is plain ASCII letters and digits (at most {MAX_PIN_CHARS})")
        who = request.remote_addr or "?"
        with guard_pins.lock:
            now = time.monotonic()
            wait, why = guard_pins.wait_s(who, now)
            if wait > 0:
                return refuse(429, f"{why}: wait {math.ceil(wait):.0f} s", wait)
            if not _same(pin, expected):
                siege = guard_pins.failed(who, now)
            else:
                guard_pins.passed(who)
                siege = None
        if siege is None:
            session["player"] = True
            return jsonify({"can_change": True})
        if siege:
            tell_host(current_app._get_current_object(),
                      f"someone is guessing the table PIN: {guard_pins.total_tries} wrong PINs within "
                      f"{guard_pins.window_s:.0f} s (the last from {who}); new logins wait, players "
                      f"already in are not affected")
        return refuse(403, "that is not the table's PIN")

    @app.get("/api/session")
    def who_am_i():
        return jsonify({"csrf": csrf_token(), "can_change": can_change(),
                        "pin_needed": current_app.config["PIN"] is not None})
