"""Lab work on the detector's per-pixel tile model (``vision.find.tilemap`` runs it): fitting it on
the labelled dev phone photos (plus generated scenes), and measuring detection on labelled
photos.

``python3 -m vision.lab.training.pixels --fit --with-synth 120 --hidden 32 --out models/pixel_model.json``
refits the shipped model; without ``--fit`` it reports detection on the dev photos.
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.find.detect import corner_error, locate
from vision.errors import PhotoError
from vision.geometry import board_homography
from vision.find.tilemap import downscale, pixel_features


def synth_training_scenes(n: int, seed: int = 0, long_side: int = 400):
    """``n`` scenes from ``vision.lab.scenes.synth`` (rendered kingdoms on generated tables, exact
    corners): ``(small_bgr, labels)`` pairs, labels 1 tile / 0 not / -1 undecided."""
    from vision.lab.scenes import synth
    from vision.lab.scenes.tile_scenes import scene_labels   # not at the top: tile_scenes imports this module

    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        b = synth.rendered_board(rng, size=7 if i % 3 == 0 else 5, cell=60,
                                 full_frame=bool(i % 2))
        scene, corners = synth.make_scene(b["image"], rng, width=2 * long_side,
                                          board_mask=b["mask"])
        small, s = downscale(scene, long_side)
        h, w = b["mask"].shape[:2]
        H = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]),
                                        np.float32(corners) * s)
        tiles = cv2.warpPerspective((b["mask"] > 0).astype(np.uint8) * 255, H,
                                    (small.shape[1], small.shape[0]), flags=cv2.INTER_NEAREST)
        out.append((small, scene_labels(tiles, small.shape)))
    return out


def fit_pixel_model(photos, long_side: int = 400, per_photo: int = 4000, C: float = 1.0,
                    seed: int = 0, extra=(), hidden: int = 0) -> dict:
    """Fit the tile-likelihood model on labelled phone photos (tiles vs. everything else).

    Positives: pixels of non-empty labelled squares; negatives: pixels well outside the
    labelled rectangle and empty squares inside it. ``extra``: more ``(small_bgr, labels)``
    pairs (e.g. ``synth_training_scenes``). ``hidden``: a one-hidden-layer network of that
    width instead of the quadratic logistic model.
    """
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    xs, ys = [], []
    pairs = []
    for p in photos:
        small, s = downscale(cv2.imread(str(p.path)), long_side)
        pairs.append((small, label_mask(p, small.shape[:2], s)))
    for small, y in list(pairs) + list(extra):
        y = y.ravel()
        idx = np.flatnonzero(y >= 0)
        idx = rng.choice(idx, min(per_photo, len(idx)), replace=False)
        xs.append(pixel_features(small)[idx])
        ys.append(y[idx])
    x, y = np.concatenate(xs), np.concatenate(ys)
    mean, scale = x.mean(0), x.std(0) + 1e-6
    if hidden:
        from sklearn.neural_network import MLPClassifier

        mlp = MLPClassifier(hidden_layer_sizes=(hidden,), alpha=1e-3, max_iter=300,
                            random_state=seed).fit((x - mean) / scale, y)
        return {"mean": mean.tolist(), "scale": scale.tolist(),
                "w1": mlp.coefs_[0].ravel().tolist(), "b1": mlp.intercepts_[0].tolist(),
                "w2": mlp.coefs_[1].ravel().tolist(), "b2": float(mlp.intercepts_[1][0])}
    clf = LogisticRegression(C=C, max_iter=1000).fit(quadratic_terms((x - mean) / scale), y)
    return {"mean": mean.tolist(), "scale": scale.tolist(),
            "coef": clf.coef_[0].tolist(), "intercept": float(clf.intercept_[0])}


def label_mask(p, shape, s: float) -> np.ndarray:
    """1 on labelled tiles, 0 on background, -1 undecided (edges), at scale ``s``."""
    cell = 16
    corners = p.corners * s
    H = board_homography(corners, p.rows, p.cols, cell)
    grid = np.array([[0 if t == "empty" else 255 for t in row] for row in p.terrain], np.uint8)
    grid = cv2.resize(grid, (p.cols * cell, p.rows * cell), interpolation=cv2.INTER_NEAREST)
    tiles = cv2.warpPerspective(grid, np.linalg.inv(H), (shape[1], shape[0]),
                                flags=cv2.INTER_NEAREST)
    quad = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(quad, np.round(corners).astype(np.int32), 255)
    y = np.full(shape, -1, np.int8)
    y[cv2.erode(tiles, np.ones((3, 3), np.uint8)) > 0] = 1
    y[cv2.dilate(quad, np.ones((9, 9), np.uint8)) == 0] = 0
    y[(quad > 0) & (cv2.dilate(tiles, np.ones((7, 7), np.uint8)) == 0)] = 0
    return y


def quadratic_terms(x: np.ndarray) -> np.ndarray:
    """[x_i] + [x_i * x_j for i <= j]."""
    n = x.shape[1]
    iu, ju = np.triu_indices(n)
    return np.concatenate([x, x[:, iu] * x[:, ju]], axis=1)


def evaluate_detection(photos, cfg=None, threshold: float = 0.05) -> dict:
    """Compare detected corners and grid size with the labels of ``photos``.

    Returns ``{"rows": [per-photo dicts], "found": fraction, "grid_right": fraction,
    "median_error": ..., "max_error": ..., "median_ms": ...}``. A photo counts as found when
    its worst corner is within ``threshold`` of the board side.
    """
    from vision.photo.files import load_image

    rows_out = []
    for p in photos:
        image = load_image(p.path, cfg)
        truth = p.corners if p.corners is not None else np.array(
            [[0, 0], [image.shape[1], 0], [image.shape[1], image.shape[0]], [0, image.shape[0]]],
            np.float32)
        t0 = time.perf_counter()
        try:
            found = locate(image, cfg)
            r, c, conf, warns = found.rows, found.cols, found.confidence, list(found.warnings)
            err = corner_error(found.corners, truth)
        except PhotoError:
            r = c = 0
            conf, err, warns = 0.0, float("inf"), ["no kingdom found"]
        ms = 1000 * (time.perf_counter() - t0)
        rows_out.append({"photo": p.name, "rows": r, "cols": c, "true_rows": p.rows,
                         "true_cols": p.cols, "error": err, "found": err <= threshold,
                         "grid_right": (r, c) == (p.rows, p.cols), "confidence": conf,
                         "ms": ms, "warnings": warns})
    errs = np.array([r["error"] for r in rows_out])
    return {"rows": rows_out,
            "found": float(np.mean([r["found"] for r in rows_out])) if rows_out else 0.0,
            "grid_right": float(np.mean([r["grid_right"] for r in rows_out])) if rows_out else 0.0,
            "median_error": float(np.median(errs)) if len(errs) else float("nan"),
            "max_error": float(np.max(errs)) if len(errs) else float("nan"),
            "median_ms": float(np.median([r["ms"] for r in rows_out])) if rows_out else 0.0}


def model_file(model: dict, record: dict) -> str:
    """The JSON of a fitted model for models/ (``[detect] pixel_model`` names it): its weights,
    to 6 significant digits, and ``record``, how it was fitted."""
    rounded = {k: [float(f"{x:.6g}") for x in v] if isinstance(v, list) else float(f"{v:.6g}")
               for k, v in model.items()}
    return json.dumps({"record": record, **rounded}, indent=1) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m vision.lab.training.pixels",
                                 description="Evaluate kingdom detection on the dev photos.")
    ap.add_argument("--fit", action="store_true",
                    help="fit the tile-likelihood model on the dev phone photos (needs scikit-learn)")
    ap.add_argument("--out", type=Path, default=None,
                    help="with --fit: the JSON file to write (default: print it)")
    ap.add_argument("--with-synth", type=int, default=0, metavar="N",
                    help="with --fit: also fit on N generated scenes (vision.lab.scenes.synth)")
    ap.add_argument("--hidden", type=int, default=0,
                    help="with --fit: a one-hidden-layer network of this width")
    ap.add_argument("--aau", action="store_true", help="also evaluate the AAU dev photos")
    ap.add_argument("--only", default=None, help="only photos whose name contains this")
    args = ap.parse_args(argv)
    from vision.lab.datasets import load_aau, load_phone

    try:
        photos = load_phone()
    except (FileNotFoundError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.fit:
        try:
            import sklearn  # noqa: F401
        except ImportError:
            print("error: fitting the pixel model needs scikit-learn: pip install '.[fit]'",
                  file=sys.stderr)
            return 1
        extra = synth_training_scenes(args.with_synth) if args.with_synth else ()
        record = {"fitted_on": f"{len(photos)} dev phone photos and {args.with_synth} generated "
                               "scenes (vision.lab.scenes.synth)",
                  "command": "python3 -m vision.lab.training.pixels " + " ".join(argv or sys.argv[1:]),
                  "fitted": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        text = model_file(fit_pixel_model(photos, extra=extra, hidden=args.hidden), record)
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        else:
            print(text, end="")
        return 0
    if args.aau:
        photos = photos + load_aau()
    if args.only:
        photos = [p for p in photos if args.only in p.name]
    res = evaluate_detection(photos)
    print(f"{'photo':58s} {'grid':>5s} {'true':>5s} {'err%':>6s} {'ms':>6s}")
    for r in res["rows"]:
        flag = "" if r["found"] and r["grid_right"] else "  <-- "
        print(f"{r['photo'][:58]:58s} {r['rows']}x{r['cols']:<3d} {r['true_rows']}x{r['true_cols']:<3d}"
              f" {100 * r['error']:6.1f} {r['ms']:6.0f}{flag}")
    print(f"found {100 * res['found']:.0f}%  grid right {100 * res['grid_right']:.0f}%  "
          f"median error {100 * res['median_error']:.1f}%  max error {100 * res['max_error']:.1f}%"
          f"  median {res['median_ms']:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
