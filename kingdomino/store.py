"""SQLite store shared by the web app and the batch: nothing a user read or corrected is lost.

Each reading keeps the machine's reading (``machine``) and, separately, every correction a person
made (``corrections``; the latest is the current kingdom). Corrections are future training data.
Readings are addressed by a random id (the permalink) and found again by the photo's content
hash, so a batch re-run skips what it already read.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS readings (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    source TEXT,
    content_hash TEXT,
    rules TEXT NOT NULL,
    bonuses TEXT NOT NULL,
    machine TEXT,
    error TEXT,
    player TEXT,
    claimed INTEGER,
    batch TEXT,
    photo BLOB
);
CREATE INDEX IF NOT EXISTS readings_hash ON readings (content_hash, rules, bonuses);
CREATE INDEX IF NOT EXISTS readings_batch ON readings (batch);
CREATE TABLE IF NOT EXISTS corrections (
    reading_id TEXT NOT NULL REFERENCES readings (id),
    created REAL NOT NULL,
    kingdom TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS corrections_reading ON corrections (reading_id);
CREATE TABLE IF NOT EXISTS rereadings (
    reading_id TEXT NOT NULL REFERENCES readings (id),
    created REAL NOT NULL,
    previous TEXT,
    previous_error TEXT,
    corrections_upto INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rereadings_reading ON rereadings (reading_id);
"""

# corrections made on a machine reading that was since replaced (a new outline puts the squares
# elsewhere): kept in the table, never applied to the new reading
_SET_ASIDE = ("EXISTS (SELECT 1 FROM rereadings x WHERE x.reading_id = c.reading_id"
              " AND x.corrections_upto >= c.rowid)")

DEFAULT_DB = "kingdomino.sqlite3"


def content_hash(data: bytes) -> str:
    """The key a photo is known by, whatever its file name."""
    return hashlib.sha256(data).hexdigest()


class Store:
    """A thin, thread-safe-by-connection wrapper; open one per thread or process."""

    def __init__(self, path: str | Path | None = None):
        self.path = str(path or DEFAULT_DB)
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    def add_reading(self, *, rules: str, bonuses=(), machine: dict | None = None,
                    error: str | None = None, source: str | None = None,
                    content_hash: str | None = None, player: str | None = None,
                    claimed: int | None = None, batch: str | None = None,
                    photo: bytes | None = None) -> str:
        """Store one reading (or one failure to read) and return its permalink id."""
        rid = secrets.token_urlsafe(9)
        with self._db:
            self._db.execute(
                "INSERT INTO readings (id, created, source, content_hash, rules, bonuses, machine,"
                " error, player, claimed, batch, photo) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (rid, time.time(), source, content_hash, rules, json.dumps(sorted(bonuses)),
                 json.dumps(machine) if machine is not None else None, error, player, claimed,
                 batch, photo),
            )
        return rid

    def add_correction(self, reading_id: str, kingdom: dict) -> None:
        """Keep a person's corrected kingdom; the machine reading stays as it was."""
        if self.get(reading_id) is None:
            raise KeyError(reading_id)
        with self._db:
            self._db.execute(
                "INSERT INTO corrections (reading_id, created, kingdom) VALUES (?,?,?)",
                (reading_id, time.time(), json.dumps(kingdom)),
            )

    def _row(self, row) -> dict:
        d = dict(row)
        d["bonuses"] = json.loads(d["bonuses"])
        d["machine"] = json.loads(d["machine"]) if d["machine"] else None
        last = self._db.execute(
            f"SELECT kingdom FROM corrections c WHERE reading_id=? AND NOT {_SET_ASIDE}"
            " ORDER BY rowid DESC LIMIT 1",
            (d["id"],),
        ).fetchone()
        d["corrected"] = json.loads(last[0]) if last else None
        d["has_photo"] = d.pop("photo", None) is not None
        return d

    def get(self, reading_id: str) -> dict | None:
        """The reading with its latest correction (``corrected``, or None), without the photo."""
        row = self._db.execute("SELECT * FROM readings WHERE id=?", (reading_id,)).fetchone()
        return self._row(row) if row else None

    def photo(self, reading_id: str) -> bytes | None:
        row = self._db.execute("SELECT photo FROM readings WHERE id=?", (reading_id,)).fetchone()
        return row[0] if row else None

    def find_by_hash(self, content_hash: str, rules: str, bonuses=()) -> dict | None:
        """The newest reading of this photo under these rules, or None."""
        row = self._db.execute(
            "SELECT * FROM readings WHERE content_hash=? AND rules=? AND bonuses=?"
            " ORDER BY created DESC LIMIT 1",
            (content_hash, rules, json.dumps(sorted(bonuses))),
        ).fetchone()
        return self._row(row) if row else None

    def corrections(self, reading_id: str) -> list[dict]:
        rows = self._db.execute(
            "SELECT created, kingdom FROM corrections WHERE reading_id=? ORDER BY rowid",
            (reading_id,),
        ).fetchall()
        return [{"created": r[0], "kingdom": json.loads(r[1])} for r in rows]

    def in_batch(self, batch: str) -> list[dict]:
        rows = self._db.execute(
            "SELECT * FROM readings WHERE batch=? ORDER BY created", (batch,)
        ).fetchall()
        return [self._row(r) for r in rows]

    # -- added for the batch (additive): a photo's reading / correction whatever the bonuses

    def find_photo(self, content_hash: str, rules: str) -> dict | None:
        """The newest successful reading of this photo under ``rules``, any bonuses, or None."""
        row = self._db.execute(
            "SELECT * FROM readings WHERE content_hash=? AND rules=? AND machine IS NOT NULL"
            " ORDER BY created DESC LIMIT 1",
            (content_hash, rules),
        ).fetchone()
        return self._row(row) if row else None

    def latest_correction_for_photo(self, content_hash: str, rules: str) -> dict | None:
        """The newest kingdom a person corrected for this photo under ``rules`` (any reading)."""
        row = self._db.execute(
            "SELECT c.kingdom FROM corrections c JOIN readings r ON r.id = c.reading_id"
            f" WHERE r.content_hash=? AND r.rules=? AND NOT {_SET_ASIDE}"
            " ORDER BY c.created DESC, c.rowid DESC LIMIT 1",
            (content_hash, rules),
        ).fetchone()
        return json.loads(row[0]) if row else None

    # -- added for the outline given by hand (additive): a new machine reading of a result

    def replace_machine(self, reading_id: str, machine: dict) -> int:
        """Make ``machine`` the reading's machine reading (the photo read again, e.g. inside an
        outline given by hand); the previous one is kept in ``rereadings``. Corrections made so
        far were made on squares of the previous reading: they stay in the table but no longer
        apply (``get``'s ``corrected`` is None until a new correction). Returns how many
        corrections were set aside."""
        if self.get(reading_id) is None:
            raise KeyError(reading_id)
        with self._db:
            row = self._db.execute("SELECT machine, error FROM readings WHERE id=?",
                                   (reading_id,)).fetchone()
            upto = self._db.execute("SELECT COALESCE(MAX(rowid), 0) FROM corrections"
                                    ).fetchone()[0]
            live = self._db.execute(
                f"SELECT COUNT(*) FROM corrections c WHERE reading_id=? AND NOT {_SET_ASIDE}",
                (reading_id,)).fetchone()[0]
            self._db.execute(
                "INSERT INTO rereadings (reading_id, created, previous, previous_error,"
                " corrections_upto) VALUES (?,?,?,?,?)",
                (reading_id, time.time(), row[0], row[1], upto))
            self._db.execute("UPDATE readings SET machine=?, error=NULL WHERE id=?",
                             (json.dumps(machine), reading_id))
        return int(live)

    def rereadings(self, reading_id: str) -> list[dict]:
        """The machine readings a result had before, oldest first (``previous`` None: the
        photo had not been read then, ``previous_error`` says why)."""
        rows = self._db.execute(
            "SELECT created, previous, previous_error FROM rereadings WHERE reading_id=?"
            " ORDER BY rowid", (reading_id,)).fetchall()
        return [{"created": r[0], "previous": json.loads(r[1]) if r[1] else None,
                 "previous_error": r[2]} for r in rows]
