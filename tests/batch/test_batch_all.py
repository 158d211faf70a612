"""``kingdomino batch --all``: whole-table photos, one row per kingdom (issue 17, batch part).

The fake whole-table reader (``batch_fakes.fake_score_all``) returns the kingdoms a test puts in
a photo; the totals below are worked out by hand and scored by the real engine.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import batch_fakes as fk
from batch_helpers import (kingdom, read_csv, readings_and_claims, run_batch,
                           two_batches_at_once, without_ids)
from kingdomino.store import Store


def run_all(argv, score_fn=fk.fake_score_all, extra=("--all",)):
    return run_batch(argv, score_fn, extra)


def by_kingdom(rows, name: str) -> dict[int, dict]:
    return {int(r["kingdom"]): r for r in rows
            if Path(r["source"]).name == name and r["kingdom"] != ""}


# Hand-worked (region squares x crowns); tie-breaks: largest region, then crowns.
ANN = kingdom([  # field 4 x 2 = 8; swamp 6 x 0; total 8, largest region 6, crowns 2
    "F1 F1 S0 S0 S0",
    "F0 F0 S0 S0 S0",
    "E0 E0 C0 E0 E0",
    "E0 E0 E0 E0 E0",
    "E0 E0 E0 E0 E0",
])
BOB = kingdom([  # mine 4 x 2 = 8; grassland 7 x 0; total 8, largest region 7, crowns 2
    "M2 M0 G0 G0 G0",
    "M0 M0 G0 G0 G0",
    "E0 E0 C0 G0 E0",
    "E0 E0 E0 E0 E0",
    "E0 E0 E0 E0 E0",
])
CAT = kingdom([  # lake 3 x 3 = 9; total 9, largest region 3, crowns 3
    "L1 L1 L1 E0 E0",
    "E0 E0 E0 E0 E0",
    "E0 E0 C0 E0 E0",
    "E0 E0 E0 E0 E0",
    "E0 E0 E0 E0 E0",
])
DAN = kingdom([  # forest 2 x 1 = 2; total 2
    "W1 W0 E0 E0 E0",
    "E0 E0 E0 E0 E0",
    "E0 E0 C0 E0 E0",
    "E0 E0 E0 E0 E0",
    "E0 E0 E0 E0 E0",
])


def table_folder(folder: Path) -> Path:
    """table1.png: Ann, Bob, Cat (kingdoms 0, 1, 2); solo.png: Dan's kingdom alone."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "table1.png").write_bytes(fk.table({"kingdom": ANN}, {"kingdom": BOB},
                                                 {"kingdom": CAT}))
    (folder / "solo.png").write_bytes(fk.photo({"kingdom": DAN}))
    return folder


def test_one_row_per_kingdom_with_its_number_corners_and_reading(tmp_path, calls):
    folder = table_folder(tmp_path / "in")
    out, db = tmp_path / "r.csv", tmp_path / "db"
    assert run_all([folder, "--out", out, "--db", db, "--jobs", "1"]) == 0
    assert fk.calls(calls) == 2  # one read per photo, however many kingdoms it holds
    rows = read_csv(out)
    assert list(rows[0])[:4] == ["source", "total", "status", "kingdom"]
    assert "reason" in rows[0] and "corners" in rows[0]
    table = by_kingdom(rows, "table1.png")
    assert {k: int(r["total"]) for k, r in table.items()} == {0: 8, 1: 8, 2: 9}
    assert {k: (r["largest_region"], r["crowns"]) for k, r in table.items()} == {
        0: ("6", "2"), 1: ("7", "2"), 2: ("3", "3")}
    assert by_kingdom(rows, "solo.png")[0]["total"] == "2"
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    assert json.loads(table[2]["corners"]) == fk.corners_of(2)
    # every kingdom is its own reading (its own /r/<id>), keeping its number in the photo
    ids = {r["reading_id"] for r in rows}
    assert len(ids) == 4 and all(r["link"] == f"/r/{r['reading_id']}" for r in rows)
    store = Store(db)
    for k, row in table.items():
        reading = store.get(row["reading_id"])
        assert reading["kingdom"] == k and reading["machine"]["kingdom"] == k
        assert reading["content_hash"] == row["content_hash"] and reading["batch"]
    store.close()


def test_no_kingdom_in_a_photo_is_one_error_row(tmp_path, calls):
    folder = table_folder(tmp_path / "in")
    (folder / "lid.png").write_bytes(fk.table())  # read, but no kingdom in it
    (folder / "blank.png").write_bytes(fk.TINY_PNG)  # the reader finds nothing at all
    out = tmp_path / "r.csv"
    assert run_all([folder, "--out", out, "--db", tmp_path / "db", "--jobs", "2"]) == 1
    rows = read_csv(out)
    errors = [r for r in rows if r["status"].startswith("error")]
    assert sorted(Path(r["source"]).name for r in errors) == ["blank.png", "lid.png"]
    assert rows[:2] == errors  # rows needing a look first
    for r in errors:
        assert "no kingdom" in r["status"] and r["kingdom"] == "" and r["total"] == ""
    assert len(rows) == 2 + 4


def test_cut_kingdom_is_review_with_the_reason(tmp_path, calls):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "edge.png").write_bytes(fk.table({"kingdom": ANN}, {"kingdom": CAT, "cut": True}))
    out, db = tmp_path / "r.csv", tmp_path / "db"
    assert run_all([folder, "--out", out, "--db", db]) == 0  # to review is not an error
    rows = read_csv(out)
    assert [(r["kingdom"], r["status"]) for r in rows] == [("1", "review"), ("0", "ok")]
    assert "cut by the photo's edge" in rows[0]["reason"] and rows[0]["review"] == ""
    assert rows[1]["reason"] == ""
    store = Store(db)
    assert store.get(rows[0]["reading_id"])["has_photo"]  # kept for correcting it at /r/<id>
    # a person completes the cut kingdom in the web app: lake 4 x 3 = 12, and it is checked
    fixed = json.loads(json.dumps(CAT))
    fixed["cells"][0][3] = {"terrain": "lake", "crowns": 0}
    store.add_correction(rows[0]["reading_id"], fixed)
    store.close()
    assert run_all([folder, "--out", out, "--db", db]) == 0
    rows = by_kingdom(read_csv(out), "edge.png")
    assert (rows[1]["total"], rows[1]["status"], rows[1]["corrected"]) == ("12", "ok", "yes")


def test_resume_without_rereading_and_a_correction_is_one_kingdoms(tmp_path, calls, monkeypatch):
    folder = table_folder(tmp_path / "in")
    (folder / "table2.png").write_bytes(fk.table({"kingdom": DAN}, {"kingdom": ANN}))
    reference = tmp_path / "ref.csv"
    assert run_all([folder, "--out", reference, "--db", tmp_path / "ref", "--jobs", "1"]) == 0
    calls.unlink()
    out, db = tmp_path / "r.csv", tmp_path / "db"
    monkeypatch.setenv("KD_FAKE_STOP_AFTER", "1")  # stopped while reading the second photo
    assert run_all([folder, "--out", out, "--db", db, "--jobs", "1"]) == 130
    store = Store(db)
    kept = store._db.execute("SELECT kingdom FROM readings ORDER BY kingdom").fetchall()
    store.close()
    assert [k[0] for k in kept] == [0]  # solo.png (sorted first): its one kingdom, numbered
    monkeypatch.delenv("KD_FAKE_STOP_AFTER")
    assert run_all([folder, "--out", out, "--db", db, "--jobs", "1"]) == 0
    assert fk.calls(calls) == 2 + 2  # the stopped call, then only the two photos left
    assert without_ids(read_csv(out)) == without_ids(read_csv(reference))
    rows = read_csv(out)
    # a person corrects kingdom 1 of table1 (Bob): the mine's 2 crowns were 3 -> 4 x 3 = 12
    bob = by_kingdom(rows, "table1.png")[1]
    fixed = json.loads(json.dumps(BOB))
    fixed["cells"][0][0]["crowns"] = 3
    store = Store(db)
    store.add_correction(bob["reading_id"], fixed)
    store.close()
    n = fk.calls(calls)
    assert run_all([folder, "--out", out, "--db", db, "--jobs", "2"]) == 0
    assert fk.calls(calls) == n  # found in the store: nothing read again
    after = read_csv(out)
    changed = [(a, b) for a, b in zip(rows, after) if a != b]
    assert len(changed) == 1 and len(after) == len(rows)
    before_row, after_row = changed[0]
    assert before_row["reading_id"] == after_row["reading_id"] == bob["reading_id"]
    assert (after_row["total"], after_row["corrected"]) == ("12", "yes")
    # Ann's kingdom on table2 is the same kingdom but another reading: not corrected
    assert by_kingdom(after, "table2.png")[1]["corrected"] == ""


def test_other_bonuses_rescore_every_kingdom_without_reading(tmp_path, calls):
    folder = table_folder(tmp_path / "in")
    db = tmp_path / "db"
    assert run_all([folder, "--out", tmp_path / "r.csv", "--db", db]) == 0
    n = fk.calls(calls)
    out = tmp_path / "mk.csv"
    assert run_all([folder, "--out", out, "--db", db, "--bonus", "middle-kingdom"]) == 0
    assert fk.calls(calls) == n
    rows = read_csv(out)  # every castle is in the centre: +10 each
    assert {k: r["total"] for k, r in by_kingdom(rows, "table1.png").items()} == {
        0: "18", 1: "18", 2: "19"}
    assert by_kingdom(rows, "solo.png")[0]["total"] == "12"


def test_manifest_names_players_by_kingdom_number_and_ranks_each_game(tmp_path, calls, capsys):
    folder = table_folder(tmp_path / "in")
    (folder / "table2.png").write_bytes(fk.table({"kingdom": DAN}, {"kingdom": ANN}))
    (tmp_path / "m.csv").write_text(
        "photo,kingdom,player,table,round\n"
        "table1.png,2,Cat,,\ntable1.png,0,Ann,,\ntable1.png,1,Bob,,\n"
        "table2.png,0,Bob,B,2\ntable2.png,1,Ann,B,2\n"
        "solo.png,,Dan,B,2\n")  # no kingdom number: the photo is that player's kingdom
    out = tmp_path / "r.csv"
    assert run_all([folder, "--out", out, "--db", tmp_path / "db",
                    "--manifest", tmp_path / "m.csv"]) == 0
    rows = read_csv(out)
    assert {k: r["player"] for k, r in by_kingdom(rows, "table1.png").items()} == {
        0: "Ann", 1: "Bob", 2: "Cat"}
    assert by_kingdom(rows, "solo.png")[0]["player"] == "Dan"
    st = read_csv(tmp_path / "r-standings.csv")
    # table1 is one game (no table or round given: the photo is the game); Ann and Bob have
    # 8 each, Bob's largest region (7) beats Ann's (6)
    game1 = [(r["place"], r["player"], r["total"]) for r in st
             if r["scope"] == "game" and r["table"] == "table1.png"]
    assert game1 == [("1", "Cat", "9"), ("2", "Bob", "8"), ("3", "Ann", "8")]
    # table2 with solo.png: round 2 at table B, as the manifest says: Ann 8, Bob 2, Dan 2 (tie:
    # same largest region and crowns, so a shared place)
    game2 = sorted((r["place"], r["shared"], r["player"]) for r in st
                   if r["scope"] == "game" and r["table"] == "B")
    assert game2 == [("1", "", "Ann"), ("2", "yes", "Bob"), ("2", "yes", "Dan")]
    overall = {r["player"]: (r["place"], r["total"], r["games"]) for r in st
               if r["scope"] == "overall"}
    assert overall == {"Ann": ("1", "16", "2"), "Bob": ("2", "10", "2"),
                       "Cat": ("3", "9", "1"), "Dan": ("4", "2", "1")}
    assert "Ann" in capsys.readouterr().out


def test_manifest_kingdom_the_photo_lacks_or_photo_unread(tmp_path, calls):
    folder = table_folder(tmp_path / "in")
    (folder / "lid.png").write_bytes(fk.table())
    (folder / "pair.png").write_bytes(fk.table({"kingdom": DAN}, {"kingdom": CAT}))
    (tmp_path / "m.csv").write_text(
        "photo,kingdom,player\n"
        "table1.png,0,Ann\ntable1.png,3,Eve\n"  # table1 holds kingdoms 0 to 2
        "lid.png,0,Bob\nlid.png,1,Cat\n"  # no kingdom read in lid.png: both without a score
        "pair.png,,Fay\n")  # two kingdoms, no number: which one is Fay's?
    out = tmp_path / "r.csv"
    assert run_all([folder, "--out", out, "--db", tmp_path / "db",
                    "--manifest", tmp_path / "m.csv"]) == 1
    rows = read_csv(out)
    named = {r["player"]: r for r in rows if r["player"]}
    assert "kingdom 3" in named["Eve"]["status"] and "0 to 2" in named["Eve"]["status"]
    for player in ("Bob", "Cat"):
        assert "no kingdom" in named[player]["status"] and named[player]["total"] == ""
    assert (named["Bob"]["kingdom"], named["Cat"]["kingdom"]) == ("0", "1")
    assert "holds 2 kingdoms" in named["Fay"]["status"]
    assert "kingdom number" in named["Fay"]["status"]
    st = read_csv(tmp_path / "r-standings.csv")
    lid = {r["player"]: r["place"] for r in st if r["scope"] == "game" and r["table"] == "lid.png"}
    assert lid == {"Bob": "", "Cat": ""}  # no score: no place


@pytest.mark.parametrize("lines, message", [
    ("t.jpg,0,Ann\nt.jpg,0,Bob\n", "kingdom 0 of photo 't.jpg' is already listed on line 2"),
    ("t.jpg,,Ann\nt.jpg,1,Bob\n", "photo 't.jpg' is already listed on line 2"),
    ("t.jpg,0,Ann\nt.jpg,,Bob\n", "photo 't.jpg' is already listed on line 2"),
    ("t.jpg,-1,Ann\n", "not a kingdom number"),
    ("t.jpg,0,Ann\nu.jpg,1,Ann\nt.jpg,1,Ann\n", "player 'Ann' already has a photo"),
])
def test_manifest_kingdom_lines_that_cannot_be_used(lines, message):
    from kingdomino import standings

    with pytest.raises(standings.ManifestError, match=message):
        standings.read_manifest("photo,kingdom,player\n" + lines, kingdoms=True)
    rows = standings.read_manifest("photo,kingdom,player,round\nt.jpg,1,Ann,\nt.jpg,0,Bob,2\n",
                                   kingdoms=True)
    assert rows == [{"photo": "t.jpg", "player": "Ann", "table": "t.jpg", "round": "",
                     "kingdom": 1},
                    {"photo": "t.jpg", "player": "Bob", "table": "", "round": "2", "kingdom": 0}]


def test_kingdom_numbers_in_a_manifest_need_all(tmp_path, calls, capsys):
    folder = table_folder(tmp_path / "in")
    (tmp_path / "m.csv").write_text("photo,kingdom,player\ntable1.png,0,Ann\n")
    code = run_all([folder, "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                    "--manifest", tmp_path / "m.csv"], score_fn=fk.fake_score, extra=())
    assert code == 2 and fk.calls(calls) == 0
    assert "--all" in capsys.readouterr().err
    (tmp_path / "m.csv").write_text("photo,kingdom,player\ntable1.png,x,Ann\n")
    assert run_all([folder, "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                    "--manifest", tmp_path / "m.csv"]) == 2
    assert "not a kingdom number" in capsys.readouterr().err


def test_json_lines_one_object_per_kingdom(tmp_path, calls, capsys):
    folder = table_folder(tmp_path / "in")
    (folder / "lid.png").write_bytes(fk.table())
    assert run_all([folder, "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                    "--json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 5
    assert lines[0]["source"].endswith("lid.png") and "no kingdom" in lines[0]["error"]
    table = {o["kingdom"]: o for o in lines if o["source"].endswith("table1.png")}
    assert {k: o["score"]["total"] for k, o in table.items()} == {0: 8, 1: 8, 2: 9}
    assert table[1]["corners"] == fk.corners_of(1) and table[1]["status"] == "ok"
    assert table[1]["reading_id"] and table[1]["cells"][0][0]["terrain"] == "mine"


def test_one_kingdom_batch_and_all_batch_keep_their_own_readings(tmp_path, calls):
    folder = table_folder(tmp_path / "in")
    db = tmp_path / "db"
    assert run_all([folder, "--out", tmp_path / "one.csv", "--db", db],
                   score_fn=fk.fake_score, extra=()) == 0
    one = {Path(r["source"]).name: r for r in read_csv(tmp_path / "one.csv")}
    assert one["table1.png"]["total"] == "8" and "kingdom" not in one["table1.png"]
    assert run_all([folder, "--out", tmp_path / "all.csv", "--db", db]) == 0
    assert fk.calls(calls) == 4  # the one-kingdom readings are not taken for whole tables
    assert len(read_csv(tmp_path / "all.csv")) == 4
    assert run_all([folder, "--out", tmp_path / "one2.csv", "--db", db],
                   score_fn=fk.fake_score, extra=()) == 0
    assert fk.calls(calls) == 4  # nor the other way round
    assert read_csv(tmp_path / "one2.csv") == read_csv(tmp_path / "one.csv")


def test_an_old_store_gains_the_kingdom_columns_when_opened(tmp_path, calls):
    db = tmp_path / "old.sqlite3"
    old = sqlite3.connect(db)  # the readings table as stores made before issue 17 had it
    old.execute("CREATE TABLE readings (id TEXT PRIMARY KEY, created REAL NOT NULL, source TEXT,"
                " content_hash TEXT, rules TEXT NOT NULL, bonuses TEXT NOT NULL, machine TEXT,"
                " error TEXT, player TEXT, claimed INTEGER, batch TEXT, photo BLOB)")
    old.execute("INSERT INTO readings (id, created, rules, bonuses, machine) VALUES"
                " ('old1', 1.0, 'kingdomino', '[]', '{\"score\": {\"total\": 3}}')")
    old.commit()
    old.close()
    store = Store(db)
    columns = {r[1] for r in store._db.execute("PRAGMA table_info(readings)")}
    assert {"kingdom", "table_read", "derived_from"} <= columns
    assert store.get("old1")["machine"]["score"]["total"] == 3
    store.close()
    folder = table_folder(tmp_path / "in")
    assert run_all([folder, "--out", tmp_path / "r.csv", "--db", db]) == 0
    assert len(read_csv(tmp_path / "r.csv")) == 4


@pytest.mark.slow
def test_real_table_reader_in_worker_processes(tmp_path):
    """A generated table photo through the real whole-table reader in two worker processes:
    the rows are what ``kingdomino score --all`` gives for the same photo."""
    import cv2

    from kingdomino import table
    from vision.lab.scenes.whole_tables import make_table_scene

    folder = tmp_path / "in"
    folder.mkdir()
    scene = make_table_scene(11, n=2, clutter=False)
    ok, jpg = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    (folder / "game.jpg").write_bytes(jpg.tobytes())
    (folder / "copy.jpg").write_bytes(jpg.tobytes())  # the same bytes: read once
    out = tmp_path / "r.csv"
    code = run_all([folder, "--out", out, "--db", tmp_path / "db", "--jobs", "2"],
                   score_fn=None)
    rows = read_csv(out)
    try:
        direct = table.score_table(jpg.tobytes())
    except ValueError as exc:  # the reader finds no kingdom: the batch says so too
        assert code == 1 and [r["status"] for r in rows] == [f"error: {exc}"] * 2
        return
    assert code == 0
    for name in ("game.jpg", "copy.jpg"):
        got = by_kingdom(rows, name)
        assert sorted(got) == [o["kingdom"] for o in direct]
        for obj in direct:
            row = got[obj["kingdom"]]
            assert int(row["total"]) == obj["score"]["total"]
            assert json.loads(row["corners"]) == [[round(v, 1) for v in p]
                                                  for p in obj["corners"]]
            want = "review" if obj["review"] or obj["cut"] else "ok"
            assert row["status"] == want
    assert by_kingdom(rows, "game.jpg")[0]["reading_id"] == by_kingdom(rows, "copy.jpg")[0][
        "reading_id"]


def test_web_batch_page_refuses_kingdom_numbers_with_a_400(tmp_path):
    """The web page's batch reads one kingdom per photo: a manifest with kingdom numbers is a
    400 that says so, never a 500 later when the results are built."""
    import io
    import re

    pytest.importorskip("flask")
    from webapp import create_app

    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "web.sqlite3"),
                      "INSTANCE_PATH": str(tmp_path / "instance"), "READER": fk.fake_score,
                      "BATCH_JOBS": 1, "BATCH_WAIT": True})
    client = app.test_client()
    html = client.get("/batch/").get_data(as_text=True)
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)
    manifest = b"photo,kingdom,player\ntable1.png,0,Ann\n"
    r = client.post("/batch/", data={"manifest": (io.BytesIO(manifest), "m.csv")},
                    headers={"X-CSRF-Token": csrf, "Accept": "application/json"},
                    content_type="multipart/form-data")
    assert r.status_code == 400 and "--all" in r.get_json()["error"]


def test_a_photo_without_kingdom_is_kept_unless_retry_errors(tmp_path, calls):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "lid.png").write_bytes(fk.table())
    args = [folder, "--out", tmp_path / "r.csv", "--db", tmp_path / "db"]
    assert run_all(args) == 1 and fk.calls(calls) == 1
    assert run_all(args) == 1 and fk.calls(calls) == 1  # the stored error is the row
    assert run_all([*args, "--retry-errors"]) == 1 and fk.calls(calls) == 2
    assert len(read_csv(tmp_path / "r.csv")) == 1


def test_two_all_batches_on_one_store_read_each_table_once(tmp_path, calls, monkeypatch):
    folder = table_folder(tmp_path / "in")
    (folder / "table2.png").write_bytes(fk.table({"kingdom": DAN}, {"kingdom": ANN}))
    db = tmp_path / "db"
    Store(db).close()
    monkeypatch.setenv("KD_FAKE_SLOW", "0.05")
    results = two_batches_at_once(db, folder, fk.fake_score_all, all_kingdoms=True)
    assert fk.calls(calls) == 3  # not 6: every photo read by one batch only
    for name in ("x", "y"):
        got = sorted((Path(r["source"]).name, r["kingdom"], r["total"]) for r in results[name])
        assert got == [("solo.png", 0, 2), ("table1.png", 0, 8), ("table1.png", 1, 8),
                       ("table1.png", 2, 9), ("table2.png", 0, 2), ("table2.png", 1, 8)]
    assert readings_and_claims(db) == (6, 0)
