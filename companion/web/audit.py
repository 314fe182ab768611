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
CACHED_ANSWERS = 96
#: Audit answers being made or waiting at once; past that a visitor is told to come back
#: (503, Retry-After) rather than queue work that would keep the players waiting.
AUDIT_QUEUE = 16
#: How long a request waits for its answer before it is told to come back.
AUDIT_WAIT_S = 60.0


class Busy(Exception):
    """Too much audit work waiting: come back shortly."""


@bp.errorhandler(Busy)
def busy(exc):
    response = jsonify({"error": "the audit is busy measuring other verdicts: try again in a few seconds"})
    response.headers["Retry-After"] = "3"
    return response, 503


def store():
    return current_app.extensions["table_game"].store


@bp.errorhandler(StoreError)
@bp.errorhandler(ReplayError)
def not_there(exc):
    return jsonify({"error": str(exc)}), 404


@bp.errorhandler(HTTPException)
def http_error(exc):
    return jsonify({"error": f"{exc.name}: {exc.description}"}), exc.code


# --- audit work, bounded ------------------------------------------------------------------
#
# Replaying a game to draw, export or measure a verdict again is seconds of Python. Done on
# the server's threads it holds the interpreter's lock and the players' requests wait behind
# it (eight visitors replaying exports took the API's p95 from 38 to 374 ms). So it is done
# in one worker process of its own (at a lower priority), which opens the game file read
# only, one answer at a time; the same answer asked twice at once is made once, answers are
# kept under the game's head, and past AUDIT_QUEUE answers waiting a visitor is told to
# come back.

_POOL = None
_POOL_LOCK = threading.Lock()


def _lower_priority() -> None:
    """The worker's start: the lowest priority, and an end of its own once the server is gone
    (a server killed outright never shuts its pool down: its worker was left running)."""
    import os
    try:
        os.nice(19)          # the least: players first, always
    except OSError:
        pass
    parent = os.getppid()

    def watch_parent() -> None:
        import time
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch_parent, name="audit-worker-parent-watch", daemon=True).start()


def _pool():
    """The one audit worker process of this server (made when first needed)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            import atexit
            import concurrent.futures
            import multiprocessing
            _POOL = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_lower_priority)
            # Ended before the interpreter tears down what the executor's own clean-up needs.
            atexit.register(_POOL.shutdown, wait=False, cancel_futures=True)
        return _POOL


def _forget_pool() -> None:
    """The worker died (killed, out of memory): the next answer starts a new one."""
    global _POOL
    with _POOL_LOCK:
        _POOL = None


def audit_answer(kind: str, path: str, seq: int, zoom: bool = False):
    """One audit answer from the game file at `path`, opened read only (its own connection):
    what the worker process runs. Errors come back as (the error's class name, its words)."""
    from ..audit import drawn_frame, export_html, timeline, verdict_view
    from ..record import remeasure
    from ..store import GameStore
    try:
        s = GameStore(path, readonly=True)
    except StoreError as exc:
        return ("StoreError", str(exc))
    try:
        if kind == "timeline":
            return timeline(s)
        if kind == "view":
            return verdict_view(s, seq)
        if kind == "frame":
            return drawn_frame(s, seq, zoom=zoom)
        if kind == "remeasure":
            return remeasure(s, seq)
        if kind == "export":
            return export_html(s, seq)
        raise ValueError(f"no audit answer {kind!r}")
    except (StoreError, ReplayError) as exc:
        return (type(exc).__name__, str(exc))
    finally:
        s.close()


class AnswerCache:
    """The last few answers, each under the game's head hash when it was made: a new event
    changes the head, so nothing stale is served. Each is made once however many ask for it
    at once, in the audit worker (or on the calling thread, `in_process`), and no more than
    `queue` are made or waiting at a time."""

    def __init__(self, size: int, queue: int = AUDIT_QUEUE, in_process: bool = False) -> None:
        self.size = size
        self.queue = queue
        self.in_process = in_process
        self.lock = threading.Lock()
        self.answers: collections.OrderedDict = collections.OrderedDict()
        self.making: dict = {}            # key -> Future of an answer being made
        self.made = 0                     # answers computed (the tests count replays by it)
        self._one = threading.Semaphore(1)

    def get(self, key, job: tuple):
        import concurrent.futures
        from concurrent.futures.process import BrokenProcessPool
        mine = False
        with self.lock:
            if key in self.answers:
                self.answers.move_to_end(key)
                return self._unwrap(self.answers[key])
            future = self.making.get(key)
            if future is None:
                if len(self.making) >= self.queue:
                    raise Busy()
                mine = True
                future = concurrent.futures.Future() if self.in_process else _pool().submit(audit_answer, *job)
                self.making[key] = future
        if mine:
            # Outside the lock: a future already done runs its callback at once, here.
            future.add_done_callback(lambda f, key=key: self._keep(key, f))
            if self.in_process:
                with self._one:
                    try:
                        future.set_result(audit_answer(*job))
                    except BaseException as exc:          # noqa: BLE001 - handed to the caller
                        future.set_exception(exc)
        try:
            value = future.result(timeout=AUDIT_WAIT_S)
            self._keep(key, future)            # kept before it is answered (the callback may come later)
            return self._unwrap(value)
        except concurrent.futures.TimeoutError:
            raise Busy() from None
        except BrokenProcessPool:
            _forget_pool()
            raise Busy() from None

    def _keep(self, key, future) -> None:
        with self.lock:
            if self.making.get(key) is not future:
                return                          # kept already (by the callback or an asker)
            del self.making[key]
            if future.cancelled() or future.exception() is not None:
                return
            self.made += 1
            self.answers[key] = future.result()
            while len(self.answers) > self.size:
                self.answers.popitem(last=False)

    @staticmethod
    def _unwrap(value):
        if isinstance(value, tuple) and len(value) == 2 and value[0] in ("StoreError", "ReplayError"):
            raise (StoreError if value[0] == "StoreError" else ReplayError)(value[1])
        return value


def cached(kind: str, seq: int, zoom: bool = False):
    s = store()
    cache = current_app.extensions.get("audit_cache")
    if cache is None:
        cache = current_app.extensions.setdefault(
            "audit_cache", AnswerCache(CACHED_ANSWERS, in_process=bool(current_app.config.get("AUDIT_IN_PROCESS"))))
    return cache.get((str(s.path), s.head(), kind, seq, zoom), (kind, str(s.path), seq, zoom))


@bp.get("/audit")
def timeline_page():
    s = store()
    events = cached("timeline", 0) if s is not None else []
    return render_template("audit.html", store=s, events=events, head=s.head() if s is not None else None)


@bp.get(f"/audit/<int(max={MAX_SEQ}):seq>")
def verdict_page(seq: int):
    s = store()
    if s is None:
        return render_template("audit.html", store=None, events=[], head=None), 404
    return render_template("verdict.html", store=s, view=cached("view", seq))


@bp.get(f"/api/audit/<int(max={MAX_SEQ}):seq>/frame.jpg")
def verdict_frame(seq: int):
    from flask import request
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    zoom = request.args.get("zoom") == "1"
    return Response(cached("frame", seq, zoom), mimetype="image/jpeg")


@bp.get(f"/api/audit/<int(max={MAX_SEQ}):seq>/remeasure")
def verdict_again(seq: int):
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    return jsonify(cached("remeasure", seq))


@bp.get(f"/api/audit/<int(max={MAX_SEQ}):seq>/export.html")
def verdict_export(seq: int):
    s = store()
    if s is None:
        return jsonify({"error": "this game is not being recorded"}), 404
    return Response(cached("export", seq), mimetype="text/html",
                    headers={"Content-Disposition": f'attachment; filename="verdict-{seq}.html"'})
