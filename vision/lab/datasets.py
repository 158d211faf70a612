"""Loaders for the two photo datasets in ``../shared/datasets`` (dev photos only by default).

Holdout photos have no labels on purpose; ``split="dev"`` is the default everywhere and nothing
in the project trains, tunes or labels on holdout photos.
"""
from __future__ import annotations

import csv
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np


SHARED_ENV = "KINGDOMINO_SHARED"


def shared_dir() -> Path:
    """The shared folder (datasets, rules): ``$KINGDOMINO_SHARED``, else ``../shared`` beside
    the project checkout. The tests find it the same way."""
    env = os.environ.get(SHARED_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared"


def default_datasets_dir() -> Path:
    """``datasets`` in the shared folder (see ``shared_dir``)."""
    return shared_dir() / "datasets"


@dataclass(frozen=True)
class LabelledPhoto:
    """One dev photo: where it is, which kingdom it shows and the labelled rectangle.

    ``corners`` (tl, tr, br, bl, image pixels) is None for the AAU photos, which are already
    rectified (the whole image is the 5x5 board). ``terrain``/``crowns`` are ``rows x cols``
    nested tuples; ``occluded`` lists ``(row, col)`` whose crowns the photo cannot show.
    """

    dataset: str
    name: str
    path: Path
    kingdom: str
    rows: int
    cols: int
    corners: np.ndarray | None
    terrain: tuple
    crowns: tuple
    score: int | None
    has_3d_castle: bool = False
    occluded: frozenset = frozenset()

    @property
    def group(self) -> str:
        """Cross-validation group: photos of one kingdom (one KT game) stay together."""
        if self.dataset == "phone" and self.kingdom.startswith("KT"):
            return "phone:" + self.kingdom.split("-")[0]
        return f"{self.dataset}:{self.kingdom}"


def _read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _grids(label_rows, key: str, rows_of: dict, cols_of: dict):
    terrain = {k: [[None] * cols_of[k] for _ in range(rows_of[k])] for k in rows_of}
    crowns = {k: [[0] * cols_of[k] for _ in range(rows_of[k])] for k in rows_of}
    for r in label_rows:
        k = r[key]
        if k not in terrain:
            continue
        i, j = int(r["row"]), int(r["col"])
        terrain[k][i][j] = r["terrain"]
        crowns[k][i][j] = int(r["crowns"])
    freeze = lambda g: tuple(tuple(row) for row in g)  # noqa: E731
    return {k: freeze(v) for k, v in terrain.items()}, {k: freeze(v) for k, v in crowns.items()}


def load_aau(root: Path | None = None, split: str = "dev") -> list[LabelledPhoto]:
    """AAU rectified 500x500 board photos (5x5), with labels for the dev split."""
    base = Path(root or default_datasets_dir()) / "aau-kingdomino"
    boards = [b for b in _read_csv(base / "boards.csv") if b["split"] == split]
    occluded = defaultdict(set)
    if (base / "occluded.csv").exists():
        for r in _read_csv(base / "occluded.csv"):
            occluded[r["board"]].add((int(r["row"]), int(r["col"])))
    ids = {b["board"] for b in boards}
    rows_of = {k: 5 for k in ids}
    terrain, crowns = _grids(_read_csv(base / "labels.csv"), "board", rows_of, rows_of)
    out = []
    for b in boards:
        k = b["board"]
        out.append(LabelledPhoto(
            dataset="aau", name=f"aau-{k}", path=base / "images" / f"{k}.jpg",
            kingdom=b["kingdom"], rows=5, cols=5, corners=None,
            terrain=terrain[k], crowns=crowns[k],
            score=int(b["score"]) if b["score"] else None,
            has_3d_castle=b["has_3d_castle"] == "1", occluded=frozenset(occluded[k]),
        ))
    return sorted(out, key=lambda p: int(p.name.split("-")[1]))


def load_phone(root: Path | None = None, split: str = "dev") -> list[LabelledPhoto]:
    """Real phone photos with the labelled rectangle's corners (dev split)."""
    base = Path(root or default_datasets_dir()) / "phone-photos"
    photos = [p for p in _read_csv(base / "photos.csv") if p["split"] == split]
    corners = {}
    if (base / "corners.csv").exists():
        for r in _read_csv(base / "corners.csv"):
            vals = [float(r[k]) for k in ("tl_x", "tl_y", "tr_x", "tr_y", "br_x", "br_y", "bl_x", "bl_y")]
            corners[r["photo"]] = np.array(vals, dtype=np.float32).reshape(4, 2)
    rows_of = {p["photo"]: int(p["rows"]) for p in photos}
    cols_of = {p["photo"]: int(p["cols"]) for p in photos}
    terrain, crowns = _grids(_read_csv(base / "labels.csv"), "photo", rows_of, cols_of)
    out = []
    for p in photos:
        k = p["photo"]
        out.append(LabelledPhoto(
            dataset="phone", name=k, path=base / "images" / k, kingdom=p["kingdom"],
            rows=rows_of[k], cols=cols_of[k], corners=corners.get(k),
            terrain=terrain[k], crowns=crowns[k],
            score=int(p["score"]) if p["score"] else None,
        ))
    return out
