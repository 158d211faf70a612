"""The store under pressure (issue 48): processes creating or opening one store at once, a store
made by an older version, and the store's folder private (0700) whoever creates it first."""
from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kingdomino import store as store_module
from kingdomino.store import Store

ROOT = Path(__file__).resolve().parents[2]

# one process: say it is ready, wait for the go (a file), open the store, write, close
OPENER = """
import os, sys, time
from kingdomino.store import Store
path, go, ready = sys.argv[1:4]
open(ready, "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("never told to go")
    time.sleep(0.001)
store = Store(path)
store.add_reading(rules="kingdomino", source=ready)
store.close()
"""


def _wait_for(paths, procs, deadline_s=60.0):
    """Poll until every path exists (bounded): a process that died early fails the test."""
    deadline = time.monotonic() + deadline_s
    while not all(os.path.exists(p) for p in paths):
        for proc in procs:
            if proc.poll() not in (None, 0):
                out, err = proc.communicate()
                pytest.fail(f"a process ended early: {err}")
        assert time.monotonic() < deadline, "the processes never became ready"
        time.sleep(0.005)


def _open_at_once(path: Path, work: Path, n: int) -> list[tuple[int, str]]:
    """Start ``n`` processes, let them open ``path`` at the same moment; their (exit, stderr)."""
    work.mkdir(parents=True, exist_ok=True)
    go = work / "go"
    ready = [work / f"ready{i}" for i in range(n)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, str(path), str(go), str(r)],
                              env=env, cwd=str(ROOT), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in ready]
    try:
        _wait_for(ready, procs)
        go.touch()
        results = []
        for proc in procs:
            _out, err = proc.communicate(timeout=120)
            results.append((proc.returncode, err))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _schema(path: Path) -> tuple[int, dict[str, set[str]]]:
    db = sqlite3.connect(path)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        cols = {t: {r[1] for r in db.execute(f"PRAGMA table_info({t})")} for t in tables}
        return version, cols
    finally:
        db.close()


@pytest.mark.slow
def test_processes_creating_one_new_store_at_once_all_succeed(tmp_path):
    rounds, n = 20, 4
    for i in range(rounds):
        path = tmp_path / f"round{i}" / "kingdomino.sqlite3"
        results = _open_at_once(path, tmp_path / f"work{i}", n)
        failed = [err.strip().splitlines()[-1] for code, err in results if code != 0]
        assert not failed, f"round {i}: {len(failed)} of {n} failed: {failed}"
        store = Store(path)
        try:
            count = store._db.execute("SELECT COUNT(*) FROM readings").fetchone()[0]
        finally:
            store.close()
        assert count == n


@pytest.mark.slow
def test_processes_opening_one_store_at_once_all_succeed(tmp_path):
    path = tmp_path / "kingdomino.sqlite3"
    Store(path).close()
    for i in range(10):
        results = _open_at_once(path, tmp_path / f"work{i}", 4)
        failed = [err.strip().splitlines()[-1] for code, err in results if code != 0]
        assert not failed, f"round {i}: {failed}"


# the schema of the first stores (before derived_from, kingdom, table_read and the undo links)
OLD_SCHEMA = """
CREATE TABLE readings (id TEXT PRIMARY KEY, created REAL NOT NULL, source TEXT,
    content_hash TEXT, rules TEXT NOT NULL, bonuses TEXT NOT NULL, machine TEXT, error TEXT,
    player TEXT, claimed INTEGER, batch TEXT, photo BLOB);
CREATE INDEX readings_hash ON readings (content_hash, rules, bonuses);
CREATE TABLE corrections (reading_id TEXT NOT NULL REFERENCES readings (id),
    created REAL NOT NULL, kingdom TEXT NOT NULL);
CREATE TABLE claims (content_hash TEXT NOT NULL, rules TEXT NOT NULL, bonuses TEXT NOT NULL,
    owner TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (content_hash, rules, bonuses));
"""


def _kingdom(terrain: str) -> dict:
    return {"rules": "kingdomino", "size": 5,
            "cells": [[{"terrain": terrain, "crowns": 0}] * 5 for _ in range(5)]}


def _old_store(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    db.execute("INSERT INTO readings (id, created, source, rules, bonuses, machine) VALUES"
               " ('old1', 1.0, 'a.jpg', 'kingdomino', '[]', ?)", (json.dumps(_kingdom("lake")),))
    for terrain in ("field", "forest"):
        db.execute("INSERT INTO corrections VALUES ('old1', 2.0, ?)",
                   (json.dumps(_kingdom(terrain)),))
    db.commit()
    db.close()


def test_a_store_from_before_opens_and_gains_the_new_columns(tmp_path):
    path = tmp_path / "old.sqlite3"
    _old_store(path)
    store = Store(path)
    try:
        rec = store.get("old1")
        assert rec["machine"] == _kingdom("lake") and rec["corrected"] == _kingdom("forest")
        assert [c["kingdom"] for c in store.corrections("old1")] == \
            [_kingdom("field"), _kingdom("forest")]
        rid = store.add_reading(rules="kingdomino", derived_from="old1", machine=_kingdom("mine"))
        assert store.get(rid)["derived_from"] == "old1"
        store.add_correction("old1", _kingdom("swamp"))
        assert store.get("old1")["corrected"] == _kingdom("swamp")
    finally:
        store.close()
    version, cols = _schema(path)
    assert version == store_module.SCHEMA_VERSION
    assert {"derived_from", "kingdom", "table_read"} <= cols["readings"]
    assert "rereadings" in cols


def test_a_store_from_before_migrated_by_processes_at_once(tmp_path):
    for i in range(5):
        path = tmp_path / f"old{i}.sqlite3"
        _old_store(path)
        results = _open_at_once(path, tmp_path / f"work{i}", 4)
        failed = [err.strip().splitlines()[-1] for code, err in results if code != 0]
        assert not failed, f"round {i}: {failed}"
        assert _schema(path)[0] == store_module.SCHEMA_VERSION


def test_migrations_are_numbered_steps_each_applied_once(tmp_path):
    versions = [v for v, _step in store_module.MIGRATIONS]
    assert versions == list(range(1, len(versions) + 1))
    assert store_module.SCHEMA_VERSION == versions[-1]
    path = tmp_path / "s.sqlite3"
    Store(path).close()
    before = _schema(path)
    Store(path).close()  # opening again changes nothing
    assert _schema(path) == before


# ---------------------------------------------------------------- the store's folder: 0700


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _serve_without_listening(monkeypatch, **kwargs) -> dict:
    """Run ``webapp.serve`` up to the point where it would listen; the app it built."""
    import waitress

    import webapp

    seen = {}

    class NotListening:  # what waitress.create_server gives, without a socket
        def run(self):
            pass

        def close(self):
            pass

    def fake_create_server(app, **options):
        seen["app"] = app
        return NotListening()
    monkeypatch.setattr(waitress, "create_server", fake_create_server)
    assert webapp.serve(**kwargs) == 0
    return seen


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_serve_first_on_a_new_data_folder_keeps_it_private(tmp_path, monkeypatch, umask_022):
    monkeypatch.delenv(store_module.STORE_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    seen = _serve_without_listening(monkeypatch)
    folder = tmp_path / "data" / "kingdomino"
    assert Path(seen["app"].config["DATABASE"]).parent == folder
    assert _mode(folder) == 0o700
    assert _mode(folder / "web") == 0o700
    assert _mode(folder / store_module.DEFAULT_DB) == 0o600


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_serve_with_a_store_in_a_new_folder_keeps_it_private(tmp_path, monkeypatch, umask_022):
    db = tmp_path / "new" / "mine.sqlite3"
    _serve_without_listening(monkeypatch, db=str(db))
    assert _mode(db.parent) == 0o700 and _mode(db.parent / "web") == 0o700


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_the_batch_and_serve_make_the_same_folder_mode(tmp_path, umask_022):
    path = tmp_path / "batchfirst" / "kingdomino" / store_module.DEFAULT_DB
    Store(path).close()
    assert _mode(path.parent) == 0o700
