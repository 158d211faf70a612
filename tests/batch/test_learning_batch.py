"""``kingdomino batch`` reads with what the store's corrections taught (``Batch(learning=True)``,
off with ``--no-learning``): in process and in worker processes, which get the examples when
they start and again when the store's examples change while the batch runs."""
from __future__ import annotations

import multiprocessing

import batch_fakes as fk
import pytest
from batch_helpers import run_batch
from learning_fakes import score_learned
from learning_support import features

from kingdomino import batch, learning
from kingdomino.batch import pool
from kingdomino.store import Store

CELLS = [[{"terrain": "lake", "crowns": 0}] * 5 for _ in range(5)]


def teach(store: Store, n: int = 1, seed: int = 0) -> None:
    """``n`` learned squares in the store, as a correction leaves them: made by the square
    network the batch reads with (``kingdomino.learning.network_identity``)."""
    rid = store.add_reading(rules="kingdomino", machine={"rules": "kingdomino", "size": 5,
                                                         "cells": CELLS})
    saved = store.add_correction(rid, {"rules": "kingdomino", "size": 5, "cells": CELLS})
    labels = {(r, c): ("lake", 0) for r in range(5) for c in range(5)}
    rows = [(i // 5, i % 5, "lake", 0, f, None) for i, f in enumerate(features(n, seed=seed))]
    store.learn(rid, saved["id"], labels, rows, network=learning.network_identity())


def photos(folder, n: int) -> None:
    folder.mkdir()
    for i in range(n):
        (folder / f"p{i:02d}.png").write_bytes(fk.scored(10 + i))


def learned_of(store: Store, outcomes) -> list:
    return [store.get(o.reading_id)["machine"].get("learned") for o in outcomes]


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_photo_is_read_with_the_stores_examples(tmp_path, calls, jobs):
    photos(tmp_path / "in", 4)
    store = Store(tmp_path / "s.sqlite3")
    teach(store, 3)
    coll = batch.collect([tmp_path / "in"])
    runner = batch.Batch(store, batch_id="b", score_fn=score_learned, jobs=jobs, learning=True,
                         mp_context=multiprocessing.get_context("fork"))
    outcomes = runner.run(coll.items)
    coll.close()
    assert learned_of(store, outcomes) == [3] * 4
    store.close()


def test_examples_taught_while_the_batch_runs_reach_the_workers(tmp_path, calls):
    photos(tmp_path / "in", 10)
    store = Store(tmp_path / "s.sqlite3")
    taught = []

    def progress(outcome):  # a correction saved elsewhere after the first photo is read
        if not taught:
            taught.append(1)
            other = Store(store.path)
            teach(other, 2, seed=5)
            other.close()

    coll = batch.collect([tmp_path / "in"])
    runner = batch.Batch(store, batch_id="b", score_fn=score_learned, jobs=2, learning=True,
                         mp_context=multiprocessing.get_context("fork"), progress=progress)
    outcomes = runner.run(coll.items)
    coll.close()
    got = learned_of(store, outcomes)
    # the first four were sent before any came back; every one sent after reads with them
    assert got[:4] == [None] * 4 and got[4:] == [2] * 6, got
    store.close()


def test_a_worker_behind_loads_the_examples_from_the_store(tmp_path):
    path = tmp_path / "s.sqlite3"
    store = Store(path)
    teach(store, 2)
    version = store.examples_version()
    store.close()
    pool._hold(str(path), (0, 0), None)
    try:
        got = pool._examples_for((str(path), version, None, False))
        assert len(got) == 2 and pool._held[1] == version
        assert pool._examples_for((str(path), version, None, False)) is got  # held: no load
    finally:
        pool._hold(None, None, None)


def test_learning_off_reads_without(tmp_path, calls):
    photos(tmp_path / "in", 2)
    store = Store(tmp_path / "s.sqlite3")
    teach(store, 3)
    store.close()
    out = tmp_path / "r.csv"
    assert run_batch([tmp_path / "in", "--out", out, "--store", tmp_path / "s.sqlite3",
                      "--jobs", "1", "--no-learning"], score_fn=score_learned) == 0
    store = Store(tmp_path / "s.sqlite3")
    rows = store._db.execute("SELECT machine FROM readings WHERE batch IS NOT NULL").fetchall()
    assert rows and all('"learned"' not in r[0] for r in rows)
    store.close()


def test_the_command_reads_with_them(tmp_path, calls):
    photos(tmp_path / "in", 2)
    store = Store(tmp_path / "s.sqlite3")
    teach(store, 4)
    store.close()
    assert run_batch([tmp_path / "in", "--out", tmp_path / "r.csv", "--store",
                      tmp_path / "s.sqlite3", "--jobs", "1"], score_fn=score_learned) == 0
    store = Store(tmp_path / "s.sqlite3")
    rows = store._db.execute("SELECT machine FROM readings WHERE batch IS NOT NULL").fetchall()
    assert len(rows) == 2 and all('"learned": 4' in r[0] for r in rows)
    store.close()


def test_examples_of_another_network_are_remade_once_before_the_workers_get_them(
        tmp_path, calls, monkeypatch):
    import cv2
    import numpy as np
    from learning_support import ColourClassifier, use_colour_network

    net = use_colour_network(monkeypatch)  # the batch's network; the workers are forked with it
    photos(tmp_path / "in", 4)
    store = Store(tmp_path / "s.sqlite3")
    image = np.random.default_rng(2).integers(0, 255, (300, 300, 3), dtype=np.uint8)
    rid = store.add_reading(rules="kingdomino", photo=cv2.imencode(".jpg", image)[1].tobytes(),
                            machine={"rules": "kingdomino", "size": 5, "cells": CELLS, "rows": 5,
                                     "cols": 5, "photo_size": [300, 300],
                                     "corners": [[50, 50], [250, 50], [250, 250], [50, 250]]})
    saved = store.add_correction(rid, {"rules": "kingdomino", "size": 5, "cells": CELLS})
    labels = {(r, c): ("lake", 0) for r in range(5) for c in range(5)}
    rows = [(0, i, "lake", 0, f, None) for i, f in enumerate(features(3, seed=4))]
    store.learn(rid, saved["id"], labels, rows, network="an-older-network")
    coll = batch.collect([tmp_path / "in"])
    runner = batch.Batch(store, batch_id="b", score_fn=score_learned, jobs=2, learning=True,
                         mp_context=multiprocessing.get_context("fork"))
    outcomes = runner.run(coll.items)
    coll.close()
    assert learned_of(store, outcomes) == [3] * 4
    assert len(net.crops) == 3  # remade once, in the batch's process, not per photo or worker
    stored = store.examples(features=True)
    assert {r["network"] for r in stored} == {ColourClassifier().identity}
    assert not {r["feature"] for r in stored} & {f for *_, f, _ in rows}
    store.close()
