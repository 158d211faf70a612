"""Learning from corrections, the store's and the services' side (``kingdomino.learning``,
``Store.learn`` and the examples table): which squares a correction teaches, what cannot teach
and why, undo, the cache that follows the store, two processes learning into one store, a store
from before the examples, and ``kingdomino learned`` / ``kingdomino score --store``."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import cv2
import numpy as np
import pytest
from learning_support import ColourClassifier, colour_cutter, features, use_colour_network

from kingdomino import learning, service
from kingdomino import store as store_module
from kingdomino.store import Store
from webapp.reading import state_key

ROOT = Path(__file__).resolve().parent.parent
CORNERS = [[100.0, 50.0], [500.0, 50.0], [500.0, 450.0], [100.0, 450.0]]
ROWS = ["F1 F0 F0 W0 W0", "F0 F0 L1 W1 W0", "G0 G0 C0 L0 L0", "S0 S2 M0 M3 L0", "S0 S0 E0 E0 E0"]
NAMES = {"F": "field", "W": "forest", "L": "lake", "G": "grassland", "S": "swamp",
         "M": "mine", "C": "castle", "E": "empty"}


def cells(rows=ROWS):
    return [[{"terrain": NAMES[t[0]], "crowns": int(t[1])} for t in row.split()] for row in rows]


def kingdom(rows=ROWS) -> dict:
    return {"rules": "kingdomino", "size": len(rows), "cells": cells(rows)}


def machine(rows=ROWS, corners=CORNERS, size=(600, 500)) -> dict:
    out = kingdom(rows)
    out.update(corners=corners, rows=len(rows), cols=len(rows), photo_size=list(size))
    return out


def photo(w=600, h=500) -> bytes:
    img = np.random.default_rng(1).integers(0, 255, (h, w, 3), dtype=np.uint8)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


def changed(r, c, terrain, crowns=0, rows=ROWS) -> dict:
    out = kingdom(rows)
    out["cells"][r][c] = {"terrain": terrain, "crowns": crowns}
    return out


@pytest.fixture(autouse=True)
def colour_network(monkeypatch):
    """Learning reads with the colour stand-in the colour cutter learns with."""
    return use_colour_network(monkeypatch)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "s.sqlite3")
    yield s
    s.close()


def correct(store, rid, new, enabled=True):
    from webapp.reading import state_key  # the web app's: the same kingdom, rules and bonuses

    saved = store.add_correction(rid, new, key=state_key("kingdomino", []))
    return learning.after_correction(store, store.get(rid), saved, new, enabled=enabled,
                                     cutter=colour_cutter)


def reading(store, with_photo=True, **kw) -> str:
    return store.add_reading(rules="kingdomino", machine=machine(**kw),
                             photo=photo() if with_photo else None, batch="cli-b1")


# ---------------------------------------------------------------- which squares teach


def test_a_correction_teaches_the_square_changed(store):
    rid = reading(store)
    got = correct(store, rid, changed(0, 0, "lake"))
    assert got["kind"] == "correction" and got["added"] == 1 and "why" not in got
    [row] = store.examples(features=True)
    assert (row["row"], row["col"], row["terrain"], row["crowns"]) == (0, 0, "lake", 0)
    assert row["reading_id"] == rid and row["correction_id"] == got["correction"]
    assert row["scope"] == "cli-b1" and row["kind"] == "correction"
    assert len(np.frombuffer(row["feature"], np.float32)) == 6
    thumb = store.example_thumbnail(row["id"])
    assert cv2.imdecode(np.frombuffer(thumb, np.uint8), cv2.IMREAD_COLOR) is not None


def test_posting_the_kingdom_unchanged_confirms_every_square_once(store):
    rid = reading(store)
    got = correct(store, rid, kingdom())
    assert got["kind"] == "confirmation" and got["added"] == 25
    again = correct(store, rid, kingdom())
    assert again["added"] == 0 and "already taught" in again["why"]
    assert store.example_count() == 25
    assert {r["kind"] for r in store.examples()} == {"confirmation"}


def test_a_confirmation_after_a_correction_keeps_what_the_correction_taught(store):
    rid = reading(store)
    first = correct(store, rid, changed(1, 1, "mine", 2))
    confirm = correct(store, rid, changed(1, 1, "mine", 2))
    assert confirm["added"] == 24
    by_square = {(r["row"], r["col"]): r for r in store.examples()}
    assert by_square[(1, 1)]["correction_id"] == first["correction"]


def test_undo_takes_back_what_the_correction_taught(store):
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))
    two = changed(0, 0, "lake")
    two["cells"][4][4] = {"terrain": "swamp", "crowns": 0}
    assert correct(store, rid, two)["added"] == 1
    assert store.example_count() == 2
    back = correct(store, rid, changed(0, 0, "lake"))  # Undo: the state before the last change
    assert back["kind"] == "undo" and back["added"] == 0 and back["removed"] == 1
    assert store.example_labels(rid) == {(0, 0): ("lake", 0)}
    machine_again = correct(store, rid, kingdom())  # Undo again: the machine's reading
    assert machine_again["kind"] == "undo" and machine_again["removed"] == 1
    assert store.example_count() == 0


def test_changing_a_square_again_replaces_its_example(store):
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))
    got = correct(store, rid, changed(0, 0, "forest"))
    assert got["added"] == 1 and got["removed"] == 1
    assert store.example_labels(rid) == {(0, 0): ("forest", 0)}


def test_only_the_bonuses_changed_teaches_nothing_and_says_why():
    p = learning.plan(machine(), kingdom(), kingdom(), "change")
    assert p.squares == [] and "no square changed" in p.why[0]


# ---------------------------------------------------------------- what cannot teach


def test_a_kingdom_of_another_size_teaches_nothing_and_takes_back_the_rest(store):
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))
    seven = {"rules": "kingdomino", "size": 7,
             "cells": [[{"terrain": "empty", "crowns": 0}] * 7 for _ in range(7)]}
    got = correct(store, rid, seven)
    assert got["added"] == 0 and got["removed"] == 1
    assert "7x7" in got["why"] and "5x5" in got["why"]


def test_a_reading_without_a_photo_teaches_nothing_and_says_why(store):
    rid = reading(store, with_photo=False)
    got = correct(store, rid, changed(0, 0, "lake"))
    assert got["added"] == 0 and "no stored photo" in got["why"]


def test_a_kingdom_built_by_hand_teaches_nothing_and_says_why(store):
    rid = store.add_reading(rules="kingdomino", source="built by hand")
    store.add_correction(rid, kingdom())
    got = correct(store, rid, changed(0, 0, "lake"))
    assert got["added"] == 0 and "not read from a photo" in got["why"]


def test_a_square_outside_the_photo_teaches_nothing_and_says_which(store):
    # the outline runs off the bottom of the photo: the last row's centres are outside it
    rid = reading(store, corners=[[100.0, 100.0], [500.0, 100.0], [500.0, 580.0],
                                  [100.0, 580.0]])
    new = changed(0, 0, "lake")
    new["cells"][4][0] = {"terrain": "forest", "crowns": 0}
    got = correct(store, rid, new)
    assert got["added"] == 1 and "r5c1 lie outside the photo" in got["why"]
    assert set(store.example_labels(rid)) == {(0, 0)}


def test_a_square_the_reader_cannot_read_teaches_nothing():
    new = changed(0, 0, "town")
    p = learning.plan(machine(), kingdom(), new, "change")
    assert p.squares == [] and "town" in p.why[0] and "r1c1" in p.why[0]


def test_a_photo_that_cannot_be_decoded_teaches_nothing_but_keeps_the_correction(store):
    rid = store.add_reading(rules="kingdomino", machine=machine(), photo=b"not a jpeg")
    got = correct(store, rid, changed(0, 0, "lake"))
    assert got["added"] == 0 and "could not be cut" in got["why"]
    assert store.get(rid)["corrected"]["cells"][0][0]["terrain"] == "lake"


def test_learning_off_learns_nothing_but_still_takes_back(store):
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))
    got = correct(store, rid, changed(1, 1, "lake"), enabled=False)
    assert got["added"] == 0 and "--no-learning" in got["why"] and got["removed"] == 1


def test_a_superseded_correction_leaves_the_later_one_to_teach(store):
    rid = reading(store)
    first = changed(0, 0, "lake")
    saved = store.add_correction(rid, first, key=state_key("kingdomino", []))
    correct(store, rid, changed(0, 0, "forest"))  # saved and learned meanwhile
    got = learning.after_correction(store, store.get(rid), saved, first, cutter=colour_cutter)
    assert got["added"] == 0 and "later correction" in got["why"]
    assert store.example_labels(rid) == {(0, 0): ("forest", 0)}


def test_a_reread_forgets_what_the_old_outline_taught(store):
    rid = reading(store)
    correct(store, rid, kingdom())
    assert store.example_count(rid) == 25
    store.replace_machine(rid, machine())
    assert store.example_count(rid) == 0


# ---------------------------------------------------------------- the store's examples


def test_forget_one_all_and_a_corrections(store):
    rid = reading(store)
    one = correct(store, rid, changed(0, 0, "lake"))
    rid2 = reading(store)
    confirm = correct(store, rid2, kingdom())
    newest = store.examples()[0]["id"]
    assert [r["id"] for r in store.examples()] == sorted((r["id"] for r in store.examples()),
                                                         reverse=True)
    assert store.forget_example(newest) and not store.forget_example(newest)
    assert store.forget_correction_examples(confirm["correction"], reading_id=rid) == 0
    assert store.forget_correction_examples(confirm["correction"], reading_id=rid2) == 24
    assert store.example_count() == 1 and one["added"] == 1
    assert store.forget_examples() == 1 and store.example_count() == 0


def test_examples_listed_by_scope(store):
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))
    other = store.add_reading(rules="kingdomino", machine=machine(), photo=photo())
    correct(store, other, changed(0, 0, "mine", 1))
    assert [r["reading_id"] for r in store.examples(scope="cli-b1")] == [rid]
    assert len(store.examples()) == 2 and len(store.examples(limit=1)) == 1


def test_the_version_changes_with_every_add_and_forget(store):
    seen = [store.examples_version()]
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))
    seen.append(store.examples_version())
    correct(store, rid, changed(0, 0, "forest"))  # one forgotten, one added: same count
    seen.append(store.examples_version())
    store.forget_examples()
    assert len(set(seen)) == len(seen)
    assert store.examples_version()[1] == 0  # none: nothing to read with, whatever came before


def test_the_examples_are_loaded_again_only_when_they_change(store):
    assert learning.examples_of(store) is None
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))
    first = learning.examples_of(store)
    assert len(first) == 1 and learning.examples_of(store) is first
    other = Store(store.path)  # another process's connection learns
    try:
        saved = other.add_correction(rid, changed(1, 1, "lake"), key=state_key("kingdomino", []))
        learning.after_correction(other, other.get(rid), saved, changed(1, 1, "lake"),
                                  cutter=colour_cutter)
    finally:
        other.close()
    again = learning.examples_of(store)
    assert again is not first and len(again) == 2  # (1,1) now; (0,0) back to the machine's


def test_examples_of_another_model_are_left_out():
    rows = [{"id": 3, "feature": features(1, 8)[0], "terrain": "lake", "crowns": 0},
            {"id": 2, "feature": features(1, 6)[0], "terrain": "lake", "crowns": 0},
            {"id": 1, "feature": features(1, 8)[0], "terrain": "town", "crowns": 0}]
    built = learning.build_examples(rows)
    assert built.ids == [3]


# ---------------------------------------------------------------- another square network

RETRAINED = (5, 3, 1, 4, 2, 0)  # a network of the same feature length, another space


def cut_by(net, store, rid, squares) -> list:
    """The features ``net`` gives these squares of the reading, cut as learning cuts them."""
    from vision.read import learned

    got, _ = learning.cut(store.photo(rid), store.get(rid)["machine"], squares,
                          lambda *a: learned.examples_from_photo(net, *a))
    return [np.asarray(e[4], np.float32) for e in got]


def test_examples_another_network_made_are_remade_by_the_reading_network(store, monkeypatch):
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))  # learned by the colour network
    correct(store, rid, changed(0, 0, "lake"))  # confirmed: 24 more
    old = {r["id"]: r["feature"] for r in store.examples(features=True)}
    assert {r["network"] for r in store.examples()} == {"colour"}
    retrained = use_colour_network(monkeypatch, ColourClassifier("retrained", RETRAINED))
    got = learning.examples_of(store)
    assert got.network == "retrained" and len(got) == 25
    rows = {r["id"]: r for r in store.examples(features=True)}
    assert {r["network"] for r in rows.values()} == {"retrained"} and set(rows) == set(old)
    by_square = {(r["row"], r["col"]): r["id"] for r in rows.values()}
    [want] = cut_by(ColourClassifier("retrained", RETRAINED), store, rid, [(0, 0, "lake", 0)])
    feature = got.features[got.ids.index(by_square[(0, 0)])]
    assert np.allclose(feature, want, atol=1e-6)
    assert np.frombuffer(rows[by_square[(0, 0)]]["feature"], np.float32).tobytes() \
        == want.tobytes() != old[by_square[(0, 0)]]
    # written back once: loaded again, nothing is remade
    read = len(retrained.crops)
    learning._cache.clear()
    again = learning.examples_of(store)
    assert len(retrained.crops) == read and again.network == "retrained" and len(again) == 25
    assert np.allclose(again.features, got.features)


def test_remade_examples_are_read_with_when_they_cannot_be_written_back(store, monkeypatch,
                                                                      caplog):
    rid = reading(store)
    correct(store, rid, changed(0, 0, "lake"))

    def busy(remade):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store, "remake_examples", busy)
    use_colour_network(monkeypatch, ColourClassifier("retrained", RETRAINED))
    with caplog.at_level("WARNING", logger="kingdomino.learning"):
        got = learning.examples_of(store)
    assert got.network == "retrained" and len(got) == 1
    assert "could not be written back" in caplog.text
    assert [r["network"] for r in store.examples()] == ["colour"]  # written at the next load


def test_examples_that_cannot_be_remade_are_left_out_and_kept(store, monkeypatch, caplog):
    rid = reading(store, with_photo=False)
    saved = store.add_correction(rid, kingdom(), key=state_key("kingdomino", []))
    labels = {(r, c): ("field", 0) for r in range(5) for c in range(5)}

    def jpeg(side):
        img = np.full((side, side, 3), (40, 180, 90), np.uint8)
        return cv2.imencode(".jpg", img)[1].tobytes()

    whole = ColourClassifier().cfg["cell"] + 2 * ColourClassifier().cfg["crop_margin"]
    rows = [(0, 0, "field", 0, features(1)[0], jpeg(whole)),       # the whole crop: remade
            (0, 1, "field", 0, features(1, seed=1)[0], jpeg(12)),   # a smaller picture
            (0, 2, "field", 0, features(1, seed=2)[0], None)]       # no picture at all
    added = store.learn(rid, saved["id"], labels, rows, network="old-network")["added"]
    with caplog.at_level("WARNING", logger="kingdomino.learning"):
        got = learning.examples_of(store)
    assert got.ids == [added[0]] and got.network == "colour"
    decoded = cv2.imdecode(np.frombuffer(jpeg(whole), np.uint8), cv2.IMREAD_COLOR)
    assert np.allclose(got.features[0], ColourClassifier().features(decoded[None])[0], atol=1e-6)
    left = learning.left_out(store)
    assert set(left) == set(added[1:])
    assert all("no stored photo" in why for why in left.values())
    assert "its thumbnail is not the whole 40x40 crop" in left[added[1]]
    assert "it has no thumbnail" in left[added[2]]
    assert "2 learned examples" in caplog.text and "left out" in caplog.text
    kept = {r["id"]: r["network"] for r in store.examples()}  # nothing a person taught is lost
    assert kept == {added[0]: "colour", added[1]: "old-network", added[2]: "old-network"}


def test_the_reader_refuses_examples_another_network_made():
    from vision.read import learned

    class Classifier:
        identity = "retrained"

        def features(self, crops):
            return np.ones((len(crops), 6), np.float32)

    examples = learned.Examples([learned.Example(np.ones(6, np.float32), "lake", 0)],
                                network="colour")
    assert service._fitting(Classifier(), examples) is None
    mine = learned.Examples([learned.Example(np.ones(6, np.float32), "lake", 0)],
                            network="retrained")
    assert service._fitting(Classifier(), mine) is mine


def test_the_reader_is_given_this_threads_examples(monkeypatch):
    given = []

    class Classifier:
        def set_examples(self, examples):
            given.append(examples)

    class Reader:
        classifier = Classifier()

    monkeypatch.setattr(service, "_build_reader", lambda: Reader())
    marker = object()
    with service.reading_with(marker):
        service.reader()
        service.reader()  # the same examples: not given twice
    service.reader()
    assert given == [marker, None]


# ---------------------------------------------------------------- processes, old stores


LEARNER = textwrap.dedent("""
    import sys, time
    sys.path[:0] = [sys.argv[4], sys.argv[5]]
    from pathlib import Path
    from learning_support import features
    from kingdomino.store import Store
    path, n, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    go = Path(path + ".go")
    while not go.exists():
        time.sleep(0.005)
    store = Store(path)
    machine = {"rules": "kingdomino", "size": 5,
               "cells": [[{"terrain": "empty", "crowns": 0}] * 5 for _ in range(5)]}
    for i in range(n):
        rid = store.add_reading(rules="kingdomino", machine=machine, source=f"{tag}-{i}")
        new = {"rules": "kingdomino", "size": 5,
               "cells": [[{"terrain": "lake", "crowns": 0}] * 5 for _ in range(5)]}
        saved = store.add_correction(rid, new)
        labels = {(r, c): ("lake", 0) for r in range(5) for c in range(5)}
        rows = [(0, c, "lake", 0, f, b"t") for c, f in enumerate(features(3, seed=i))]
        assert len(store.learn(rid, saved["id"], labels, rows)["added"]) == 3
    store.close()
""")


def test_two_processes_learning_into_one_store_lose_nothing(tmp_path):
    path = tmp_path / "shared.sqlite3"
    Store(path).close()
    script = tmp_path / "learner.py"
    script.write_text(LEARNER)
    n = 15
    procs = [subprocess.Popen([sys.executable, str(script), str(path), str(n), tag,
                               str(ROOT / "tests"), str(ROOT)], stderr=subprocess.PIPE, text=True)
             for tag in ("a", "b")]
    (tmp_path / "shared.sqlite3.go").touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    store = Store(path)
    try:
        rows = store.examples()
        assert len(rows) == 2 * n * 3 and len({r["id"] for r in rows}) == len(rows)
        assert {r["source"].split("-")[0] for r in rows} == {"a", "b"}
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        store.close()


# the schema of a store made before the examples (user_version 4)
V4_SCHEMA = """
CREATE TABLE readings (id TEXT PRIMARY KEY, created REAL NOT NULL, source TEXT,
    content_hash TEXT, rules TEXT NOT NULL, bonuses TEXT NOT NULL, machine TEXT, error TEXT,
    player TEXT, claimed INTEGER, batch TEXT, photo BLOB, derived_from TEXT, kingdom INTEGER,
    table_read TEXT);
CREATE TABLE corrections (reading_id TEXT NOT NULL REFERENCES readings (id),
    created REAL NOT NULL, kingdom TEXT NOT NULL, undo_to INTEGER, undo_depth INTEGER);
CREATE TABLE claims (content_hash TEXT NOT NULL, rules TEXT NOT NULL, bonuses TEXT NOT NULL,
    owner TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (content_hash, rules, bonuses));
CREATE TABLE rereadings (reading_id TEXT NOT NULL REFERENCES readings (id),
    created REAL NOT NULL, previous TEXT, previous_error TEXT, corrections_upto INTEGER NOT NULL);
PRAGMA user_version = 4;
"""


def test_a_store_from_before_the_examples_opens_and_learns(tmp_path):
    path = tmp_path / "v4.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(V4_SCHEMA)
    db.execute("INSERT INTO readings (id, created, source, rules, bonuses, machine, photo)"
               " VALUES ('old1', 1.0, 'a.jpg', 'kingdomino', '[]', ?, ?)",
               (json.dumps(machine()), photo()))
    db.execute("INSERT INTO corrections VALUES ('old1', 2.0, ?, 0, 1)",
               (json.dumps(changed(0, 0, "lake")),))
    db.commit()
    db.close()
    store = Store(path)
    try:
        assert store.get("old1")["corrected"] == changed(0, 0, "lake")
        assert store.examples() == [] and store.examples_version() == (0, 0)
        got = correct(store, "old1", changed(0, 0, "lake"))  # confirmed as it stands
        assert got["kind"] == "confirmation" and got["added"] == 25
    finally:
        store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == store_module.SCHEMA_VERSION
    db.close()


# the examples table of a store made before the examples said which network made them
# (user_version 5)
V5_EXAMPLES = """
CREATE TABLE examples (id INTEGER PRIMARY KEY AUTOINCREMENT,
    reading_id TEXT NOT NULL REFERENCES readings (id), correction_id INTEGER, kind TEXT NOT NULL,
    row INTEGER NOT NULL, col INTEGER NOT NULL, terrain TEXT NOT NULL, crowns INTEGER NOT NULL,
    feature BLOB NOT NULL, thumbnail BLOB, scope TEXT, created REAL NOT NULL);
PRAGMA user_version = 5;
"""


def test_a_store_from_before_the_network_column_opens_and_its_examples_are_remade(tmp_path):
    path = tmp_path / "v5.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(V4_SCHEMA + V5_EXAMPLES)
    db.execute("INSERT INTO readings (id, created, source, rules, bonuses, machine, photo)"
               " VALUES ('old1', 1.0, 'a.jpg', 'kingdomino', '[]', ?, ?)",
               (json.dumps(machine()), photo()))
    db.execute("INSERT INTO corrections VALUES ('old1', 2.0, ?, 0, 1)",
               (json.dumps(changed(1, 2, "mine", 1)),))
    db.execute("INSERT INTO examples (reading_id, correction_id, kind, row, col, terrain, crowns,"
               " feature, thumbnail, scope, created) VALUES ('old1', 1, 'correction', 1, 2,"
               " 'mine', 1, ?, NULL, NULL, 3.0)", (features(1)[0],))
    db.commit()
    db.close()
    store = Store(path)
    try:
        [row] = store.examples(features=True)
        assert row["network"] is None and row["feature"] == features(1)[0]
        got = learning.examples_of(store)
        [want] = cut_by(ColourClassifier(), store, "old1", [(1, 2, "mine", 1)])
        assert got.ids == [row["id"]] and got.network == "colour"
        assert np.allclose(got.features[0], want, atol=1e-6)
        [row] = store.examples(features=True)
        assert row["network"] == "colour" and row["feature"] == want.tobytes()
    finally:
        store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == store_module.SCHEMA_VERSION
    db.close()


# ---------------------------------------------------------------- the command line


def test_learned_lists_and_forgets(tmp_path, run_cli):
    path = tmp_path / "s.sqlite3"
    s = Store(path)
    rid = reading(s)
    correct(s, rid, changed(0, 0, "lake", 1))
    correct(s, rid, changed(0, 0, "lake", 1))  # confirmed: 24 more
    s.close()
    res = run_cli("learned", "--store", path, "--json")
    lines = [json.loads(line) for line in res.out.splitlines()]
    assert res.code == 0 and len(lines) == 25
    first = lines[-1]
    assert first["terrain"] == "lake" and first["crowns"] == 1 and first["reading_id"] == rid
    assert first["square"] == [0, 0] and first["kind"] == "correction"
    res = run_cli("learned", "--store", path)
    assert res.code == 0 and "25 learned square(s)" in res.out and f"reading {rid}" in res.out
    assert run_cli("learned", "--store", path, "--forget", first["id"]).code == 0
    res = run_cli("learned", "--store", path, "--forget", first["id"])
    assert res.code == 1 and "no learned square with id" in res.err
    res = run_cli("learned", "--store", path, "--forget", "x")
    assert res.code == 2
    res = run_cli("learned", "--store", path, "--forget", "3", "--forget-all")
    assert res.code == 2
    res = run_cli("learned", "--store", path, "--forget-all", "--json")
    assert res.code == 0 and json.loads(res.out) == {"removed": 24}


def test_learned_on_a_file_that_is_not_a_store_is_a_usage_error(tmp_path, run_cli):
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    res = run_cli("learned", "--store", bad)
    assert res.code == 2 and "cannot open the store" in res.err and "Traceback" not in res.err


class LearningReader:
    """A reader whose classifier takes examples, as the real one's does, and whose readings
    say how many they were read with."""

    def __init__(self, cells):
        self.cells = cells
        self.classifier = self

    examples = None

    def set_examples(self, examples):
        self.examples = examples

    def read(self, image, size=None):
        reader = self

        class Reading:
            def to_json(self):
                out = {"size": 5, "cells": reader.cells, "review": [], "warnings": [],
                       "corners": CORNERS, "rows": 5, "cols": 5}
                if reader.examples is not None:
                    out["learned"] = len(reader.examples)
                return out

        return Reading()


def test_score_with_a_store_reads_with_its_examples_and_keeps_the_reading(tmp_path, run_cli,
                                                                          monkeypatch):
    reader = LearningReader([[{**c, "confidence": 0.9} for c in row] for row in cells()])
    monkeypatch.setattr(service, "reader", lambda: reader)
    path = tmp_path / "s.sqlite3"
    img = tmp_path / "k.jpg"
    img.write_bytes(photo())
    res = run_cli("score", img, "--store", path, "--json")
    obj = json.loads(res.out)
    assert res.code == 0 and "learned" not in obj and obj["id"]
    s = Store(path)
    rec = s.get(obj["id"])
    assert rec["has_photo"] and rec["source"] == str(img) and rec["machine"]["photo_size"]
    correct(s, obj["id"], changed(0, 0, "lake"))
    s.close()
    res = run_cli("score", img, "--store", path, "--json")
    assert json.loads(res.out)["learned"] == 1
    res = run_cli("score", img, "--store", path)
    assert "Read with what 1 corrected square taught" in res.out and "stored as" in res.out
    res = run_cli("score", img, "--store", path, "--json", "--no-learning")
    assert "learned" not in json.loads(res.out)
    res = run_cli("score", img, "--json")  # no store: nothing to learn from, nothing kept
    assert "learned" not in json.loads(res.out) and "id" not in json.loads(res.out)


def test_serve_takes_no_learning(monkeypatch, run_cli):
    import webapp

    got = {}
    monkeypatch.setattr(webapp, "serve", lambda **kw: got.update(kw) or 0)
    assert run_cli("serve", "--no-learning").code == 0 and got["learning"] is False
    assert run_cli("serve").code == 0 and got["learning"] is True


def test_the_table_says_what_a_reading_was_read_with():
    from kingdomino.report import format_result

    obj = service.score_grid(kingdom())
    assert "corrected square" not in format_result(obj)
    obj["learned"] = 14
    assert "Read with what 14 corrected squares taught" in format_result(obj)
    assert "14" in format_result(obj, locale="ko")


def test_the_colour_classifier_stands_in_for_the_real_one():
    f = ColourClassifier().features(np.zeros((2, 48, 48, 3), np.uint8))
    assert f.shape == (2, 6) and np.allclose(np.linalg.norm(f, axis=1), 1)
