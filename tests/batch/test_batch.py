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
from batch_helpers import (kingdom, read_csv, readings_and_claims, run_batch, wait_until,
                           two_batches_at_once, without_ids)
from kingdomino import batch, cli
from kingdomino.store import Store

ROOT = Path(__file__).resolve().parents[2]


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
    # the CSV counts rows and columns from 1, as people read; the store keeps 0-based indexes
    assert json.loads(rows[0]["review"]) == [[2, 3], [4, 5]]
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
    assert reading["machine"]["review"] == [[1, 2], [3, 4]]
    assert not store.get(rows[1]["reading_id"])["has_photo"]
    store.close()


def test_bad_inputs_are_error_rows_and_exit_1(tmp_path, calls):
    folder = tmp_path / "in"
    make_photos(folder, 2)
    (folder / "corrupt.jpg").write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(200))
    (folder / "notes.jpg").write_text("these are not the photos you are looking for")
    (folder / "empty.png").write_bytes(b"")
    (folder / "table.png").write_bytes(fk.TINY_PNG)  # a real photo, but no kingdom in it
    (folder / "cut.png").write_bytes(fk.PNG + b"a PNG signature and then nothing of a PNG")
    (folder / "README.txt").write_text("skipped: not a photo by name or content")
    (folder / ".hidden.png").write_bytes(fk.scored(99))
    out = tmp_path / "r.csv"
    code = run_batch([folder, "--out", out, "--db", tmp_path / "db", "--jobs", "2"])
    assert code == 1
    rows = read_csv(out)
    by_name = {Path(r["source"]).name: r for r in rows}
    assert set(by_name) == {"p00.png", "p01.png", "corrupt.jpg", "notes.jpg", "empty.png",
                            "table.png", "cut.png"}
    for name in ("corrupt.jpg", "notes.jpg", "empty.png", "table.png", "cut.png"):
        assert by_name[name]["status"].startswith("error: "), name
        assert by_name[name]["total"] == ""
    assert "not a photo" in by_name["notes.jpg"]["status"]
    assert "empty" in by_name["empty.png"]["status"]
    assert "no kingdom" in by_name["table.png"]["status"]
    assert "damaged" in by_name["cut.png"]["status"]  # vision.photo.files's header check, before any read
    assert [r["status"].startswith("error") for r in rows] == [True] * 5 + [False] * 2
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
    monkeypatch.setattr(batch.limits, "MAX_PHOTO_BYTES", 4000)
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
    monkeypatch.setattr(batch.limits, "ZIP_MAX_MEMBERS", 4)
    out = tmp_path / "r.csv"
    assert run_batch([many, broken, "--out", out, "--db", tmp_path / "db"]) == 1
    rows = {r["source"]: r["status"] for r in read_csv(out)}
    assert "more than the 4" in rows[str(many)]
    assert "not a readable zip" in rows[str(broken)]
    assert fk.calls(calls) == 0


def test_zip_member_that_lies_about_its_size_is_capped(tmp_path, monkeypatch):
    # a deflated member whose real size is far above the cap: read stops at cap + 1 bytes
    archive = _zip(tmp_path / "bomb.zip", {"bomb.png": fk.PNG + b"\0" * 3_000_000})
    monkeypatch.setattr(batch.limits, "MAX_PHOTO_BYTES", 10_000)
    coll = batch.collect([archive])
    coll.items[0].error = None  # pretend the header said it was small
    with pytest.raises(batch.ItemError, match="larger than"):
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
    (folder / "r2-cat.png").write_bytes(fk.TINY_PNG + b"nothing")
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
    (tmp_path / "in" / "bad.png").write_bytes(fk.TINY_PNG)
    assert run_batch([tmp_path / "in", "--out", tmp_path / "r.csv", "--db", tmp_path / "db",
                      "--json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 3
    assert lines[0]["source"].endswith("bad.png") and "no kingdom" in lines[0]["error"]
    assert lines[1]["score"]["total"] == 10 and lines[1]["status"] == "ok"


def test_cached_errors_kept_unless_retry(tmp_path, calls):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "bad.png").write_bytes(fk.TINY_PNG + b"no kingdom here")
    args = [folder, "--out", tmp_path / "r.csv", "--db", tmp_path / "db"]
    assert run_batch(args) == 1 and fk.calls(calls) == 1
    assert run_batch(args) == 1 and fk.calls(calls) == 1
    assert run_batch([*args, "--retry-errors"]) == 1 and fk.calls(calls) == 2


# Hand-worked kingdoms (region squares x crowns):
K_A = kingdom([  # field 5 squares x 2 crowns = 10; lake 4 x 1 = 4; forest 0 crowns; total 14
    "F1 F0 F0 F0 F1",
    "L1 W0 W0 W0 W0",
    "L0 W0 C0 W0 W0",
    "L0 W0 W0 W0 W0",
    "L0 W0 W0 W0 W0",
])
K_B = kingdom([  # mine 2 x 3 = 6; swamp 3 x 2 = 6; field 1 x 1 = 1; rest no crowns; total 13
    "M3 M0 S1 S1 S0",
    "F1 G0 G0 G0 G0",
    "L0 L0 C0 G0 G0",
    "E0 E0 E0 E0 E0",
    "E0 E0 E0 E0 E0",
])


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
    import cv2
    import numpy as np

    from kingdomino import service
    from vision.lab.scenes import render
    from vision.lab.scenes import synth

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


# ---------------------------------------------------------------- hardening (issue 15)

BATCH_SCRIPT = (
    "import sys, batch_fakes as fk\n"
    "from kingdomino import batch, cli\n"
    "args = cli.build_parser().parse_args(['batch', *sys.argv[1:]])\n"
    "args.rules = args.rules or 'kingdomino'\n"
    "sys.exit(batch.run(args, score_fn=fk.fake_score))\n"
)


def _batch_env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(Path(__file__).parent)]))
    env.update(extra)
    return env


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_fifo_and_symlink_loop_are_error_rows_not_a_hang(tmp_path, calls):
    folder = tmp_path / "in"
    make_photos(folder, 2)
    os.mkfifo(folder / "pipe.jpg")  # named like a photo, in a folder
    os.mkfifo(folder / "pipe-no-ext")  # not named like a photo: skipped, never opened
    os.mkfifo(tmp_path / "direct.png")  # given directly
    os.symlink(tmp_path / "loop.jpg", tmp_path / "loop.jpg")
    out = tmp_path / "r.csv"
    # in a subprocess with a time limit: before the fix the batch waited forever on the FIFO
    proc = subprocess.run(
        [sys.executable, "-c", BATCH_SCRIPT, str(folder), str(tmp_path / "direct.png"),
         str(tmp_path / "loop.jpg"), "--out", str(out), "--db", str(tmp_path / "db"),
         "--jobs", "1"], env=_batch_env(), cwd=ROOT, timeout=60, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    rows = {Path(r["source"]).name: r["status"] for r in read_csv(out)}
    assert "FIFO" in rows["pipe.jpg"] and "FIFO" in rows["direct.png"]
    assert "symbolic link loop" in rows["loop.jpg"]
    assert rows["p00.png"] == rows["p01.png"] == "ok"
    assert "pipe-no-ext" not in rows
    assert "Traceback" not in proc.stderr


def test_a_folder_given_as_a_photo_says_what_it_is():
    from kingdomino.batch.photo import not_a_photo_file

    assert "folder" in not_a_photo_file(str(ROOT))
    assert not_a_photo_file(str(ROOT / "README.md")) is None


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie waiting for its new parent to reap it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.skipif(sys.platform.startswith("win"), reason="kill -9 is POSIX")
def test_workers_die_with_the_batch_after_kill_9(tmp_path, calls):
    import signal

    folder = tmp_path / "in"
    make_photos(folder, 4)
    pid_file = tmp_path / "pids.txt"
    proc = subprocess.Popen(
        [sys.executable, "-c", BATCH_SCRIPT, str(folder), "--out", str(tmp_path / "r.csv"),
         "--db", str(tmp_path / "db"), "--jobs", "2"],
        env=_batch_env(KD_FAKE_SLOW="60", KD_FAKE_PIDS=str(pid_file)), cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        workers = wait_until(lambda: (lambda p: p if len(p) == 2 else None)(fk.pids(pid_file)),
                              60, "both workers to start reading")
        assert proc.pid not in workers
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        wait_until(lambda: not any(_alive(pid) for pid in workers), 30,
                    f"the workers {sorted(workers)} to exit after their parent was killed")
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in fk.pids(pid_file):  # a worker left behind by a regression: do not leak it
            if pid != os.getpid() and _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_reader_bug_on_one_photo_is_its_error_row(tmp_path, calls, capsys, jobs):
    folder = tmp_path / "in"
    make_photos(folder, 3)
    (folder / "p01b.png").write_bytes(fk.photo({"raise": "TypeError"}))
    out = tmp_path / "r.csv"
    assert run_batch([folder, "--out", out, "--db", tmp_path / "db", "--jobs", jobs]) == 1
    rows = read_csv(out)
    assert Path(rows[0]["source"]).name == "p01b.png"
    status = rows[0]["status"]
    assert status.startswith("error: the reader failed on this photo")
    assert "Traceback" not in status and "ksize" not in status and "--verbose" in status
    assert [r["status"] for r in rows[1:]] == ["ok"] * 3
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # --verbose: the traceback goes to the log (stderr), the row stays a sentence
    assert run_batch([folder, "--out", out, "--db", tmp_path / "db2", "--jobs", jobs,
                      "--verbose"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "TypeError: Can't parse 'ksize'" in err and "p01b.png" in err
    assert read_csv(out)[0]["status"] == status


def test_a_correction_belongs_to_the_reading_it_was_made_on(tmp_path, calls):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.png").write_bytes(fk.photo({"kingdom": K_A}))
    data = (folder / "a.png").read_bytes()
    out, db = tmp_path / "r.csv", tmp_path / "db"
    assert run_batch([folder, "--out", out, "--db", db]) == 0
    first = read_csv(out)
    assert first[0]["total"] == "14" and first[0]["corrected"] == ""
    # someone uploads the same bytes in the web app (another reading) and corrects it
    from kingdomino.store import content_hash

    store = Store(db)
    other = store.add_reading(rules="kingdomino", machine={"score": {"total": 7}},
                              source="upload.png", content_hash=content_hash(data))
    fixed = json.loads(json.dumps(K_A))
    fixed["cells"][0][1]["crowns"] = 3  # field 5 x 5 = 25 -> total 29
    store.add_correction(other, fixed)
    store.close()
    assert run_batch([folder, "--out", out, "--db", db]) == 0
    assert without_ids(read_csv(out)) == without_ids(first)  # the batch's row is unchanged
    # a batch on a store where only the upload had read the photo reads it itself
    db2 = tmp_path / "db2"
    store = Store(db2)
    other = store.add_reading(rules="kingdomino", machine={"score": {"total": 7}},
                              source="upload.png", content_hash=content_hash(data))
    store.add_correction(other, fixed)
    store.close()
    n = fk.calls(calls)
    assert run_batch([folder, "--out", out, "--db", db2]) == 0
    row = read_csv(out)[0]
    assert row["total"] == "14" and row["corrected"] == "" and row["reading_id"] != other
    assert fk.calls(calls) == n + 1
    # the batch's own reading corrected: that one counts
    store = Store(db2)
    store.add_correction(row["reading_id"], fixed)
    store.close()
    assert run_batch([folder, "--out", out, "--db", db2]) == 0
    row = read_csv(out)[0]
    assert row["total"] == "29" and row["corrected"] == "yes"


def test_two_batches_on_one_store_read_each_photo_once(tmp_path, calls, monkeypatch):
    folder = tmp_path / "in"
    totals = make_photos(folder, 6)
    db = tmp_path / "db"
    Store(db).close()
    monkeypatch.setenv("KD_FAKE_SLOW", "0.05")
    results = two_batches_at_once(db, folder, fk.fake_score)
    assert fk.calls(calls) == 6  # not 12: every photo read by one batch only
    for name in ("x", "y"):
        got = {Path(r["source"]).name: r["total"] for r in results[name]}
        assert got == totals and all(r["status"] == "ok" for r in results[name])
    assert readings_and_claims(db) == (6, 0)


def test_a_claim_of_a_dead_batch_is_taken_over(tmp_path):
    import socket

    store = Store(tmp_path / "db")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    assert store.claim("h", "kingdomino", (), f"{socket.gethostname()}:{dead}:x")
    assert store.claim("h", "kingdomino", (), "mine")  # its process is gone
    assert not store.claim("h", "kingdomino", (), f"{socket.gethostname()}:{os.getpid()}:y")
    store.close()


@pytest.mark.skipif(sys.platform.startswith("win"), reason="POSIX file modes")
def test_store_is_private_to_its_user(tmp_path, monkeypatch):
    import stat as st

    from kingdomino.store import default_store_path

    monkeypatch.delenv("KINGDOMINO_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    old = os.umask(0o022)
    try:
        path = default_store_path()
        assert path == str(tmp_path / "data" / "kingdomino" / "kingdomino.sqlite3")
        store = Store()  # the default location
        rid = store.add_reading(rules="kingdomino", photo=b"\xff\xd8\xff", machine={})
        store.close()
    finally:
        os.umask(old)
    assert st.S_IMODE(os.stat(path).st_mode) == 0o600
    assert st.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    for extra in ("-wal", "-shm"):
        if os.path.exists(path + extra):
            assert st.S_IMODE(os.stat(path + extra).st_mode) == 0o600
    assert Store(path).photo(rid) == b"\xff\xd8\xff"
    # an old world-readable store is tightened when opened
    loose = tmp_path / "old.sqlite3"
    Store(loose).close()
    os.chmod(loose, 0o644)
    Store(loose).close()
    assert st.S_IMODE(os.stat(loose).st_mode) == 0o600
    # the environment variable chooses another store
    monkeypatch.setenv("KINGDOMINO_STORE", str(tmp_path / "elsewhere.sqlite3"))
    assert default_store_path() == str(tmp_path / "elsewhere.sqlite3")


def test_default_store_location_by_platform(tmp_path):
    from kingdomino.store import default_store_path

    home = str(tmp_path)
    assert default_store_path({}, "linux", home) == os.path.join(
        home, ".local", "share", "kingdomino", "kingdomino.sqlite3")
    assert default_store_path({}, "darwin", home) == os.path.join(
        home, "Library", "Application Support", "kingdomino", "kingdomino.sqlite3")
    assert default_store_path({"LOCALAPPDATA": "L"}, "win32", home) == os.path.join(
        "L", "kingdomino", "kingdomino.sqlite3")


def test_store_option_env_and_help(tmp_path, calls, monkeypatch, capsys):
    make_photos(tmp_path / "in", 1)
    monkeypatch.setenv("KINGDOMINO_STORE", str(tmp_path / "env.sqlite3"))
    assert run_batch([tmp_path / "in", "--out", tmp_path / "r.csv"]) == 0
    assert (tmp_path / "env.sqlite3").exists()
    assert run_batch([tmp_path / "in", "--out", tmp_path / "r.csv",
                      "--store", tmp_path / "opt.sqlite3"]) == 0
    assert (tmp_path / "opt.sqlite3").exists()
    for command in ("batch", "serve"):
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--store PATH, --db PATH" in text and "KINGDOMINO_STORE" in text
        assert "~/.local/share/kingdomino" in text


FORMULAS = ["=1+1", "@A1", "-2+3", "+SUM(1,1)", "\tx", "\rx"]


def test_csv_cells_that_look_like_formulas_are_text():
    from kingdomino import csvsafe

    for value in FORMULAS:
        assert csvsafe.safe_cell(value) == "'" + value
    for value in ("Ann", "r1c2", "", "1", "a=b"):
        assert csvsafe.safe_cell(value) == value
    assert csvsafe.safe_cell(-3) == -3 and csvsafe.safe_cell(2.5) == 2.5  # our numbers stay


def test_results_and_standings_csv_neutralise_formulas(tmp_path, calls):
    folder = tmp_path / "in"
    folder.mkdir()
    names = ["=HYPERLINK(x).jpg", "+SUM(1,1).jpg", "-a.png", "@b.png"]
    for i, name in enumerate(names):
        (folder / name).write_bytes(fk.scored(10 + i))
    players = ["=1+1", "@A1", "-2+3", "Ann"]
    (tmp_path / "m.csv").write_text("photo,player,table,round\n" + "".join(
        f'"{n}","{p}",-T,1\n' for n, p in zip(names, players)))
    out = tmp_path / "r.csv"
    assert run_batch([folder, "--out", out, "--db", tmp_path / "db",
                      "--manifest", tmp_path / "m.csv"]) == 0
    for path in (out, tmp_path / "r-standings.csv"):
        for row in csv.reader(open(path, newline="", encoding="utf-8")):
            for cell in row:
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (path.name, cell)
    rows = read_csv(out)
    assert {Path(r["source"].lstrip("'")).name for r in rows} == set(names)
    assert {r["player"] for r in rows} == {"'=1+1", "'@A1", "'-2+3", "Ann"}
    assert {r["table"] for r in rows} == {"'-T"}
    standings = read_csv(tmp_path / "r-standings.csv")
    assert {"'=1+1", "'@A1", "'-2+3", "Ann"} <= {r["player"] for r in standings}


def test_reading_ids_starting_with_a_dash_are_neutralised():
    from kingdomino import csvsafe
    from webapp.reading import breakdown_csv

    text = breakdown_csv("-abc", "kingdomino", {
        "total": 5, "regions": [{"terrain": "=cmd", "squares": 1, "crowns": 1, "points": 1}],
        "bonuses": [{"name": "@x", "points": 4}]})
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert "'-abc" in cells and "'=cmd" in cells and "'@x" in cells
    assert not any(c.startswith(csvsafe.FORMULA_STARTS) for c in cells)
    rows = [{"source": "-s.png", "total": 3, "status": "ok", "player": "", "table": "",
             "round": "", "tiebreak": {}, "review": [], "corrected": False,
             "reading_id": "-abc", "content_hash": "h", "result": None}]
    cells = next(iter(list(csv.reader(io.StringIO(batch.rows_to_csv(rows, rules="kingdomino"))))[1:]))
    assert cells[0] == "'-s.png" and "'-abc" in cells


def test_new_reading_ids_never_start_like_a_formula(tmp_path):
    store = Store(tmp_path / "db")
    ids = [store.add_reading(rules="kingdomino") for _ in range(300)]
    store.close()
    assert not [i for i in ids if i[0] in "-_=+@"]


def _nap(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


def test_stopping_a_pool_stops_workers_that_never_said_their_pid(monkeypatch):
    """A worker started too late to report its process id (the pool was being stopped) used to
    be left alive; waiting on the job queue's lock of a stopped worker it never ended, and the
    interpreter hung at exit. Every worker the pool started is stopped now."""
    import time

    from kingdomino.batch import pool as pool_mod

    pool = pool_mod._Pool(1)
    try:
        fut = pool.submit(_nap, 60.0)
        deadline = time.monotonic() + 60
        while not (pool.started() and fut.running()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.started() and fut.running()
        monkeypatch.setattr(pool, "worker_pids", lambda: set())   # its report not read yet
        pool_mod._stop_pool(pool)
        assert not any(p.is_alive() for p in pool.started())
    finally:
        for p in pool.started():
            if p.is_alive():
                p.kill()


def test_a_batch_photo_read_and_kept_is_decoded_once(decodes):
    """A worker's reading and the copy it keeps for the review page share one decode."""
    import cv2
    import numpy as np

    from kingdomino.batch import pool
    from vision.photo import scale as photo_scale

    rng = np.random.default_rng(2)
    ok, buf = cv2.imencode(".jpg", cv2.GaussianBlur(
        rng.integers(0, 255, (900, 1600, 3), np.uint8), (0, 0), 4))
    data = buf.tobytes()
    read = []

    def score(photo, rules, bonuses):
        image, _ = photo_scale.load_for_reading(photo)
        read.append(image.shape)
        raise ValueError("no kingdom found")     # an error: the copy is kept for review

    kind, payload, copy, _, _ = pool._work(score, data, "kingdomino", (), keep="review")
    assert (kind, payload) == ("error", "no kingdom found")
    assert read == [(900, 1600, 3)] and decodes == [cv2.IMREAD_COLOR]
    small, size = copy
    assert size == [1600, 900] and small[:3] == b"\xff\xd8\xff"
    decodes.clear()
    pool._work(score, b"\xff\xd8\xff" + b"\0" * 40, "kingdomino", (), keep="review")  # no header
    assert decodes == []
