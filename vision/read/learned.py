"""Reading with what corrections taught: squares a person labelled, kept as examples.

A correction (or a confirmation) of a reading gives labelled squares; each is cut from the
photo with that reading's own geometry (:func:`examples_from_photo`, the reader's crop path)
and kept as an :class:`Example`: the square classifier's features of its crop (the tensor its
last layer reads, length 1) and its label. A square read later is moved toward the labels of
the examples that look like it (:func:`adapt`): a nearest-example vote, its odds mixed with
their labels, in which only examples more alike than ``[learn] near`` count, so examples
from another table, another light or another tile set leave its squares alone, and a square
the network is sure of, as its examples are labelled, keeps its odds. Everything here is
numpy.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.read.labels import MAX_CROWNS, N_CROWNS, TERRAINS


@dataclass(frozen=True)
class Example:
    """One labelled square: its features (``SquareClassifier.features``), its terrain and
    crowns, and an id saying which stored example it is."""

    feature: np.ndarray
    terrain: str
    crowns: int
    id: int | str = 0

    def __post_init__(self):
        if self.terrain not in TERRAINS:
            raise ValueError(f"an example's terrain must be one of {', '.join(TERRAINS)}, "
                             f"not {self.terrain!r}")
        if not 0 <= int(self.crowns) <= MAX_CROWNS.get(self.terrain, N_CROWNS - 1):
            raise ValueError(f"{self.terrain} carries no {self.crowns} crowns")


class Examples:
    """A set of examples as one matrix: ``features`` ``(M, D)``, ``terrain`` and ``crowns``
    (label indices, ``(M,)``) and ``ids``; ``network``: the identity of the square network
    whose features they all are (``SquareClassifier.identity``; None: not said)."""

    def __init__(self, examples: list[Example], network: str | None = None):
        examples = list(examples)
        self.network = network
        self.ids = [e.id for e in examples]
        if examples:
            feats = np.stack([np.asarray(e.feature, np.float32).ravel() for e in examples])
        else:
            feats = np.zeros((0, 0), np.float32)
        norms = np.linalg.norm(feats, axis=1, keepdims=True) if len(feats) else feats
        self.features = feats / np.maximum(norms, 1e-12) if len(feats) else feats
        self.terrain = np.array([TERRAINS.index(e.terrain) for e in examples], np.intp)
        self.crowns = np.array([int(e.crowns) for e in examples], np.intp)

    def __len__(self) -> int:
        return len(self.ids)


def _neighbours(features: np.ndarray, examples: Examples, cfg) -> tuple[np.ndarray, np.ndarray]:
    """For each square, its ``[learn] neighbours`` most alike examples ``(N, k)`` and their
    weights ``(N, k)``: 0 up to ``[learn] near``, rising to 1 at ``[learn] full``."""
    near = float(cfg["near"])
    feats = np.asarray(features, np.float32)
    if feats.shape[1] != examples.features.shape[1]:
        raise ValueError(f"examples have {examples.features.shape[1]} features, the squares "
                         f"{feats.shape[1]}: they were learned with another square classifier")
    sim = feats @ examples.features.T
    k = min(int(cfg["neighbours"]), len(examples))
    idx = np.argpartition(-sim, k - 1, axis=1)[:, :k] if k < len(examples) else \
        np.broadcast_to(np.arange(len(examples)), sim.shape)
    alike = np.take_along_axis(sim, idx, axis=1)
    full = float(cfg["full"])
    weights = np.where(alike > near, np.clip((alike - near) / max(full - near, 1e-6), 0.0, 1.0),
                       0.0)
    return idx, weights


def adapt(logits: np.ndarray, features: np.ndarray, examples: Examples | None, cfg,
          temperatures: tuple[float, float] = (1.0, 1.0)) -> tuple[np.ndarray, int]:
    """Squares' logits ``(N, 12)`` moved toward the labels of the examples like them.

    For each square, the examples among its ``[learn] neighbours`` most alike whose features
    are more alike than ``[learn] near`` vote, each by how far above ``near`` it is (0 to 1):
    ``q``, the votes shared out over the labels. The square's terrain odds (calibrated by
    ``temperatures``, terrain then crowns, as the decoding reads them) become
    ``(1 - g) p + g q`` with ``g`` the strongest vote times ``[learn] trust``, and its crown
    odds the same: a square read as its examples are labelled keeps its reading (a sure one
    its odds), one read otherwise moves toward their label, and one no example is near keeps
    its logits.
    Returns the new logits and how many distinct examples moved at least one square.
    """
    out, moved_by = vote(logits, features, examples, cfg, temperatures)
    return out, len(frozenset().union(*moved_by)) if moved_by else 0


def vote(logits: np.ndarray, features: np.ndarray, examples: Examples | None, cfg,
         temperatures: tuple[float, float] = (1.0, 1.0)) -> tuple[np.ndarray, list]:
    """:func:`adapt`, saying for each square which examples moved it (a frozenset of their
    positions in ``examples``, empty for a square none is near)."""
    logits = np.asarray(logits)
    if examples is None or len(examples) == 0 or len(logits) == 0:
        return logits, [frozenset()] * len(logits)
    idx, w = _neighbours(features, examples, cfg)
    g = float(cfg["trust"]) * w.max(axis=1)
    moved_by = [frozenset(idx[i][w[i] > 0].tolist()) for i in range(len(idx))]
    near = np.flatnonzero(g > 0)
    if not len(near):
        return logits, moved_by
    out = np.array(logits, dtype=np.float32, copy=True)
    nt = len(TERRAINS)
    share = w[near] / w[near].sum(axis=1, keepdims=True)        # each vote's share
    gn = g[near, None]
    for part, labels, t in ((slice(0, nt), examples.terrain, temperatures[0]),
                            (slice(nt, nt + N_CROWNS), examples.crowns, temperatures[1])):
        lg = out[near, part].astype(np.float64) / float(t)
        p = np.exp(lg - lg.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        q = np.zeros_like(p)
        np.add.at(q, (np.repeat(np.arange(len(near)), idx.shape[1]), labels[idx[near]].ravel()),
                  share.ravel())
        mixed = (1.0 - gn) * p + gn * q
        out[near, part] = (float(t) * np.log(np.maximum(mixed, 1e-30))).astype(np.float32)
    return out, moved_by


def influence(features: np.ndarray, examples: Examples | None, cfg) -> int:
    """How many distinct examples move at least one of these squares (as :func:`adapt`)."""
    if examples is None or len(examples) == 0 or len(features) == 0:
        return 0
    idx, w = _neighbours(features, examples, cfg)
    return int(len(np.unique(idx[w > 0])))


def board_count(classifier, image: np.ndarray, found) -> int:
    """How many of the classifier's examples moved the squares of the window ``found`` (a
    ``vision.find.search.Candidate``; 0 when it reads without examples): what a reading
    says it was read with. A window read while it was found is counted from the logits it
    was read with (``SquareClassifier.moved_by``), one not read yet from its crops."""
    if classifier.examples is None:
        return 0
    if found.logits is not None:
        return len(classifier.moved_by(found.logits))
    return classifier.examples_used(_crops(classifier, image, found.corners, found.rows,
                                           found.cols))


def _crops(classifier, image, corners, rows: int, cols: int) -> np.ndarray:
    """The grid's crops as the reader cuts them (``vision.read.crops.photo_crops``)."""
    from vision.read.crops import photo_crops

    cc = classifier.cfg
    return photo_crops(image, corners, rows, cols, int(cc["cell"]),
                       board_margin=int(cc["board_margin"]), crop_margin=int(cc["crop_margin"]))


def examples_from_photo(classifier, image: np.ndarray, corners, rows: int, cols: int,
                        cells) -> list[tuple]:
    """Examples of labelled squares of a reading: ``cells`` is ``(row, col, terrain, crowns)``
    for each square asked for, in the ``rows x cols`` grid with these corners (a reading's
    corners, in ``image``'s pixels). Each square is cut as the reader cuts it; one beyond the
    grid (a correction that grows the kingdom) by the same geometry carried on, and one whose
    centre lies outside the photo teaches nothing. Returns ``(row, col, terrain, crowns,
    features, thumbnail JPEG bytes)`` for each square taught, in the order asked."""
    from vision.geometry import Window, centres_off_photo, window_corners

    cells = [(int(r), int(c), str(t), int(k)) for r, c, t, k in cells]
    if not cells:
        return []
    if any(r < 0 or c < 0 for r, c, _, _ in cells):
        raise ValueError("a square's row and column cannot be negative")
    for _, _, t, k in cells:      # a label the game has none of teaches nothing: refuse it
        Example(np.zeros(1, np.float32), t, k)
    R = max(rows, 1 + max(r for r, _, _, _ in cells))
    C = max(cols, 1 + max(c for _, c, _, _ in cells))
    off = centres_off_photo(image.shape, window_corners(corners, rows, cols, Window(0, 0, R, C)),
                            R, C)
    keep = [cell for cell in cells if not off[cell[0], cell[1]]]
    if not keep:
        return []
    crops = _crops(classifier, image, corners, rows, cols)
    inside = [(r, c) for r, c, _, _ in keep if r < rows and c < cols]
    pick = {(r, c): crops[r * cols + c] for r, c in inside}
    if len(inside) < len(keep):   # squares beyond the read grid: the grid carried on
        grown = _crops(classifier, image, window_corners(corners, rows, cols,
                                                         Window(0, 0, R, C)), R, C)
        for r, c, _, _ in keep:
            pick.setdefault((r, c), grown[r * C + c])
    chosen = np.stack([pick[(r, c)] for r, c, _, _ in keep])
    feats = classifier.features(chosen)
    out = []
    for (r, c, t, k), crop, f in zip(keep, chosen, feats):
        ok, jpeg = cv2.imencode(".jpg", crop, [cv2.IMWRITE_JPEG_QUALITY, 85])
        out.append((r, c, t, k, f.astype(np.float32), jpeg.tobytes() if ok else b""))
    return out
