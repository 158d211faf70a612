"""``models/novelty.npz``: what the square classifier's features of known squares look like.

Built from the dev photos with the shipped network, no training (``python3 -m
vision.lab.training.novelty``; ``kingdomino train`` builds it again after a new network): every
labelled dev square is cut through the reader's crop path (``vision.read.crops.photo_crops``,
the labelled corners) and its features read (``SquareClassifier.features``), and so are the
squares of ``DRAWN_BOARDS`` kingdoms drawn as training draws them (``rendered_examples``, seed
``DRAWN_SEED``; the network learned from such squares too). Kept: the mean features of each
terrain, photographed and drawn apart, the inverse of their shared covariance (shrunk toward
its mean variance by ``[novelty] shrink``), every dev square's features (float16) and the features of
the town squares of the labelled Queendomino photos (``vision.lab.datasets.load_queendomino``,
none when the photos are not there). ``vision.read.novelty`` reads it.

``--calibrate`` prints, for a few thresholds, the squares read as tiles over ``[novelty]
flag_above`` per dev board with each kingdom's statistics made without it (leave one kingdom
out: the shipped file holds every dev square, so the reader's own figures on dev photos are
too kind), and the same for the towns' margin.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
from pathlib import Path

import numpy as np

from models import MODELS_DIR
from vision import config as _config
from vision.lab.training.squares import reader_view
from vision.read.classify import SquareClassifier
from vision.read.crops import image_corners, photo_crops
from vision.read.labels import TERRAINS
from vision.read.novelty import Statistics, distances

TOWN_TERRAIN = "town"
DRAWN_BOARDS = 40       # drawn kingdoms whose squares join the statistics (about 1200 squares)
DRAWN_SEED = 4242       # their seed (the training command's rendered boards use 1000 on)


def photo_features(classifier, image, corners, rows: int, cols: int) -> tuple:
    """The logits and features of every square of a labelled grid, as the reader cuts them."""
    cc = classifier.cfg
    crops = photo_crops(image, corners, rows, cols, int(cc["cell"]),
                        board_margin=int(cc["board_margin"]), crop_margin=int(cc["crop_margin"]))
    return classifier._forward(classifier._sized(crops), features=True)


def dev_squares(classifier, photos) -> dict:
    """Features, logits, terrain index, group and photo name of every labelled dev square."""
    feats, logits, terrain, group, name = [], [], [], [], []
    for photo in photos:
        image, corners = reader_view(photo)     # decoded as the reader decodes it
        corners = corners if corners is not None else image_corners(image)
        lg, ft = photo_features(classifier, image, corners, photo.rows, photo.cols)
        feats.append(ft)
        logits.append(lg)
        for r in range(photo.rows):
            for c in range(photo.cols):
                terrain.append(TERRAINS.index(photo.terrain[r][c]))
                group.append(photo.group)
                name.append(f"{photo.dataset}/{photo.name}")
    return {"features": np.concatenate(feats), "logits": np.concatenate(logits),
            "terrain": np.array(terrain, np.intp), "group": np.array(group),
            "photo": np.array(name)}


def town_squares(classifier, datasets=None) -> tuple[np.ndarray, list]:
    """The features of the town squares of the labelled Queendomino photos, and their photo
    names (nothing when the photos are not there)."""
    from vision.lab.datasets import load_queendomino

    try:
        photos = load_queendomino(Path(datasets) if datasets else None)
    except FileNotFoundError:
        return np.zeros((0, 0), np.float32), []
    feats, names = [], []
    for photo in photos:
        image, corners = reader_view(photo)
        _, ft = photo_features(classifier, image, corners, photo.rows, photo.cols)
        for i in range(photo.rows * photo.cols):
            r, c = divmod(i, photo.cols)
            if photo.terrain[r][c] == TOWN_TERRAIN:
                feats.append(ft[i])
                names.append(photo.name)
    return (np.stack(feats) if feats else np.zeros((0, 0), np.float32)), names


def drawn_squares(classifier, boards: int = DRAWN_BOARDS, seed: int = DRAWN_SEED) -> tuple:
    """Features and terrain index of the squares of ``boards`` drawn kingdoms (half of them
    photographed, as training has them), cut as the reader cuts them."""
    from vision.lab.training.squares import rendered_examples

    crops, terrain, _ = rendered_examples(boards, classifier.cfg, np.random.default_rng(seed),
                                          pad=0)
    _, feats = classifier._forward(classifier._sized(crops), features=True)
    return feats, np.asarray(terrain, np.intp)


def statistics(sets, shrink: float) -> tuple[np.ndarray, np.ndarray]:
    """For each ``(features, terrain index)`` set, each terrain's mean features (NaN without
    squares), ``(sets, terrains, D)``, and the inverse of the covariance of all the features
    about their own set's terrain's mean, shrunk toward its mean variance by ``shrink``."""
    means, centred = [], []
    for features, terrain in sets:
        feats = np.asarray(features, np.float64)
        mine = np.full((len(TERRAINS), feats.shape[1]), np.nan)
        for t in np.unique(terrain):
            mine[t] = feats[terrain == t].mean(axis=0)
        means.append(mine)
        centred.append(feats - mine[terrain])
    cov = np.cov(np.concatenate(centred).T)
    cov = (1.0 - shrink) * cov + shrink * np.trace(cov) / len(cov) * np.eye(len(cov))
    return np.stack(means), np.linalg.inv(cov)


def build(out_dir: Path = MODELS_DIR, datasets=None, log=print, model_path=None) -> Path:
    """Write ``[novelty] statistics`` (and its JSON record) into ``out_dir``, for the square
    classifier at ``model_path`` (default the shipped one)."""
    from vision.lab.training.squares import dev_photos

    cfg = _config.load()
    classifier = SquareClassifier(model_path, cfg["classify"])
    photos = dev_photos(datasets)
    dev = dev_squares(classifier, photos)
    shrink = float(cfg["novelty"]["shrink"])
    drawn = drawn_squares(classifier)
    means, precision = statistics([(dev["features"], dev["terrain"]), drawn], shrink)
    towns, town_photos = town_squares(classifier, datasets)
    path = out_dir / cfg["novelty"]["statistics"]
    Statistics(means, precision, towns.reshape(len(towns), -1), dev["features"],
               network=classifier.identity).save(path)
    record = {
        "file": path.name, "built": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "network": classifier.path.name, "network_trained": classifier.meta.get("trained"),
        "network_identity": classifier.identity,
        "shrink": shrink, "dev_squares": int(len(dev["terrain"])),
        "drawn_squares": int(len(drawn[1])), "drawn_boards": DRAWN_BOARDS, "drawn_seed": DRAWN_SEED,
        "dev_photos": {"aau": sum(p.dataset == "aau" for p in photos),
                       "phone": sum(p.dataset == "phone" for p in photos)},
        "squares_per_terrain": {t: int((dev["terrain"] == i).sum()) for i, t in enumerate(TERRAINS)},
        "town_squares": len(town_photos), "town_photos": sorted(set(town_photos)),
    }
    path.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    log(f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB): {record['dev_squares']} dev squares, "
        f"{record['town_squares']} town squares from {len(record['town_photos'])} photos")
    return path


def calibrate(datasets=None, thresholds=(150, 200, 220, 250, 300), log=print) -> dict:
    """Leave one kingdom out: for each threshold, the dev squares read as tiles (the network's
    likeliest terrain) over it per board, and those of them read at least ``[review]
    min_confidence`` (a flag a board did not have)."""
    from vision.lab.training.squares import dev_photos
    from vision.read.dominoes import _softmax

    cfg = _config.load()
    classifier = SquareClassifier(None, cfg["classify"])
    photos = dev_photos(datasets)
    dev = dev_squares(classifier, photos)
    feats, terrain, group = dev["features"], dev["terrain"], dev["group"]
    nt = len(TERRAINS)
    read = dev["logits"][:, :nt].argmax(axis=1)
    sure = _softmax(dev["logits"][:, :nt] / classifier.t_terrain).max(axis=1) \
        >= float(cfg["review"]["min_confidence"])
    drawn = drawn_squares(classifier)
    dist = np.zeros(len(feats))
    for g in np.unique(group):
        mine = group == g
        means, precision = statistics([(feats[~mine], terrain[~mine]), drawn],
                                      float(cfg["novelty"]["shrink"]))
        stats = Statistics(means, precision, np.zeros((0, 0)), np.zeros((0, 0)))
        dist[mine] = distances(stats, feats[mine], [TERRAINS[t] for t in read[mine]])
    tile = read != TERRAINS.index("empty")
    out = {}
    for th in thresholds:
        row = {}
        for ds in ("aau", "phone"):
            mine = np.char.startswith(dev["photo"], ds + "/")
            boards = len(set(dev["photo"][mine]))
            over = tile & mine & (dist > th)
            row[ds] = {"over_per_board": round(float(over.sum()) / boards, 3),
                       "new_flags_per_board": round(float((over & sure).sum()) / boards, 3)}
        out[th] = row
        log(f"flag_above {th}: " + "; ".join(
            f"{ds} {v['over_per_board']} over a board, {v['new_flags_per_board']} not flagged "
            f"before" for ds, v in row.items()))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m vision.lab.training.novelty", description=__doc__)
    ap.add_argument("--datasets", help="the datasets folder (default ../shared/datasets)")
    ap.add_argument("--out", help="folder to write into (default models/)")
    ap.add_argument("--calibrate", action="store_true",
                    help="print the dev squares over a few thresholds (leave one kingdom out)")
    args = ap.parse_args(argv)
    if args.calibrate:
        calibrate(args.datasets)
        return 0
    build(Path(args.out) if args.out else MODELS_DIR, args.datasets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
