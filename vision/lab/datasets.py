"""Loaders for the photo datasets in ``../shared/datasets`` (dev photos only by default).

Holdout photos have no labels on purpose; ``split="dev"`` is the default everywhere and nothing
in the project trains, tunes or labels on holdout photos.

The Queendomino photos come unlabelled; their labels are ours and ship in
``vision/lab/data/queendomino_labels.json`` (``queendomino_labels``, ``load_queendomino``; the
format is in ``vision/lab/data/QUEENDOMINO.md``).
"""
from __future__ import annotations

import csv
import json
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


# ----------------------------------------------------------------------------- Queendomino
QUEENDOMINO_LABELS = Path(__file__).resolve().parent / "data" / "queendomino_labels.json"
QUEENDOMINO_FOLDER = "queendomino-photos"


@dataclass(frozen=True)
class QueendominoPhoto(LabelledPhoto):
    """One of the Queendomino photos with our labels (``vision/lab/data/QUEENDOMINO.md``).

    ``whole``: the labelled rectangle holds the whole kingdom (False: the photo shows part of
    it). ``buildings``: ``((row, col), crowns printed on the building)`` for each town square a
    building stands on. ``pieces``: ``(row, col, piece)`` for each knight, tower, queen or coin
    pile standing on a square (on a tile it hides some of its art; on an empty square it stands
    on the cloth). ``note``: what else the photo shows."""

    whole: bool = True
    buildings: tuple = ()
    pieces: tuple = ()
    note: str = ""

    @property
    def towns(self) -> tuple:
        """``(row, col)`` of the labelled town squares, row by row."""
        return tuple((r, c) for r, row in enumerate(self.terrain)
                     for c, t in enumerate(row) if t == "town")


def queendomino_labels(path: Path | None = None) -> dict:
    """Our labels of the Queendomino photos as written (the JSON document), checked: every
    photo's grids are ``rows x cols`` of the engine's terrain names, crowns 0-3 (none on town,
    castle or empty squares), buildings only on town squares, four corners. Raises
    ``ValueError`` naming the photo and what is wrong."""
    from engine.kingdom import NO_PRINTED_CROWNS, TERRAINS

    with open(path or QUEENDOMINO_LABELS, encoding="utf-8") as fh:
        doc = json.load(fh)
    for p in doc["photos"]:
        name, rows, cols = p["photo"], p["rows"], p["cols"]
        shapes = [len(p["terrain"]), len(p["crowns"])]
        shapes += [len(r) for r in p["terrain"] + p["crowns"]]
        if shapes[:2] != [rows, rows] or set(shapes[2:]) != {cols}:
            raise ValueError(f"{name}: terrain and crowns must be {rows} rows of {cols} squares")
        for r in range(rows):
            for c in range(cols):
                t, k = p["terrain"][r][c], p["crowns"][r][c]
                if t not in TERRAINS:
                    raise ValueError(f"{name}: square ({r}, {c}) has unknown terrain {t!r}")
                if not 0 <= k <= 3 or (k and t in NO_PRINTED_CROWNS):
                    raise ValueError(f"{name}: square ({r}, {c}), {t}, cannot carry {k} crowns")
        for b in p["buildings"]:
            if p["terrain"][b["row"]][b["col"]] != "town":
                raise ValueError(f"{name}: a building at ({b['row']}, {b['col']}) is not on a town")
        if len(p["corners"]) != 4:
            raise ValueError(f"{name}: corners must be four points (tl, tr, br, bl)")
    return doc


def load_queendomino(root: Path | None = None, labels: Path | None = None
                     ) -> list[QueendominoPhoto]:
    """The six Queendomino photos (``../shared/datasets/queendomino-photos``) with our labels,
    in file order. Raises ``FileNotFoundError`` saying where they were looked for when the
    photos are not there (the labels ship; the photos do not)."""
    base = Path(root or default_datasets_dir()) / QUEENDOMINO_FOLDER / "images"
    doc = queendomino_labels(labels)
    missing = [p["photo"] for p in doc["photos"] if not (base / p["photo"]).is_file()]
    if missing:
        raise FileNotFoundError(
            f"the Queendomino photos are not in {base} ({len(missing)} of {len(doc['photos'])} "
            f"missing, e.g. {missing[0]}): they live in the shared folder beside the project, "
            f"or where ${SHARED_ENV} points")
    freeze = lambda g: tuple(tuple(row) for row in g)  # noqa: E731
    out = []
    for p in doc["photos"]:
        out.append(QueendominoPhoto(
            dataset="queendomino", name=p["photo"], path=base / p["photo"],
            kingdom="queendomino-game", rows=p["rows"], cols=p["cols"],
            corners=np.array(p["corners"], dtype=np.float32).reshape(4, 2),
            terrain=freeze(p["terrain"]), crowns=freeze(p["crowns"]), score=None,
            whole=bool(p["whole"]),
            buildings=tuple(sorted(((b["row"], b["col"]), b["crowns"]) for b in p["buildings"])),
            pieces=tuple((q["row"], q["col"], q["piece"]) for q in p["pieces"]),
            note=p.get("note", ""),
        ))
    return out
