"""What the ``kingdomino batch`` tests (one kingdom a photo, and ``--all``) share: running the
command in-process, reading its CSV, kingdoms written as rows of letters, and two batches run
at once on one store, and a bounded wait for what a test awaits. The ``calls`` fixture is in
this folder's conftest.py."""
from __future__ import annotations

import csv
import threading
import time

import pytest

import batch_fakes as fk
from kingdomino import batch, cli
from kingdomino.store import Store

TERRAINS = {"F": "field", "W": "forest", "L": "lake", "G": "grassland", "S": "swamp",
            "M": "mine", "C": "castle", "E": "empty"}


def run_batch(argv, score_fn=fk.fake_score, extra=()) -> int:
    """``kingdomino batch ARGV EXTRA`` in this process with a fake reader; its exit status."""
    args = cli.build_parser().parse_args(["batch", *map(str, argv), *extra])
    args.rules = args.rules or "kingdomino"
    return batch.run(args, score_fn=score_fn)


def read_csv(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def without_ids(rows):
    """The rows without what differs from run to run (the reading ids and their links)."""
    return [{k: v for k, v in r.items() if k not in ("reading_id", "link")} for r in rows]


def kingdom(rows: list[str]) -> dict:
    """Kingdom JSON from rows like 'F1 F0 L0 ...' (letter terrain, digit crowns)."""
    cells = [[{"terrain": TERRAINS[t[0]], "crowns": int(t[1])} for t in row.split()]
             for row in rows]
    return {"rules": "kingdomino", "size": len(cells), "cells": cells}


def two_batches_at_once(db, folder, score_fn, **options) -> dict[str, list[dict]]:
    """Batches "x" and "y" over one folder and one store, run at the same time in two threads;
    the rows each built. ``options`` go to ``batch.Batch`` and ``batch.build_rows`` (e.g.
    ``all_kingdoms=True``). Fails the test when either raised or did not finish."""
    results, errors = {}, []

    def one(name):
        store = Store(db)
        try:
            coll = batch.collect([folder])
            runner = batch.Batch(store, batch_id=f"b-{name}", score_fn=score_fn, jobs=1,
                                 **options)
            results[name] = batch.build_rows(store, runner.run(coll.items), rules="kingdomino",
                                             **options)
            coll.close()
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=one, args=(n,)) for n in ("x", "y")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads)
    return results


def readings_and_claims(db) -> tuple[int, int]:
    """How many readings the store holds, and how many photo claims are left in it."""
    store = Store(db)
    try:
        return tuple(store._db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                     for t in ("readings", "claims"))
    finally:
        store.close()


def wait_until(condition, timeout: float, what: str):
    """Poll ``condition`` until it is true (bounded); fail saying what was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)
