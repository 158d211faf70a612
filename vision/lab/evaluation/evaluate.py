"""``kingdomino evaluate``: kingdom-grouped K-fold cross-validation of the square reader.

For each fold the classifier is retrained on the other folds' dev photos (no kingdom, and no
``KT`` game, is ever in both) and read on the held-out photos:

- ``aau``: the rectified AAU boards (whole image = board);
- ``phone``: phone photos rectified from their labelled corners (reading accuracy alone);
- ``phone-detected``: phone photos read end to end (found by the reader, then read);
- ``synth``: held-out AAU boards put into generated photo scenes (``vision.lab.scenes.synth``) and read
  end to end (detect + read).

The two sets read end to end also get frame figures (``Frame``, ``frame_summary``): whether the
grid size is right, the outline's corner error against the labelled corners, read squares whose
centre lies off the kingdom (and of them, table read as a tile), and tiles left outside the read
frame. The frame is the one ``Reader.find`` keeps (``find_frame``): the reader chooses among
the detector's outlines and windows by reading them, so in cross-validation each photo is
framed by its fold's network (``fold_reader``), which never saw it; ``--quick`` frames with the
shipped one.

``hard_tables`` runs ``vision.lab.scenes.hard_tables``' measurement (generated kingdoms on tables that look
like tiles, seeds from ``MEASURE_SEEDS_FROM``) with the shipped models, in every mode.

``table_photos`` measures whole-table reading (``vision.find.whole_table.read_table``) on generated photos
of 2-4 kingdoms (``vision.lab.scenes.whole_tables``, seeds from its ``SEEDS_FROM``) with the shipped
models, in every mode: kingdoms found, exact, phantom kingdoms, photos numbered right, seconds.

Temperatures for the confidences are fitted on the out-of-fold outputs and, after a full run,
written with the figures into ``models/squares.json``. ``--quick`` reads with the shipped model
instead: it has seen these photos, so those figures are NOT cross-validated.
"""
from __future__ import annotations

import json
import math
import pickle
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

import engine
from vision import config as _config
from vision.photo import scale as photo
from vision.read import glare as deglare
from vision.read.classify import MODELS_DIR, N_CROWNS, TERRAINS, SquareClassifier
from vision.find.frame import frame_size, too_few_tiles
from vision.read.holes import boost_logits, ring_features
from vision.read.review import glare_squares, outside_cells, review_distances, review_reasons
from vision.read.crops import cell_crops, crop_size, image_corners, rectify
from vision.lab.evaluation import as_photo
from vision.lab.training.squares import reader_view

SETS = ("aau", "phone", "phone-detected", "synth")
DETECTED = ("phone-detected", "synth")   # read end to end: the board was found by vision.find.detect
HARD_TABLES = "hard-tables"              # --per-photo name of the hard-table scenes
HARDER = "harder"                        # --per-photo name of the harder-table scenes
HARD_BOARDS_SEED = 9600                  # first seed of the hard tables with AAU dev boards
# hard tables with drawn kingdoms, with AAU boards; the harder ones (issue 54), the same two
HARD = ("hard_tables", "hard_tables_aau", "harder", "harder_aau")
GENERATED = HARD + ("table_photos",)        # read with the shipped models


# ----------------------------------------------------------------------------- folds and scores
def assign_folds(photos, k: int, seed: int = 0) -> list[int]:
    """Fold of each photo; whole groups (``photo.group``) go to one fold, folds balanced."""
    groups: dict = {}
    for i, p in enumerate(photos):
        groups.setdefault(p.group, []).append(i)
    names = sorted(groups)
    rng = np.random.default_rng(seed)
    rng.shuffle(names)
    names.sort(key=lambda g: -len(groups[g]))          # big groups first (stable: shuffled ties)
    load = [0] * k
    fold_of = [0] * len(photos)
    for g in names:
        f = int(np.argmin(load))
        load[f] += len(groups[g])
        for i in groups[g]:
            fold_of[i] = f
    return fold_of


def kingdom_obj(terrain, crowns, size: int | None = None) -> dict:
    rows, cols = len(terrain), len(terrain[0])
    size = size or frame_size(rows, cols)
    cells = [[{"terrain": "empty", "crowns": 0} for _ in range(size)] for _ in range(size)]
    for r in range(rows):
        for c in range(cols):
            cells[r][c] = {"terrain": terrain[r][c], "crowns": int(crowns[r][c])}
    return {"rules": "kingdomino", "size": size, "cells": cells}


def score(terrain, crowns) -> int:
    """A grid's base Kingdomino total, as ``engine.score`` gives it (no bonus).

    A misread grid may hold what no kingdom does: a second castle, crowns on a castle or on an
    empty square. Neither is land, so neither scores: they go to the engine as a crownless
    empty square, and the total is the engine's all the same."""
    obj = kingdom_obj(terrain, crowns)
    castles = 0
    for line in obj["cells"]:
        for cell in line:
            castles += cell["terrain"] == "castle"
            if cell["terrain"] == "castle" and castles > 1:
                cell["terrain"] = "empty"
            if cell["terrain"] in ("castle", "empty"):
                cell["crowns"] = 0
    return engine.score(engine.Kingdom.from_json(obj)).total


# ----------------------------------------------------------------------------- frames
@dataclass(frozen=True)
class Frame:
    """Where the reader framed a board, against its labelled outline; no square read yet.

    ``rows`` x ``cols``: the read rectangle (None when nothing was found). ``corner_error``:
    ``vision.find.detect.corner_error`` with any first corner (None without labelled corners).
    ``places``: for each read square, row by row, the labelled ``(row, col)`` under its centre,
    or None when that centre lies off the labelled kingdom (None without labelled corners).
    ``crash``: the detector raised something other than a ``ValueError`` (recorded, not raised).
    """

    true_rows: int
    true_cols: int
    found: bool = False
    rows: int | None = None
    cols: int | None = None
    corner_error: float | None = None
    places: tuple | None = None
    crash: str | None = None

    @property
    def grid_right(self) -> bool:
        """Found with the labelled number of rows and columns (either way round)."""
        return self.found and (self.rows, self.cols) in ((self.true_rows, self.true_cols),
                                                         (self.true_cols, self.true_rows))


def _unit(rows: int, cols: int) -> np.ndarray:
    return np.float64([[0, 0], [cols, 0], [cols, rows], [0, rows]])


def frame_places(found, rows: int, cols: int, truth, true_rows: int, true_cols: int) -> tuple:
    """For each square of a ``rows x cols`` frame with outer corners ``found`` (photo pixels, the
    reader's order: row 0 along corner 0 -> 1), row by row: the ``(row, col)`` of the square of
    the labelled ``true_rows x true_cols`` outline ``truth`` that holds its centre, or None when
    the centre lies off that outline. Neither frame needs the other's first corner."""
    found = np.asarray(found, np.float64).reshape(4, 2)
    truth = np.asarray(truth, np.float64).reshape(4, 2)
    to_photo = cv2.getPerspectiveTransform(_unit(rows, cols).astype(np.float32),
                                           found.astype(np.float32))
    to_truth = cv2.getPerspectiveTransform(truth.astype(np.float32),
                                           _unit(true_rows, true_cols).astype(np.float32))
    centres = np.float64([[[c + 0.5, r + 0.5] for r in range(rows) for c in range(cols)]])
    where = cv2.perspectiveTransform(centres, to_truth @ to_photo)[0]
    out = []
    for x, y in where:
        r, c = math.floor(y), math.floor(x)
        out.append((r, c) if 0 <= r < true_rows and 0 <= c < true_cols else None)
    return tuple(out)


def make_frame(true_rows: int, true_cols: int, truth=None, found=None, rows: int | None = None,
               cols: int | None = None) -> Frame:
    """The ``Frame`` of a board found at ``found`` (``rows x cols``; None: not found) whose
    labelled outline is ``truth`` (4 corners, photo pixels; None: not labelled)."""
    if found is None:
        return Frame(true_rows, true_cols)
    from vision.find.detect import corner_error

    if truth is None:
        return Frame(true_rows, true_cols, True, rows, cols)
    found = np.asarray(found, np.float64).reshape(4, 2)
    truth = np.asarray(truth, np.float64).reshape(4, 2)
    return Frame(true_rows, true_cols, True, rows, cols,
                 round(corner_error(found, truth, any_first=True), 4),
                 frame_places(found, rows, cols, truth, true_rows, true_cols))


def frame_figures(frame: Frame, terrain, grid) -> dict:
    """One board's frame figures: found, grid (read rows x cols), grid right, corner error,
    read squares off the kingdom (``off``) and of them read as a tile (``off_as_tile``: not
    ``empty``), and labelled tiles no read square's centre falls on (``missed``: tiles outside
    the read frame). ``grid``: the reading (rows of ``SquareReading``), None when there is none
    (then no square was read off the kingdom as a tile, and every tile is missed)."""
    tiles = {(r, c) for r, row in enumerate(terrain) for c, t in enumerate(row) if t != "empty"}
    out = {"found": frame.found and grid is not None, "crash": frame.crash,
           "grid": f"{frame.rows}x{frame.cols}" if frame.found else None,
           "grid_right": frame.grid_right and grid is not None,
           "corner_error": frame.corner_error if grid is not None else None,
           "off": 0, "off_as_tile": 0, "missed": len(tiles)}
    if grid is None or frame.places is None:
        if grid is not None:
            out["missed"] = None            # no labelled outline: unknown
        return out
    covered = set()
    for i, place in enumerate(frame.places):
        if place is None:
            out["off"] += 1
            out["off_as_tile"] += grid[i // frame.cols][i % frame.cols].terrain != "empty"
        else:
            covered.add(place)
    out["missed"] = len(tiles - covered)
    return out


def frame_summary(boards: list) -> dict:
    """Add up ``frame_figures`` dicts: found, grid right, the corner error (mean, median, max,
    fractions of a side, over the found boards with labelled corners), squares off the kingdom,
    of them read as tiles (and on how many boards), tiles outside the read frame."""
    found = [b for b in boards if b["found"]]
    errs = [b["corner_error"] for b in found if b["corner_error"] is not None]
    stat = (lambda f: round(float(f(errs)), 4) if errs else None)  # noqa: E731
    return {
        "boards": len(boards), "found": len(found), "crashed": sum(bool(b["crash"]) for b in boards),
        "grid_right": sum(b["grid_right"] for b in boards),
        "corner_error_boards": len(errs), "corner_error_mean": stat(np.mean),
        "corner_error_median": stat(np.median), "corner_error_max": stat(np.max),
        "squares_off": sum(b["off"] for b in found),
        "off_as_tile": sum(b["off_as_tile"] for b in found),
        "boards_off_as_tile": sum(b["off_as_tile"] > 0 for b in found),
        "tiles_missed": sum(b["missed"] or 0 for b in found),
        "boards_missing_tiles": sum((b["missed"] or 0) > 0 for b in found),
    }


def find_frame(image, cfg, reader=None):
    """Where the reader frames the kingdom in ``image``: ``(corners, rows, cols)``; raises
    ``ValueError`` when it finds none. The one place evaluation asks for the frame.

    ``reader`` (a ``vision.reader.Reader``): the frame ``Reader.find`` keeps -- the detector's
    outlines, the windows the classifier chooses among, the seams' quadrilateral, the
    whole-table search when unconvinced -- read by that reader's network; in cross-validation
    it is the fold's (``fold_reader``), so the frame too is chosen by a network that never saw
    the photo. Without it, the detector's first outline (``detect.locate``), which needs no
    network."""
    if reader is not None:
        f = reader.find(image)
        return np.asarray(f.corners, np.float64), int(f.rows), int(f.cols)
    from vision.find import detect

    first = detect.locate(image, cfg)
    return np.asarray(first.corners, np.float64), int(first.rows), int(first.cols)


class FoldModelsError(ValueError):
    """A ``--fold-models`` folder holds networks trained otherwise than this run asks."""


def fold_record(path: Path) -> dict:
    """What ``--fold-models`` wrote beside a fold's network ``path`` (its ``.json``: fold,
    folds, epochs, seed, ``trained_on``, the names of the photos it was trained on);
    ``ValueError`` saying what is wrong when it is missing or not that."""
    meta = Path(path).with_suffix(".json")
    try:
        record = json.loads(meta.read_text(encoding="utf-8"))
        if not isinstance(record, dict) or not isinstance(record.get("trained_on"), list):
            raise ValueError("no list of the photos it was trained on")
    except (OSError, ValueError) as exc:
        raise ValueError(f"{meta}: not what `kingdomino evaluate --fold-models` writes "
                         f"beside a fold's network ({exc})") from exc
    return record


def write_fold_record(path: Path, what: dict) -> None:
    """Write ``what`` (see :func:`fold_record`) beside the fold's network ``path``."""
    Path(path).with_suffix(".json").write_text(json.dumps(what, indent=1) + "\n",
                                               encoding="utf-8")


def kept_fold(path: Path, what: dict) -> bool:
    """Whether ``path`` (``--fold-models``) holds a fold's network trained as ``what`` says
    (fold, number of folds, epochs, seed, the names of the photos it was trained on: its
    ``.json`` beside it): it is then read again instead of retrained. A network there trained
    otherwise (other photos, another fold count) is refused (``FoldModelsError``), not
    overwritten: give another folder. A change to the training recipe itself is not seen:
    after one, start a new folder."""
    if not path.exists():
        return False
    try:
        kept = fold_record(path)
    except ValueError:
        kept = None
    if kept != what:
        raise FoldModelsError(f"{path} was not trained as fold {what['fold'] + 1} of this run "
                              f"({path.with_suffix('.json').name} missing or different: other "
                              f"photos, folds or epochs): give --fold-models a new folder")
    return True


def fold_reader(model_path, cfg):
    """A ``Reader`` of one fold's network that decodes as the figures are read: with the
    shipped model's calibration and crown priors (``_summarise_outputs`` reads every fold's
    outputs with them), so its frame choice is the shipped reader's with another network."""
    from vision.reader import Reader

    reader = Reader(cfg, model_path=model_path)
    shipped = SquareClassifier(None, cfg["classify"], load_network=False)
    reader.classifier.t_terrain, reader.classifier.t_crowns = shipped.t_terrain, shipped.t_crowns
    reader.classifier.set_crown_prior(shipped.meta.get("crown_train_prior"),
                                      shipped.meta.get("crown_label_prior"))
    return reader


# ----------------------------------------------------------------------------- inputs
class Case:
    """One board to read: crops (model independent), truth, and where it came from.

    ``frame`` (the sets read end to end): where the board was found (``Frame``). A board
    found with the wrong grid keeps its crops (for the frame figures) with ``detected_ok``
    False: its squares do not count in the accuracy figures, it counts as not found there.
    """

    def __init__(self, kind, photo_index, name, crops, rows, cols, terrain, crowns,
                 outside=frozenset(), detected_ok=True, occluded=frozenset(), frame=None,
                 table=None, washed=None, glare=None):
        self.kind, self.photo_index, self.name = kind, photo_index, name
        self.crops, self.rows, self.cols = crops, rows, cols
        self.terrain, self.crowns = terrain, crowns
        self.outside, self.detected_ok, self.occluded = outside, detected_ok, occluded
        self.frame = frame
        # the squares' colour and texture and the ring of table around them (vision.read.holes):
        # model independent, kept with the network outputs
        self.table = table
        # the squares under glare and their glare-free crops (vision.read.glare.washed_crops)
        self.washed = washed
        # each square's glare share (vision.read.glare.board_glare), for the review's glare flag
        self.glare = glare

    def logits(self, clf, cfg: dict) -> np.ndarray:
        """The network's outputs for the board's squares, as the reader reads them: those
        under glare read again with it taken off (vision.read.glare)."""
        if self.washed is None:
            return clf.logits(self.crops)
        return deglare.with_washed(clf.logits(self.crops), self.washed, clf, cfg)[0]


def build_cases(photos, cfg: dict, log) -> list:
    """The boards read from their labelled frames (``aau``, ``phone``): crops that do not
    depend on any network."""
    ccfg, rcfg = cfg["classify"], cfg["review"]
    cell, bm, cm = ccfg["cell"], ccfg["board_margin"], ccfg["crop_margin"]
    cases = []
    for i, p in enumerate(photos):
        image, corners = reader_view(p, cfg["io"])     # decoded as the reader decodes it
        corners = corners if corners is not None else image_corners(image)
        board, _ = rectify(image, corners, p.rows, p.cols, cell, bm)
        crops = cell_crops(board, p.rows, p.cols, cell, board_margin=bm, crop_margin=cm)
        cases.append(Case(p.dataset, i, p.name, crops, p.rows, p.cols, p.terrain, p.crowns,
                          outside_cells(image.shape, corners, p.rows, p.cols, rcfg),
                          occluded=p.occluded,
                          table=ring_features(image, corners, p.rows, p.cols, cfg["holes"]),
                          **_glare_inputs(board, p.rows, p.cols, cfg)))
    return cases


def detected_cases(photos, indices, cfg: dict, log, reader=None, with_detect: bool = True,
                   with_synth: bool = True) -> list:
    """The boards read end to end from photos ``indices``: each phone photo as taken
    (``phone-detected``), each AAU board put into a generated scene (``synth``, seeded by the
    photo's index, so the same scene whichever fold reads it), framed by ``reader``
    (``find_frame``)."""
    from vision.lab.scenes import synth

    cases = []
    for i in indices:
        p = photos[i]
        if p.dataset == "phone" and with_detect:
            # decoded as the product decodes it (vision.photo: a 12 MP JPEG at 3 MP), the
            # labelled corners put in that image's pixels
            image, factor = photo.load_for_reading(p.path, cfg)
            truth = None if p.corners is None else photo.to_reduced_pixels(p.corners, factor)
            cases.append(_detected_case("phone-detected", i, p.name, image, p.terrain, p.crowns,
                                        cfg, truth, log, reader))
        if p.dataset == "aau" and with_synth:
            image = cv2.imread(str(p.path), cv2.IMREAD_COLOR)
            rng = np.random.default_rng(1000 + i)
            try:
                scene, scene_corners, info = synth.make_scene(image, rng, return_info=True)
                terrain = synth.scene_grid(p.terrain, info["turns"])
                crowns = synth.scene_grid(p.crowns, info["turns"])
            except Exception as exc:  # noqa: BLE001 - the scene generator is optional
                log(f"  synth scene for {p.name} failed: {exc}")
            else:
                cases.append(_detected_case("synth", i, p.name, scene, terrain, crowns, cfg,
                                            scene_corners, log, reader))
    return cases


def _detected_case(kind, i, name, image, terrain, crowns, cfg, truth_corners=None,
                   log=print, reader=None) -> Case:
    ccfg, rcfg = cfg["classify"], cfg["review"]
    cell, bm, cm = ccfg["cell"], ccfg["board_margin"], ccfg["crop_margin"]
    rows, cols = len(terrain), len(terrain[0])
    try:
        found, frows, fcols = find_frame(image, cfg, reader)
    except ValueError:
        return Case(kind, i, name, None, rows, cols, terrain, crowns, detected_ok=False,
                    frame=make_frame(rows, cols, truth_corners))
    except Exception as exc:  # noqa: BLE001 -- a crash is a figure to report, not to hide
        why = f"{type(exc).__name__}: {exc}"[:200]
        log(f"  {kind} {name}: the detector crashed ({why})")
        return Case(kind, i, name, None, rows, cols, terrain, crowns, detected_ok=False,
                    frame=Frame(rows, cols, crash=why))
    frame = make_frame(rows, cols, truth_corners, found, frows, fcols)
    # a kingdom has no "up": a right grid read the other way round is right (the truth is turned
    # to match when scored); a wrong grid is still read, for the squares read off the kingdom
    board, _ = rectify(image, found, frows, fcols, cell, bm)
    crops = cell_crops(board, frows, fcols, cell, board_margin=bm, crop_margin=cm)
    return Case(kind, i, name, crops, frows, fcols, terrain, crowns,
                outside_cells(image.shape, found, frows, fcols, rcfg),
                detected_ok=frame.grid_right, frame=frame,
                table=ring_features(image, found, frows, fcols, cfg["holes"]),
                **_glare_inputs(board, frows, fcols, cfg))


def _glare_inputs(board, rows: int, cols: int, cfg: dict) -> dict:
    """A case's ``washed`` (``vision.read.glare.washed_crops``) and ``glare`` (each square's glare
    share), the field measured once as the reader measures it: apart only when ``[deglare]``
    is off and ``washed_crops`` measures none."""
    washed = deglare.washed_crops(board, rows, cols, cfg)
    shares = washed[2] if washed[2] is not None else deglare.board_glare(board, rows, cols, cfg)
    return {"washed": washed, "glare": shares}


# ----------------------------------------------------------------------------- metrics
def aligned_truth(terrain, crowns, grid):
    """The labels turned by the quarter turn that best matches the reading's frame.

    A photo of a kingdom has no "up": which corner the detector takes as the first is
    arbitrary (a board at 45 degrees has two "top" sides), and the score does not depend on
    it. The labels are compared with the reading in the turn (among those giving the
    reading's shape) where most squares agree; the first such turn on a tie.
    """
    from vision.lab.scenes.synth import scene_grid       # the one quarter-turn of label grids

    rows, cols = len(grid), len(grid[0]) if grid else 0
    read = [[(sq.terrain, sq.crowns) for sq in row] for row in grid]
    best, best_agree = None, -1
    for k in range(4):
        t, c = scene_grid(terrain, k), scene_grid(crowns, k)
        if (len(t), len(t[0]) if t else 0) != (rows, cols):
            continue
        agree = sum((t[r][q], c[r][q]) == read[r][q] for r in range(rows) for q in range(cols))
        if agree > best_agree:
            best, best_agree = (t, c), agree
    if best is None:
        raise ValueError(f"labels of {len(terrain)}x{len(terrain[0])} squares cannot be turned "
                         f"to the {rows}x{cols} reading")
    return best


def summarise(cases, readings, kind: str) -> dict | None:
    sel = [(cs, rd) for cs, rd in zip(cases, readings) if cs.kind == kind]
    if not sel:
        return None
    tconf = np.zeros((len(TERRAINS), len(TERRAINS)), int)
    cconf = np.zeros((N_CROWNS, N_CROWNS), int)
    boards = exact = exact_grid = wrong = wrong_caught = review_total = not_found = 0
    wrong_unflagged_squares = 0
    per_board = []
    frames = []
    for cs, rd in sel:
        boards += 1
        frame = getattr(cs, "frame", None)      # outputs saved before frames were kept: none
        fig = frame_figures(frame, cs.terrain, rd[0] if rd else None) if frame else None
        if fig is not None:
            frames.append(fig)
        if rd is None or not cs.detected_ok:
            not_found += 1
            wrong += 1
            per_board.append({"name": cs.name, "found": False, "total": score(cs.terrain, cs.crowns),
                              **({"frame": fig} if fig else {})})
            continue
        grid, reasons = rd
        terrain, crowns = aligned_truth(cs.terrain, cs.crowns, grid)
        misread = []
        for r in range(cs.rows):
            for c in range(cs.cols):
                tt, tc = terrain[r][c], crowns[r][c]
                sq = grid[r][c]
                tconf[TERRAINS.index(tt), TERRAINS.index(sq.terrain)] += 1
                cconf[tc, sq.crowns] += 1
                if (tt, tc) != (sq.terrain, sq.crowns):
                    misread.append((r, c))
        in_review = sum(sq in reasons for sq in misread)
        wrong_unflagged_squares += len(misread) - in_review
        review_total += len(reasons)
        pt = [[sq.terrain for sq in row] for row in grid]
        pc = [[sq.crowns for sq in row] for row in grid]
        got, want = score(pt, pc), score(terrain, crowns)
        ok = got == want
        exact += ok
        per_board.append({"name": cs.name, "found": True, "size": f"{cs.rows}x{cs.cols}", "total": want,
                          "read_total": got, "misread": len(misread),
                          "misread_in_review": in_review, "review": len(reasons),
                          **({"frame": fig} if fig else {})})
        exact_grid += not misread
        if not ok:
            wrong += 1
            wrong_caught += in_review > 0
    n = int(tconf.sum())
    return {
        "boards": boards, "boards_not_found": not_found, "squares": n,
        "terrain_accuracy": float(np.trace(tconf) / n) if n else None,
        "crown_accuracy": float(np.trace(cconf) / n) if n else None,
        "score_exact": exact / boards, "grid_exact": exact_grid / boards,
        "wrong_boards": wrong, "wrong_boards_with_wrong_square_in_review": wrong_caught,
        "wrong_squares_not_in_review": wrong_unflagged_squares,
        "mean_review_squares": review_total / max(1, boards - not_found),
        "terrain_confusion": tconf.tolist(), "crown_confusion": cconf.tolist(),
        "per_board": per_board,
        **({"frame": frame_summary(frames)} if frames else {}),
    }


def _frame_words(f: dict) -> str:
    if f["crash"]:
        return f"detector crashed: {f['crash']}"
    if not f["found"]:
        return "no kingdom found"
    err = "corner error -" if f["corner_error"] is None else f"corner error {f['corner_error']:.3f}"
    missed = "?" if f["missed"] is None else f["missed"]
    return (f"grid {f['grid']} {'right' if f['grid_right'] else 'WRONG'}, {err}, "
            f"off the kingdom {f['off']} ({f['off_as_tile']} as tiles), tiles outside {missed}")


def format_per_board(kind: str, s: dict) -> str:
    """One line per board: found, total read against the true total, squares misread/flagged,
    and for boards read end to end the frame (grid, corner error, squares off the kingdom)."""
    lines = [f"== {kind}, each photo: total read / true total, squares misread (of them in review), review size"
             + ("; frame: grid, outline corner error (of a side), read squares off the kingdom "
                "(as tiles), labelled tiles outside the read frame" if "frame" in s else "")]
    for b in s["per_board"]:
        frame = f"  | {_frame_words(b['frame'])}" if "frame" in b else ""
        if not b["found"]:
            what = "WRONG GRID" if b.get("frame", {}).get("found") else "NOT FOUND"
            lines.append(f"  {what:<10} {'':>4}  true total {b['total']:>3}  {b['name']}{frame}")
            continue
        mark = "exact" if b["read_total"] == b["total"] else "WRONG"
        lines.append(f"  {mark:<5} {b['size']}  {b['read_total']:>3} / {b['total']:<3}  "
                     f"misread {b['misread']} ({b['misread_in_review']} in review)  "
                     f"review {b['review']:>2}  {b['name']}{frame}")
    return "\n".join(lines)


def format_frame(f: dict) -> str:
    """The frame summary (``frame_summary``) in three lines."""
    err = ("no labelled corners" if f["corner_error_mean"] is None else
           f"mean {f['corner_error_mean']:.3f}, median {f['corner_error_median']:.3f}, "
           f"max {f['corner_error_max']:.3f} of a side ({f['corner_error_boards']} boards)")
    return "\n".join([
        f"  frame: found {f['found']}/{f['boards']}"
        + (f" ({f['crashed']} detector crashes)" if f["crashed"] else "")
        + f", grid size right {f['grid_right']}/{f['boards']}",
        f"  frame: outline corner error {err}",
        f"  frame: read squares off the kingdom {f['squares_off']}, of them read as tiles "
        f"{f['off_as_tile']} (on {f['boards_off_as_tile']} boards); labelled tiles outside the "
        f"read frame {f['tiles_missed']} (on {f['boards_missing_tiles']} boards)"])


def format_summary(kind: str, s: dict) -> str:
    lines = [f"== {kind}: {s['boards']} boards, {s['squares']} squares read"
             + (f" ({s['boards_not_found']} boards not found / wrong size)" if s["boards_not_found"] else "")]
    if s["squares"]:
        lines.append(f"  terrain accuracy {100 * s['terrain_accuracy']:.2f}%   "
                     f"crown accuracy {100 * s['crown_accuracy']:.2f}%")
    lines.append(f"  boards with the exact score {100 * s['score_exact']:.1f}%   "
                 f"(every square right {100 * s['grid_exact']:.1f}%)")
    lines.append(f"  wrong boards with a wrong square in review: "
                 f"{s['wrong_boards_with_wrong_square_in_review']}/{s['wrong_boards']}   "
                 f"mean review size {s['mean_review_squares']:.2f} squares/board")
    if s["squares"]:
        short = [t[:5] for t in TERRAINS]
        lines.append("  terrain confusion (rows truth, columns read): " + " ".join(f"{t:>5}" for t in short))
        for t, row in zip(short, s["terrain_confusion"]):
            lines.append(f"  {'':>38}{t:>5} " + " ".join(f"{v:>5}" for v in row))
        lines.append("  crown confusion (rows truth 0-3, columns read 0-3):")
        for k, row in enumerate(s["crown_confusion"]):
            lines.append(f"    {k}: " + " ".join(f"{v:>5}" for v in row))
    if "frame" in s:
        lines.append(format_frame(s["frame"]))
    return "\n".join(lines)


# ----------------------------------------------------------------------------- hard tables
HARD_TABLES_N = 20                 # scenes by default: a few minutes at full size
HARD_TABLES_SIZE = (4000, 3000)    # photo width, height


def hard_table_figures(rows: list) -> dict:
    """``vision.lab.scenes.hard_tables.summarise`` of the scenes, plus ``kinds``: the same figures for each
    table kind alone (found, grid right, framed right, exact, wrong totals with and without a
    flagged wrong square, corner error, squares off the kingdom)."""
    from vision.lab.scenes import hard_tables as tables

    out = tables.summarise(rows)
    for name, field in (("kinds", "table"), ("challenges", "challenge")):
        if any(field not in r for r in rows):
            continue
        out[name] = {}
        for kind in sorted({r[field] for r in rows}):
            k = tables.summarise([r for r in rows if r[field] == kind])
            out[name][kind] = {key: v for key, v in k.items() if key not in ("by_table", "failures")}
    return out


def hard_tables(n: int, width: int = HARD_TABLES_SIZE[0], height: int = HARD_TABLES_SIZE[1],
                first_seed: int | None = None, reader=None, log=print, model_path=None,
                boards=(), kinds=None, challenges=None) -> dict:
    """Frame and reading figures on ``n`` generated hard-table scenes (``vision.lab.scenes.hard_tables``),
    seeds ``first_seed`` on (default ``MEASURE_SEEDS_FROM``: seeds no training set uses), read by
    ``reader`` (default: a ``vision.reader.Reader`` of the shipped models) as the product reads
    a phone's JPEG (``vision.lab.evaluation.as_photo.AsPhoto``). ``boards``:
    photographed boards put on the tables in turn (``vision.lab.scenes.synth.aau_boards``) instead of
    drawn kingdoms. ``kinds``: the table kinds drawn (default ``tables.TABLE_KINDS``; see
    ``tables.parse_kinds``). ``challenges``: read harder scenes instead
    (``vision.lab.scenes.harder_tables``: small, steep, on cloth), one challenge after another.
    Returns ``settings``, ``summary`` (``hard_table_figures``) and ``scenes`` (one
    ``measure_scene`` row each)."""
    from vision.lab.scenes import hard_tables as tables

    kinds = tables.TABLE_KINDS if kinds is None else tuple(kinds)
    first, reader = _measure_setup(n, first_seed, tables.MEASURE_SEEDS_FROM, "hard-table",
                                   "scenes", reader, model_path)
    t0 = time.time()
    done = []

    def on_scene(scene, row):
        done.append(row)
        log(f"  hard table {len(done)}/{n}: seed {row['seed']} {scene.size}x{scene.size} "
            f"{scene.table}/{scene.palette}: {row['why']}")

    scene_kw = {} if challenges else {"kinds": kinds}
    # each scene written as a phone's JPEG and decoded as the product decodes it
    res = tables.measure(as_photo.AsPhoto(reader), range(first, first + n), width, height,
                         on_scene=on_scene, boards=boards, challenges=tuple(challenges or ()),
                         **scene_kw)
    return {"settings": {"n": n, "first_seed": first, "width": width, "height": height,
                         "kinds": list(kinds), "challenges": list(challenges or ()),
                         "models": "shipped" if model_path is None else str(model_path),
                         "boards": "aau dev photos" if boards else "drawn"},
            "seconds": round(time.time() - t0), "summary": hard_table_figures(res["scenes"]),
            "scenes": res["scenes"]}


def _measure_setup(n: int, first_seed, seeds_from: int, what: str, things: str, reader,
                   model_path=None):
    """The first seed (default ``seeds_from``, never below it: lower seeds may be drawn for
    training) and the reader (default: the shipped models, or ``model_path``) of a generated
    measurement of ``n`` ``things``; ``ValueError`` saying how to fix a bad call."""
    first = seeds_from if first_seed is None else int(first_seed)
    if first < seeds_from:
        raise ValueError(f"{what} seeds start at {seeds_from} or later (seeds below may be "
                         f"used for training), got {first}")
    if n < 1:
        raise ValueError(f"the number of {what} {things} must be at least 1, got {n}")
    if reader is None:
        from vision.reader import Reader

        reader = Reader(model_path=model_path)
    return first, reader


# ----------------------------------------------------------------------------- table photos
TABLE_PHOTOS_N = 12                # whole-table photos by default (issue 17's measure: 34 kingdoms)
TABLE_PHOTOS = "table-photos"      # --per-photo name of the whole-table photos


def table_photos(n: int, width: int = HARD_TABLES_SIZE[0], height: int = HARD_TABLES_SIZE[1],
                 first_seed: int | None = None, reader=None, log=print, read=None) -> dict:
    """Whole-table reading (``vision.find.whole_table.read_table`` of each photo written as a JPEG
    and decoded as the product decodes it, ``vision.lab.evaluation.as_photo``; or
    ``read(reader, image)``) measured on
    ``n`` generated table photos (``vision.lab.scenes.whole_tables``: 2-4 kingdoms each), seeds
    ``first_seed`` on (default ``SEEDS_FROM``: seeds no training set uses), with ``reader``
    (default: a ``vision.reader.Reader`` of the shipped models). Returns ``settings``,
    ``summary`` (kingdoms found, exact, phantom kingdoms, photos numbered right, seconds per
    photo) and ``photos`` (one ``measure_photo`` row each)."""
    from vision.lab.scenes import whole_tables as tp

    first, reader = _measure_setup(n, first_seed, tp.SEEDS_FROM, "table-photo", "photos",
                                   reader)
    t0 = time.time()
    done = []

    def on_photo(row):
        done.append(row)
        log(f"  table photo {len(done)}/{n}: seed {row['seed']} {row['table']}/{row['palette']}: "
            f"{row['found']}/{row['kingdoms']} found, {row['exact']} exact, "
            f"{row['phantom']} phantom, {row['seconds']:.2f} s")

    res = tp.measure(reader, range(first, first + n), read=read or as_photo.read_table,
                     on_photo=on_photo, width=width, height=height)
    return {"settings": {"n": n, "first_seed": first, "width": width, "height": height,
                         "models": "shipped"},
            "seconds": round(time.time() - t0), "summary": res["summary"],
            "photos": res["photos"]}


# ----------------------------------------------------------------------------- real tables
REAL_TABLES = "real-tables"        # --per-photo name of the real whole tables


def real_tables(photos, reader=None, log=print) -> dict:
    """Whole tables of real kingdoms (``vision.lab.scenes.real_tables``), dev phone photos
    only: ``composites`` (2-3 photos side by side, read by ``--all``) and ``photos`` (each
    photo read by ``--all`` and by plain ``score``)."""
    from vision.lab.scenes import real_tables as rt
    from vision.reader import Reader

    reader = reader if reader is not None else Reader()
    phone = [p for p in photos if p.dataset == "phone"]
    t0 = time.time()
    comp = rt.measure_composites(reader, phone, on_photo=lambda r: log(
        f"  composite {' + '.join(r['photos'])}: {r['found']}/{r['kingdoms']} found, "
        f"{r['exact']} exact, {r['phantom']} phantom, {r['wrongly_cut']} wrongly cut"))
    each = rt.measure_photos(reader, phone, on_photo=lambda r: log(
        f"  {r['photo']}: --all {'exact' if r['all']['exact'] else r['all']['total']}, plain "
        f"{'exact' if r['plain']['exact'] else r['plain']['total']}"
        f"{', --all worse' if r['worse'] else ''}"))
    return {"composites": comp, "photos": each, "seconds": round(time.time() - t0)}


def format_real_tables(t: dict) -> str:
    """The real whole-table figures: the composites, then --all against plain score."""
    c, p = t["composites"]["summary"], t["photos"]["summary"]
    return "\n".join([
        f"== real tables: {c['photos']} composites of dev phone photos ({c['kingdoms']} "
        f"kingdoms) read by --all",
        f"  kingdoms found {c['found']}/{c['kingdoms']}, exact {c['exact']}/{c['kingdoms']}, "
        f"phantom {c['phantom']}, wrongly cut {c['wrongly_cut']}",
        f"== --all on each dev phone photo ({p['photos']}) against plain score",
        f"  found {p['all_found']} (plain {p['plain_found']}), exact {p['all_exact']} (plain "
        f"{p['plain_exact']}), --all worse than plain {p['all_worse']}, wrongly cut "
        f"{p['wrongly_cut']}, other kingdoms {p['others']}"])


def format_real_table_rows(t: dict) -> str:
    """One line per composite and per photo."""
    lines = ["== real tables, each composite: photos, found/kingdoms, exact, phantom, wrongly cut"]
    for r in t["composites"]["photos"]:
        lines.append(f"  {' + '.join(r['photos'])}  {r['found']}/{r['kingdoms']}  exact "
                     f"{r['exact']}  phantom {r['phantom']}  wrongly cut {r['wrongly_cut']}")
    lines.append("== --all on each dev phone photo: --all total / plain total / true total")
    for r in t["photos"]["photos"]:
        lines.append(f"  {r['photo']}  {r['all']['total']} / {r['plain']['total']} / "
                     f"{r['true_total']}{'  --all worse' if r['worse'] else ''}"
                     f"{'  wrongly cut' if r['wrongly_cut'] else ''}")
    return "\n".join(lines)


def _seconds(v) -> str:
    return "-" if v is None else f"{v:.2f} s"


def format_table_photos(t: dict) -> str:
    """The whole-table figures in two lines under a heading."""
    st, s = t["settings"], t["summary"]
    n, k = s["photos"], s["kingdoms"]
    return "\n".join([
        f"== table photos: {n} generated whole-table photos (seeds {st['first_seed']}-"
        f"{st['first_seed'] + n - 1}, {st['width']}x{st['height']}, {k} kingdoms), read with "
        f"the {st['models']} models",
        f"  kingdoms found {s['found']}/{k}, exact {s['exact']}/{k}, phantom kingdoms "
        f"{s['phantom']}, photos numbered right {s['numbering_right']}/{n}",
        f"  seconds per photo: median {_seconds(s['seconds_median'])}, max "
        f"{_seconds(s['seconds_max'])}, 4-kingdom photos median "
        f"{_seconds(s['seconds_four_median'])}"])


def format_table_photo_rows(t: dict) -> str:
    """One line per table photo: seed, table, kingdoms found / exact / phantom, numbering."""
    lines = ["== table photos, each photo: seed, table kind/palette, found/kingdoms, exact, "
             "phantom, numbered right, seconds"]
    for r in t["photos"]:
        lines.append(f"  {r['seed']}  {r['table']:<7} {r['palette']:<12} {r['found']}/"
                     f"{r['kingdoms']}  exact {r['exact']}  phantom {r['phantom']}  "
                     f"{'numbered right' if r['numbering_right'] else 'numbered wrong'}  "
                     f"{r['seconds']:.2f} s")
    return "\n".join(lines)


def _err(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def format_hard_tables(h: dict) -> str:
    """The hard-table figures: totals, then one line per table kind."""
    from vision.lab.scenes.hard_tables import TABLE_KINDS as usual

    st, s = h["settings"], h["summary"]
    n = s["n"]
    real = st.get("boards", "drawn") != "drawn"
    harder = bool(st.get("challenges"))
    lines = [
        f"== {'harder' if harder else 'hard'} tables{', AAU dev boards' if real else ''}: {n} "
        f"generated scenes (seeds "
        f"{st['first_seed']}-{st['first_seed'] + n - 1}, {st['width']}x{st['height']}"
        + (f"; tables {', '.join(st['kinds'])}" if tuple(st.get("kinds") or usual) != usual
           and not harder else "")
        + (f"; challenges {', '.join(st['challenges'])}" if harder else "")
        + "), read "
        f"with the {st['models']} models"
        + (" (the square classifier was trained on these boards, the detector was not)"
           if real else ""),
        f"  found {s['found']}/{n}" + (f" ({s['crashed']} crashes)" if s["crashed"] else "")
        + f", grid size right {s['grid_right']}/{n}, framed right {s['framed']}/{n}, "
        f"totals exact {s['total_exact']}/{n} ({s['exact_framed']} of them framed right)",
        f"  wrong totals {s['wrong_total']}, without a flagged wrong square {s['wrong_total_unflagged']}",
        f"  outline corner error (found) mean {_err(s['corner_error_mean'])}, median "
        f"{_err(s['corner_error_median'])}, max {_err(s['corner_error_max'])} of a side",
        f"  read squares off the kingdom {s['squares_off']} ({s['off_as_tile']} read as tiles, "
        f"{s.get('off_as_tile_flagged', 0)} of them flagged, "
        f"{s.get('off_as_tile_unflagged', 0)} not), "
        f"land squares missed {s['squares_missed']}, squares read wrong {s['squares_wrong']}"
        + ("" if s["seconds_mean"] is None else f"; {s['seconds_mean']:.2f} s per read"),
        f"  {'table kind':<10} {'n':>3} {'found':>5} {'grid':>5} {'framed':>6} {'exact':>5} "
        f"{'unflagged':>9}  corner error median / max",
    ]
    for kind, k in s["kinds"].items():
        lines.append(f"  {kind:<10} {k['n']:>3} {k['found']:>5} {k['grid_right']:>5} {k['framed']:>6} "
                     f"{k['total_exact']:>5} {k['wrong_total_unflagged']:>9}  "
                     f"{_err(k['corner_error_median'])} / {_err(k['corner_error_max'])}")
    if s.get("challenges"):
        lines.append(f"  {'challenge':<10} {'n':>3} {'found':>5} {'grid':>5} {'exact':>5} "
                     f"{'table read as tile (flagged)':>29} {'unflagged wrong':>15}")
        for kind, k in s["challenges"].items():
            lines.append(f"  {kind:<10} {k['n']:>3} {k['found']:>5} {k['grid_right']:>5} "
                         f"{k['total_exact']:>5} {k['off_as_tile']:>21} ({k['off_as_tile_flagged']:>4}) "
                         f"{k['wrong_total_unflagged']:>15}")
    return "\n".join(lines)


def format_hard_scenes(h: dict) -> str:
    """One line per hard-table scene: seed, size, table kind and colours, what went wrong."""
    lines = ["== hard tables, each scene: seed, size, table kind/palette, what the reader did"]
    for r in h["scenes"]:
        lines.append(f"  {r['seed']}  {r['size']}x{r['size']}  {r['table']:<7} {r['palette']:<12} "
                     f"{r['why']}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- run
def _fit_temperatures(logits_list, cases):
    from vision.lab.training.squares import fit_temperature

    L, T, C = [], [], []
    for lg, cs in zip(logits_list, cases):
        if lg is None:
            continue
        L.append(lg)
        T += [TERRAINS.index(t) for row in cs.terrain for t in row]
        C += [c for row in cs.crowns for c in row]
    L = np.concatenate(L)
    return (fit_temperature(L[:, :len(TERRAINS)], np.array(T)),
            fit_temperature(L[:, len(TERRAINS):], np.array(C)))


def run(photos, folds: int, quick: bool, log=print, epochs: int | None = None,
        model_path=None, with_detect: bool = True, with_synth: bool = True,
        save_outputs=None, fold_models=None) -> dict:
    """Cross-validate (``quick``: read with the shipped model). ``fold_models``: a folder to
    keep each fold's network in (``fold{K}.onnx``), to read its photos again later -- a change to
    the reader's frame choice measured with the same networks -- without retraining."""
    cfg = _config.load()
    ccfg = cfg["classify"]
    t0 = time.time()
    log(f"preparing {len(photos)} dev photos ...")
    cases = build_cases(photos, cfg, log)
    logits = [None] * len(cases)

    def read_detected(indices, reader, clf):
        """Frame the photos ``indices`` end to end with ``reader``; read them with ``clf``."""
        found = detected_cases(photos, indices, cfg, log, reader, with_detect, with_synth)
        cases.extend(found)
        logits.extend(cs.logits(clf, cfg) if cs.crops is not None else None for cs in found)

    if quick:
        from vision.reader import Reader

        reader = Reader(cfg, model_path=model_path)
        clf = reader.classifier
        for j, cs in enumerate(cases):
            logits[j] = cs.logits(clf, cfg)
        read_detected(range(len(photos)), reader, clf)
        temps = (clf.t_terrain, clf.t_crowns)
    else:
        from vision.lab.training.squares import DEFAULT_EPOCHS, export_onnx, fit

        fold_of = assign_folds(photos, folds)
        with tempfile.TemporaryDirectory() as tmp:
            keep = Path(fold_models) if fold_models else Path(tmp)
            keep.mkdir(parents=True, exist_ok=True)
            trains = [[p for p, k in zip(photos, fold_of) if k != f] for f in range(folds)]
            whats = [{"fold": f, "folds": folds, "epochs": epochs or DEFAULT_EPOCHS, "seed": f,
                      "trained_on": sorted(p.name for p in train)}
                     for f, train in enumerate(trains)]
            # every kept network checked before any is trained: a wrong folder fails at once
            kept = [kept_fold(keep / f"fold{f}.onnx", whats[f]) for f in range(folds)]
            for f in range(folds):
                train, what, path = trains[f], whats[f], keep / f"fold{f}.onnx"
                if kept[f]:
                    log(f"fold {f + 1}/{folds}: reading with the network kept in {path} "
                        f"({time.time() - t0:.0f} s)")
                else:
                    log(f"fold {f + 1}/{folds}: training on {len(train)} photos "
                        f"({time.time() - t0:.0f} s)")
                    model = fit(train, ccfg, what["epochs"], seed=f)
                    export_onnx(model, path, crop_size(ccfg["cell"], ccfg["crop_margin"]))
                    write_fold_record(path, what)
                reader = fold_reader(path, cfg)
                clf = reader.classifier
                for j, cs in enumerate(cases):
                    if fold_of[cs.photo_index] == f and cs.crops is not None:
                        logits[j] = cs.logits(clf, cfg)
                read_detected([i for i, k in enumerate(fold_of) if k == f], reader, clf)
        temps = _fit_temperatures([lg if cs.kind in ("aau", "phone") else None
                                   for lg, cs in zip(logits, cases)], cases)
    # each photo's cases together, as the per-photo lists show them: its labelled board, then
    # its reading end to end
    order = sorted(range(len(cases)), key=lambda j: (cases[j].photo_index, cases[j].kind in DETECTED))
    cases, logits = [cases[j] for j in order], [logits[j] for j in order]
    if save_outputs:
        for cs in cases:
            cs.crops = cs.washed = None  # the network outputs are kept, not the pixels
        with open(save_outputs, "wb") as fh:
            pickle.dump({"cases": cases, "logits": logits, "temps": temps, "quick": quick,
                         "folds": None if quick else folds, "seconds": round(time.time() - t0)}, fh)
        log(f"network outputs saved to {save_outputs}")
    return _summarise_outputs(cases, logits, temps, quick, folds, round(time.time() - t0), cfg)


def rerun_saved(path) -> dict:
    """Figures from saved network outputs (``--save-outputs``) under the current config.

    Review thresholds and decoding live in the config, not in the network: this scores a
    change to them on the same cross-validated outputs in seconds, without retraining.
    """
    with open(path, "rb") as fh:
        saved = pickle.load(fh)
    return _summarise_outputs(saved["cases"], saved["logits"], saved["temps"], saved["quick"],
                              saved["folds"], saved["seconds"], _config.load())


def _summarise_outputs(cases, logits, temps, quick, folds, seconds, cfg) -> dict:
    clf = SquareClassifier(None, cfg["classify"], load_network=False)
    clf.t_terrain, clf.t_crowns = temps
    rcfg = cfg["review"]
    readings = []
    for lg, cs in zip(logits, cases):
        if lg is None:
            readings.append(None)
            continue
        table = getattr(cs, "table", None)     # outputs saved before vision.read.holes have none
        if table is not None and cfg["holes"]["enabled"]:
            lg = boost_logits(*table, lg, cfg["holes"], *temps, far=True)   # as the reader reads
        grid = clf.read_logits(lg, cs.rows, cs.cols)
        if cs.kind in DETECTED and too_few_tiles((sq.terrain for row in grid for sq in row), cfg):
            readings.append(None)      # the reader says "no kingdom found" for such a find
            continue
        gaps, bare, like_table = set(), set(), set()
        if table is not None:
            gaps, bare, like_table = review_distances(grid, rcfg, lambda: table, cfg["holes"])
        shares = getattr(cs, "glare", None)    # outputs saved before the glare flag have none
        glare = set() if shares is None else glare_squares(grid, rcfg, lambda: shares)
        readings.append((grid, review_reasons(grid, rcfg, cs.outside, gaps, like_table, bare,
                                              glare)))
    result = {"cross_validated": not quick, "folds": None if quick else folds,
              "temperatures": {"t_terrain": temps[0], "t_crowns": temps[1]},
              "seconds": seconds}
    for kind in SETS:
        s = summarise(cases, readings, kind)
        if s is not None:
            result[kind] = s
    return result


def record_figures(res: dict, folds: int) -> str | None:
    """Write the CV temperatures and figures (and the review settings they were read with)
    into the shipped model's ``squares.json``; returns its file name (None: no model)."""
    cfg = _config.load()
    meta_path = (MODELS_DIR / cfg["classify"]["model"]).with_suffix(".json")
    if not meta_path.exists():
        return None
    meta = json.loads(meta_path.read_text())
    meta["calibration"] = {**res["temperatures"], "source": f"{folds}-fold CV out-of-fold outputs"}
    meta["cv"] = {k: ({kk: vv for kk, vv in v.items() if "confusion" not in kk and kk != "per_board"}
                      if isinstance(v, dict) and "boards" in v else v)
                  for k, v in res.items() if k not in GENERATED}
    meta["cv"]["review"] = dict(cfg["review"])
    for key in HARD:                  # read with the shipped models, not cross-validated
        if key in res:
            meta[key] = {k: v for k, v in res[key].items() if k != "scenes"}
    if "table_photos" in res:
        meta["table_photos"] = {k: v for k, v in res["table_photos"].items() if k != "photos"}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return meta_path.name


def _usage(message: str) -> int:
    print(f"kingdomino: error: {message}", file=sys.stderr, flush=True)
    return 2


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")


def _generated_options(args, count: str, seed: str, size: str, default_n: int, seeds_from: int,
                       seeds: str, why: str, from_outputs) -> tuple | str:
    """A generated measurement's options (``--hard-tables``/``--hard-seed``/``--hard-size`` or
    the ``--table-*`` ones) as ``(n, first seed, size)``, or the usage error to print. Saved
    outputs are re-scored in seconds: no generated photos then, unless asked for."""
    from vision.lab.scenes.tile_scenes import TRAIN_SEEDS_FROM

    n = getattr(args, count, None)
    if n is None:
        n = 0 if from_outputs else default_n
    first = getattr(args, seed, None)
    if first is None:
        first = seeds_from
    flag = "--" + count.replace("_", "-")
    if n < 0:
        return f"{flag} must be 0 (skip them) or more, got {n}"
    if first < seeds_from or first + n > TRAIN_SEEDS_FROM:
        return (f"--{seed.replace('_', '-')}: {seeds} must lie from {seeds_from} to "
                f"{TRAIN_SEEDS_FROM - 1} ({why}the tile network trains on seeds from "
                f"{TRAIN_SEEDS_FROM} on), got {first} to {first + n - 1}")
    return n, first, getattr(args, size, None) or HARD_TABLES_SIZE


def _aau_boards(args, option: str):
    """The AAU dev boards the scenes of ``option`` (--hard-boards, --harder-boards) hold, or
    the message that says why there are none."""
    from vision.lab.scenes.synth import aau_boards

    try:
        boards = aau_boards(getattr(args, "datasets", None))
    except OSError as exc:
        return (f"{option} needs the AAU dev photos ({exc}): put the datasets in "
                f"../shared/datasets, or name their folder with --datasets")
    if not boards:
        return f"{option}: no AAU dev photos found in the datasets folder"
    return boards


def _harder_options(args) -> tuple | str:
    """``--harder``/``--harder-boards``/``--harder-seed``/``--harder-challenges`` as ``(n drawn,
    n on AAU boards, first seed, challenges)``, or the usage error to print."""
    from vision.lab.scenes import harder_tables

    n = getattr(args, "harder", None) or 0
    n_boards = getattr(args, "harder_boards", None) or 0
    if n < 0 or n_boards < 0:
        return f"--harder and --harder-boards must be 0 (skip them) or more, got {n}, {n_boards}"
    first = getattr(args, "harder_seed", None)
    first = harder_tables.REPORT_SEEDS_FROM if first is None else int(first)
    if first < harder_tables.DEVELOP_SEEDS_FROM:
        return (f"--harder-seed: harder scenes' seeds start at {harder_tables.DEVELOP_SEEDS_FROM} "
                f"(develop on {harder_tables.DEVELOP_SEEDS_FROM}-"
                f"{harder_tables.REPORT_SEEDS_FROM - 1}, report from "
                f"{harder_tables.REPORT_SEEDS_FROM}), got {first}")
    try:
        challenges = harder_tables.parse_challenges(getattr(args, "harder_challenges", None))
    except ValueError as exc:
        return f"--harder-challenges: {exc}"
    return n, n_boards, first, challenges


def main(args) -> int:
    from vision.lab.scenes import whole_tables as tp
    from vision.lab.scenes import hard_tables as tables
    from vision.lab.training.squares import dev_photos

    quick = bool(getattr(args, "quick", False))
    folds = int(getattr(args, "folds", 5) or 5)
    if folds < 2 and not quick:
        print("kingdomino: error: --folds must be at least 2", flush=True)
        return 2
    from_outputs = getattr(args, "from_outputs", None)
    hard = _generated_options(args, "hard_tables", "hard_seed", "hard_size", HARD_TABLES_N,
                              tables.MEASURE_SEEDS_FROM, "the scenes' seeds", "", from_outputs)
    if isinstance(hard, str):
        return _usage(hard)
    n_hard, hard_seed, hard_size = hard
    try:
        kinds = tables.parse_kinds(getattr(args, "hard_kinds", None))
    except ValueError as exc:
        return _usage(f"--hard-kinds: {exc}")
    n_boards = getattr(args, "hard_boards", None) or 0
    if n_boards < 0:
        return _usage(f"--hard-boards must be 0 (skip them) or more, got {n_boards}")
    boards = ()
    if n_boards:
        boards = _aau_boards(args, "--hard-boards")
        if isinstance(boards, str):
            return _usage(boards)
    harder = _harder_options(args)
    if isinstance(harder, str):
        return _usage(harder)
    n_harder, n_harder_boards, harder_seed, challenges = harder
    if n_harder_boards and not boards:
        boards = _aau_boards(args, "--harder-boards")
        if isinstance(boards, str):
            return _usage(boards)
    table = _generated_options(args, "table_photos", "table_seed", "table_size", TABLE_PHOTOS_N,
                               tp.SEEDS_FROM, "the table photos' seeds",
                               "seeds below may be used for training, ", from_outputs)
    if isinstance(table, str):
        return _usage(table)
    n_table, table_seed, table_size = table
    fold_models = getattr(args, "fold_models", None)
    if fold_models and (quick or from_outputs):
        return _usage("--fold-models keeps each fold's network: it needs a cross-validation run "
                      "(leave out --quick and --from-outputs)")
    if fold_models and Path(fold_models).exists() and not Path(fold_models).is_dir():
        return _usage(f"--fold-models {fold_models}: not a folder")
    out = getattr(args, "out", None)
    if out and not Path(out).parent.is_dir():
        return _usage(f"--out {out}: the folder {Path(out).parent} does not exist")
    if from_outputs:
        try:
            res = rerun_saved(from_outputs)
        except (OSError, pickle.UnpicklingError, EOFError, KeyError) as exc:
            return _usage(f"--from-outputs {from_outputs}: not a file of saved outputs ({exc})")
        quick = not res["cross_validated"]
        folds = res["folds"] or 0
    else:
        try:
            photos = dev_photos(getattr(args, "datasets", None))
        except OSError as exc:
            return _usage(f"cannot read the dev photos ({exc}): put the datasets in "
                          f"../shared/datasets, or name their folder with --datasets")
        try:
            res = run(photos, folds, quick, log=lambda m: print(m, flush=True),
                      with_synth=not getattr(args, "no_synth", False),
                      save_outputs=getattr(args, "save_outputs", None),
                      fold_models=fold_models)
        except FoldModelsError as exc:
            return _usage(f"--fold-models: {exc}")
    if n_hard:
        print(f"reading {n_hard} hard-table scenes ({hard_size[0]}x{hard_size[1]}) "
              f"with the shipped models ...", flush=True)
        res["hard_tables"] = hard_tables(n_hard, hard_size[0], hard_size[1], hard_seed,
                                         log=lambda m: print(m, flush=True), kinds=kinds)
    if n_boards:
        print(f"reading {n_boards} hard-table scenes with AAU dev boards ({hard_size[0]}x"
              f"{hard_size[1]}) with the shipped models ...", flush=True)
        res["hard_tables_aau"] = hard_tables(n_boards, hard_size[0], hard_size[1],
                                             HARD_BOARDS_SEED, log=lambda m: print(m, flush=True),
                                             boards=boards, kinds=kinds)
    for key, n, real in (("harder", n_harder, ()), ("harder_aau", n_harder_boards, boards)):
        if n:
            print(f"reading {n} harder-table scenes{' with AAU dev boards' if real else ''} "
                  f"({hard_size[0]}x{hard_size[1]}) with the shipped models ...", flush=True)
            res[key] = hard_tables(n, hard_size[0], hard_size[1], harder_seed,
                                   log=lambda m: print(m, flush=True), boards=real,
                                   challenges=challenges)
    if n_table:
        print(f"reading {n_table} whole-table photos ({table_size[0]}x{table_size[1]}) "
              f"with the shipped models ...", flush=True)
        res["table_photos"] = table_photos(n_table, table_size[0], table_size[1], table_seed,
                                           log=lambda m: print(m, flush=True))
    if getattr(args, "real_tables", False) and not from_outputs:
        print("reading whole tables of real kingdoms (dev phone photos) ...", flush=True)
        res["real_tables"] = real_tables(photos, log=lambda m: print(m, flush=True))
    if quick:
        print("NOTE: --quick reads with the shipped model, which was trained on these very photos: "
              "the figures below are NOT cross-validated and overstate real accuracy.")
    else:
        print(f"{folds}-fold kingdom-grouped cross-validation (classifier retrained per fold); "
              f"fitted temperatures terrain {res['temperatures']['t_terrain']:.2f}, "
              f"crowns {res['temperatures']['t_crowns']:.2f}")
    for kind in SETS:
        if kind in res:
            print(format_summary(kind, res[kind]))
    for key in HARD:
        if key in res:
            print(format_hard_tables(res[key]))
    if "table_photos" in res:
        print(format_table_photos(res["table_photos"]))
    if "real_tables" in res:
        print(format_real_tables(res["real_tables"]))
    for kind in getattr(args, "per_photo", None) or ():
        if kind == HARDER:
            for key in ("harder", "harder_aau"):
                if key in res:
                    print(format_hard_scenes(res[key]))
        elif kind in res:
            print(format_per_board(kind, res[kind]))
        elif kind == HARD_TABLES and "hard_tables" in res:
            print(format_hard_scenes(res["hard_tables"]))
        elif kind == TABLE_PHOTOS and "table_photos" in res:
            print(format_table_photo_rows(res["table_photos"]))
        elif kind == REAL_TABLES and "real_tables" in res:
            print(format_real_table_rows(res["real_tables"]))
    if out:
        try:
            Path(out).write_text(json.dumps(res, indent=1, default=_jsonable) + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"kingdomino: error: cannot write {out}: {exc}", file=sys.stderr)
            return 1
        print(f"figures written to {out}")
    if not quick and (not from_outputs or getattr(args, "record", False)):
        name = record_figures(res, folds)
        if name:
            print(f"calibration and figures recorded in {name}")
    return 0
