"""A retried request is answered, not applied twice.

The page sends each POST that changes the game with an `Idempotency-Key` header: a fresh
random key for each thing a player does, the same key when the page sends it again (its
answer was lost on the way: a dropped connection, a phone going to sleep). The first request
with a key is applied and its answer kept; a repeat gets that answer back, marked
`Idempotent-Replayed: true`, and changes nothing. A repeat that arrives while the first is
still being answered waits for it. An undo sent twice this way undoes one event.

Keys belong to the browser session that sent them (a key only means something to the page
that made it) and to the path; the same key with another body is refused (422), since it can
only be a page mixing up two requests. Answers are kept for a while and bounded in number
and size; a key forgotten since is applied again, so the page retries at once, not hours later.
Requests without the header are taken as before (programs, tests, an older page).
"""

from __future__ import annotations

import collections
import hashlib
import re
import threading
import time
from dataclasses import dataclass, field

from flask import Flask, Response, current_app, g, request, session

from .security import refuse

HEADER = "Idempotency-Key"
#: A key is the page's random token: letters, digits, '-' and '_', 8 to 100 of them.
_KEY = re.compile(r"[A-Za-z0-9_-]{8,100}")
#: Answers kept: how many, their bytes together, and for how long.
KEEP_ANSWERS = 256
KEEP_BYTES = 16 * 1024 * 1024
KEEP_S = 600.0
#: How long a repeat waits for the first request with its key to be answered.
WAIT_S = 30.0
#: Paths whose answers are not kept: a login's answer sets the session cookie, which a
#: replayed answer would not carry; the players' tools sent to the projector come several
#: a second while a template is dragged, each replacing the last (sent twice, the same),
#: and would push the game's own answers out of the store.
NOT_KEPT = ("/api/login", "/api/projector/tools")


@dataclass
class Entry:
    fingerprint: str
    t: float
    done: threading.Event = field(default_factory=threading.Event)
    answer: tuple[int, str, bytes] | None = None     # status, mimetype, body


class Answers:
    """The kept answers, oldest first; a request in flight is never dropped."""

    def __init__(self, size: int = KEEP_ANSWERS, max_bytes: int = KEEP_BYTES, keep_s: float = KEEP_S) -> None:
        self.size, self.max_bytes, self.keep_s = size, max_bytes, keep_s
        self.lock = threading.Lock()
        self.entries: collections.OrderedDict[tuple, Entry] = collections.OrderedDict()
        self.bytes = 0
        self.replayed = 0                       # repeats answered from here (the tests count them)

    def begin(self, scope: tuple, fingerprint: str) -> tuple[Entry, bool]:
        """The entry for this key, and whether this request is the first with it (and must
        be applied); otherwise the caller waits for the entry's answer."""
        with self.lock:
            self._forget(time.monotonic())
            entry = self.entries.get(scope)
            if entry is not None:
                return entry, False
            entry = Entry(fingerprint, time.monotonic())
            self.entries[scope] = entry
            return entry, True

    def finish(self, scope: tuple, entry: Entry, answer: tuple[int, str, bytes] | None) -> None:
        """The first request's answer (None: it ended without one, so a repeat is applied anew)."""
        with self.lock:
            if answer is None:
                if self.entries.get(scope) is entry:
                    del self.entries[scope]
            else:
                entry.answer = answer
                self.bytes += len(answer[2])
            self._forget(time.monotonic())
        entry.done.set()

    def _forget(self, now: float) -> None:
        while self.entries:
            scope, oldest = next(iter(self.entries.items()))
            too_many = len(self.entries) > self.size or self.bytes > self.max_bytes
            if not (too_many or now - oldest.t > self.keep_s) or not oldest.done.is_set():
                break
            del self.entries[scope]
            self.bytes -= len(oldest.answer[2]) if oldest.answer else 0


def init_app(app: Flask) -> None:
    """Hook in after the security checks (registered after security.init_app): a request
    the guard refuses is never kept, and a repeat is checked like any request."""
    answers = app.extensions.setdefault("idempotency", Answers())

    @app.before_request
    def repeat():
        if request.method != "POST" or not request.path.startswith("/api/") or request.path in NOT_KEPT:
            return None
        key = request.headers.get(HEADER)
        if key is None:
            return None
        if not _KEY.fullmatch(key):
            return refuse(400, f"refused: the {HEADER} header is the page's random token, 8 to 100 letters, "
                               f"digits, '-' or '_'; reload the page")
        scope = (session.get("csrf", ""), request.path, key)
        fingerprint = hashlib.sha256(request.get_data(cache=True)).hexdigest()
        deadline = time.monotonic() + WAIT_S
        while True:
            entry, first = answers.begin(scope, fingerprint)
            if entry.fingerprint != fingerprint:
                return refuse(422, f"refused: this {HEADER} came before with another request; "
                                   f"a new request needs a new key")
            if first:
                g.idempotency = (scope, entry)
                return None
            if not entry.done.wait(max(0.0, deadline - time.monotonic())):
                return refuse(409, "the same request is still being answered; wait for it and look again")
            if entry.answer is not None:
                status, mimetype, data = entry.answer
                with answers.lock:
                    answers.replayed += 1
                return Response(data, status=status, mimetype=mimetype,
                                headers={"Idempotent-Replayed": "true", "Cache-Control": "no-store"})
            # The first one ended without an answer: this one is applied instead.

    @app.after_request
    def keep(response):
        held = g.pop("idempotency", None)
        if held is not None:
            scope, entry = held
            answer = None if response.is_streamed else (response.status_code, response.mimetype,
                                                        response.get_data())
            current_app.extensions["idempotency"].finish(scope, entry, answer)
        return response

    @app.teardown_request
    def dropped(exc):
        # No answer was made (an error no handler answered): the key is free again.
        held = g.pop("idempotency", None)
        if held is not None:
            current_app.extensions["idempotency"].finish(*held, None)
