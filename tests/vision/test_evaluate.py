"""`kingdomino evaluate --from-outputs`: saved network outputs re-scored under the config."""
import pickle

import numpy as np
import pytest

from tests.conftest import classifier_logits
from vision.read.classify import N_CROWNS, TERRAINS
from vision.lab.evaluation.evaluate import Case, format_summary, format_per_board, rerun_saved

# a kingdom the 48 dominoes can make (the reader's game-set checks leave it alone)
TERRAIN = [row.split() for row in ("field forest forest lake lake",
                                   "field forest forest lake lake",
                                   "grassland grassland castle swamp swamp",
                                   "field field lake forest forest",
                                   "grassland grassland lake field field")]
CROWNS = [[0] * 5 for _ in range(5)]
CROWNS[0][0] = 1


def _logits(terrain, crowns, unsure=()):
    return classifier_logits(terrain, crowns, strength=9.0, unsure=unsure, unsure_strength=0.3)


def test_saved_outputs_give_the_figures(tmp_path):
    # board 1 read right; board 2: the crowned square read with 0 crowns, barely (in review)
    misread = [row[:] for row in CROWNS]
    misread[0][0] = 0
    cases = [Case("aau", 0, "a", None, 5, 5, TERRAIN, CROWNS),
             Case("aau", 1, "b", None, 5, 5, TERRAIN, CROWNS)]
    logits = [_logits(TERRAIN, CROWNS), _logits(TERRAIN, misread, unsure={(0, 0)})]
    logits[1][0, len(TERRAINS) + 1] = 0.0  # crown head: 0 crowns 0.3 vs 1 crown 0.0
    path = tmp_path / "out.pkl"
    with open(path, "wb") as fh:
        pickle.dump({"cases": cases, "logits": logits, "temps": (1.0, 1.0), "quick": False,
                     "folds": 2, "seconds": 1}, fh)
    res = rerun_saved(path)
    aau = res["aau"]
    assert aau["boards"] == 2 and aau["squares"] == 50
    assert aau["crown_accuracy"] == 49 / 50 and aau["terrain_accuracy"] == 1.0
    assert aau["score_exact"] == 0.5            # board 2: the field region loses its only crown
    assert aau["wrong_boards"] == 1 and aau["wrong_boards_with_wrong_square_in_review"] == 1
    assert aau["crown_confusion"][1] == [1, 1, 0, 0]
    assert "crown confusion" in format_summary("aau", aau)
    # each photo's line: board 1 exact, board 2 wrong with its one misread square in review
    assert [(b["name"], b["read_total"] == b["total"], b["misread"], b["misread_in_review"])
            for b in aau["per_board"]] == [("a", True, 0, 0), ("b", False, 1, 1)]
    lines = format_per_board("aau", aau).splitlines()[1:]
    assert lines[0].split()[0] == "exact" and lines[1].split()[0] == "WRONG"
    assert lines[1].endswith(" b") and "5x5" in lines[1]


def _grid(terrain, crowns):
    from vision.read.classify import SquareReading

    return [[SquareReading(t, k, 1.0) for t, k in zip(tr, kr)] for tr, kr in zip(terrain, crowns)]


def test_labels_are_turned_to_the_frame_the_detector_chose():
    from vision.lab.evaluation.evaluate import aligned_truth

    terrain = [["field", "lake", "swamp"], ["castle", "forest", "mine"]]
    crowns = [[1, 0, 0], [0, 0, 2]]
    # the detector took another corner as the first: the reading is the board turned
    for k in (1, 2, 3):
        t_read = [list(r) for r in np.rot90(np.array(terrain, dtype=object), k)]
        c_read = [[int(v) for v in r] for r in np.rot90(np.array(crowns, dtype=object), k)]
        t, c = aligned_truth(terrain, crowns, _grid(t_read, c_read))
        assert t == t_read and c == c_read
    # a misread square does not stop the right turn from being found
    t_read = [list(r) for r in np.rot90(np.array(terrain, dtype=object), 2)]
    t_read[0][0] = "empty"
    c_read = [[int(v) for v in r] for r in np.rot90(np.array(crowns, dtype=object), 2)]
    t, _ = aligned_truth(terrain, crowns, _grid(t_read, c_read))
    assert t[0][0] == "mine" and t[1][2] == "field"


def test_labels_of_another_shape_are_refused():
    from vision.lab.evaluation.evaluate import aligned_truth

    with pytest.raises(ValueError, match="cannot be turned"):
        aligned_truth([["field", "lake"]], [[0, 0]], _grid([["field"] * 3], [[0] * 3]))


def test_saved_outputs_are_recorded_only_when_asked(tmp_path, monkeypatch):
    import json
    from argparse import Namespace

    import vision.lab.evaluation.evaluate as ev

    cases = [Case("aau", 0, "a", None, 5, 5, TERRAIN, CROWNS)]
    path = tmp_path / "out.pkl"
    with open(path, "wb") as fh:
        pickle.dump({"cases": cases, "logits": [_logits(TERRAIN, CROWNS)], "temps": (0.7, 0.6),
                     "quick": False, "folds": 3, "seconds": 1}, fh)
    models = tmp_path / "models"
    models.mkdir()
    (models / "squares.json").write_text(json.dumps({"model": "squares.onnx"}))
    monkeypatch.setattr(ev, "MODELS_DIR", models)
    args = dict(datasets=None, quick=False, folds=None, from_outputs=str(path), per_photo=None)
    assert ev.main(Namespace(**args, record=False)) == 0
    assert "cv" not in json.loads((models / "squares.json").read_text())
    assert ev.main(Namespace(**args, record=True)) == 0
    meta = json.loads((models / "squares.json").read_text())
    assert meta["calibration"]["t_terrain"] == 0.7 and "3-fold" in meta["calibration"]["source"]
    assert meta["cv"]["aau"]["boards"] == 1 and "terrain_confusion" not in meta["cv"]["aau"]
    # the review settings the figures were made with: the config's, whatever they are now
    from vision import config

    assert meta["cv"]["review"] == config.load()["review"]


# --------------------------------------------------------------------------- frame quality
# A labelled 5x5 outline, 100 px squares, from (100, 100) to (600, 600) in photo pixels.
TRUTH = np.float64([[100, 100], [600, 100], [600, 600], [100, 600]])


def _box(x0, y0, cols, rows, side=100):
    return np.float64([[x0, y0], [x0 + cols * side, y0], [x0 + cols * side, y0 + rows * side],
                       [x0, y0 + rows * side]])


def test_each_read_square_is_placed_on_the_labelled_square_under_its_centre():
    from vision.lab.evaluation.evaluate import frame_places

    # a 5x7 frame: the kingdom and two columns of table on its right
    places = frame_places(_box(100, 100, 7, 5), 5, 7, TRUTH, 5, 5)
    assert len(places) == 35
    assert [places[r * 7 + c] for r in range(5) for c in range(5)] == \
        [(r, c) for r in range(5) for c in range(5)]
    assert [places[r * 7 + c] for r in range(5) for c in (5, 6)] == [None] * 10
    # the labelled outline given from another first corner (bottom left, going up): the same
    # squares are off the kingdom, and the labelled squares are those of the turned labels
    turned = np.roll(TRUTH, -3, axis=0)
    places = frame_places(_box(100, 100, 7, 5), 5, 7, turned, 5, 5)
    assert sum(p is None for p in places) == 10
    # labelled row 0 now runs up the left side: the read top row is the labelled last column
    assert [places[c] for c in range(5)] == [(c, 4) for c in range(5)]


def _frame_case(kind, name, found, rows, cols, truth=TRUTH):
    """A detected Case as build_cases makes it: where the board was found, and its crops' shape."""
    from vision.lab.evaluation.evaluate import make_frame

    frame = make_frame(5, 5, truth, found, rows, cols) if found is not None else make_frame(5, 5, truth)
    crops_rows, crops_cols = (rows, cols) if found is not None else (5, 5)
    case = Case(kind, 0, name, None, crops_rows, crops_cols, TERRAIN, CROWNS,
                detected_ok=frame.grid_right, frame=frame)
    return case


def _frames_run(tmp_path):
    """Three phone photos read end to end: A framed one column to the right (two of the table
    squares read as tiles), B read 5x7 for 5x5 (two table squares read as tiles), C not found."""
    # A: the frame starts one square right of the kingdom: read column 4 is table, labelled
    # column 0 (field, field, grassland, field, grassland: 5 tiles) is outside the read frame
    read_a = [row[1:] + ["empty"] for row in TERRAIN]
    read_a[0][4] = read_a[1][4] = "lake"          # two table squares read as a lake domino
    crowns_a = [[0] * 5 for _ in range(5)]
    a = _frame_case("phone-detected", "A", _box(200, 100, 5, 5), 5, 5)
    # B: 5x7, two columns of table on the right, one domino of it read as forest
    read_b = [row + ["empty", "empty"] for row in TERRAIN]
    read_b[3][6] = read_b[4][6] = "forest"
    crowns_b = [row + [0, 0] for row in CROWNS]
    b = _frame_case("phone-detected", "B", _box(100, 100, 7, 5), 5, 7)
    c = _frame_case("phone-detected", "C", None, 5, 5)
    logits = [classifier_logits(read_a, crowns_a), classifier_logits(read_b, crowns_b), None]
    path = tmp_path / "out.pkl"
    with open(path, "wb") as fh:
        pickle.dump({"cases": [a, b, c], "logits": logits, "temps": (1.0, 1.0), "quick": True,
                     "folds": None, "seconds": 1}, fh)
    return rerun_saved(path)["phone-detected"]


def test_each_photo_gets_its_frame(tmp_path):
    s = _frames_run(tmp_path)
    a, b, c = (board["frame"] for board in s["per_board"])
    assert a == {"found": True, "crash": None, "grid": "5x5", "grid_right": True,
                 "corner_error": 0.2, "off": 5, "off_as_tile": 2, "missed": 5}
    assert b == {"found": True, "crash": None, "grid": "5x7", "grid_right": False,
                 "corner_error": 0.4, "off": 10, "off_as_tile": 2, "missed": 0}
    assert c["found"] is False and c["grid_right"] is False and c["corner_error"] is None
    assert c["missed"] == 25                      # every labelled square, the castle's too
    # B's squares, read on the wrong grid, are not counted as read: it is "not found" there
    assert s["boards"] == 3 and s["boards_not_found"] == 2 and s["squares"] == 25
    lines = format_per_board("phone-detected", s).splitlines()[1:]
    assert lines[0].split()[0] == "WRONG" and "grid 5x5 right, corner error 0.200" in lines[0]
    assert "off the kingdom 5 (2 as tiles), tiles outside 5" in lines[0]
    assert lines[1].startswith("  WRONG GRID") and "grid 5x7 WRONG" in lines[1]
    assert lines[2].startswith("  NOT FOUND") and "no kingdom found" in lines[2]


def test_the_frame_summary_adds_the_photos_up(tmp_path):
    f = _frames_run(tmp_path)["frame"]
    assert (f["boards"], f["found"], f["grid_right"], f["crashed"]) == (3, 2, 1, 0)
    assert f["corner_error_boards"] == 2
    assert f["corner_error_mean"] == pytest.approx(0.3)
    assert f["corner_error_median"] == pytest.approx(0.3) and f["corner_error_max"] == 0.4
    assert (f["squares_off"], f["off_as_tile"], f["boards_off_as_tile"]) == (15, 4, 2)
    assert (f["tiles_missed"], f["boards_missing_tiles"]) == (5, 1)
    text = format_summary("phone-detected", _frames_run(tmp_path))
    assert "found 2/3, grid size right 1/3" in text
    assert "mean 0.300, median 0.300, max 0.400 of a side (2 boards)" in text
    assert "off the kingdom 15, of them read as tiles 4 (on 2 boards)" in text


# --------------------------------------------------------------------------- hard tables
class _TruthOrNothing:
    """A stub reader for the hard-table scenes: it reads the even seeds' scenes perfectly (the
    truth, from the same generator) and finds nothing in the odd ones."""

    def __init__(self, first_seed, width, height):
        self.seed, self.size = first_seed, (width, height)

    def read(self, image):
        from vision.lab.scenes import hard_tables as tables

        seed, self.seed = self.seed, self.seed + 1
        if seed % 2:
            raise ValueError("no kingdom found")
        scene = tables.make_hard_scene(seed, *self.size)
        # the stub is in step with the measure, which reads each scene as a phone's JPEG
        assert image.shape == scene.image.shape
        assert np.abs(image.astype(np.int16) - scene.image).mean() < 6
        return {"size": scene.size, "rows": scene.size, "cols": scene.size, "review": [],
                "corners": scene.corners.tolist(),
                "cells": [[{"terrain": t, "crowns": int(k)} for t, k in zip(tr, kr)]
                          for tr, kr in zip(scene.terrain, scene.crowns)]}


def test_hard_tables_are_counted_by_table_kind():
    from vision.lab.evaluation.evaluate import format_hard_scenes, format_hard_tables, hard_tables

    h = hard_tables(4, 240, 180, 9100, reader=_TruthOrNothing(9100, 240, 180), log=lambda m: None)
    assert h["settings"]["first_seed"] == 9100 and [r["seed"] for r in h["scenes"]] == [9100, 9101, 9102, 9103]
    s = h["summary"]
    assert (s["n"], s["found"], s["grid_right"], s["framed"], s["total_exact"]) == (4, 2, 2, 2, 2)
    assert s["corner_error_max"] == 0 and s["wrong_total"] == 0
    kinds = {}
    for r in h["scenes"]:
        kinds.setdefault(r["table"], []).append(r)
    assert set(s["kinds"]) == set(kinds)
    for kind, rows in kinds.items():
        k = s["kinds"][kind]
        assert k["n"] == len(rows)
        assert k["found"] == k["framed"] == k["total_exact"] == sum(r["seed"] % 2 == 0 for r in rows)
    text = format_hard_tables(h)
    assert "4 generated scenes (seeds 9100-9103, 240x180)" in text
    assert "found 2/4, grid size right 2/4, framed right 2/4, totals exact 2/4" in text
    for kind, rows in kinds.items():
        line = next(x for x in text.splitlines() if x.split()[0] == kind)
        assert int(line.split()[1]) == len(rows)
    assert len(format_hard_scenes(h).splitlines()) == 5


class _NothingFound:
    def read(self, image):
        raise ValueError("no kingdom found")


def test_hard_tables_draw_only_the_kinds_asked_for():
    from vision.lab.evaluation.evaluate import format_hard_tables, hard_tables
    from vision.lab.scenes import hard_tables as tables

    h = hard_tables(4, 240, 180, 9100, reader=_NothingFound(), log=lambda m: None,
                    kinds=("grid", "camo"))
    assert {r["table"] for r in h["scenes"]} <= {"grid", "camo"}
    assert h["settings"]["kinds"] == ["grid", "camo"]
    assert "; tables grid, camo)" in format_hard_tables(h).splitlines()[0]
    # the usual kinds are not named in the heading, and a seed's scene is as before
    usual = hard_tables(2, 240, 180, 9100, reader=_NothingFound(), log=lambda m: None)
    assert "; tables" not in format_hard_tables(usual).splitlines()[0]
    assert [r["table"] for r in usual["scenes"]] == [tables.make_hard_scene(seed, 240, 180).table
                                                     for seed in (9100, 9101)]


def test_evaluate_refuses_an_unknown_table_kind(run_cli):
    code, _, err = run_cli("evaluate", "--quick", "--hard-kinds", "velvet", "--hard-tables", "1")
    assert code == 2
    assert "--hard-kinds: unknown table kind velvet" in err and "Traceback" not in err


def test_hard_table_seeds_stay_in_the_measuring_range():
    from vision.lab.evaluation.evaluate import hard_tables

    with pytest.raises(ValueError, match="hard-table seeds start at 9000.*used for training"):
        hard_tables(2, 240, 180, 8999, reader=_TruthOrNothing(8999, 240, 180))
    with pytest.raises(ValueError, match="hard-table scenes must be at least 1"):
        hard_tables(0, 240, 180, 9000, reader=_TruthOrNothing(9000, 240, 180))


def test_evaluate_reports_hard_tables_with_the_shipped_models(tmp_path, monkeypatch, capsys):
    """The real pipeline on two small scenes: the figures are printed and saved, per scene too."""
    import json

    import vision.lab.training.squares as train
    from kingdomino.cli import main

    monkeypatch.setattr(train, "dev_photos", lambda datasets=None: [])   # the scenes alone
    out = tmp_path / "figures.json"
    assert main(["evaluate", "--quick", "--hard-tables", "2", "--hard-size", "400x300",
                 "--table-photos", "0", "--per-photo", "hard-tables", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "== hard tables: 2 generated scenes (seeds 9000-9001, 400x300), read with the shipped models" in text
    saved = json.loads(out.read_text())["hard_tables"]
    assert [r["seed"] for r in saved["scenes"]] == [9000, 9001]
    s = saved["summary"]
    assert sum(k["n"] for k in s["kinds"].values()) == 2
    assert s["found"] == sum(r["found"] for r in saved["scenes"])
    for r in saved["scenes"]:
        assert f"  {r['seed']}  {r['size']}x{r['size']}  {r['table']}" in text
        assert (r["corner_error"] is None) == (not r["found"])


def test_evaluate_puts_aau_dev_boards_on_hard_tables(tmp_path, monkeypatch, capsys, shared_dir):
    """--hard-boards: the same measure with photographed boards (real tile art) on the tables,
    reported and saved apart from the drawn kingdoms."""
    import json

    import vision.lab.training.squares as train
    from kingdomino.cli import main
    from vision.lab.scenes import synth

    monkeypatch.setattr(train, "dev_photos", lambda datasets=None: [])
    out = tmp_path / "figures.json"
    assert main(["evaluate", "--quick", "--hard-tables", "0", "--hard-boards", "2",
                 "--hard-size", "800x600", "--table-photos", "0", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "== hard tables, AAU dev boards: 2 generated scenes (seeds 9600-9601, 800x600)" in text
    saved = json.loads(out.read_text())
    assert "hard_tables" not in saved and saved["hard_tables_aau"]["settings"]["boards"] == "aau dev photos"
    first = synth.aau_boards()[0]
    truth = [t for row in first["terrain"] for t in row]
    scene = saved["hard_tables_aau"]["scenes"][0]
    # the first scene holds the first AAU dev board: its total is that board's
    from vision.lab.evaluation.evaluate import score
    assert scene["true_total"] == score(first["terrain"], first["crowns"]) and "castle" in truth


@pytest.mark.parametrize("argv, message", [
    (["--hard-tables=-1"], "--hard-tables must be 0"),
    (["--hard-tables", "0", "--hard-seed", "100"], "must lie from 9000 to 99999"),
    # the tile network trains on hard-table seeds from 100000: none may be measured
    (["--hard-tables", "5", "--hard-seed", "99998"], "got 99998 to 100002"),
    (["--hard-tables", "0", "--out", "no/such/folder/f.json"], "does not exist"),
    (["--table-photos=-1"], "--table-photos must be 0"),
    (["--table-photos", "2", "--table-seed", "19999"], "must lie from 20000 to 99999"),
    (["--table-photos", "5", "--table-seed", "99998"], "got 99998 to 100002"),
    (["--datasets", "{empty}"], "cannot read the dev photos"),
    (["--hard-boards=-1"], "--hard-boards must be 0"),
    (["--hard-tables", "0", "--hard-boards", "1", "--datasets", "{empty}"],
     "--hard-boards needs the AAU dev photos"),
    (["--hard-tables", "0", "--harder", "1", "--harder-boards", "1", "--datasets", "{empty}"],
     "--harder-boards needs the AAU dev photos"),
    (["--fold-models", "{empty}"], "--fold-models keeps each fold's network"),
])
def test_bad_evaluate_options_say_what_to_do(tmp_path, run_cli, argv, message):
    argv = [a.replace("{empty}", str(tmp_path)) for a in argv]
    code, _, err = run_cli("evaluate", "--quick", *argv)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_fold_models_naming_a_file_is_refused_before_any_work(tmp_path, run_cli):
    not_a_folder = tmp_path / "folds.txt"
    not_a_folder.write_text("")
    code, _, err = run_cli("evaluate", "--fold-models", not_a_folder, "--datasets", tmp_path)
    assert code == 2
    assert "not a folder" in err and "Traceback" not in err


# ------------------------------------------------------------------ whole-table photos

class _TableTruthOrNothing:
    """Reads a generated table photo as its truth (seeds in step with the measure), or finds
    nothing at all."""

    def __init__(self, first_seed, width, height, nothing=False):
        self.seed, self.size, self.nothing = first_seed, (width, height), nothing

    def __call__(self, reader, image):
        from vision.lab.scenes import whole_tables as tp
        from vision.reader import Reading
        from vision.find.whole_table import TableKingdom

        seed, self.seed = self.seed, self.seed + 1
        if self.nothing:
            raise ValueError("no kingdom found")
        scene = tp.make_table_scene(seed, width=self.size[0], height=self.size[1])
        # the stub is in step with the measure, which reads each scene as a phone's JPEG
        assert image.shape == scene.image.shape
        assert np.abs(image.astype(np.int16) - scene.image).mean() < 6
        out = []
        for k, truth in enumerate(scene.kingdoms):
            cells = [[{"terrain": t, "crowns": int(c), "confidence": 1.0}
                      for t, c in zip(tr, cr)] for tr, cr in zip(truth.terrain, truth.crowns)]
            reading = Reading(size=truth.size, cells=cells, review=[],
                              corners=truth.corners.tolist(), homography=[], rows=truth.size,
                              cols=truth.size)
            out.append(TableKingdom(k, reading, False))
        return out


def test_table_photo_figures_are_measured_not_given():
    from vision.lab.evaluation.evaluate import format_table_photo_rows, format_table_photos, table_photos

    size = (480, 360)
    right = table_photos(2, *size, 20000, reader=object(), log=lambda m: None,
                         read=_TableTruthOrNothing(20000, *size))
    s = right["summary"]
    kingdoms = sum(r["kingdoms"] for r in right["photos"])
    assert [r["seed"] for r in right["photos"]] == [20000, 20001]
    assert s["kingdoms"] == kingdoms >= 4
    assert (s["found"], s["exact"], s["phantom"], s["numbering_right"]) == (kingdoms, kingdoms, 0, 2)
    none = table_photos(2, *size, 20000, reader=object(), log=lambda m: None,
                        read=_TableTruthOrNothing(20000, *size, nothing=True))
    s = none["summary"]
    assert (s["kingdoms"], s["found"], s["exact"], s["phantom"], s["numbering_right"]) == \
        (kingdoms, 0, 0, 0, 0)
    assert s["seconds_median"] is not None
    text = format_table_photos(right)
    assert "2 generated whole-table photos (seeds 20000-20001, 480x360" in text
    assert f"kingdoms found {kingdoms}/{kingdoms}, exact {kingdoms}/{kingdoms}, phantom kingdoms 0" in text
    assert "kingdoms found 0/" in format_table_photos(none)
    assert len(format_table_photo_rows(none).splitlines()) == 3
    with pytest.raises(ValueError, match="20000 or later"):
        table_photos(1, *size, 19999, reader=object())


def test_evaluate_reports_table_photos_with_the_shipped_models(tmp_path, monkeypatch, capsys):
    """The real reader on one small table photo: the figures are printed and saved."""
    import json

    import vision.lab.training.squares as train
    from kingdomino.cli import main

    monkeypatch.setattr(train, "dev_photos", lambda datasets=None: [])   # the photos alone
    out = tmp_path / "figures.json"
    assert main(["evaluate", "--quick", "--hard-tables", "0", "--table-photos", "1",
                 "--table-size", "800x600", "--per-photo", "table-photos",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "== table photos: 1 generated whole-table photos (seeds 20000-20000, 800x600" in text
    saved = json.loads(out.read_text())["table_photos"]
    (photo,) = saved["photos"]
    assert saved["summary"]["found"] == photo["found"] == len(photo["per_kingdom"])
    assert f"  20000  {photo['table']}" in text


def test_saved_outputs_read_table_like_squares_as_table(tmp_path, monkeypatch):
    """A case saved with its squares' colour and texture (vision.read.holes): the half-built
    kingdom's two bare squares look like the ring of table around it, so they read as table
    although the network leans to field; with [holes] off they stay field."""
    import copy

    from vision import config
    from vision.lab.evaluation import evaluate

    truth = [row[:] for row in TERRAIN]
    truth[4][3] = truth[4][4] = "empty"
    leaning = [row[:] for row in TERRAIN]
    lg = _logits(leaning, CROWNS)
    for i in (23, 24):                       # squares (4, 3) and (4, 4): field, unsurely
        lg[i, :len(TERRAINS)] = 0.0
        lg[i, TERRAINS.index("field")] = 3.0
    feats = np.full((7, 7, 7), 50.0)
    feats[0, :] = feats[-1, :] = feats[:, 0] = feats[:, -1] = 0.0     # the ring: table
    feats[5, 4] = feats[5, 5] = 0.0                                    # the holes look like it
    case = Case("phone", 0, "half", None, 5, 5, truth, CROWNS,
                table=(feats, np.zeros((7, 7), bool)))
    path = tmp_path / "out.pkl"
    with open(path, "wb") as fh:
        pickle.dump({"cases": [case], "logits": [lg], "temps": (1.0, 1.0), "quick": False,
                     "folds": 2, "seconds": 1}, fh)
    on = rerun_saved(path)["phone"]
    assert on["terrain_accuracy"] == 1.0 and on["score_exact"] == 1.0
    cfg = copy.deepcopy(config.load())
    cfg["holes"]["enabled"] = False
    monkeypatch.setattr(evaluate._config, "load", lambda *a, **k: cfg)
    off = rerun_saved(path)["phone"]
    assert off["terrain_accuracy"] == 23 / 25


# --------------------------------------------------------------------------- end-to-end frames
def _photo_files(tmp_path, n_groups=3):
    """Phone photos on disk, two per kingdom; each photo's index is written into its pixels
    (its blue value) so that a stub reader can tell which photo it was given."""
    import cv2
    from types import SimpleNamespace

    photos = []
    for i in range(2 * n_groups):
        image = np.full((300, 300, 3), 40, np.uint8)
        image[..., 0] = i
        path = tmp_path / f"p{i}.png"
        cv2.imwrite(str(path), image)
        photos.append(SimpleNamespace(dataset="phone", path=path, name=f"p{i}", group=f"k{i // 2}",
                                      rows=5, cols=5, terrain=TERRAIN, crowns=CROWNS,
                                      corners=TRUTH / 2, occluded=frozenset()))
    return photos


class _StubClassifier:
    t_terrain = t_crowns = 1.0

    def logits(self, crops):
        return np.zeros((len(crops), len(TERRAINS) + N_CROWNS))


class _StubReader:
    """Frames every photo one square right of the label, and remembers what its network was
    trained on and which photos it framed."""

    def __init__(self, trained=()):
        self.trained, self.framed, self.classifier = set(trained), [], _StubClassifier()

    def find(self, image):
        from types import SimpleNamespace

        self.framed.append(f"p{int(image[0, 0, 0])}")
        if image[0, 0, 0] == 5:
            from vision.errors import PhotoError
            raise PhotoError("no kingdom found")
        return SimpleNamespace(corners=TRUTH / 2 + [50, 0], rows=5, cols=5)


def test_end_to_end_frames_are_the_readers():
    """``find_frame`` with a reader keeps the frame ``Reader.find`` chose, not the detector's
    first outline."""
    from vision import config
    from vision.lab.evaluation.evaluate import find_frame

    reader = _StubReader()
    image = np.zeros((300, 300, 3), np.uint8)
    image[..., 0] = 2
    corners, rows, cols = find_frame(image, config.load(), reader)
    assert reader.framed == ["p2"] and (rows, cols) == (5, 5)
    assert np.allclose(corners, TRUTH / 2 + [50, 0])


def test_cross_validation_frames_each_photo_with_a_network_that_never_saw_it(tmp_path,
                                                                                monkeypatch):
    import vision.lab.evaluation.evaluate as ev
    import vision.lab.training.squares as train

    photos = _photo_files(tmp_path)
    readers = []
    monkeypatch.setattr(train, "fit", lambda train_photos, *a, **k: {p.name for p in train_photos})
    monkeypatch.setattr(train, "export_onnx",
                        lambda model, path, size: path.write_text(" ".join(sorted(model))))

    def fold_reader(path, cfg):
        readers.append(_StubReader(path.read_text().split()))
        return readers[-1]

    monkeypatch.setattr(ev, "fold_reader", fold_reader)
    monkeypatch.setattr(ev, "_fit_temperatures", lambda logits, cases: (1.0, 1.0))
    out = tmp_path / "out.pkl"
    ev.run(photos, 3, quick=False, log=lambda m: None, with_synth=False, save_outputs=out,
           fold_models=tmp_path / "folds")
    assert len(readers) == 3
    # each fold's network kept with what it was trained on, to frame its photos again
    assert sorted(f.name for f in (tmp_path / "folds").glob("*.onnx")) == \
        [f"fold{k}.onnx" for k in range(3)]
    framed = [name for r in readers for name in r.framed]
    assert sorted(framed) == sorted(p.name for p in photos)       # every photo, once
    assert all(not set(r.framed) & r.trained for r in readers)    # by a fold that never saw it
    with open(out, "rb") as fh:
        cases = pickle.load(fh)["cases"]
    # each photo's labelled board, then its reading end to end, in the photos' order
    assert [(cs.name, cs.kind) for cs in cases] == [
        (p.name, kind) for p in photos for kind in ("phone", "phone-detected")]
    detected = {cs.name: cs.frame for cs in cases if cs.kind == "phone-detected"}
    assert detected["p5"].found is False
    # the reader's frame, one square (a fifth of the side) right of the labelled one
    assert all(abs(f.corner_error - 0.2) < 1e-6 for name, f in detected.items() if name != "p5")
    # run again with the same folder: the kept networks are read, none trained
    monkeypatch.setattr(train, "fit", lambda *a, **k: pytest.fail("a kept fold was retrained"))
    readers.clear()
    ev.run(photos, 3, quick=False, log=lambda m: None, with_synth=False,
           fold_models=tmp_path / "folds")
    assert sorted(name for r in readers for name in r.framed) == sorted(p.name for p in photos)
    assert all(not set(r.framed) & r.trained for r in readers)
    # networks kept for other photos are refused before anything is trained or read
    readers.clear()
    with pytest.raises(ev.FoldModelsError, match="new folder"):
        ev.run(photos[:4], 3, quick=False, log=lambda m: None, with_synth=False,
               fold_models=tmp_path / "folds")
    assert not readers


def test_a_fold_record_is_read_back_as_written_and_anything_else_is_refused(tmp_path):
    """What evaluate writes beside a fold's network reads back the same; a record missing,
    not JSON, or without the list of photos it was trained on is refused saying which file."""
    from vision.lab.evaluation.evaluate import fold_record, write_fold_record

    path = tmp_path / "fold0.onnx"
    what = {"fold": 0, "folds": 4, "epochs": 40, "seed": 0, "trained_on": ["a", "b"]}
    with pytest.raises(ValueError, match="fold0.json"):
        fold_record(path)
    write_fold_record(path, what)
    assert fold_record(path) == what
    for text in ("{not json", '{"trained_on": "a"}', '["a", "b"]'):
        (tmp_path / "fold0.json").write_text(text)
        with pytest.raises(ValueError, match="fold0.json: not what"):
            fold_record(path)


def test_a_generated_scene_is_read_as_a_phones_jpeg_decoded_for_reading():
    """Hard tables and table photos are measured on the decode the product reads: a scene
    twice [io] read_long_side is written as a JPEG, decoded at half its side (and again whole
    when its squares come out too small there), and its reading comes back in the scene's
    pixels."""
    import copy

    from vision import config
    from vision.lab.evaluation.as_photo import AsPhoto
    from vision.reader import Reading

    cfg = copy.deepcopy(config.load())
    cfg["io"]["read_long_side"] = 1000
    cfg["io"]["whole_below_px"] = 64
    seen = []

    class Stub:
        def __init__(self, side):
            self.cfg, self.side = cfg, side

        def read(self, image):
            seen.append(image)
            s = self.side
            corners = [[10.0, 20.0], [10.0 + s, 20.0], [10.0 + s, 20.0 + s], [10.0, 20.0 + s]]
            return Reading(5, [], [], corners, np.eye(3).tolist(), 5, 5)

    scene = np.zeros((1600, 2400, 3), np.uint8)
    scene[:, 1200:] = 200
    reading = AsPhoto(Stub(400.0)).read(scene)          # squares of 80 px in the decode
    assert [im.shape for im in seen] == [(800, 1200, 3)]
    assert abs(int(seen[0][400, 300, 0]) - 0) < 8 and abs(int(seen[0][400, 900, 0]) - 200) < 8
    assert reading.corners[0] == pytest.approx([20.5, 40.5])
    assert reading.corners[2] == pytest.approx([820.5, 840.5])
    seen.clear()                                        # 20 px: read again from the whole decode
    assert AsPhoto(Stub(100.0)).read(scene).corners[0] == pytest.approx([10.0, 20.0])
    assert [im.shape for im in seen] == [(800, 1200, 3), (1600, 2400, 3)]
    seen.clear()             # a scene under twice the setting is read whole, as the product reads it
    AsPhoto(Stub(100.0)).read(scene[:1000, :1600])
    assert [im.shape for im in seen] == [(1000, 1600, 3)]
