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
  a LAN), and past that budget the PIN is not tried at all (the host is told).
  The right player still gets in: with the join code the host's own page shows
  (8 characters, 40 bits: not guessable online at any rate a server answers), which
  only the per-address limit applies to, so guessers cannot lock it too.
- Seats: each browser is a device (an id in its signed session). A choice the rules
  ask of one player is answered only from the device holding that player's seat;
  every seat is free until a device claims it (taking it, or answering its first
  choice), and stays with it. The host (the machine running the companion, or with
  no page open there the first device to join) may answer for any free seat without
  taking it, and moves or frees seats.
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


def refuse(status: int, message: str, retry_after_s: float | None = None, **extra):
    response = jsonify({"error": message, **extra})
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

    Per address: `tries` wrong PINs (or join codes) make that address wait `lockout_s`.
    All together: `total_tries` wrong PINs within `window_s` and no PIN is tried until the
    oldest leaves the window (players already in stay in; a new one joins with the join
    code), and the host is told once per siege."""

    def __init__(self, tries: int, lockout_s: float, total_tries: int, window_s: float) -> None:
        self.tries, self.lockout_s = tries, lockout_s
        self.total_tries, self.window_s = total_tries, window_s
        self.lock = threading.Lock()            # waitress answers logins on many threads at once
        self.per_address: dict[str, tuple[int, float]] = {}
        self.recent: collections.deque[float] = collections.deque()
        self.alarmed = False

    def siege_s(self, now: float) -> float:
        """How long until a PIN is tried again (0: now): the budget for all addresses."""
        while self.recent and now - self.recent[0] >= self.window_s:
            self.recent.popleft()
        if len(self.recent) >= self.total_tries:
            return self.window_s - (now - self.recent[0])
        self.alarmed = False
        return 0.0

    def address_s(self, who: str, now: float) -> float:
        """How long `who` must wait before its next guess (0: it may guess now)."""
        count, since = self.per_address.get(who, (0, 0.0))
        wait = self.lockout_s - (now - since)
        return wait if count >= self.tries and wait > 0 else 0.0

    def failed(self, who: str, now: float, overall: bool = True) -> bool:
        """Count a wrong PIN (`overall`: in the budget of all addresses too; a wrong join
        code is not, so guessing it cannot lock it); True when it starts a siege the host
        must hear of."""
        count, since = self.per_address.get(who, (0, 0.0))
        count = 1 if count >= self.tries else count + 1     # a lockout served
        self.per_address[who] = (count, now)
        if len(self.per_address) > 10_000:                  # forget addresses whose wait is long over
            self.per_address = {a: v for a, v in self.per_address.items() if now - v[1] < self.lockout_s}
        if not overall:
            return False
        self.recent.append(now)
        if len(self.recent) >= self.total_tries and not self.alarmed:
            self.alarmed = True
            return True
        return False

    def passed(self, who: str) -> None:
        self.per_address.pop(who, None)


#: Join codes are read off the host's screen and typed on a phone: no 0/O or 1/I.
JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: 8 characters of 32: 2**40 codes; at 1,000 guesses a second a 4-hour game finds it with
#: odds of 1 in 76,000, and the per-address limit keeps each address to 10 a minute.
JOIN_CODE_CHARS = 8
#: The machine running the companion, as a browser on it reaches it.
HOST_ADDRESSES = frozenset({"127.0.0.1", "::1"})


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_ALPHABET) for _ in range(JOIN_CODE_CHARS))


def join_code_text(code: str) -> str:
    """A join code as shown: two groups of four ("ABCD-EFGH")."""
    return f"{code[:4]}-{code[4:]}"


def typed_code(text: str) -> str:
    """A join code as typed: any case, spaces and dashes left out."""
    return "".join(ch for ch in text.upper() if ch not in " -")


class Seats:
    """Which device holds which player's seat, the host's device, and the join code.

    A device is one browser (an id kept in its signed session cookie, so it cannot be
    named by another). Seats are by player name and live as long as the server."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holder: dict[str, str] = {}           # player -> device
        self.labels: dict[str, str] = {}           # device -> where it joined from, for the host
        self.host_device: str | None = None
        self.machine_seen = False                  # a page was opened on the host machine
        self.join_code = new_join_code()

    def claim(self, player: str, device: str) -> bool:
        """Take `player`'s seat for `device` if it is free; True if it holds it now."""
        with self.lock:
            holder = self.holder.setdefault(player, device)
            return holder == device

    def release(self, player: str, device: str) -> None:
        with self.lock:
            if self.holder.get(player) == device:
                del self.holder[player]


def seats() -> Seats:
    return current_app.extensions["seats"]


def device_id() -> str:
    """This browser's device id (made on its first visit)."""
    if "device" not in session:
        session["device"] = secrets.token_urlsafe(12)
    return session["device"]


def _device_label() -> str:
    agent = request.headers.get("User-Agent", "")
    kind = next((name for key, name in (("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"),
                                        ("Windows", "Windows"), ("Mac OS", "Mac"), ("Linux", "Linux"))
                 if key in agent), "a browser")
    return f"{kind} at {request.remote_addr or '?'}"


def is_host() -> bool:
    """The machine running the companion, or the device that joined first (when no page was
    open on that machine): it may answer for free seats and moves or frees seats."""
    if request.remote_addr in HOST_ADDRESSES:
        return True
    host = seats().host_device
    return host is not None and session.get("device") == host


def seat_refusal(player) -> str | None:
    """Why this device may not answer for `player` (None: it may)."""
    if not isinstance(player, str):
        return None                                 # the game names the problem
    holder = seats().holder.get(player)
    if holder is None or holder == session.get("device"):
        return None
    return (f"{player}'s seat is held by another device: only that device answers for {player}. "
            f"The host can move the seat (Seats, on the host's page)")


def answering_for(player):
    """Before a choice is answered for `player`: a refusal (a response), or None and this
    device takes the seat if it was free (the host answers for a free seat without taking
    it). Returns (refusal, undo): call undo() if the answer was then refused."""
    why = seat_refusal(player)
    if why is not None:
        return refuse(403, why), lambda: None
    if not isinstance(player, str) or is_host() or player in seats().holder:
        return None, lambda: None
    device = device_id()
    if not seats().claim(player, device):           # taken between the two looks
        return refuse(403, seat_refusal(player) or "that seat was just taken"), lambda: None
    seats().labels[device] = _device_label()
    return None, lambda: seats().release(player, device)


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
    app.extensions["seats"] = Seats()
    app.jinja_env.globals["csp_nonce"] = csp_nonce

    @app.before_request
    def guard():
        allowed = current_app.config["ALLOWED_HOSTS"]
        if allowed is not None and host_name(request.host) not in allowed:
            return refuse(421, f"refused: this companion does not answer to the name {request.host[:80]!r} "
                               f"(open it at its own address; a page on another site may not reach it)")
        if request.remote_addr in HOST_ADDRESSES:
            seats().machine_seen = True
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

    @app.after_request
    def security_headers(response):
        # No framing (clickjacking a Confirm), no sniffing a JSON or JPEG into a page, and
        # scripts only from this server: a name a player typed cannot run as code.
        from flask import g
        h = response.headers
        h.setdefault("X-Content-Type-Options", "nosniff")
        h.setdefault("X-Frame-Options", "DENY")
        h.setdefault("Referrer-Policy", "same-origin")
        nonce = f" 'nonce-{g.csp_nonce}'" if "csp_nonce" in g else ""
        h.setdefault("Content-Security-Policy",
                     f"default-src 'self'; script-src 'self'{nonce}; style-src 'self' 'unsafe-inline'; "
                     f"img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                     f"form-action 'self'; frame-ancestors 'none'")
        return response

    @app.post("/api/login")
    def login():
        """`{"pin": "123456"}`, or `{"code": "ABCD-EFGH"}`: the join code the host's page
        shows, taken even while someone guesses the PIN."""
        expected = current_app.config["PIN"]
        if expected is None:
            return jsonify({"can_change": True})
        if request.mimetype != "application/json":
            return refuse(400, 'send the PIN as JSON: {"pin": "123456"} (Content-Type: application/json)')
        try:
            body = strict_json(request.get_data(cache=True))
        except BadInput as exc:
            return refuse(400, str(exc))
        by_code = isinstance(body, dict) and "code" in body and "pin" not in body
        pin = body.get("code" if by_code else "pin") if isinstance(body, dict) else None
        if not isinstance(pin, str):
            return refuse(400, 'send the PIN as text: {"pin": "123456"}')
        pin = typed_code(pin) if by_code else pin.strip()
        if not pin.isascii() or not pin.isprintable() or len(pin) > MAX_PIN_CHARS:
            return refuse(400, f"a table PIN is plain ASCII letters and digits (at most {MAX_PIN_CHARS})")
        who = request.remote_addr or "?"
        with guard_pins.lock:
            now = time.monotonic()
            wait = guard_pins.address_s(who, now)
            if wait > 0:
                return refuse(429, f"too many wrong PINs from this address: wait {math.ceil(wait):.0f} s", wait)
            if not by_code:
                siege = guard_pins.siege_s(now)
                if siege > 0:
                    response = refuse(429, f"someone is guessing the table PIN ({len(guard_pins.recent)} wrong in "
                                           f"the last {guard_pins.window_s:.0f} s), so no PIN is tried for "
                                           f"{math.ceil(siege):.0f} s: join with the join code the host's screen "
                                           f"shows (under Seats) instead", siege, code_needed=True)
                    return response
            right = _same(pin, seats().join_code if by_code else expected)
            if right:
                guard_pins.passed(who)
                siege = None
            else:
                siege = guard_pins.failed(who, now, overall=not by_code)
        if siege is None:
            session["player"] = True
            device = device_id()
            with seats().lock:
                seats().labels[device] = _device_label()
                if seats().host_device is None and not seats().machine_seen and request.remote_addr not in HOST_ADDRESSES:
                    seats().host_device = device         # a table with no page on its own machine
            return jsonify({"can_change": True})
        if siege:
            tell_host(current_app._get_current_object(),
                      f"someone is guessing the table PIN: {guard_pins.total_tries} wrong PINs within "
                      f"{guard_pins.window_s:.0f} s (the last from {who}); no PIN is tried for a while: new "
                      f"players join with the join code {join_code_text(seats().join_code)} (Seats); "
                      f"players already in are not affected")
        return refuse(403, "that is not the table's join code" if by_code else "that is not the table's PIN")

    @app.get("/api/session")
    def who_am_i():
        return jsonify({"csrf": csrf_token(), "can_change": can_change(),
                        "pin_needed": current_app.config["PIN"] is not None})

    @app.get("/api/seats")
    def seats_now():
        return jsonify(seats_json())

    @app.post("/api/seats")
    def move_seat():
        """`{"player": NAME, "to": "me" | "free" | DEVICE}`: take a free seat, give up one's
        own; the host also frees any seat, or moves it to a device that has joined."""
        try:
            body = strict_json(request.get_data(cache=True)) if request.is_json else None
        except BadInput as exc:
            return refuse(400, str(exc))
        if not isinstance(body, dict) or not isinstance(body.get("player"), str) or not isinstance(body.get("to"), str):
            return refuse(400, 'send {"player": NAME, "to": "me"} (or "free", or a device from /api/seats)')
        player, to = body["player"], body["to"]
        if player not in game_players():
            return refuse(409, f"there is no player {player[:40]!r} in this game"
                               + (f" (the players: {', '.join(game_players())})" if game_players() else ""))
        me, host, s = device_id(), is_host(), seats()
        with s.lock:
            holder = s.holder.get(player)
            s.labels.setdefault(me, _device_label())
            if to == "me":
                if holder not in (None, me) and not host:
                    return refuse(403, f"{player}'s seat is held by another device; the host can move it to you")
                s.holder[player] = me
            elif to == "free":
                if holder not in (None, me) and not host:
                    return refuse(403, f"{player}'s seat is held by another device; only it or the host frees it")
                s.holder.pop(player, None)
            else:
                if not host:
                    return refuse(403, "only the host moves a seat to another device")
                if to not in s.labels:
                    return refuse(409, "no such device has joined this table (see /api/seats)")
                s.holder[player] = to
        return jsonify(seats_json())


def game_players() -> list[str]:
    setup = current_app.extensions["table_game"].setup or {}
    return [r["player"] for r in setup.get("rosters", []) if isinstance(r, dict) and isinstance(r.get("player"), str)]


def seats_json() -> dict:
    """Who holds which seat, as this device may see it: its own, free, or another device's
    (named for the host, with the join code and the devices it may move a seat to)."""
    s, me, host = seats(), session.get("device"), is_host()
    with s.lock:
        players = []
        for name in game_players():
            holder = s.holder.get(name)
            row = {"player": name, "held": "free" if holder is None else "you" if holder == me else "another device"}
            if host and holder is not None and holder != me:
                row["device"], row["device_label"] = holder, s.labels.get(holder, "a device")
            players.append(row)
        out = {"players": players, "host": host, "mine": [p["player"] for p in players if p["held"] == "you"]}
        if host:
            out["join_code"] = join_code_text(s.join_code) if current_app.config["PIN"] is not None else None
            out["devices"] = [{"device": d, "label": label, "you": d == me} for d, label in s.labels.items()]
    if host:
        from .api import held_for_host
        out["held"] = held_for_host()
    return out


def csp_nonce() -> str:
    """The nonce this response's own inline script carries (the CSP allows no other)."""
    from flask import g
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(16)
    return g.csp_nonce
