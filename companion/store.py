"""The game store: one SQLite file per game (WAL), every event appended, none rewritten.

Each event is a JSON body with a kind and a time, chained to the one before by
SHA-256: an event's hash covers its number, time, kind, body and the previous
event's hash, so changing, removing or reordering any event breaks the chain
from there on (`verify`). Evidence (a camera frame as JPEG and the marker
corners found in it) lives in its own table; the event that uses it carries the
evidence's own hash, so the chain covers the evidence too.

The tables refuse UPDATE and DELETE (triggers): nothing in the companion
rewrites history, and a person editing the file by hand has to remove the
triggers first, which the chain then shows.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import logging
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
GENESIS = "0" * 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    t REAL NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    prev TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS evidence (
    id INTEGER PRIMARY KEY,
    t REAL NOT NULL,
    jpeg BLOB,
    detections TEXT NOT NULL,
    table_pose TEXT NOT NULL,
    sha256 TEXT NOT NULL UNIQUE
);
CREATE TRIGGER IF NOT EXISTS events_append_only_u BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'events are never rewritten'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_d BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are never removed'); END;
CREATE TRIGGER IF NOT EXISTS evidence_append_only_u BEFORE UPDATE ON evidence
    BEGIN SELECT RAISE(ABORT, 'evidence is never rewritten'); END;
CREATE TRIGGER IF NOT EXISTS evidence_append_only_d BEFORE DELETE ON evidence
    BEGIN SELECT RAISE(ABORT, 'evidence is never removed'); END;
"""


class StoreError(ValueError):
    """A game file that cannot be used; the message says which and why."""


def canonical(body: Any) -> str:
    """The one JSON text of a body (sorted keys, no spaces): what the hash covers."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)


def event_hash(prev: str, seq: int, t: float, kind: str, body_text: str) -> str:
    h = hashlib.sha256()
    h.update(f"{prev}\n{seq}\n{t!r}\n{kind}\n".encode())
    h.update(body_text.encode())
    return h.hexdigest()


def evidence_hash(jpeg: bytes | None, detections_text: str, table_pose_text: str) -> str:
    h = hashlib.sha256()
    h.update(jpeg or b"")
    h.update(b"\n" + detections_text.encode() + b"\n" + table_pose_text.encode())
    return h.hexdigest()


@dataclass(frozen=True)
class StoredEvent:
    seq: int
    t: float
    kind: str
    body: dict
    hash: str

    def to_json(self) -> dict:
        return {"seq": self.seq, "t": self.t, "kind": self.kind, "body": self.body, "hash": self.hash}


_TABLES = ("meta", "events", "evidence")


def _check_readable(db, path: Path) -> None:
    """A file SQLite can read through, with a game file's tables; a StoreError saying what
    is wrong otherwise (a file cut short, a copy of the .db made without its -wal file
    before the companion checkpointed it, something else altogether)."""
    try:
        quick = db.execute("PRAGMA quick_check").fetchone()[0]
        if quick != "ok":
            raise StoreError(f"{path}: the file is damaged ({quick})")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a readable game file ({exc})") from None
    missing = [t for t in _TABLES if t not in tables]
    if missing:
        raise StoreError(f"{path}: not a game file (no {', '.join(missing)} table"
                         f"{'s' if len(missing) > 1 else ''}; a copy made without its -wal file, or another "
                         f"kind of file)")


class GameStore:
    """One game's file. Appending is safe from several threads: one writer connection, used
    only under its lock. Reading never touches it: each thread reads through a read-only
    connection of its own, so a reader (the audit page replaying the game) can never leave
    the writer's connection busy and make a commit fail; in WAL mode readers and the writer
    run side by side, each reader on the file as of its last commit.

    `create=False`: the file must already be a game file. `readonly=True` (the audit
    commands): nothing is written to it, not even the journal mode."""

    def __init__(self, path: str | Path, *, create: bool = True, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if (not create or readonly) and not self.path.exists():
            raise StoreError(f"{self.path}: no such game file")
        self._readers: dict[int, tuple[threading.Thread, sqlite3.Connection]] = {}
        self._readers_lock = threading.Lock()
        self._closed = False
        try:
            if readonly:
                self._db = sqlite3.connect(self._ro_uri(), uri=True, check_same_thread=False, isolation_level=None)
            else:
                self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a readable game file ({exc})") from None
        self._lock = threading.Lock()
        if readonly or not create:
            try:
                _check_readable(self._db, self.path)
            except StoreError:
                self._db.close()
                raise
            if readonly:
                return
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: an event the companion has said is committed survives a power cut too.
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"{self.path}: not a game file ({exc})") from None
        with self._lock:
            if self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() is None:
                self._set_meta("schema", str(SCHEMA_VERSION))
                self._set_meta("created", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
                self._set_meta("companion", __version__)
            self._checkpoint()

    def _ro_uri(self) -> str:
        return f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"

    def _read(self) -> sqlite3.Connection:
        """This thread's read-only connection (opened on its first read). Connections of
        threads that have ended are closed as new ones open, so they never pile up."""
        me = threading.current_thread()
        got = self._readers.get(me.ident)
        if got is not None and got[0] is me:
            return got[1]
        with self._readers_lock:
            if self._closed:
                raise StoreError(f"{self.path}: the game file is closed")
            for ident, (thread, conn) in list(self._readers.items()):
                if not thread.is_alive() or (ident == me.ident and thread is not me):
                    del self._readers[ident]
                    conn.close()
            try:
                conn = sqlite3.connect(self._ro_uri(), uri=True, check_same_thread=False, isolation_level=None)
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"{self.path}: not a readable game file ({exc})") from None
            self._readers[me.ident] = (me, conn)
            return conn

    def _checkpoint(self) -> None:
        """Copy what the WAL holds into the .db file itself, so the .db alone is the whole
        game as far as its last committed event (a copy of it made during a game, or after
        a crash, is whole). PASSIVE: it never waits; should a reader elsewhere hold an old
        snapshot, or the checkpoint fail for any reason, the next commit's checkpoint catches
        up. It runs after a COMMIT, so it must never make a committed event look failed:
        its failure is logged and left at that (the event is in the WAL, which is durable)."""
        try:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as exc:
            log.info("checkpoint of %s left for the next commit (%s)", self.path, exc)

    def close(self) -> None:
        # The readers first: the writer's connection, closed last, then checkpoints the WAL
        # into the .db and removes it.
        with self._readers_lock:
            self._closed = True
            for _, conn in self._readers.values():
                conn.close()
            self._readers.clear()
        with self._lock:
            self._db.close()

    # --- meta ---------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        rows = self._read().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return rows[0][0] if rows else None

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # --- writing ------------------------------------------------------------------------

    def append(self, kind: str, body: dict, t: float | None = None) -> StoredEvent:
        """Append one event; when this returns, it is committed (and synced to disk)."""
        text = canonical(body)
        t = float(time.time() if t is None else t)
        with self._lock:
            row = self._db.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            seq, prev = (row[0] + 1, row[1]) if row else (1, GENESIS)
            digest = event_hash(prev, seq, t, kind, text)
            # The event and the head (the newest event's number and hash) in one transaction:
            # cutting events off the end then disagrees with the head.
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("INSERT INTO events (seq, t, kind, body, prev, hash) VALUES (?, ?, ?, ?, ?, ?)",
                                 (seq, t, kind, text, prev, digest))
                self._set_meta("head", f"{seq}:{digest}")
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            # Committed: nothing from here on may raise (see _checkpoint).
            self._checkpoint()
        return StoredEvent(seq, t, kind, json.loads(text), digest)

    def head(self) -> str:
        """The newest event's number and hash ("N:HASH"). Keep it elsewhere: `verify` with it
        later proves event N still has that hash, so nothing up to it was changed, removed
        or cut off, however far the game went on after it."""
        return self.meta("head") or f"0:{GENESIS}"

    def add_evidence(self, jpeg: bytes | None, detections: list[dict], table_pose: dict) -> dict:
        """Store a frame and what was found in it; returns its reference {"id", "sha256"} for an event."""
        det_text, pose_text = canonical(detections), canonical(table_pose)
        digest = evidence_hash(jpeg, det_text, pose_text)
        with self._lock:
            row = self._db.execute("SELECT id FROM evidence WHERE sha256 = ?", (digest,)).fetchone()
            if row is None:
                cur = self._db.execute("INSERT INTO evidence (t, jpeg, detections, table_pose, sha256) "
                                       "VALUES (?, ?, ?, ?, ?)", (time.time(), jpeg, det_text, pose_text, digest))
                row = (cur.lastrowid,)
        return {"id": row[0], "sha256": digest}

    # --- reading ------------------------------------------------------------------------

    def events(self) -> list[StoredEvent]:
        rows = self._read().execute("SELECT seq, t, kind, body, hash FROM events ORDER BY seq").fetchall()
        return [StoredEvent(s, t, k, json.loads(b), h) for s, t, k, b, h in rows]

    def event(self, seq: int) -> StoredEvent:
        rows = self._read().execute("SELECT seq, t, kind, body, hash FROM events WHERE seq = ?", (seq,)).fetchall()
        row = rows[0] if rows else None
        if row is None:
            raise StoreError(f"{self.path}: there is no event {seq}")
        s, t, k, b, h = row
        return StoredEvent(s, t, k, json.loads(b), h)

    def evidence(self, evidence_id: int) -> dict:
        rows = self._read().execute("SELECT id, t, jpeg, detections, table_pose, sha256 FROM evidence WHERE id = ?",
                                    (evidence_id,)).fetchall()
        row = rows[0] if rows else None
        if row is None:
            raise StoreError(f"{self.path}: there is no evidence {evidence_id}")
        i, t, jpeg, det, pose, digest = row
        return {"id": i, "t": t, "jpeg": jpeg, "detections": json.loads(det), "table_pose": json.loads(pose),
                "sha256": digest}

    def __len__(self) -> int:
        return self._read().execute("SELECT COUNT(*) FROM events").fetchall()[0][0]


def parse_head(text: str) -> tuple[int, str]:
    """A kept head "N:HASH" as (N, HASH); a StoreError saying what is wrong with it."""
    n, sep, digest = str(text).strip().partition(":")
    if not sep or not n.isdigit() or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest.lower()):
        raise StoreError(f"a head is an event's number and its hash, N:HASH (64 hex digits), as the audit page "
                         f"shows it; not {text!r}")
    return int(n), digest.lower()


def verify(path: str | Path, expect_head: str | None = None) -> tuple[bool, str, int]:
    """Check a game file's chain: (ok, what was found, events checked). `expect_head`
    ("N:HASH", as `GameStore.head()` gave it earlier) also proves event N still has that
    hash: nothing up to it was changed, and nothing was cut off before the game reached it.
    Events after N (the game went on) are checked by the chain alone."""
    p = Path(path)
    if not p.exists():
        return False, f"{p}: no such game file", 0
    if expect_head is not None:
        try:
            kept_n, kept_hash = parse_head(expect_head)
        except StoreError as exc:
            return False, str(exc), 0
    try:
        db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    except sqlite3.DatabaseError as exc:
        return False, f"{p}: not a readable game file ({exc})", 0
    try:
        _check_readable(db, p)
        # One read transaction: the events, the head and the evidence as of one commit, even
        # while the companion goes on appending to the file (separate reads could see the
        # head of a commit made after the events were read, and call the file cut off).
        db.execute("BEGIN")
        rows = db.execute("SELECT seq, t, kind, body, prev, hash FROM events ORDER BY rowid").fetchall()
        head_row = db.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
        ev = {i: (b, d, pose, h) for i, b, d, pose, h in
              db.execute("SELECT id, jpeg, detections, table_pose, sha256 FROM evidence").fetchall()}
        guards = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        db.execute("COMMIT")
    except StoreError as exc:
        return False, str(exc), 0
    except sqlite3.DatabaseError as exc:
        return False, f"{p}: not a readable game file ({exc})", 0
    finally:
        db.close()
    if not rows:
        return False, f"{p}: holds no events (no game was started in it)", 0
    prev = GENESIS
    expected_seq = 1
    for n, (seq, t, kind, body, stored_prev, digest) in enumerate(rows):
        where = f"event {expected_seq}"
        if seq != expected_seq:
            what = "missing" if seq > expected_seq else "out of order"
            return False, f"{where}: {what} (found event {seq} in its place)", n
        if stored_prev != prev:
            return False, f"{where} ({kind}): does not follow the event before it (removed or reordered?)", n
        if event_hash(prev, seq, t, kind, body) != digest:
            return False, f"{where} ({kind}): changed after it was written (its hash does not match)", n
        try:
            parsed = json.loads(body)
        except json.JSONDecodeError:
            return False, f"{where} ({kind}): its body is not JSON", n
        for ref in _evidence_refs(parsed):
            stored = ev.get(ref.get("id"))
            if stored is None:
                return False, f"{where} ({kind}): its evidence {ref.get('id')} is gone", n
            jpeg, det, pose, sha = stored
            if sha != ref.get("sha256") or evidence_hash(jpeg, det, pose) != sha:
                return False, f"{where} ({kind}): its evidence {ref.get('id')} was changed", n
        prev = digest
        expected_seq += 1
    last = f"{len(rows)}:{prev}"
    stored_head = head_row[0] if head_row else f"0:{GENESIS}"
    if stored_head != last:
        n_head = stored_head.split(":")[0]
        missing = f"event {len(rows) + 1}: missing: the file's head says the game reached event {n_head}, " \
                  f"the events stop at {len(rows)}"
        if not _APPEND_ONLY_GUARDS <= guards:
            return False, (f"{missing}: cut off the end (the file's guards against removing events were "
                           f"taken out)"), len(rows)
        # The guards are in place. A copy of the .db taken while the companion was copying its
        # WAL into it (the checkpoint after each commit; the copy made without the -wal file)
        # looks just like this: SQLite writes the pages in page order, the head's before the
        # newest event's. The file alone cannot tell that from events cut off the end with the
        # guards put back, so it says both, and what holds as far as it goes.
        return False, (f"{missing}. Events 1 to {len(rows)} are intact. Either this is a copy of the .db taken "
                       f"while the companion was writing to it, without its -wal file (copy the game file "
                       f"again with its -wal file, or once the game is closed), or events were cut off the "
                       f"end"), len(rows)
    if expect_head is not None:
        if kept_n > len(rows):
            return False, (f"event {len(rows) + 1}: missing: the head you kept says the game reached event "
                           f"{kept_n}, the events stop at {len(rows)}: a copy made before the game reached it, or "
                           f"cut off the end"), len(rows)
        had = GENESIS if kept_n == 0 else rows[kept_n - 1][5]
        if had != kept_hash:
            return False, (f"event {kept_n}: its hash is not the one you kept ({kept_hash[:16]}... kept, "
                           f"{had[:16]}... in the file): the file was rewritten up to there"), len(rows)
    kept = f", event {kept_n} as kept" if expect_head is not None else ""
    return True, f"{p}: {len(rows)} events, chain intact, evidence intact{kept}, head {last[:16]}", len(rows)


#: The triggers a game file is made with (see _SCHEMA): removing an event needs them gone.
_APPEND_ONLY_GUARDS = {"events_append_only_u", "events_append_only_d"}


def _evidence_refs(body: Any):
    """Every {"id", "sha256"} evidence reference inside an event body."""
    if isinstance(body, dict):
        if set(body) == {"id", "sha256"}:
            yield body
        for v in body.values():
            yield from _evidence_refs(v)
    elif isinstance(body, list):
        for v in body:
            yield from _evidence_refs(v)
