"""Does the frame hold when the photo changes a little? ``python3 -m vision.lab.robust``

Every dev phone photo (labelled corners and grid) is framed by ``Reader.find`` as it is and
changed the ways a phone, a lamp or a file change a photo: shrunk (a smaller phone, a
cropped upload), turned a quarter at a time, lit warmer or cooler, brighter or darker,
blurred, noisy, saved again as a coarse JPEG. A kingdom is framed when the grid found is the
labelled one and no corner is more than ``FRAMED`` of a side off (``vision.detect.
corner_error``; a quarter turn's corners are the labelled ones turned with the photo).

A frame that holds as found but breaks under a tenth of a change is luck, not a detector:
the held-out photos differ from the dev photos by more than that. Holdout photos are never
loaded (``vision.lab.datasets.load_phone`` reads the dev split).

    python3 -m vision.lab.robust [--only warm,turn1] [--photos NAME,...] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

FRAMED = 0.25        # largest corner error (of a side) that still frames the kingdom


def _scale(k: float):
    def f(image):
        return cv2.resize(image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
    return f


def _gains(bgr):
    def f(image):
        return np.clip(image.astype(np.float32) * np.float32(bgr), 0, 255).astype(np.uint8)
    return f


def _blur(image):
    return cv2.GaussianBlur(image, (0, 0), max(image.shape[:2]) / 1000.0)


def _dark(image):
    return (255.0 * (image / 255.0) ** 1.5).astype(np.uint8)


def _bright(image):
    return np.clip(image.astype(np.float32) * 1.3 + 20, 0, 255).astype(np.uint8)


def _jpeg(image):
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 50])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else image


def _noise(image):
    grain = np.random.default_rng(0).normal(0, 8, image.shape)
    return np.clip(image + grain, 0, 255).astype(np.uint8)


def _turn(k: int):
    def f(image):
        return np.ascontiguousarray(np.rot90(image, k))
    return f


# name -> (change, scale of the photo's pixels, quarter turns counter-clockwise)
PERTURBATIONS = {
    "scale0.7": (_scale(0.7), 0.7, 0), "scale0.6": (_scale(0.6), 0.6, 0),
    "turn1": (_turn(1), 1.0, 1), "turn2": (_turn(2), 1.0, 2), "turn3": (_turn(3), 1.0, 3),
    "warm": (_gains((0.8, 0.95, 1.15)), 1.0, 0), "cool": (_gains((1.15, 1.0, 0.85)), 1.0, 0),
    "dark": (_dark, 1.0, 0), "bright": (_bright, 1.0, 0), "blur": (_blur, 1.0, 0),
    "noise": (_noise, 1.0, 0), "jpeg50": (_jpeg, 1.0, 0),
}


def perturb(image: np.ndarray, name: str) -> np.ndarray:
    """The photo changed by the perturbation ``name`` (one of ``PERTURBATIONS``)."""
    if name not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {name!r}: choose from {', '.join(PERTURBATIONS)}")
    return PERTURBATIONS[name][0](image)


def corners_after(corners, name: str, shape) -> np.ndarray:
    """Labelled corners (x, y photo px) where they lie in the photo changed by ``name``;
    ``shape``: the unchanged photo's. A quarter turn counter-clockwise (``np.rot90``) takes
    (x, y) in a photo ``w`` wide to (y, w - 1 - x)."""
    if name not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {name!r}: choose from {', '.join(PERTURBATIONS)}")
    _, k, turns = PERTURBATIONS[name]
    c = np.asarray(corners, np.float64).reshape(4, 2) * k
    w, h = shape[1] * k, shape[0] * k
    for _ in range(turns):
        c = np.stack([c[:, 1], w - 1 - c[:, 0]], 1)
        w, h = h, w
    return c


def frame_of(reader, image: np.ndarray) -> tuple:
    """``(corners, rows, cols)`` that ``reader.find`` gives, or None when it finds nothing
    (or fails: that photo's failure, the others go on)."""
    try:
        found = reader.find(image)
    except ValueError:
        return None
    return np.asarray(found.corners, np.float64), int(found.rows), int(found.cols)


def measure(reader, photos, names, log=None) -> dict:
    """For ``None`` (the photo as it is) and each perturbation in ``names``: how many of
    ``photos`` (objects with ``path``, ``name``, ``corners``, ``rows``, ``cols``) are framed,
    and which are not (photo, grid found, corner error)."""
    from vision.detect import corner_error

    out = {name: {"n": 0, "framed": 0, "failures": []} for name in ["as taken", *names]}
    for photo in photos:
        image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"cannot read {photo.path}")
        for name in out:
            changed = image if name == "as taken" else perturb(image, name)
            truth = np.asarray(photo.corners, np.float64) if name == "as taken" else \
                corners_after(photo.corners, name, image.shape)
            got = frame_of(reader, changed)
            row = out[name]
            row["n"] += 1
            if got is None:
                row["failures"].append({"photo": photo.name, "grid": None, "error": None})
                continue
            err = corner_error(got[0], truth, any_first=True)
            turned = PERTURBATIONS[name][2] % 2 if name in PERTURBATIONS else 0
            want = (photo.cols, photo.rows) if turned else (photo.rows, photo.cols)
            if (got[1], got[2]) == want and err <= FRAMED:
                row["framed"] += 1
            else:
                row["failures"].append({"photo": photo.name, "grid": f"{got[1]}x{got[2]}",
                                        "error": round(float(err), 3)})
        if log:
            log(f"{photo.name}: done")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help=f"comma-separated perturbations (default all: "
                                   f"{','.join(PERTURBATIONS)})")
    ap.add_argument("--photos", help="comma-separated dev photo names (default all)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else list(PERTURBATIONS)
    bad = [n for n in names if n not in PERTURBATIONS]
    if bad:
        ap.error(f"unknown perturbation(s) {', '.join(bad)}: choose from {', '.join(PERTURBATIONS)}")
    from vision.lab.datasets import load_phone
    from vision.reader import Reader

    try:
        photos = load_phone()
    except FileNotFoundError as exc:
        print(f"robust: {exc}", file=sys.stderr)
        return 2
    if args.photos:
        keep = set(args.photos.split(","))
        photos = [p for p in photos if p.name in keep]
        if not photos:
            ap.error("none of --photos is a dev phone photo")
    res = measure(Reader(), photos, names)
    for name, row in res.items():
        fails = ", ".join(f"{f['photo']} ({f['grid'] or 'none'}, {f['error']})"
                          for f in row["failures"])
        print(f"{name:9s} framed {row['framed']}/{row['n']}" + (f"  not: {fails}" if fails else ""))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
