"""``kingdomino evaluate``: kingdom-grouped K-fold cross-validation of the square reader.

For each fold the classifier is retrained on the other folds' dev photos (no kingdom, and no
``KT`` game, is ever in both) and read on the held-out photos:

- ``aau``: the rectified AAU boards (whole image = board);
- ``phone``: phone photos rectified from their labelled corners (reading accuracy alone);
- ``phone-detected``: phone photos read end to end with ``vision.detect`` (when present);
- ``synth``: held-out AAU boards put into generated photo scenes (``vision.lab.synth``) and read
  end to end (detect + read).

Temperatures for the confidences are fitted on the out-of-fold outputs and, after a full run,
written with the figures into ``models/squares.json``. ``--quick`` reads with the shipped model
instead: it has seen these photos, so those figures are NOT cross-validated.
"""
from __future__ import annotations

import json
import pickle
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from vision import config as _config
from vision.classify import MODELS_DIR, N_CROWNS, TERRAINS, SquareClassifier
from vision.reader import outside_cells, review_reasons, too_few_tiles
from vision.squares import cell_crops, crop_size, image_corners, rectify

SETS = ("aau", "phone", "phone-detected", "synth")
DETECTED = ("phone-detected", "synth")   # read end to end: the board was found by vision.detect


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
    size = size or (5 if max(rows, cols) <= 5 else 7)
    cells = [[{"terrain": "empty", "crowns": 0} for _ in range(size)] for _ in range(size)]
    for r in range(rows):
        for c in range(cols):
            cells[r][c] = {"terrain": terrain[r][c], "crowns": int(crowns[r][c])}
    return {"rules": "kingdomino", "size": size, "cells": cells}


def _simple_score(terrain, crowns) -> int:
    rows, cols = len(terrain), len(terrain[0])
    seen, total = set(), 0
    for r in range(rows):
        for c in range(cols):
            if (r, c) in seen or terrain[r][c] in ("castle", "empty"):
                continue
            stack, n, k = [(r, c)], 0, 0
            seen.add((r, c))
            while stack:
                a, b = stack.pop()
                n, k = n + 1, k + crowns[a][b]
                for da, db in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    x, y = a + da, b + db
                    if 0 <= x < rows and 0 <= y < cols and (x, y) not in seen \
                            and terrain[x][y] == terrain[r][c]:
                        seen.add((x, y))
                        stack.append((x, y))
            total += n * k
    return total


def score(terrain, crowns) -> int:
    """Base Kingdomino total (``engine.score``; a plain region count if the engine is absent)."""
    try:
        import engine

        return int(engine.score(engine.Kingdom.from_json(kingdom_obj(terrain, crowns))).to_json()["total"])
    except (ImportError, AttributeError):
        return _simple_score(terrain, crowns)
    except ValueError:
        # a reading the engine refuses (e.g. no castle) still gets a comparable number
        return _simple_score(terrain, crowns)


# ----------------------------------------------------------------------------- inputs
class Case:
    """One board to read: crops (model independent), truth, and where it came from."""

    def __init__(self, kind, photo_index, name, crops, rows, cols, terrain, crowns,
                 outside=frozenset(), detected_ok=True, occluded=frozenset()):
        self.kind, self.photo_index, self.name = kind, photo_index, name
        self.crops, self.rows, self.cols = crops, rows, cols
        self.terrain, self.crowns = terrain, crowns
        self.outside, self.detected_ok, self.occluded = outside, detected_ok, occluded


def build_cases(photos, cfg: dict, log, with_detect: bool = True, with_synth: bool = True):
    ccfg, rcfg = cfg["classify"], cfg["review"]
    cell, bm, cm = ccfg["cell"], ccfg["board_margin"], ccfg["crop_margin"]
    from vision import detect
    from vision.lab import synth

    cases = []
    for i, p in enumerate(photos):
        image = cv2.imread(str(p.path), cv2.IMREAD_COLOR)
        corners = p.corners if p.corners is not None else image_corners(image)
        board, _ = rectify(image, corners, p.rows, p.cols, cell, bm)
        crops = cell_crops(board, p.rows, p.cols, cell, board_margin=bm, crop_margin=cm)
        cases.append(Case(p.dataset, i, p.name, crops, p.rows, p.cols, p.terrain, p.crowns,
                          outside_cells(image.shape, corners, p.rows, p.cols, rcfg),
                          occluded=p.occluded))
        if p.dataset == "phone" and with_detect:
            cases.append(_detected_case("phone-detected", i, p.name, image, p.terrain, p.crowns,
                                        detect, cfg))
        if p.dataset == "aau" and with_synth:
            rng = np.random.default_rng(1000 + i)
            try:
                scene, _sc, info = synth.make_scene(image, rng, return_info=True)
                terrain = synth.scene_grid(p.terrain, info["turns"])
                crowns = synth.scene_grid(p.crowns, info["turns"])
            except Exception as exc:  # noqa: BLE001 - the scene generator is optional
                log(f"  synth scene for {p.name} failed: {exc}")
            else:
                cases.append(_detected_case("synth", i, p.name, scene, terrain, crowns, detect, cfg))
    return cases


def _detected_case(kind, i, name, image, terrain, crowns, detect, cfg) -> Case:
    ccfg, rcfg = cfg["classify"], cfg["review"]
    cell, bm, cm = ccfg["cell"], ccfg["board_margin"], ccfg["crop_margin"]
    rows, cols = len(terrain), len(terrain[0])
    try:
        b = detect.find_board(image, cfg)
    except ValueError:
        b = None
    if b is None or (b.rows, b.cols) not in ((rows, cols), (cols, rows)):
        return Case(kind, i, name, None, rows, cols, terrain, crowns, detected_ok=False)
    rows, cols = b.rows, b.cols        # a kingdom has no "up": the truth is turned to match
    offsets = None
    if getattr(b, "offsets", None) is not None and b.cell:
        offsets = np.asarray(b.offsets, np.float64) * (cell / b.cell)
    board, _ = rectify(image, b.corners, rows, cols, cell, bm)
    crops = cell_crops(board, rows, cols, cell, board_margin=bm, crop_margin=cm, offsets=offsets)
    return Case(kind, i, name, crops, rows, cols, terrain, crowns,
                outside_cells(image.shape, b.corners, rows, cols, rcfg))


# ----------------------------------------------------------------------------- metrics
def aligned_truth(terrain, crowns, grid):
    """The labels turned by the quarter turn that best matches the reading's frame.

    A photo of a kingdom has no "up": which corner the detector takes as the first is
    arbitrary (a board at 45 degrees has two "top" sides), and the score does not depend on
    it. The labels are compared with the reading in the turn (among those giving the
    reading's shape) where most squares agree; the first such turn on a tie.
    """
    from vision.lab.synth import scene_grid       # the one quarter-turn of label grids

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
    for cs, rd in sel:
        boards += 1
        if rd is None:
            not_found += 1
            wrong += 1
            per_board.append({"name": cs.name, "found": False, "total": score(cs.terrain, cs.crowns)})
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
                          "misread_in_review": in_review, "review": len(reasons)})
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
    }


def format_per_board(kind: str, s: dict) -> str:
    """One line per board: found, total read against the true total, squares misread/flagged."""
    lines = [f"== {kind}, each photo: total read / true total, squares misread (of them in review), review size"]
    for b in s["per_board"]:
        if not b["found"]:
            lines.append(f"  NOT FOUND  {'':>9}  true total {b['total']:>3}  {b['name']}")
            continue
        mark = "exact" if b["read_total"] == b["total"] else "WRONG"
        lines.append(f"  {mark:<5} {b['size']}  {b['read_total']:>3} / {b['total']:<3}  "
                     f"misread {b['misread']} ({b['misread_in_review']} in review)  "
                     f"review {b['review']:>2}  {b['name']}")
    return "\n".join(lines)


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
    return "\n".join(lines)


# ----------------------------------------------------------------------------- run
def _fit_temperatures(logits_list, cases):
    from vision.lab.train import fit_temperature

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
        save_outputs=None) -> dict:
    cfg = _config.load()
    ccfg = cfg["classify"]
    t0 = time.time()
    log(f"preparing {len(photos)} dev photos ...")
    cases = build_cases(photos, cfg, log, with_detect, with_synth)
    logits = [None] * len(cases)
    if quick:
        clf = SquareClassifier(model_path, ccfg)
        for j, cs in enumerate(cases):
            if cs.crops is not None:
                logits[j] = clf.logits(cs.crops)
        temps = (clf.t_terrain, clf.t_crowns)
    else:
        from vision.lab.train import DEFAULT_EPOCHS, export_onnx, fit

        fold_of = assign_folds(photos, folds)
        with tempfile.TemporaryDirectory() as tmp:
            for f in range(folds):
                train = [p for p, k in zip(photos, fold_of) if k != f]
                log(f"fold {f + 1}/{folds}: training on {len(train)} photos "
                    f"({time.time() - t0:.0f} s)")
                model = fit(train, ccfg, epochs or DEFAULT_EPOCHS, seed=f)
                path = Path(tmp) / f"fold{f}.onnx"
                export_onnx(model, path, crop_size(ccfg["cell"], ccfg["crop_margin"]))
                clf = SquareClassifier(path, ccfg)
                for j, cs in enumerate(cases):
                    if fold_of[cs.photo_index] == f and cs.crops is not None:
                        logits[j] = clf.logits(cs.crops)
        temps = _fit_temperatures([lg if cs.kind in ("aau", "phone") else None
                                   for lg, cs in zip(logits, cases)], cases)
        clf.t_terrain, clf.t_crowns = temps
    if save_outputs:
        for cs in cases:
            cs.crops = None  # the network outputs are what is kept, not the pixels
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
        grid = clf.read_logits(lg, cs.rows, cs.cols)
        if cs.kind in DETECTED and too_few_tiles((sq.terrain for row in grid for sq in row), cfg):
            readings.append(None)      # the reader says "no kingdom found" for such a find
            continue
        readings.append((grid, review_reasons(grid, rcfg, cs.outside)))
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
                  for k, v in res.items()}
    meta["cv"]["review"] = dict(cfg["review"])
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return meta_path.name


def main(args) -> int:
    from vision.lab.train import dev_photos

    quick = bool(getattr(args, "quick", False))
    folds = int(getattr(args, "folds", 5) or 5)
    if folds < 2 and not quick:
        print("kingdomino: error: --folds must be at least 2", flush=True)
        return 2
    from_outputs = getattr(args, "from_outputs", None)
    if from_outputs:
        res = rerun_saved(from_outputs)
        quick = not res["cross_validated"]
        folds = res["folds"] or 0
    else:
        photos = dev_photos(getattr(args, "datasets", None))
        res = run(photos, folds, quick, log=lambda m: print(m, flush=True),
                  with_synth=not getattr(args, "no_synth", False),
                  save_outputs=getattr(args, "save_outputs", None))
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
    for kind in getattr(args, "per_photo", None) or ():
        if kind in res:
            print(format_per_board(kind, res[kind]))
    if not quick and (not from_outputs or getattr(args, "record", False)):
        name = record_figures(res, folds)
        if name:
            print(f"calibration and figures recorded in {name}")
    return 0
