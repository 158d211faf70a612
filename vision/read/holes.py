"""Holes in a half-built kingdom: a square that looks like the table around the kingdom is table.

A half-built kingdom leaves squares of its frame bare, and the table shows through them. On
printed, checked or striped cloth the square classifier can read such a hole as a tile (a
flowered cloth as swamp with a crown, a green check as grassland): it sees one square and its
edges, not the table. But the table is right there: the ring of squares just outside the
kingdom's window is table, and a hole looks like it -- the same colour, the same spread of
colour, the same texture -- while a tile, whatever its colour, differs in at least one of these.

So, for each square of the window and each square of the ring around it (one square wide, by
the same homography), seven numbers on the rectified photo (``[holes] px`` a square, the central
``inner`` part): the mean and spread of L, a, b and the mean fine texture (absolute Laplacian of
L). A square's distance to a ring square is the largest of the seven differences, each over its
scale (``[holes] scales``); its table distance is the smallest over the ring. Within ``[holes]
max_distance`` the square gets up to ``boost`` log odds of ``empty`` (all of it at distance 0,
none at ``max_distance``), before the reading is decoded (the dominoes' pairing and the supply
still apply).

The other way round, reading a chosen window: a square that looks like no part of the table
(farther than ``[holes] far_distance``) loses up to ``far_penalty`` log odds of ``empty``
(:func:`far_penalty`). Glare washes a tile out and the classifier reads it as table, yet it
still differs from the table around the kingdom. Only a pale square pays it (its chroma at most
``far_pale`` of its L, :func:`chroma_share`): glare adds white, while a bare square showing
something else than the table (a mat or box lid smaller than the table, a pasted photo's own
wood) keeps its colour. Windows are judged without it: clutter beside a kingdom is unlike the
table too, and must not read as tiles.

A ring square is no reference when it looks like a square the classifier reads surely as a tile
(``sure_tile``): a window one row short leaves that row's tiles in the ring. Ring squares whose
centre lies outside the photo are no reference either (they are read from repeated edge pixels).

One read measures a window's ring more than once (``vision.find.frame.choose`` judges the window
it chooses, ``Reader.framed`` reads it): within a read (``vision.read.crops.read_once``) the
ring of a grid already measured is not measured again.
"""
from __future__ import annotations

import cv2
import numpy as np

from vision.geometry import board_homography, centres_off_photo, ring_corners
from vision.read.crops import remembered
from vision.read.labels import TERRAINS, terrain_probabilities

N_FEATURES = 7


def square_features(image: np.ndarray, corners, rows: int, cols: int, px: int,
                    inner: float) -> np.ndarray:
    """(rows + 2, cols + 2, 7): each square's L, a, b means and spreads and its texture, for
    the ``rows x cols`` grid with these corners grown by one square on every side."""
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError("square_features needs a colour (BGR) image")
    if px < 4 or not 0.0 < inner <= 1.0:
        raise ValueError(f"[holes] px must be at least 4 and inner in (0, 1], got {px}, {inner}")
    R, C = rows + 2, cols + 2
    H = board_homography(ring_corners(corners, rows, cols, 1), R, C, px)
    rect = cv2.warpPerspective(image, H, (C * px, R * px), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(rect, cv2.COLOR_BGR2LAB).astype(np.float32)
    texture = np.abs(cv2.Laplacian(cv2.GaussianBlur(lab[..., 0], (0, 0), 1.0), cv2.CV_32F))
    m = int(px * (1.0 - inner) / 2)
    keep = slice(m, px - m)
    chans = np.concatenate([lab, texture[..., None]], axis=2).reshape(R, px, C, px, 4)
    cells = chans[:, keep, :, keep, :].transpose(0, 2, 1, 3, 4).reshape(R, C, -1, 4)
    out = np.empty((R, C, N_FEATURES), np.float64)
    out[..., 0:3] = cells[..., :3].mean(axis=2)
    out[..., 3:6] = cells[..., :3].std(axis=2)
    out[..., 6] = cells[..., 3].mean(axis=2)
    return out


def pale_squares(features: np.ndarray, light: float, chroma: float) -> np.ndarray:
    """(rows, cols) booleans: the window's squares (``features`` from :func:`square_features`,
    ring included) whose mean L is at least ``light`` and whose mean colour lies within
    ``chroma`` of grey (OpenCV's 8-bit Lab): white or pale grey, as glare leaves a tile."""
    mean_l, mean_chroma = _light_and_chroma(features)
    return (mean_l >= light) & (mean_chroma <= chroma)


def chroma_share(features: np.ndarray) -> np.ndarray:
    """(rows, cols): each window square's (``features`` from :func:`square_features`, ring
    included) mean chroma (distance from grey in OpenCV's 8-bit Lab) over its mean L. Glare adds
    white light to a tile: its L rises and its chroma falls, so a washed tile's share is low."""
    mean_l, mean_chroma = _light_and_chroma(features)
    return mean_chroma / np.maximum(mean_l, 1.0)


def _light_and_chroma(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) each: the window's squares' mean L and the distance of their mean colour
    from grey (OpenCV's 8-bit Lab), ``features`` from :func:`square_features`, ring included."""
    inner = np.asarray(features, np.float64)[1:-1, 1:-1]
    return inner[..., 0], np.hypot(inner[..., 1] - 128.0, inner[..., 2] - 128.0)


def distances(a: np.ndarray, b: np.ndarray, scales) -> np.ndarray:
    """(len(a), len(b)): the largest scaled feature difference between each pair of squares."""
    s = np.asarray(scales, np.float64)
    if s.shape != (N_FEATURES,) or np.any(s <= 0):
        raise ValueError(f"[holes] scales needs {N_FEATURES} positive numbers, got {list(s)}")
    a = np.asarray(a, np.float64).reshape(-1, N_FEATURES)
    b = np.asarray(b, np.float64).reshape(-1, N_FEATURES)
    return (np.abs(a[:, None, :] - b[None, :, :]) / s).max(axis=2)


def table_distance(features: np.ndarray, off_photo: np.ndarray, sure_tile: np.ndarray,
                   scales, max_distance: float, min_alike: int = 2) -> np.ndarray:
    """(rows, cols): each window square's distance to the nearest reference ring square (inf
    without one). ``features`` (rows + 2, cols + 2, 7) from :func:`square_features`;
    ``off_photo`` the same shape's squares centred outside the photo; ``sure_tile`` (rows,
    cols) the window squares read surely as tiles: a ring square within ``max_distance`` of
    one is no reference."""
    R, C = features.shape[:2]
    rows, cols = R - 2, C - 2
    ring = np.ones((R, C), bool)
    ring[1:-1, 1:-1] = False
    ring &= ~np.asarray(off_photo, bool)
    inside = features[1:-1, 1:-1].reshape(-1, N_FEATURES)
    refs = features[ring]
    if not len(refs):
        return np.full((rows, cols), np.inf)
    # the table repeats itself around the kingdom: a ring square like fewer than
    # ``min_alike`` others is something lying on it (a loose domino, a tile of a row the
    # window left out) when it also looks like a square read surely as a tile
    alike = (distances(refs, refs, scales) < max_distance).sum(axis=1) - 1
    sure = np.asarray(sure_tile, bool).reshape(-1)
    if sure.any():
        like_tile = (distances(refs, inside[sure], scales) < max_distance).any(axis=1)
        refs = refs[~like_tile | (alike >= min_alike)]
    if not len(refs):
        return np.full((rows, cols), np.inf)
    return distances(inside, refs, scales).min(axis=1).reshape(rows, cols)


def table_distances(features: np.ndarray, off_photo: np.ndarray, hcfg: dict) -> np.ndarray:
    """(rows, cols): each grid square's :func:`table_distance` to the ring of table around it,
    no square taken for a sure tile; ``features``, ``off_photo`` from :func:`ring_features`."""
    rows, cols = features.shape[0] - 2, features.shape[1] - 2
    return table_distance(features, off_photo, np.zeros((rows, cols), bool), hcfg["scales"],
                          float(hcfg["max_distance"]), int(hcfg["min_alike"]))


def table_like(image: np.ndarray, corners, rows: int, cols: int, hcfg: dict,
               features=None) -> np.ndarray:
    """(rows, cols) booleans: the grid's squares within ``[holes] max_distance`` of the ring
    of table around it (:func:`table_distances`). ``features``: ``(features, off_photo)`` from
    :func:`ring_features` when already measured for this grid."""
    if features is None:
        features = ring_features(image, corners, rows, cols, hcfg)
    return table_distances(*features, hcfg) < float(hcfg["max_distance"])


def empty_boost(distance: np.ndarray, max_distance: float, boost: float) -> np.ndarray:
    """Log odds of ``empty`` added to each square: ``boost`` at distance 0, falling linearly to
    none at ``max_distance`` and beyond."""
    d = np.asarray(distance, np.float64)
    return boost * np.clip(1.0 - d / max_distance, 0.0, 1.0)


def far_penalty(distance: np.ndarray, far: float, full: float, penalty: float) -> np.ndarray:
    """Log odds taken from ``empty`` for each square: none up to distance ``far``, rising
    linearly to ``penalty`` at ``full`` and beyond; none where the distance is unknown (inf: no
    table in view around the window) or ``penalty`` is 0."""
    d = np.asarray(distance, np.float64)
    if penalty <= 0:
        return np.zeros(d.shape)
    if not 0 <= far < full:
        raise ValueError(f"[holes] far_distance ({far}) must be below far_full ({full})")
    out = penalty * np.clip((d - far) / (full - far), 0.0, 1.0)
    return np.where(np.isfinite(d), out, 0.0)


def ring_features(image: np.ndarray, corners, rows: int, cols: int, hcfg: dict):
    """(features, off_photo): :func:`square_features` of the grid grown by one square, with
    ``[holes]`` settings ``hcfg``, and which of those squares are centred off the photo
    (within a read, measured once for a grid: ``vision.read.crops.remembered``)."""
    px, inner = int(hcfg["px"]), float(hcfg["inner"])

    def measure():
        return (square_features(image, corners, rows, cols, px, inner),
                centres_off_photo(image.shape, ring_corners(corners, rows, cols, 1), rows + 2,
                                  cols + 2))

    # every use of the corners starts from them as float32 (vision.geometry.as_corners)
    key = ("ring", np.asarray(corners, np.float32).tobytes(), int(rows), int(cols), px, inner)
    return remembered(image, key, measure)


def boost_logits(features: np.ndarray, off_photo: np.ndarray, logits: np.ndarray, hcfg: dict,
                 t_terrain: float = 1.0, t_crowns: float = 1.0, far: bool = False) -> np.ndarray:
    """The window's logits (row by row) with each table-like square's ``empty`` raised, and
    its count of no crowns with it (bare table has none: a checked cloth can read as crowns,
    and the game's pairs would then keep the square a tile): ``features``, ``off_photo``
    from :func:`ring_features` for the same window; ``t_terrain``, ``t_crowns`` the
    classifier's temperatures (the boost is in calibrated log odds). ``far``: also lower the
    ``empty`` odds of squares far unlike the table (:func:`far_penalty`, ``[holes]
    far_distance``, ``far_full``, ``far_penalty``) and pale (``far_pale``, see
    :func:`chroma_share`): a tile washed out by glare is read as table, yet looks like no part
    of the table around the kingdom."""
    logits = np.asarray(logits, np.float32)
    rows, cols = features.shape[0] - 2, features.shape[1] - 2
    if len(logits) != rows * cols:
        raise ValueError(f"{len(logits)} squares' logits for a {rows}x{cols} window")
    p = terrain_probabilities(logits, t_terrain)
    empty = TERRAINS.index("empty")
    tile = np.delete(p, empty, axis=1).max(axis=1)
    sure = (tile >= float(hcfg["sure_tile"])).reshape(rows, cols)
    d = table_distance(features, off_photo, sure, hcfg["scales"], float(hcfg["max_distance"]),
                       int(hcfg["min_alike"]))
    out = logits.copy()
    boost = empty_boost(d, float(hcfg["max_distance"]), float(hcfg["boost"])).reshape(-1)
    # the boost is in log odds of the calibrated heads: scaled back to raw logits
    out[:, empty] += (boost * float(t_terrain)).astype(np.float32)
    if far:
        drop = far_penalty(d, float(hcfg["far_distance"]), float(hcfg["far_full"]),
                           float(hcfg["far_penalty"]))
        pale = float(hcfg["far_pale"])
        if pale > 0.0:      # only a washed (pale) square: a coloured one is no glare
            drop = np.where(chroma_share(features) <= pale, drop, 0.0)
        drop = drop.reshape(-1)
        out[:, empty] -= (drop * float(t_terrain)).astype(np.float32)
    # no crowns: the crown head's lead over it counts the less the more the square is like
    # the table (a check read as crowns is no evidence of a tile), then the same boost
    crowns = out[:, len(TERRAINS):]
    lead = np.maximum(crowns.max(axis=1) - crowns[:, 0], 0.0)
    share = boost / max(float(hcfg["boost"]), 1e-9)
    crowns[:, 0] += (share * lead + boost * float(t_crowns)).astype(np.float32)
    return out


def with_holes(image: np.ndarray, corners, rows: int, cols: int, logits: np.ndarray,
               cfg: dict, t_terrain: float = 1.0, t_crowns: float = 1.0,
               features=None, far: bool = False) -> np.ndarray:
    """The window's logits (row by row) with each table-like square's ``empty`` raised (see the
    module docstring); unchanged when ``[holes] enabled`` is off. ``features``: ``(features,
    off_photo)`` from :func:`ring_features` when already measured for this window; ``far``:
    see :func:`boost_logits` (the reading of a chosen window, not the judging of windows:
    clutter beside the kingdom is unlike the table too)."""
    hcfg = cfg["holes"]
    logits = np.asarray(logits, np.float32)
    if not hcfg["enabled"] or not len(logits):
        return logits
    if features is None:
        features = ring_features(image, corners, rows, cols, hcfg)
    return boost_logits(*features, logits, hcfg, t_terrain, t_crowns, far)
