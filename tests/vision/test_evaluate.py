"""`kingdomino evaluate --from-outputs`: saved network outputs re-scored under the config."""
import pickle

import numpy as np
import pytest

from vision.classify import N_CROWNS, TERRAINS
from vision.lab.evaluate import Case, format_summary, format_per_board, rerun_saved

# a kingdom the 48 dominoes can make (the reader's game-set checks leave it alone)
TERRAIN = [row.split() for row in ("field forest forest lake lake",
                                   "field forest forest lake lake",
                                   "grassland grassland castle swamp swamp",
                                   "field field lake forest forest",
                                   "grassland grassland lake field field")]
CROWNS = [[0] * 5 for _ in range(5)]
CROWNS[0][0] = 1


def _logits(terrain, crowns, unsure=()):
    rows = []
    for r in range(5):
        for c in range(5):
            z = np.zeros(len(TERRAINS) + N_CROWNS)
            z[TERRAINS.index(terrain[r][c])] = 9.0
            z[len(TERRAINS) + crowns[r][c]] = 9.0 if (r, c) not in unsure else 0.3
            rows.append(z)
    return np.array(rows)


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
    from vision.classify import SquareReading

    return [[SquareReading(t, k, 1.0) for t, k in zip(tr, kr)] for tr, kr in zip(terrain, crowns)]


def test_labels_are_turned_to_the_frame_the_detector_chose():
    from vision.lab.evaluate import aligned_truth

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
    from vision.lab.evaluate import aligned_truth

    with pytest.raises(ValueError, match="cannot be turned"):
        aligned_truth([["field", "lake"]], [[0, 0]], _grid([["field"] * 3], [[0] * 3]))


def test_saved_outputs_are_recorded_only_when_asked(tmp_path, monkeypatch):
    import json
    from argparse import Namespace

    import vision.lab.evaluate as ev

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
    assert meta["cv"]["review"]["min_confidence"] == 0.9
