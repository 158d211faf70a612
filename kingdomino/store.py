"""SQLite store shared by the web app and the batch: nothing a user read or corrected is lost.

Each reading keeps the machine's reading (``machine``) and, separately, every correction a person
made (``corrections``; the latest is the current kingdom). Corrections are future training data.
Readings are addressed by a random id (the permalink) and found again by the photo's content
hash, so a batch re-run skips what it already read. A correction belongs to the reading it was
made on (and to the readings the batch derived from it for other bonuses), never to another
reading of the same bytes.

Squares a person corrected or confirmed are kept as ``examples`` (the square classifier's
features of each square's crop, the network that made them, and its label; ``learn``,
``examples``, ``remake_examples``, ``forget_*``): the readers reading into the store read with
them (``kingdomino.learning``).

The store is private to its user: the SQLite file is created 0600, and the default folder (one
per user, see ``default_store_path``) 0700. Batches running at once on one store *claim* a photo
before reading it (``claim``), so that no photo is read twice.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import sqlite3
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from kingdomino.i18n import N_

PHOTO_COPY_SIDE = 1600  # the stored copy of a photo is at most this many pixels on its long side

# The schema is built by numbered steps (``MIGRATIONS``), each applied once, in order, inside
# one ``BEGIN IMMEDIATE`` transaction that also reads and sets ``PRAGMA user_version``: processes
# opening one store at once wait for each other and never apply a step twice. A store made before
# the steps were numbered (user_version 0) may hold any part of them, so every step checks what
# is there first (``CREATE ... IF NOT EXISTS``, ``_add_column``). A later table or column is one
# more step at the end of the list.

def _add_column(db: sqlite3.Connection, table: str, name: str, kind: str) -> None:
    """Add a column unless the table has it (names come from this module only)."""
    if name not in {r[1] for r in db.execute(f"PRAGMA table_info({table})")}:
        db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


def _run(db: sqlite3.Connection, script: str) -> None:
    """Run ``;``-separated statements inside the caller's transaction (``executescript``
    would commit it first)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _v1_readings_and_corrections(db: sqlite3.Connection) -> None:
    _run(db, """
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
CREATE TABLE IF NOT EXISTS claims (
    content_hash TEXT NOT NULL,
    rules TEXT NOT NULL,
    bonuses TEXT NOT NULL,
    owner TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (content_hash, rules, bonuses)
)""")


def _v2_derived_and_table_readings(db: sqlite3.Connection) -> None:
    """Readings re-scored for other bonuses (``derived_from``) and whole-table photos."""
    _add_column(db, "readings", "derived_from", "TEXT")
    _add_column(db, "readings", "kingdom", "INTEGER")
    _add_column(db, "readings", "table_read", "TEXT")
    db.execute("CREATE INDEX IF NOT EXISTS readings_table ON readings (table_read)")


def _v3_rereadings(db: sqlite3.Connection) -> None:
    """A result read again inside an outline given by hand keeps its previous reading."""
    _run(db, """
CREATE TABLE IF NOT EXISTS rereadings (
    reading_id TEXT NOT NULL REFERENCES readings (id),
    created REAL NOT NULL,
    previous TEXT,
    previous_error TEXT,
    corrections_upto INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rereadings_reading ON rereadings (reading_id)""")


def _v4_undo_links(db: sqlite3.Connection) -> None:
    """Each correction's place in its reading's undo history (``Store.undo_history``); left
    empty on older corrections until their reading is next shown or corrected."""
    _add_column(db, "corrections", "undo_to", "INTEGER")
    _add_column(db, "corrections", "undo_depth", "INTEGER")


def _v5_examples(db: sqlite3.Connection) -> None:
    """Squares a person's correction or confirmation taught (``kingdomino.learning``): each is
    the square classifier's features of the square's crop (float32 bytes), its label and a
    small JPEG of the crop. ``id`` only grows (AUTOINCREMENT), so the largest id and the count
    together change with every example added or forgotten (``examples_version``)."""
    _run(db, """
CREATE TABLE IF NOT EXISTS examples (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    reading_id TEXT NOT NULL REFERENCES readings (id),
    correction_id INTEGER,
    kind TEXT NOT NULL,
    row INTEGER NOT NULL,
    col INTEGER NOT NULL,
    terrain TEXT NOT NULL,
    crowns INTEGER NOT NULL,
    feature BLOB NOT NULL,
    thumbnail BLOB,
    scope TEXT,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS examples_reading ON examples (reading_id, row, col);
CREATE INDEX IF NOT EXISTS examples_correction ON examples (correction_id)""")


def _v6_example_network(db: sqlite3.Connection) -> None:
    """Which square network made each example's features (``network``: its
    ``SquareClassifier.identity``). Examples kept before have none (NULL): a network unknown,
    so the reader remakes them before using them (``kingdomino.learning``)."""
    _add_column(db, "examples", "network", "TEXT")


MIGRATIONS = [  # (user_version after the step, the step): append, never edit or reorder
    (1, _v1_readings_and_corrections),
    (2, _v2_derived_and_table_readings),
    (3, _v3_rereadings),
    (4, _v4_undo_links),
    (5, _v5_examples),
    (6, _v6_example_network),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
BUSY_TIMEOUT_S = 30  # how long a connection waits for another one's write before giving up

# corrections made on a machine reading that was since replaced (a new outline puts the squares
# elsewhere): kept in the table, never applied to the new reading
_SET_ASIDE = ("EXISTS (SELECT 1 FROM rereadings x WHERE x.reading_id = c.reading_id"
              " AND x.corrections_upto >= c.rowid)")


DEFAULT_DB = "kingdomino.sqlite3"  # the file name inside the store folder
STORE_ENV = "KINGDOMINO_STORE"
CLAIM_STALE_SECONDS = 15 * 60  # a claim this old is given up (its batch is gone or stuck)


def default_store_path(environ=None, platform: str | None = None, home: str | None = None) -> str:
    """Where the store is when no ``--store`` is given: ``$KINGDOMINO_STORE``, else one file in
    the user's data folder: ``$XDG_DATA_HOME/kingdomino`` or ``~/.local/share/kingdomino`` (Linux
    and other Unix), ``~/Library/Application Support/kingdomino`` (macOS),
    ``%LOCALAPPDATA%\\kingdomino`` (Windows)."""
    env = os.environ if environ is None else environ
    platform = platform or sys.platform
    if env.get(STORE_ENV):
        return os.path.abspath(os.path.expanduser(env[STORE_ENV]))
    home = home or os.path.expanduser("~")
    if platform.startswith("win"):
        base = env.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
    elif platform == "darwin":
        base = os.path.join(home, "Library", "Application Support")
    else:
        base = env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    return os.path.join(base, "kingdomino", DEFAULT_DB)


# the --store option's help (kingdomino.cli says it in the CLI's language: a catalog message)
STORE_HELP = N_("SQLite store of readings and corrections (default: $KINGDOMINO_STORE, else "
              "kingdomino.sqlite3 in your data folder: $XDG_DATA_HOME/kingdomino or "
              "~/.local/share/kingdomino on Linux, ~/Library/Application Support/kingdomino on "
              "macOS, %%LOCALAPPDATA%%\\kingdomino on Windows)")


def private_folder(folder: str | os.PathLike) -> None:
    """Create ``folder`` readable by its owner only (0700, whatever the umask) when it is new;
    a folder that exists is left as it is (it may be one the user chose). Whatever puts files
    beside the store (the web app's ``web/``) calls this first, so the folder is never created
    with the default mode."""
    folder = os.path.abspath(folder)
    if not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)  # makedirs' mode is cut by the umask


def _private_file(path: str) -> None:
    """Create the store's folder (0700, when it is new) and file (0600); tighten an old file."""
    private_folder(os.path.dirname(os.path.abspath(path)))
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if hasattr(os, "fchmod"):
            st = os.fstat(fd)
            if st.st_mode & 0o077 and st.st_uid == os.getuid():
                os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def content_hash(data: bytes) -> str:
    """The key a photo is known by, whatever its file name."""
    return hashlib.sha256(data).hexdigest()


def _same_json(kingdom) -> str:
    return json.dumps(kingdom, sort_keys=True)


def _next_link(new_key: str, now, key_of, link_of, has_machine: bool) -> tuple:
    """A new correction's place in the undo history: ``(undo_to, undo_depth)``.

    The history is a stack kept as links: each correction names the correction whose kingdom
    Undo goes back to from it (``undo_to``: its rowid; 0: the machine's reading; None: nothing)
    and how many steps Undo has from it (``undo_depth``). ``now``: the rowid of the latest live
    correction (None: none yet, the machine's reading, if any, is the kingdom);
    ``key_of(rowid)`` a state's key (0: the machine's), ``link_of(rowid)`` its links."""
    if now is None:
        if not has_machine or new_key == key_of(0):
            return None, 0  # the first kingdom of one built by hand, or the machine's again
        return 0, 1
    undo_to, depth = link_of(now)
    if new_key == key_of(now):
        return undo_to, depth  # the same save again: nothing changes
    if undo_to is not None and new_key == key_of(undo_to):  # an undo: one step back
        return link_of(undo_to) if undo_to else (None, 0)
    return now, depth + 1


class Store:
    """A thin, thread-safe-by-connection wrapper; open one per thread or process."""

    def __init__(self, path: str | Path | None = None):
        self.path = str(path or default_store_path())
        if self.path != ":memory:":
            _private_file(self.path)
        self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
        self._db.row_factory = sqlite3.Row
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            self._use_wal()
            self._migrate()
        except BaseException:
            self._db.close()
            raise

    def _use_wal(self) -> None:
        """Write-ahead logging (readers never wait for the writer), set once and kept in the
        file. Switching needs the file to itself and SQLite refuses at once, without waiting,
        when another process has it open at that moment: try again until ``BUSY_TIMEOUT_S``."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        pause = 0.002
        while self._db.execute("PRAGMA journal_mode").fetchone()[0].lower() not in ("wal",
                                                                                  "memory"):
            try:
                self._db.execute("PRAGMA journal_mode=WAL").fetchone()
                return  # switched, or a file system without WAL: it stays as it was
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) \
                        or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def _version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        """Bring the schema to ``SCHEMA_VERSION``: the steps not yet applied, in one immediate
        transaction (a second process waits, then finds the work done)."""
        if self._version() >= SCHEMA_VERSION:
            return
        with self._immediate():
            done = self._version()  # read again: another process may have just done it
            for version, step in MIGRATIONS:
                if version > done:
                    step(self._db)
            if done < SCHEMA_VERSION:
                self._db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")

    @contextmanager
    def _immediate(self):
        """A write transaction taken at its start (``BEGIN IMMEDIATE``): what it reads cannot
        change before it writes; others wait up to ``BUSY_TIMEOUT_S``. Commits, or rolls back
        on any error."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.rollback()
            raise
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def add_reading(self, *, rules: str, bonuses=(), machine: dict | None = None,
                    error: str | None = None, source: str | None = None,
                    content_hash: str | None = None, player: str | None = None,
                    claimed: int | None = None, batch: str | None = None,
                    photo: bytes | None = None, derived_from: str | None = None) -> str:
        """Store one reading (or one failure to read) and return its permalink id.

        ``derived_from``: the reading this one re-scores (same photo, other bonuses); its
        corrections count for this one too."""
        with self._db:
            return self._insert_reading(
                rules, bonuses, machine, source=source, content_hash=content_hash, error=error,
                player=player, claimed=claimed, batch=batch, photo=photo,
                derived_from=derived_from)

    def _insert_reading(self, rules: str, bonuses, machine: dict | None, **columns) -> str:
        """Insert one row of ``readings`` (inside the caller's transaction): a new id, the time,
        the bonuses and the machine reading as JSON and the other ``columns`` as given (their
        names come from this module only). Returns the new id."""
        values = {"id": self._new_id(), "created": time.time(), "rules": rules,
                  "bonuses": json.dumps(sorted(bonuses)),
                  "machine": json.dumps(machine) if machine is not None else None, **columns}
        self._db.execute(f"INSERT INTO readings ({', '.join(values)})"
                         f" VALUES ({', '.join('?' * len(values))})", tuple(values.values()))
        return values["id"]

    @staticmethod
    def _new_id() -> str:
        rid = secrets.token_urlsafe(9)
        while rid[0] in "-_":  # an id never starts like a spreadsheet formula or an option
            rid = secrets.token_urlsafe(9)
        return rid

    def add_correction(self, reading_id: str, kingdom: dict, key=None) -> dict:
        """Keep a person's corrected kingdom; the machine reading stays as it was.

        The correction also takes its place in the reading's undo history (``undo_history``):
        ``key(kingdom)`` says which kingdoms are the same state (default: the same JSON); a
        correction equal to the state Undo goes back to takes the last change back, one equal
        to the current kingdom changes nothing, any other is one more step. The work does not
        depend on how many corrections came before.

        Returns what the correction was, as seen inside its transaction (for learning from it,
        ``kingdomino.learning``): ``{"id": its rowid, "step": "same" (the kingdom as it stood:
        a confirmation) | "undo" | "change", "previous": the kingdom before it (the machine's
        reading when none was corrected; None for a kingdom built by hand), "machine": the
        machine's reading or None}``."""
        key = key or _same_json
        with self._immediate():
            row = self._db.execute("SELECT machine FROM readings WHERE id=?",
                                   (reading_id,)).fetchone()
            if row is None:
                raise KeyError(reading_id)
            machine = json.loads(row[0]) if row[0] else None
            last = self._latest_live(reading_id)
            if last is not None and last["undo_depth"] is None:  # stored before the links
                self._relink(reading_id, machine, key)
                last = self._latest_live(reading_id)

            def key_of(rowid):
                if rowid == 0:
                    return key(machine)
                text = self._db.execute("SELECT kingdom FROM corrections WHERE rowid=?",
                                        (rowid,)).fetchone()[0]
                return key(json.loads(text))

            def link_of(rowid):
                r = self._db.execute("SELECT undo_to, undo_depth FROM corrections WHERE rowid=?",
                                     (rowid,)).fetchone()
                return r[0], r[1]

            new_key = key(kingdom)
            now = last["rowid"] if last else None
            undo_to, depth = _next_link(new_key, now, key_of, link_of, machine is not None)
            if now is None:
                previous = machine
                step = "same" if machine is not None and new_key == key_of(0) else "change"
            else:
                previous = json.loads(self._db.execute(
                    "SELECT kingdom FROM corrections WHERE rowid=?", (now,)).fetchone()[0])
                if new_key == key(previous):
                    step = "same"
                elif last["undo_to"] is not None and new_key == key_of(last["undo_to"]):
                    step = "undo"
                else:
                    step = "change"
            cur = self._db.execute(
                "INSERT INTO corrections (reading_id, created, kingdom, undo_to, undo_depth)"
                " VALUES (?,?,?,?,?)",
                (reading_id, time.time(), json.dumps(kingdom), undo_to, depth),
            )
            return {"id": cur.lastrowid, "step": step, "previous": previous, "machine": machine}

    def _latest_live(self, reading_id: str):
        """The reading's latest correction not set aside: rowid, undo_to, undo_depth."""
        return self._db.execute(
            f"SELECT rowid, undo_to, undo_depth FROM corrections c WHERE reading_id=?"
            f" AND NOT {_SET_ASIDE} ORDER BY rowid DESC LIMIT 1", (reading_id,)).fetchone()

    def _relink(self, reading_id: str, machine: dict | None, key) -> None:
        """Work out the undo links of every live correction of a reading from the first (the
        corrections of a store from before the links; once per reading), inside the caller's
        transaction."""
        rows = self._db.execute(
            f"SELECT rowid, kingdom FROM corrections c WHERE reading_id=? AND NOT {_SET_ASIDE}"
            " ORDER BY rowid", (reading_id,)).fetchall()
        keys = {0: key(machine) if machine is not None else None}
        links: dict[int, tuple] = {}
        now = None
        for rowid, text in rows:
            keys[rowid] = key(json.loads(text))
            links[rowid] = _next_link(keys[rowid], now, keys.__getitem__, links.__getitem__,
                                      machine is not None)
            now = rowid
        self._db.executemany("UPDATE corrections SET undo_to=?, undo_depth=? WHERE rowid=?",
                             [(u, d, rowid) for rowid, (u, d) in links.items()])

    def undo_history(self, reading_id: str, limit: int, key=None) -> tuple[list[dict], int]:
        """What Undo goes back to from the reading's current kingdom: the newest ``limit``
        kingdoms, oldest first (the reading's machine reading, when Undo reaches it, as it is
        stored), and how many steps there are in all. Corrections set aside by a new reading
        (``replace_machine``) are not in it. ``key``: as for ``add_correction`` (used once, to
        link the corrections of a store from before the links)."""
        last = self._latest_live(reading_id)
        if last is not None and last["undo_depth"] is None:
            with self._immediate():
                row = self._db.execute("SELECT machine FROM readings WHERE id=?",
                                       (reading_id,)).fetchone()
                self._relink(reading_id, json.loads(row[0]) if row and row[0] else None,
                             key or _same_json)
            last = self._latest_live(reading_id)
        if last is None:
            return [], 0
        out = []
        step = last["undo_to"]
        while step is not None and len(out) < max(0, limit):
            if step == 0:  # the machine's reading: nothing before it
                row = self._db.execute("SELECT machine FROM readings WHERE id=?",
                                       (reading_id,)).fetchone()
                out.append(json.loads(row[0]))
                break
            row = self._db.execute("SELECT kingdom, undo_to FROM corrections WHERE rowid=?",
                                   (step,)).fetchone()
            out.append(json.loads(row[0]))
            step = row[1]
        out.reverse()
        return out, int(last["undo_depth"])

    def correction_count(self, reading_id: str, live_only: bool = False) -> int:
        """How many corrections ``corrections`` would list (without loading them)."""
        live = f" AND NOT {_SET_ASIDE}" if live_only else ""
        return int(self._db.execute(
            f"SELECT COUNT(*) FROM corrections c WHERE reading_id=?{live}",
            (reading_id,)).fetchone()[0])

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

    def corrections(self, reading_id: str, live_only: bool = False) -> list[dict]:
        """The reading's corrections, oldest first; ``live_only``: without those set aside when
        the photo was read again (``replace_machine``)."""
        live = f" AND NOT {_SET_ASIDE}" if live_only else ""
        rows = self._db.execute(
            f"SELECT created, kingdom FROM corrections c WHERE reading_id=?{live} ORDER BY rowid",
            (reading_id,),
        ).fetchall()
        return [{"created": r[0], "kingdom": json.loads(r[1])} for r in rows]

    # -- for the batch: readings made by batches, corrections of one reading, claims

    def _newest_batch(self, columns: str, content_hash: str, rules: str, bonuses, table: bool):
        """The row (``columns``) of the newest batch reading of this photo under ``rules``: with
        ``bonuses`` (not None), under those bonuses, read or failed; with None, any bonuses but
        only a successful reading that re-scores no other. ``table``: of a whole-table read,
        else of a one-kingdom read."""
        where = "content_hash=? AND rules=? AND batch IS NOT NULL"
        params = [content_hash, rules]
        if bonuses is not None:
            where += " AND bonuses=?"
            params.append(json.dumps(sorted(bonuses)))
        else:
            where += " AND machine IS NOT NULL AND derived_from IS NULL"
        where += " AND table_read IS NOT NULL" if table else " AND table_read IS NULL"
        return self._db.execute(
            f"SELECT {columns} FROM readings WHERE {where}"
            " ORDER BY created DESC, rowid DESC LIMIT 1", params).fetchone()

    def find_batch_reading(self, content_hash: str, rules: str, bonuses=()) -> dict | None:
        """The newest reading of this photo made by a batch under these rules and bonuses (one
        kingdom per photo; whole-table readings are ``find_batch_table``'s).

        Single uploads in the web app belong to their uploader: a batch never reuses them (nor
        their corrections)."""
        row = self._newest_batch("*", content_hash, rules, bonuses, table=False)
        return self._row(row) if row else None

    def find_batch_photo(self, content_hash: str, rules: str) -> dict | None:
        """The newest successful batch reading of this photo under ``rules``, any bonuses."""
        row = self._newest_batch("*", content_hash, rules, None, table=False)
        return self._row(row) if row else None

    def correction_of(self, reading_id: str) -> dict | None:
        """The latest correction of this reading, or of the reading it was derived from (a
        batch re-scoring the same reading for other bonuses); never another reading's, and
        never one set aside when the photo was read again (``replace_machine``)."""
        seen = set()
        rid = reading_id
        while rid and rid not in seen:
            seen.add(rid)
            row = self._db.execute(
                "SELECT c.kingdom, r.derived_from FROM readings r LEFT JOIN corrections c"
                f" ON c.reading_id = r.id AND NOT {_SET_ASIDE}"
                " WHERE r.id=? ORDER BY c.rowid DESC LIMIT 1", (rid,),
            ).fetchone()
            if row is None:
                return None
            if row[0] is not None:
                return json.loads(row[0])
            rid = row[1]
        return None

    # -- whole-table photos in the batch (``kingdomino batch --all``; additive): every kingdom of
    # a photo is its own reading (its own permalink and corrections), with its number in the
    # photo (``kingdom``); the readings of one read of one photo share ``table_read``

    def add_table_readings(self, *, rules: str, bonuses=(), kingdoms=(), error: str | None = None,
                           source: str | None = None, content_hash: str | None = None,
                           batch: str | None = None, photo: bytes | None = None,
                           derived_from=None) -> tuple[str, list[str]]:
        """Store every kingdom read in one table photo (``kingdoms``: the scored object of each,
        with its ``"kingdom"`` number), or the photo's failure (``error``, one reading without
        a number), all in one transaction: a batch stopped midway keeps the whole photo or none
        of it. Returns ``(table_read, ids)``: a reading id per kingdom, or the error's one.
        ``derived_from``: per kingdom, the reading it re-scores for other bonuses (its
        corrections count too)."""
        kingdoms = list(kingdoms)
        if not kingdoms and error is None:
            raise ValueError("add_table_readings needs the kingdoms read or the error; give one")
        derived = list(derived_from) if derived_from is not None else [None] * len(kingdoms)
        if len(derived) != len(kingdoms):
            raise ValueError("derived_from needs one reading id (or None) per kingdom")
        group = self._new_id()
        ids = []
        entries = [(k, None) for k in zip(kingdoms, derived)] or [(None, error)]
        with self._db:
            for pair, err in entries:
                machine, parent = pair if pair is not None else (None, None)
                number = int(machine["kingdom"]) if machine is not None else None
                # the name people read counts from 1 (the kingdom column, as the JSON, from 0)
                name = f"{source} #{number + 1}" if source is not None and number is not None \
                    else source
                ids.append(self._insert_reading(
                    rules, bonuses, machine, source=name, content_hash=content_hash, error=err,
                    batch=batch, photo=photo, derived_from=parent, kingdom=number,
                    table_read=group))
        return group, ids

    def table_readings(self, table_read: str) -> list[dict]:
        """The readings of one read of a table photo, by kingdom number (the failure: alone)."""
        rows = self._db.execute(
            "SELECT * FROM readings WHERE table_read=? ORDER BY kingdom, rowid",
            (table_read,)).fetchall()
        return [self._row(r) for r in rows]

    def find_batch_table(self, content_hash: str, rules: str, bonuses=()) -> list[dict] | None:
        """The newest batch read of this table photo under these rules and bonuses: its
        readings by kingdom number (one reading with ``error`` when it held no kingdom)."""
        row = self._newest_batch("table_read", content_hash, rules, bonuses, table=True)
        return self.table_readings(row[0]) if row else None

    def find_batch_table_photo(self, content_hash: str, rules: str) -> list[dict] | None:
        """The newest successful batch read of this table photo under ``rules``, any bonuses,
        that re-scores no other (its readings by kingdom number), or None."""
        row = self._newest_batch("table_read", content_hash, rules, None, table=True)
        return self.table_readings(row[0]) if row else None

    @staticmethod
    def claim_owner() -> str:
        """A name for one batch run: host, process and a random part (threads share a pid)."""
        return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"

    def claim(self, content_hash: str, rules: str, bonuses, owner: str) -> bool:
        """Take the photo for reading under these rules and bonuses; False when another running
        batch holds it. A claim of a batch that is gone (its process ended, or it is older than
        ``CLAIM_STALE_SECONDS``) is taken over."""
        key = (content_hash, rules, json.dumps(sorted(bonuses)))
        with self._db:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO claims (content_hash, rules, bonuses, owner, created)"
                " VALUES (?,?,?,?,?)", (*key, owner, time.time()))
            if cur.rowcount == 1:
                return True
            row = self._db.execute(
                "SELECT owner, created FROM claims WHERE content_hash=? AND rules=? AND bonuses=?",
                key).fetchone()
            if row is None:
                return self.claim(content_hash, rules, bonuses, owner)
            if row[0] == owner:
                return True
            host, _, rest = row[0].partition(":")
            pid = rest.partition(":")[0]
            gone = (host == socket.gethostname() and pid.isdigit() and not _pid_alive(int(pid)))
            if gone or time.time() - row[1] > CLAIM_STALE_SECONDS:
                cur = self._db.execute(
                    "UPDATE claims SET owner=?, created=? WHERE content_hash=? AND rules=?"
                    " AND bonuses=? AND owner=?", (owner, time.time(), *key, row[0]))
                return cur.rowcount == 1
            return False

    def release(self, content_hash: str, rules: str, bonuses, owner: str) -> None:
        with self._db:
            self._db.execute(
                "DELETE FROM claims WHERE content_hash=? AND rules=? AND bonuses=? AND owner=?",
                (content_hash, rules, json.dumps(sorted(bonuses)), owner))

    def release_all(self, owner: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM claims WHERE owner=?", (owner,))

    # -- added for the outline given by hand (additive): a new machine reading of a result

    def replace_machine(self, reading_id: str, machine: dict) -> int:
        """Make ``machine`` the reading's machine reading (the photo read again, e.g. inside an
        outline given by hand); the previous one is kept in ``rereadings``. Corrections made so
        far were made on squares of the previous reading: they stay in the table but no longer
        apply (``get``'s ``corrected`` is None until a new correction), and what they taught
        (``examples`` of the reading, cut with the previous reading's outline) is forgotten.
        Returns how many corrections were set aside."""
        with self._db:
            row = self._db.execute("SELECT machine, error FROM readings WHERE id=?",
                                   (reading_id,)).fetchone()
            if row is None:
                raise KeyError(reading_id)
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
            self._db.execute("DELETE FROM examples WHERE reading_id=?", (reading_id,))
        return int(live)

    def rereadings(self, reading_id: str) -> list[dict]:
        """The machine readings a result had before, oldest first (``previous`` None: the
        photo had not been read then, ``previous_error`` says why)."""
        rows = self._db.execute(
            "SELECT created, previous, previous_error FROM rereadings WHERE reading_id=?"
            " ORDER BY rowid", (reading_id,)).fetchall()
        return [{"created": r[0], "previous": json.loads(r[1]) if r[1] else None,
                 "previous_error": r[2]} for r in rows]

    # -- added for learning from corrections (additive): the squares a correction or a
    # confirmation taught, one example at most per square of a reading (``kingdomino.learning``)

    def examples_version(self) -> tuple[int, int]:
        """``(largest id, count)`` of the examples: it changes with every example added or
        forgotten (ids only grow; a row changes only when its features are made again by
        another network, ``remake_examples``, which a copy loaded for one network never
        needs), so a copy of the examples loaded at one version, for one network, is still
        right while the version is the same. One cheap query."""
        row = self._db.execute("SELECT COALESCE(MAX(id), 0), COUNT(*) FROM examples").fetchone()
        return int(row[0]), int(row[1])

    def example_count(self, reading_id: str | None = None) -> int:
        """How many examples the store holds (of one reading's squares, with ``reading_id``)."""
        if reading_id is None:
            return self.examples_version()[1]
        return int(self._db.execute("SELECT COUNT(*) FROM examples WHERE reading_id=?",
                                    (reading_id,)).fetchone()[0])

    def example_labels(self, reading_id: str) -> dict:
        """``{(row, col): (terrain, crowns)}`` of the reading's examples."""
        rows = self._db.execute("SELECT row, col, terrain, crowns FROM examples"
                                " WHERE reading_id=?", (reading_id,)).fetchall()
        return {(r[0], r[1]): (r[2], r[3]) for r in rows}

    def learn(self, reading_id: str, correction_id: int, labels: dict | None, add, *,
              kind: str = "correction", scope: str | None = None,
              network: str | None = None) -> dict | None:
        """Keep what one correction of a reading taught, in one transaction.

        ``labels``: ``{(row, col): (terrain, crowns)}``, the reading's squares as that
        correction left them (None: no square of it can teach, e.g. the kingdom took another
        size): an example of the reading that says otherwise is forgotten (an undo takes back
        what the undone correction taught). ``add``: ``(row, col, terrain, crowns, features
        as float32 bytes, thumbnail JPEG or None)`` for each square it teaches: each takes the
        place of that square's example, except that a confirmation (``kind="confirmation"``)
        leaves an example that already says the same. ``network``: the identity of the
        square network that made the features (None: unknown). Nothing is done (None) when
        ``correction_id`` is no longer the reading's latest correction: the later one's
        learning reconciles instead, so two saves at once never leave both. Returns
        ``{"added": [ids], "removed": count}``."""
        with self._immediate():
            last = self._latest_live(reading_id)
            if last is None or last["rowid"] != correction_id:
                return None
            have = self._db.execute(
                "SELECT id, row, col, terrain, crowns FROM examples WHERE reading_id=?",
                (reading_id,)).fetchall()
            stale = [r["id"] for r in have if labels is None
                     or labels.get((r["row"], r["col"])) != (r["terrain"], r["crowns"])]
            kept = {(r["row"], r["col"]): r for r in have if r["id"] not in stale}
            now = time.time()
            added = []
            for row, col, terrain, crowns, feature, thumbnail in add:
                old = kept.pop((int(row), int(col)), None)
                if old is not None:
                    if kind == "confirmation" and (old["terrain"], old["crowns"]) == (
                            terrain, int(crowns)):
                        kept[(int(row), int(col))] = old
                        continue
                    stale.append(old["id"])
                cur = self._db.execute(
                    "INSERT INTO examples (reading_id, correction_id, kind, row, col, terrain,"
                    " crowns, feature, thumbnail, scope, created, network)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (reading_id, correction_id, kind, int(row), int(col), str(terrain),
                     int(crowns), bytes(feature), thumbnail, scope, now, network))
                added.append(int(cur.lastrowid))
            self._db.executemany("DELETE FROM examples WHERE id=?", [(i,) for i in stale])
        return {"added": added, "removed": len(stale)}

    def examples(self, scope: str | None = None, limit: int | None = None,
                 features: bool = False) -> list[dict]:
        """The examples, newest first (``scope``: only those of that scope), each with its
        reading's ``source`` and the ``network`` that made its features (None: unknown);
        ``features``: with ``feature`` (float32 bytes) too. Never the thumbnails
        (``example_thumbnail``)."""
        columns = ("e.id, e.reading_id, e.correction_id, e.kind, e.row, e.col, e.terrain,"
                   " e.crowns, e.scope, e.created, r.source, e.network,"
                   " e.thumbnail IS NOT NULL AS has_thumbnail")
        if features:
            columns += ", e.feature"
        where, params = "", []
        if scope is not None:
            where, params = " WHERE e.scope=?", [scope]
        tail = ""
        if limit is not None:
            tail, params = " LIMIT ?", params + [max(0, int(limit))]
        rows = self._db.execute(
            f"SELECT {columns} FROM examples e LEFT JOIN readings r ON r.id = e.reading_id"
            f"{where} ORDER BY e.id DESC{tail}", params).fetchall()
        out = []
        for row in rows:
            d = dict(row)
            d["has_thumbnail"] = bool(d["has_thumbnail"])
            out.append(d)
        return out

    def example_thumbnail(self, example_id: int) -> bytes | None:
        row = self._db.execute("SELECT thumbnail FROM examples WHERE id=?",
                               (int(example_id),)).fetchone()
        return row[0] if row else None

    def example_sources(self, reading_ids) -> dict:
        """``{reading id: (machine reading or None, stored photo or None)}`` of these
        readings: what their examples are cut from again (``kingdomino.learning``)."""
        out = {}
        for rid in dict.fromkeys(reading_ids):
            row = self._db.execute("SELECT machine, photo FROM readings WHERE id=?",
                                   (rid,)).fetchone()
            if row is not None:
                out[rid] = (json.loads(row[0]) if row[0] else None, row[1])
        return out

    def remake_examples(self, remade) -> int:
        """Put back the features of examples made again by another network, in one
        transaction: ``remade`` is ``(id, feature bytes, network, feature bytes before,
        network before)`` each. An example forgotten or changed since it was read is left as
        it is (another process remade it, or it was replaced). Labels, thumbnails, ids and
        therefore ``examples_version`` are unchanged. Returns how many were put back."""
        done = 0
        with self._immediate():
            for eid, feature, network, old_feature, old_network in remade:
                cur = self._db.execute(
                    "UPDATE examples SET feature=?, network=? WHERE id=? AND feature=?"
                    " AND network IS ?", (bytes(feature), network, int(eid),
                                          bytes(old_feature), old_network))
                done += cur.rowcount
        return done

    def forget_example(self, example_id: int) -> bool:
        """Delete one example; False when there is none with this id."""
        with self._db:
            cur = self._db.execute("DELETE FROM examples WHERE id=?", (int(example_id),))
        return cur.rowcount == 1

    def forget_examples(self, reading_id: str | None = None) -> int:
        """Delete every example (of one reading's squares, with ``reading_id``): how many."""
        with self._db:
            if reading_id is None:
                cur = self._db.execute("DELETE FROM examples")
            else:
                cur = self._db.execute("DELETE FROM examples WHERE reading_id=?", (reading_id,))
        return int(cur.rowcount)

    def forget_correction_examples(self, correction_id: int,
                                   reading_id: str | None = None) -> int:
        """Delete what one correction (or confirmation) taught: how many examples. With
        ``reading_id``, only when the correction is that reading's."""
        sql, params = "DELETE FROM examples WHERE correction_id=?", [int(correction_id)]
        if reading_id is not None:
            sql, params = sql + " AND reading_id=?", params + [reading_id]
        with self._db:
            cur = self._db.execute(sql, params)
        return int(cur.rowcount)
