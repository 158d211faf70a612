"""Tile maps: how likely each pixel of a downscaled photo is to lie on a tile, and the kingdom's
tile blob in such a map.

Two maps: a small per-pixel model on colour and local texture (fitted weights in
``models/<[detect] pixel_model>``, fitted by ``python3 -m vision.lab.training.pixels --fit``) and,
with ``[detect] tile_net`` set, a small convolutional network (``vision.find.tilenet``).
"""
from __future__ import annotations

import json

import cv2
import numpy as np

def pixel_features(small: np.ndarray) -> np.ndarray:
    """Per-pixel features (H*W, F) float32: colour, chroma and local texture at two scales."""
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    sat = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)[..., 1]
    L, a, b = cv2.split(lab)                 # contiguous channels: blurred without copies
    h, w = small.shape[:2]
    # each feature is written into its column as it is made (no stack of 12 maps)
    out = np.empty((h, w, 12), np.float32)
    out[..., 0], out[..., 1], out[..., 2], out[..., 3] = L, a, b, sat
    np.hypot(a - 128, b - 128, out=out[..., 4])
    i = 5
    for k in (5, 11):
        for ch in (L, a, b):
            mu = cv2.blur(ch, (k, k))
            var = cv2.blur(ch * ch, (k, k))
            var -= mu * mu
            np.sqrt(np.maximum(var, 0, out=var), out=out[..., i])
            i += 1
    np.subtract(L, _median_of_bytes(lab, h * w), out=out[..., 11])
    return out.reshape(-1, 12)


def _median_of_bytes(lab: np.ndarray, n: int) -> np.float32:
    """``np.median`` of the first channel of ``lab`` (whole numbers 0..255, ``n`` of them),
    from its histogram: the middle value, or the mean of the middle two, exactly."""
    if n >= 1 << 24:                 # the histogram's float32 counts would round
        return np.median(lab[..., 0])
    counts = np.cumsum(cv2.calcHist([lab], [0], None, [256], [0, 256]).ravel().astype(np.int64))
    hi = int(np.searchsorted(counts, n // 2, side="right"))          # the (n // 2)-th value
    if n % 2:
        return np.float32(hi)
    lo = int(np.searchsorted(counts, n // 2 - 1, side="right"))
    return np.float32((lo + hi) / 2)


# pixels the hidden layer is finished for at a time (a multiple of every BLAS kernel's width)
_BLOCK = 4096


def tile_probability(small: np.ndarray, model: dict) -> np.ndarray:
    """Probability that each pixel of ``small`` is on a tile (H x W float32)."""
    x = pixel_features(small)
    n = x.shape[1]
    # in place, a row of pixels at a time against the mean and scale repeated along it: the
    # same values as broadcasting them, in long passes (over a 12-long axis numpy is slow)
    w = small.shape[1]
    rows = x.reshape(-1, w * n)
    rows -= np.tile(np.asarray(model["mean"], np.float32), w)
    rows /= np.tile(np.asarray(model["scale"], np.float32), w)
    if "w1" in model:  # one hidden layer (ReLU)
        # the first layer in one product (BLAS rounds a block of rows apart differently);
        # its bias, ReLU and the output layer a block of pixels at a time, while the block
        # is in cache (the output layer's sums are each pixel's own, the same in any block)
        hdn = x @ np.asarray(model["w1"], np.float32).reshape(n, -1)
        bias = np.tile(np.asarray(model["b1"], np.float32), _BLOCK)
        w2 = np.asarray(model["w2"], np.float32)
        z = np.empty(len(x), np.float32)
        for i in range(0, len(x), _BLOCK):
            part = hdn[i:i + _BLOCK]
            flat = part.reshape(-1)
            flat += bias[:flat.size]
            np.maximum(part, 0, out=part)
            np.matmul(part, w2, out=z[i:i + len(part)])
        z += np.float32(model["b2"])
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return p.reshape(small.shape[:2]).astype(np.float32)
    coef = np.asarray(model["coef"], np.float32)
    # the quadratic terms as a symmetric form: sum_ij A_ij x_i x_j with A from the i <= j terms
    iu, ju = np.triu_indices(n)
    A = np.zeros((n, n), np.float32)
    A[iu, ju] = coef[n:]
    z = np.einsum("ij,ij->i", x @ A, x) + x @ coef[:n] + np.float32(model["intercept"])
    p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return p.reshape(small.shape[:2]).astype(np.float32)


_TILE_NETS: dict = {}


def tile_net(det: dict):
    """The network named by ``[detect] tile_net`` (a file in models/), loaded once."""
    from models import model_path

    from vision.find.tilenet import TileNet

    path = model_path(det["tile_net"])
    if path not in _TILE_NETS:
        if not path.exists():
            raise FileNotFoundError(f"tile network {path} is missing: run "
                                    "python3 -m vision.lab.training.tiles --out models/tiles.onnx")
        _TILE_NETS[path] = TileNet(path)
    return _TILE_NETS[path]


_PIXEL_MODELS: dict = {}


def pixel_model(det: dict) -> dict:
    """The per-pixel model named by ``[detect] pixel_model`` (a JSON file in models/: its
    weights and a ``record`` of how they were fitted), loaded once."""
    from models import model_path

    path = model_path(det["pixel_model"])
    if path not in _PIXEL_MODELS:
        if not path.exists():
            raise FileNotFoundError(f"pixel model {path} is missing: run python3 -m "
                                    "vision.lab.training.pixels --fit --out models/pixel_model.json")
        _PIXEL_MODELS[path] = json.loads(path.read_text(encoding="utf-8"))
    return _PIXEL_MODELS[path]


def pixel_map(small: np.ndarray, det: dict) -> np.ndarray:
    return tile_probability(small, pixel_model(det))


def downscale(image: np.ndarray, long_side: int, integer: bool = False
               ) -> tuple[np.ndarray, float]:
    """Shrink so the long side is about ``long_side``; ``integer`` uses a whole-number factor
    (OpenCV's fast path for big photos), so the result is between 1 and 2 x ``long_side``."""
    s = min(1.0, long_side / max(image.shape[:2]))
    if s >= 1.0:
        return image, 1.0
    if not integer and s < 0.4:
        # bilinear to twice the size first (it reads only the pixels it needs), then a 2x2
        # area average: a 12-megapixel photo in a few ms instead of tens
        h, w = image.shape[:2]
        w2, h2 = max(1, round(2 * s * w)), max(1, round(2 * s * h))
        sub = cv2.resize(image, (w2, h2), interpolation=cv2.INTER_LINEAR)
        out = cv2.resize(sub, (max(1, w2 // 2), max(1, h2 // 2)), interpolation=cv2.INTER_AREA)
        return out, out.shape[1] / w
    if integer:
        k = int(1.0 / s)
        if k <= 1:
            return image, 1.0
        h, w = image.shape[:2]
        out = cv2.resize(image, (w // k, h // k), interpolation=cv2.INTER_AREA)
        small, s2 = downscale(out, long_side)
        return small, s2 * out.shape[1] / w
    return cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA), s


def largest(mask: np.ndarray):
    """The largest 8-connected blob of ``mask`` (uint8 0/1; ties: the first labelled), or None."""
    # the labels alone and their pixels counted: OpenCV's statistics (boxes, centroids)
    # cost several times the labelling, and only the areas are needed; 16-bit labels,
    # counted by a histogram, where every label fits (at most one blob in each 2 x 2 block)
    h, w = mask.shape[:2]
    if ((h + 1) // 2) * ((w + 1) // 2) < 1 << 16 and h * w < 1 << 24:
        n, labels = cv2.connectedComponentsWithAlgorithm(mask, 8, cv2.CV_16U, cv2.CCL_DEFAULT)
        if n <= 1:
            return None
        counts = cv2.calcHist([labels], [0], None, [n], [0, n]).ravel()   # whole numbers
    else:
        n, labels = cv2.connectedComponents(mask, connectivity=8)
        if n <= 1:
            return None
        counts = np.bincount(labels.ravel(), minlength=n)
    best = 1 + int(np.argmax(counts[1:]))
    return (labels == best).astype(np.uint8)


def half_thickness(mask: np.ndarray) -> float:
    """Half-width of the thickest part of a blob (px): the largest distance to a pixel off
    it, bounded by the map's diagonal. A blob that fills the whole map has no pixel off it,
    and OpenCV then gives a huge distance (a kernel sized from it once overflowed)."""
    far = float(cv2.distanceTransform(mask, cv2.DIST_L2, 3).max())
    return min(far, float(np.hypot(*mask.shape[:2])))


def disk(r: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))


# hysteresis: tile evidence above this joins the blob where it touches it (dark or brown tiles)
WEAK_TILE = 0.4
# ... within this share of the blob's half-thickness
GROW_REACH = 0.15


def tile_blob(prob: np.ndarray, det: dict) -> np.ndarray | None:
    """Mask (uint8) of the kingdom's tile blob, or None.

    Largest component of the closed tile mask, opened (cuts thin bridges to clutter: light
    strips, pencils, meeples), then grown by hysteresis into weaker tile evidence close to it
    (dark or brown tiles).
    """
    soft = cv2.GaussianBlur(prob, (0, 0), 1.0)
    mask = (soft > det["prob_threshold"]).astype(np.uint8)
    k = max(3, int(round(det["close_frac"] * max(mask.shape))) | 1)
    closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    ko = max(1, int(round(det["open_frac"] * max(mask.shape))))
    main = largest(cv2.morphologyEx(closed, cv2.MORPH_OPEN, disk(ko)))
    if main is None or main.sum() < det["min_area_frac"] * mask.size:
        return None
    thick = half_thickness(main)
    # hysteresis: take weaker tile evidence connected to the blob, within a short reach
    weak = (soft > WEAK_TILE).astype(np.uint8)
    weak = cv2.morphologyEx(weak, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    reach = max(1, int(round(GROW_REACH * thick)))
    grown = weak & cv2.dilate(main, disk(reach)) | main
    grown = cv2.morphologyEx(grown, cv2.MORPH_OPEN, disk(1))
    out = largest(grown)
    return out if out is not None else main


# an image this full of tiles ...
RECTIFIED_TILE_FRAC = 0.25
# ... with more than this share of its border tile is a rectified board (a phone photo's: <= 0.10)
RECTIFIED_BORDER_FRAC = 0.18


def is_rectified_board(prob: np.ndarray, det: dict) -> bool:
    """The whole image is the board: tiles nearly everywhere, up to the image borders."""
    frac = float((prob > 0.5).mean())
    h, w = prob.shape
    b = max(2, int(0.04 * min(h, w)))
    border = np.concatenate([prob[:b].ravel(), prob[-b:].ravel(), prob[:, :b].ravel(),
                             prob[:, -b:].ravel()])
    return (frac > RECTIFIED_TILE_FRAC
            and float((border > 0.5).mean()) > RECTIFIED_BORDER_FRAC
            and 0.8 < w / h < 1.25)
