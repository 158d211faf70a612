"""``kingdomino batch``: inputs, errors, resume after interruption, zip safety, store, CSV."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import batch_fakes as fk
from kingdomino import batch, cli
from kingdomino.store import Store

ROOT = Path(__file__).resolve().parents[2]


def run_batch(argv, score_fn=fk.fake_score):
    args = cli.build_parser().parse_args(["batch", *map(str, argv)])
    args.rules = args.rules or "kingdomino"
    return batch.run(args, score_fn=score_fn)


def read_csv(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def without_ids(rows):
    return [{k: v for k, v in r.items() if k not in ("reading_id", "link")} for r in rows]


@pytest.fixture
def calls(tmp_path, monkeypatch):
    path = tmp_path / "calls.txt"
    monkeypatch.setenv("KD_FAKE_CALLS", str(path))
    monkeypatch.delenv("KD_FAKE_STOP_AFTER", raising=False)
    monkeypatch.delenv("KD_FAKE_KILL_AFTER", raising=False)
    return path


def make_photos(folder: Path, n: int) -> dict[str, int]:
    folder.mkdir(parents=True, exist_ok=True)
    totals = {}
    for i in range(n):
        name = f"p{i:02d}.png"
        (folder / name).write_bytes(fk.scored(10 + 3 * i, largest=i % 4, crowns=i % 3))
        totals[name] = 10 + 3 * i
    return totals


def test_results_csv_has_contract_columns_and_totals(tmp_path, calls):
    totals = make_photos(tmp_path / "in", 5)
    (tmp_path / "in" / "sub").mkdir()
    (tmp_path / "in" / "sub" / "q.jpg").write_bytes(fk.scored(7, review=[(1, 2), (3, 4)]))
    out = tmp_path / "results.csv"
    code = run_batch([tmp_path / "in", "--out", out, "--db", tmp_path / "db.sqlite3", "--jobs", "1"])
    assert code == 0
    rows = read_csv(out)
    assert list(rows[0])[:3] == ["source", "total", "status"]
    assert "largest_region" in rows[0] and "crowns" in rows[0]
    # the photo with squares to check comes first, with its squares and a permalink
    assert rows[0]["source"].endswith("q.jpg") and rows[0]["status"] == "review"
    assert json.loads(rows[0]["review"]) == [[1, 2], [3, 4]]
    assert rows[0]["link"] == f"/r/{rows[0]['reading_id']}"
    got = {Path(r["source"]).name: int(r["total"]) for r in rows[1:]}
    assert got == totals
    assert [Path(r["source"]).name for r in rows[1:]] == sorted(totals)  # deterministic order
    assert all(r["status"] == "ok" for r in rows[1:])
    assert fk.calls(calls) == 6
    store = Store(tmp_path / "db.sqlite3")
    reading = store.get(rows[0]["reading_id"])
    assert reading["batch"] and reading["content_hash"] == rows[0]["content_hash"]
    assert reading["has_photo"]  # a small JPEG copy kept for the review page /r/<id>
    assert store.photo(reading["id"])[:3] == b"\xff\xd8\xff"
    assert reading["machine"]["photo_size"] == [16, 12]
    assert not store.get(rows[1]["reading_id"])["has_photo"]
    store.close()


def test_bad_inputs_are_error_rows_and_exit_1(tmp_path, calls):
    folder = tmp_path / "in"
    make_photos(folder, 2)
    (folder / "corrupt.jpg").write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(200))
    (folder / "notes.jpg").write_text("these are not the photos you are looking for")
    (folder / "empty.png").write_bytes(b"")
    (folder / "table.png").write_bytes(fk.PNG + b"a photo of an empty table")
    (folder / "README.txt").write_text("skipped: not a photo by name or content")
    (folder / ".hidden.png").write_bytes(fk.scored(99))
    out = tmp_path / "r.csv"
    code = run_batch([folder, "--out", out, "--db", tmp_path / "db", "--jobs", "2"])
    assert code == 1
    rows = read_csv(out)
    by_name = {Path(r["source"]).name: r for r in rows}
    assert set(by_name) == {"p00.png", "p01.png", "corrupt.jpg", "notes.jpg", "empty.png", "table.png"}
    for name in ("corrupt.jpg", "notes.jpg", "empty.png", "table.png"):
        assert by_name[name]["status"].startswith("error: "), name
        assert by_name[name]["total"] == ""
    assert "not a photo" in by_name["notes.jpg"]["status"]
    assert "empty" in by_name["empty.png"]["status"]
    assert "no kingdom" in by_name["table.png"]["status"]
    assert [r["status"].startswith("error") for r in rows] == [True] * 4 + [False] * 2
    assert by_name["p01.png"]["status"] == "ok"


def test_usage_errors_exit_2(tmp_path, capsys):
    assert run_batch([tmp_path / "nope", "--out", tmp_path / "r.csv", "--db", tmp_path / "db"]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    make_photos(tmp_path / "in", 1)
    assert run_batch([tmp_path / "in", "--out", tmp_path / "no" / "r.csv"]) == 2
    (tmp_path / "m.csv").write_text("file,name\na,b\n")
    code = run_batch([tmp_path / "in", "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                      "--manifest", tmp_path / "m.csv"])
    assert code == 2
    assert "photo" in capsys.readouterr().err


def _reference(tmp_path, folder, jobs="1"):
    out = tmp_path / "reference.csv"
    assert run_batch([folder, "--out", out, "--db", tmp_path / "ref.sqlite3", "--jobs", jobs]) == 0
    return read_csv(out)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_interrupted_batch_resumes_without_rereading(tmp_path, calls, monkeypatch, jobs):
    folder = tmp_path / "in"
    make_photos(folder, 8)
    reference = _reference(tmp_path, folder)
    calls.unlink()
    out, db = tmp_path / "r.csv", tmp_path / "db.sqlite3"
    monkeypatch.setenv("KD_FAKE_STOP_AFTER", "3")
    assert run_batch([folder, "--out", out, "--db", db, "--jobs", jobs]) == 130
    assert not out.exists()
    store = Store(db)
    saved = store._db.execute("SELECT COUNT(*) FROM readings").fetchone()[0]
    store.close()
    # one worker: exactly the 3 photos read before; two: results still on their way may be lost
    assert (saved == 3) if jobs == "1" else (1 <= saved < 8)
    before = fk.calls(calls)
    monkeypatch.delenv("KD_FAKE_STOP_AFTER")
    assert run_batch([folder, "--out", out, "--db", db, "--jobs", jobs]) == 0
    assert fk.calls(calls) - before == 8 - saved  # finished photos were not read again
    final = read_csv(out)
    assert without_ids(final) == without_ids(reference)
    # and once more: nothing read, the very same file
    text = out.read_bytes()
    assert run_batch([folder, "--out", out, "--db", db, "--jobs", jobs]) == 0
    assert fk.calls(calls) - before == 8 - saved
    assert out.read_bytes() == text


def test_killed_process_loses_nothing_done(tmp_path, calls):
    folder = tmp_path / "in"
    make_photos(folder, 6)
    reference = _reference(tmp_path, folder)
    calls.unlink()
    out, db = tmp_path / "r.csv", tmp_path / "db.sqlite3"
    script = (
        "import sys, batch_fakes as fk\n"
        "from kingdomino import batch, cli\n"
        "args = cli.build_parser().parse_args(['batch', *sys.argv[1:]])\n"
        "args.rules = args.rules or 'kingdomino'\n"
        "sys.exit(batch.run(args, score_fn=fk.fake_score))\n"
    )
    env = dict(os.environ, KD_FAKE_KILL_AFTER="4",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(Path(__file__).parent)]))
    proc = subprocess.run([sys.executable, "-c", script, str(folder), "--out", str(out),
                           "--db", str(db), "--jobs", "1"], env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == -9  # SIGKILL, mid-batch
    assert fk.calls(calls) == 5
    assert run_batch([folder, "--out", out, "--db", db, "--jobs", "1"]) == 0
    assert fk.calls(calls) == 5 + 2  # only the killed photo and the one never started
    assert without_ids(read_csv(out)) == without_ids(reference)


def test_worker_crash_marks_only_that_photo(tmp_path, calls):
    folder = tmp_path / "in"
    make_photos(folder, 5)
    (folder / "p02b.png").write_bytes(fk.photo({"crash": True}))
    out = tmp_path / "r.csv"
    assert run_batch([folder, "--out", out, "--db", tmp_path / "db", "--jobs", "2"]) == 1
    rows = read_csv(out)
    assert Path(rows[0]["source"]).name == "p02b.png"
    assert "crashed" in rows[0]["status"]
    assert [r["status"] for r in rows[1:]] == ["ok"] * 5


def test_same_photo_twice_is_read_once(tmp_path, calls):
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a.png", "b.png", "c.png"):
        (folder / name).write_bytes(fk.scored(42))
    (folder / "d.png").write_bytes(fk.scored(43))
    out = tmp_path / "r.csv"
    assert run_batch([folder, "--out", out, "--db", tmp_path / "db", "--jobs", "2"]) == 0
    assert fk.calls(calls) == 2
    rows = read_csv(out)
    assert len(rows) == 4 and len({r["reading_id"] for r in rows}) == 2


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_zip_input_and_hostile_member_names(tmp_path, calls, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    archive = _zip(tmp_path / "photos.zip", {
        "round1/a.png": fk.scored(11),
        "../../evil.png": fk.scored(12),
        "/abs/evil2.png": fk.scored(13),
        "round1/../../../evil3.jpg": fk.scored(14),
        "__MACOSX/round1/._a.png": b"junk",
        "notes.txt": b"not a photo",
        "big.png": fk.PNG + b"0" * 5000,
    })
    monkeypatch.setattr(batch, "MAX_PHOTO_BYTES", 4000)
    out = tmp_path / "r.csv"
    code = run_batch([archive, "--out", out, "--db", tmp_path / "db", "--jobs", "1"])
    assert code == 1  # big.png is over the size cap
    rows = read_csv(out)
    by_member = {r["source"].split("!", 1)[1]: r for r in rows}
    assert set(by_member) == {"round1/a.png", "../../evil.png", "/abs/evil2.png",
                              "round1/../../../evil3.jpg", "big.png"}
    assert by_member["../../evil.png"]["total"] == "12"
    assert by_member["big.png"]["status"].startswith("error: ") and "MB" in by_member["big.png"]["status"]
    assert all(r["source"].startswith(str(archive) + "!") for r in rows)
    # nothing was written next to the zip, in the working folder or above it
    names = {p.name for p in tmp_path.iterdir()} - {"db-wal", "db-shm"}
    assert names == {"photos.zip", "work", "r.csv", "db", "calls.txt"}
    assert list(work.iterdir()) == []
    assert not (tmp_path.parent / "evil.png").exists() and not Path("/abs/evil2.png").exists()


def test_zip_bombs_and_broken_zips_are_refused(tmp_path, calls, monkeypatch):
    many = _zip(tmp_path / "many.zip", {f"{i}.png": fk.scored(i) for i in range(5)})
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 this is not really a zip")
    monkeypatch.setattr(batch, "ZIP_MAX_MEMBERS", 4)
    out = tmp_path / "r.csv"
    assert run_batch([many, broken, "--out", out, "--db", tmp_path / "db"]) == 1
    rows = {r["source"]: r["status"] for r in read_csv(out)}
    assert "more than the 4" in rows[str(many)]
    assert "not a readable zip" in rows[str(broken)]
    assert fk.calls(calls) == 0


def test_zip_member_that_lies_about_its_size_is_capped(tmp_path, monkeypatch):
    # a deflated member whose real size is far above the cap: read stops at cap + 1 bytes
    archive = _zip(tmp_path / "bomb.zip", {"bomb.png": fk.PNG + b"\0" * 3_000_000})
    monkeypatch.setattr(batch, "MAX_PHOTO_BYTES", 10_000)
    coll = batch.collect([archive])
    coll.items[0].error = None  # pretend the header said it was small
    with pytest.raises(batch._ItemError, match="larger than"):
        batch.read_item(coll.items[0], {})
    coll.close()


def test_manifest_standings_written(tmp_path, calls, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    # round 1 at table A: ann 30, bob 30 (bob wins on the larger region), cat 12
    (folder / "r1-ann.png").write_bytes(fk.scored(30, largest=5, crowns=4))
    (folder / "r1-bob.png").write_bytes(fk.scored(30, largest=6, crowns=1))
    (folder / "r1-cat.png").write_bytes(fk.scored(12, largest=9, crowns=9))
    # round 2: ann 20, bob 18, cat unreadable
    (folder / "r2-ann.png").write_bytes(fk.scored(20, largest=3, crowns=2))
    (folder / "r2-bob.png").write_bytes(fk.scored(18, largest=3, crowns=2))
    (folder / "r2-cat.png").write_bytes(fk.PNG + b"nothing")
    (tmp_path / "m.csv").write_text(
        "photo,player,table,round\n"
        "r1-ann.png,ann,A,1\nr1-bob.png,bob,A,1\nr1-cat.png,cat,A,1\n"
        "in/r2-ann.png,ann,A,2\nr2-bob.png,bob,A,2\nr2-cat.png,cat,A,2\nr3-ann.png,ann,A,3\n")
    out = tmp_path / "res.csv"
    code = run_batch([folder, "--out", out, "--db", tmp_path / "db", "--manifest", tmp_path / "m.csv"])
    assert code == 1  # one unreadable photo, one listed photo missing
    rows = read_csv(out)
    assert {r["source"]: r["player"] for r in rows if r["player"]}[str(folder / "r1-bob.png")] == "bob"
    missing = [r for r in rows if r["source"] == "r3-ann.png"]
    assert missing and missing[0]["status"].startswith("error: listed in the manifest")
    st = read_csv(tmp_path / "res-standings.csv")
    game1 = [(r["place"], r["player"]) for r in st if r["scope"] == "game" and r["round"] == "1"]
    assert game1 == [("1", "bob"), ("2", "ann"), ("3", "cat")]
    overall = {r["player"]: r for r in st if r["scope"] == "overall"}
    assert overall["ann"]["total"] == "50" and overall["ann"]["missing"] == "1"
    assert overall["bob"]["total"] == "48" and overall["cat"]["total"] == "12"
    assert [overall[p]["place"] for p in ("ann", "bob", "cat")] == ["1", "2", "3"]
    assert "ann" in capsys.readouterr().out


def test_json_lines_output(tmp_path, calls, capsys):
    make_photos(tmp_path / "in", 2)
    (tmp_path / "in" / "bad.png").write_bytes(fk.PNG)
    assert run_batch([tmp_path / "in", "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                      "--json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 3
    assert lines[0]["source"].endswith("bad.png") and "no kingdom" in lines[0]["error"]
    assert lines[1]["score"]["total"] == 10 and lines[1]["status"] == "ok"


def test_cached_errors_kept_unless_retry(tmp_path, calls):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "bad.png").write_bytes(fk.PNG + b"no kingdom here")
    args = [folder, "--out", tmp_path / "r.csv", "--db", tmp_path / "db"]
    assert run_batch(args) == 1 and fk.calls(calls) == 1
    assert run_batch(args) == 1 and fk.calls(calls) == 1
    assert run_batch([*args, "--retry-errors"]) == 1 and fk.calls(calls) == 2


def _engine_ready() -> bool:
    try:
        import engine

        return hasattr(engine, "score") and hasattr(engine.Kingdom, "from_json")
    except Exception:
        return False


needs_engine = pytest.mark.skipif(not _engine_ready(), reason="the scoring engine (engine.score) is not there yet")


def _kingdom(rows: list[str]) -> dict:
    """Kingdom JSON from rows like 'F1 F0 L0 ...' (letter terrain, digit crowns)."""
    names = {"F": "field", "W": "forest", "L": "lake", "G": "grassland", "S": "swamp",
             "M": "mine", "C": "castle", "E": "empty"}
    cells = [[{"terrain": names[t[0]], "crowns": int(t[1])} for t in row.split()] for row in rows]
    return {"rules": "kingdomino", "size": len(cells), "cells": cells}


# Hand-worked kingdoms (region squares x crowns):
K_A = _kingdom([  # field 5 squares x 2 crowns = 10; lake 4 x 1 = 4; forest 0 crowns; total 14
    "F1 F0 F0 F0 F1",
    "L1 W0 W0 W0 W0",
    "L0 W0 C0 W0 W0",
    "L0 W0 W0 W0 W0",
    "L0 W0 W0 W0 W0",
])
K_B = _kingdom([  # mine 2 x 3 = 6; swamp 3 x 2 = 6; field 1 x 1 = 1; rest no crowns; total 13
    "M3 M0 S1 S1 S0",
    "F1 G0 G0 G0 G0",
    "L0 L0 C0 G0 G0",
    "E0 E0 E0 E0 E0",
    "E0 E0 E0 E0 E0",
])


@needs_engine
def test_known_kingdoms_real_engine_totals_and_correction(tmp_path, calls):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.png").write_bytes(fk.photo({"kingdom": K_A}))
    (folder / "b.png").write_bytes(fk.photo({"kingdom": K_B, "review": [[3, 0]]}))
    out, db = tmp_path / "r.csv", tmp_path / "db"
    assert run_batch([folder, "--out", out, "--db", db]) == 0
    rows = {Path(r["source"]).name: r for r in read_csv(out)}
    assert rows["a.png"]["total"] == "14" and rows["a.png"]["status"] == "ok"
    assert rows["b.png"]["total"] == "13" and rows["b.png"]["status"] == "review"
    # a person corrects b in the web app: the mine at (0,1) had 1 crown -> mine 2 x 4 = 8
    fixed = json.loads(json.dumps(K_B))
    fixed["cells"][0][1]["crowns"] = 1
    store = Store(db)
    store.add_correction(rows["b.png"]["reading_id"], fixed)
    store.close()
    n = fk.calls(calls)
    assert run_batch([folder, "--out", out, "--db", db]) == 0
    assert fk.calls(calls) == n
    rows = {Path(r["source"]).name: r for r in read_csv(out)}
    assert rows["b.png"]["total"] == "15" and rows["b.png"]["status"] == "ok"
    assert rows["b.png"]["corrected"] == "yes"
    # bonuses apply to all photos (castle in the centre of both: +10 each), the photos are not
    # read again for other bonuses, and the person's correction of b still counts
    out2 = tmp_path / "r2.csv"
    assert run_batch([folder, "--out", out2, "--db", db, "--bonus", "middle-kingdom"]) == 0
    assert fk.calls(calls) == n
    rows = {Path(r["source"]).name: r for r in read_csv(out2)}
    assert rows["a.png"]["total"] == "24" and rows["b.png"]["total"] == "25"
    # harmony (+5) needs a full frame: only a
    assert run_batch([folder, "--out", out2, "--db", db, "--bonus", "harmony"]) == 0
    rows = {Path(r["source"]).name: r for r in read_csv(out2)}
    assert rows["a.png"]["total"] == "19" and rows["b.png"]["total"] == "15"


@pytest.mark.slow
def test_real_pipeline_generated_photos(tmp_path):
    """Generated photos of known kingdoms through the real reader, two worker processes."""
    if not (ROOT / "vision" / "lab" / "synth.py").exists():
        pytest.skip("needs vision/synth.py (the scene generator), not written yet")
    if not (ROOT / "models" / "squares.onnx").exists():
        pytest.skip("needs models/squares.onnx (the trained reader), not trained yet")
    import cv2
    import numpy as np

    from kingdomino import service
    from vision.lab import render, synth

    rng = np.random.default_rng(7)
    folder = tmp_path / "in"
    folder.mkdir()
    truth, manifest = {}, ["photo,player,table,round"]
    for i in range(4):
        board = synth.rendered_board(rng, 5, cell=160)
        scene, _ = synth.make_scene(board["image"], rng, width=1600, board_mask=board["mask"])
        ok, jpg = cv2.imencode(".jpg", scene, [cv2.IMWRITE_JPEG_QUALITY, 92])
        assert ok
        name = f"k{i}.jpg"
        (folder / name).write_bytes(jpg.tobytes())
        kingdom = render.kingdom_json(board["terrain"], board["crowns"])
        truth[name] = service.score_grid(kingdom)["score"]["total"]
        manifest.append(f"{name},player{i % 2},A,{i // 2 + 1}")
    (tmp_path / "m.csv").write_text("\n".join(manifest) + "\n")
    out = tmp_path / "r.csv"
    code = run_batch([folder, "--out", out, "--db", tmp_path / "db", "--jobs", "2",
                      "--manifest", tmp_path / "m.csv"], score_fn=batch.score_photo_bytes)
    rows = read_csv(out)
    by_name = {Path(r["source"]).name: r for r in rows}
    assert set(by_name) == set(truth)
    assert code == (1 if any(r["status"].startswith("error") for r in rows) else 0)
    for name, row in by_name.items():
        try:
            direct = service.score_photo(str(folder / name))
        except ValueError as exc:  # the reader cannot read it: the batch says so too
            assert row["status"] == f"error: {exc}"
            continue
        # the batch's workers give what `kingdomino score` gives for the same photo
        assert row["total"] == str(direct["score"]["total"])
        assert row["status"] == ("review" if direct["review"] else "ok")
        if row["status"] == "ok":  # nothing flagged: the total must be the kingdom's
            assert int(row["total"]) == truth[name], name
    looks = [r["status"] != "ok" for r in rows]
    assert looks == sorted(looks, reverse=True)  # photos needing a look first
    overall = {r["player"]: r for r in read_csv(tmp_path / "r-standings.csv") if r["scope"] == "overall"}
    for p in ("player0", "player1"):
        mine = [by_name[n]["total"] for n in truth if by_name[n]["player"] == p]
        assert int(overall[p]["total"]) == sum(int(t) for t in mine if t)


def test_ambiguous_manifest_stops_before_reading(tmp_path, calls, capsys):
    for sub in ("r1", "r2"):
        (tmp_path / "in" / sub).mkdir(parents=True)
        (tmp_path / "in" / sub / "ann.png").write_bytes(fk.scored(5, crowns=len(sub)))
    (tmp_path / "m.csv").write_text("photo,player\nann.png,Ann\n")
    code = run_batch([tmp_path / "in", "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                      "--manifest", tmp_path / "m.csv"])
    assert code == 2 and fk.calls(calls) == 0
    assert "matches several photos" in capsys.readouterr().err
    # the full path (or a zip member's name) makes it unique
    (tmp_path / "m.csv").write_text("photo,player\nr2/ann.png,Ann\n")
    assert run_batch([tmp_path / "in", "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                      "--manifest", tmp_path / "m.csv"]) == 0
    rows = read_csv(tmp_path / "r.csv")
    assert [(Path(r["source"]).parent.name, r["player"]) for r in rows] == [("r1", ""), ("r2", "Ann")]


def test_cli_refuses_unknown_rules_and_bonuses(tmp_path):
    make_photos(tmp_path / "in", 1)
    for extra in (["--rules", "chess"], ["--bonus", "free-lunch"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(["batch", str(tmp_path / "in"), "--out", str(tmp_path / "r.csv"),
                      "--db", str(tmp_path / "db"), *extra])
        assert exc.value.code == 2
    assert not (tmp_path / "r.csv").exists()
