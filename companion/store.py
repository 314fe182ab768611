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
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__

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


class GameStore:
    """One game's file. Appending is safe from several threads (one lock, one connection)."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise StoreError(f"{self.path}: no such game file")
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: an event the companion has said is committed survives a power cut too.
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a game file ({exc})") from None
        self._lock = threading.Lock()
        if self.meta("schema") is None:
            self._set_meta("schema", str(SCHEMA_VERSION))
            self._set_meta("created", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
            self._set_meta("companion", __version__)

    def close(self) -> None:
        self._db.close()

    # --- meta ---------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

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
                self._db.execute("ROLLBACK")
                raise
        return StoredEvent(seq, t, kind, json.loads(text), digest)

    def head(self) -> str:
        """The newest event's number and hash ("N:HASH"): keep it elsewhere, and `verify`
        with it shows that no event was cut off the end since."""
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
        rows = self._db.execute("SELECT seq, t, kind, body, hash FROM events ORDER BY seq").fetchall()
        return [StoredEvent(s, t, k, json.loads(b), h) for s, t, k, b, h in rows]

    def event(self, seq: int) -> StoredEvent:
        row = self._db.execute("SELECT seq, t, kind, body, hash FROM events WHERE seq = ?", (seq,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: there is no event {seq}")
        s, t, k, b, h = row
        return StoredEvent(s, t, k, json.loads(b), h)

    def evidence(self, evidence_id: int) -> dict:
        row = self._db.execute("SELECT id, t, jpeg, detections, table_pose, sha256 FROM evidence WHERE id = ?",
                               (evidence_id,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: there is no evidence {evidence_id}")
        i, t, jpeg, det, pose, digest = row
        return {"id": i, "t": t, "jpeg": jpeg, "detections": json.loads(det), "table_pose": json.loads(pose),
                "sha256": digest}

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM events").fetchone()[0]


def verify(path: str | Path, expect_head: str | None = None) -> tuple[bool, str, int]:
    """Check a game file's chain: (ok, what was found, events checked). `expect_head`
    ("N:HASH", as `GameStore.head()` gave it earlier) also proves nothing was cut off."""
    p = Path(path)
    if not p.exists():
        return False, f"{p}: no such game file", 0
    try:
        db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        quick = db.execute("PRAGMA quick_check").fetchone()[0]
        if quick != "ok":
            db.close()
            return False, f"{p}: the file is damaged ({quick})", 0
        rows = db.execute("SELECT seq, t, kind, body, prev, hash FROM events ORDER BY rowid").fetchall()
        head_row = db.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
        ev = {i: (b, d, pose, h) for i, b, d, pose, h in
              db.execute("SELECT id, jpeg, detections, table_pose, sha256 FROM evidence").fetchall()}
        db.close()
    except sqlite3.DatabaseError as exc:
        return False, f"{p}: not a readable game file ({exc})", 0
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
        return False, (f"event {len(rows) + 1}: missing: the file's head says the game reached event {n_head}, "
                       f"the events stop at {len(rows)} (cut off the end?)"), len(rows)
    if expect_head is not None and expect_head != last:
        n_head = expect_head.split(":")[0]
        return False, (f"event {min(len(rows) + 1, int(n_head) if n_head.isdigit() else 0)}: the head you kept "
                       f"({expect_head[:20]}...) is not this file's ({last[:20]}...)"), len(rows)
    return True, f"{p}: {len(rows)} events, chain intact, evidence intact, head {last[:16]}", len(rows)


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
