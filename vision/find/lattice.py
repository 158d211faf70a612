"""The kingdom's lattice: the square cells' pitch and phase from the seams, and which cells hold
tiles (``[lattice]`` in ``config.toml``).

The blob's outline (``vision.find.outline``) gives the grid's directions well -- its sides are refitted
to the vanishing points of the tile edges -- but not its extent: on a table that looks like a
tile the blob takes in a strip of table, and the grid counted inside that outline has cells of
the wrong size (a 5x5 counted 7x7, or 5x5 cells that drift half a square off by the far side).
A table cannot fake the seams: every tile edge lies on one lattice of square cells.

Once the outline's sides lie on lines through the right vanishing points, the outline's
rectification differs from the lattice's by a scale and a shift along each axis only (a
homography that keeps both points at infinity is axis-aligned affine). So:

1. rectify the outline, grown by ``MARGIN`` cells on every side, to about ``PX_PER_CELL`` px a
   cell;
2. along each axis, a profile of the edges running across it (colour gradient, counted where
   the tile map says tile: the table's own pattern does not count);
3. the pitch and phase whose lines carry the profile's edges (:func:`fit_pitch`: the share of
   edge near the lines rejects double the true pitch, the edge on the lines over that on the
   mid-lines half a pitch off rejects half of it);
4. the cells of that lattice the tile map covers, within the outline: the largest connected
   group of them, its bounding box (at most ``MAX_CELLS`` a side), is the kingdom's grid.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

# px per square of the first count when the outline is rectified for the seams
PX_PER_CELL = 24
# squares of surroundings rectified around the outline on every side
MARGIN = 1.5
# edges count this far (share of a square) beyond the tile map's tiles
EDGE_REACH = 0.3
# the square's side is searched between these multiples of the first count's ...
PITCH_RANGE = (0.6, 1.6)
# ... over this many pitches (log-spaced), then finer around the best
PITCH_STEPS = 60
# px between the phases tried (then a quarter of it around the best)
PHASE_STEP = 0.75
# a line counts where tile covers this share of the most-covered line
MIN_COVER = 0.3
# the profile's ends (share of a first-count square) are the kingdom's border, not seams
BORDER = 0.6
# edge within this share of a pitch of a line is on it
NEAR = 0.15
# the two pitches' ratio may differ this much (log) from square squares on the table
MAX_SKEW = 0.15
# central part of a square averaged for its tile cover ...
INNER = 0.5
# ... and a square is tile with this mean tile probability
TILE_COVER = 0.5
# a square whose centre lies beyond the outline by more than this (share of a square) is out
GROW = 0.0
# most squares along a side
MAX_CELLS = 7
# an axis of fewer squares in the first count keeps the outline's own lines
MIN_CELLS = 4

from vision.find.gridcount import channel_sum


@dataclass(frozen=True)
class Lattice:
    """A grid found on the seams: its corners (tl, tr, br, bl, in the input's px), rows, cols,
    and the seams' score along each axis, rows then columns (:func:`fit_pitch`; inf along an
    axis too short to fit)."""

    corners: np.ndarray
    rows: int
    cols: int
    scores: tuple


def edge_profiles(rect: np.ndarray, weight: np.ndarray):
    """Across-axis edge profiles of a rectified colour image: for each column the mean strength
    of vertical edges, for each row that of horizontal edges, each weighted by ``weight``."""
    lab = cv2.cvtColor(rect, cv2.COLOR_BGR2LAB).astype(np.float32)
    lab = cv2.GaussianBlur(lab, (0, 0), 0.8)
    gx = channel_sum(np.abs(cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)))
    gy = channel_sum(np.abs(cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)))
    w = weight.astype(np.float32)
    px = (gx * w).sum(0) / (w.sum(0) + 1e-3)
    py = (gy * w).sum(1) / (w.sum(1) + 1e-3)
    return px, w.mean(0), py, w.mean(1)


def _sample(profile: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``profile`` at fractional positions ``x`` (linear; the ends repeat beyond it)."""
    n = len(profile)
    x = np.asarray(x, np.float64)
    i = np.clip(np.floor(x).astype(int), 0, n - 2)
    f = np.clip(x - i, 0.0, 1.0)
    return profile[i] * (1 - f) + profile[i + 1] * f


def fit_pitch(profile: np.ndarray, cover: np.ndarray, pitches, phase_step: float = PHASE_STEP,
              min_cover: float = MIN_COVER, border: float = 0.0, near: float = NEAR):
    """The (pitch, phase, score) of the comb of lines ``phase + k * pitch`` that best explains
    the edges of ``profile``, or None.

    Only the interior counts: the span where ``cover`` (the share of tile along that line) is
    at least ``min_cover`` of its largest, less ``border`` px at each end (the kingdom's own
    border is an edge on every lattice that ends there; the seams lie on one only). Two
    measures, multiplied: the share of the profile's edge (above its median) lying within
    ``near`` of a pitch from a line -- a comb of twice the pitch or of a pitch between
    misses half the seams -- and the mean edge on the lines over the mean on the mid-lines
    half a pitch off -- a comb of half the pitch puts every other line through tile middles.
    """
    profile = np.asarray(profile, np.float64)
    span = _interior(profile, np.asarray(cover, np.float64), min_cover, border)
    if span is None:
        return None
    # coarse: every pitch, phases ``phase_step`` apart; then finer around the best
    pitches = np.asarray(pitches, np.float64)
    best = _best_comb(profile, span, near, pitches, lambda p: np.arange(0.0, p, phase_step))
    if best is None or len(pitches) < 2:
        return best
    ratio = float(np.exp(np.mean(np.diff(np.log(pitches)))))
    fine = best[0] * ratio ** np.linspace(-1.0, 1.0, 9)
    near_phase = lambda p: np.mod(best[1] + np.arange(-phase_step, phase_step + 1e-9,  # noqa: E731
                                                      phase_step / 4), p)
    return max((best, _best_comb(profile, span, near, fine, near_phase) or best),
               key=lambda f: f[2])


@dataclass(frozen=True)
class _Span:
    """The interior of a profile that :func:`fit_pitch` scores combs on: from ``a`` to ``b``
    px, the whole px ``xs`` in it, each one's edge above the profile's median there
    (``excess``, summed: ``total``) and the indices into ``xs`` where there is any (``edge``)."""

    a: float
    b: float
    xs: np.ndarray
    excess: np.ndarray
    total: float
    edge: np.ndarray


def _interior(profile: np.ndarray, cover: np.ndarray, min_cover: float,
              border: float) -> _Span | None:
    """The span where ``cover`` is at least ``min_cover`` of its largest, less ``border`` px
    at each end; None when it is under 2 px long or holds no edge above its median."""
    live = np.nonzero(cover >= min_cover * max(float(cover.max()), 1e-6))[0]
    if not len(live):
        return None
    a, b = live[0] + border, live[-1] - border
    if b - a < 2:
        return None
    xs = np.arange(int(np.ceil(a)), int(np.floor(b)) + 1, dtype=np.float64)
    vals = profile[xs.astype(int)]
    excess = np.maximum(vals - np.median(vals), 0.0)
    total = float(excess.sum())
    if total <= 0:
        return None
    return _Span(a, b, xs, excess, total, np.flatnonzero(excess > 0))


def _best_comb(profile: np.ndarray, span: _Span, near: float, pitches, phases_of):
    """The (pitch, phase, score) of the best-scoring comb (:func:`_comb_scores`) of
    ``pitches``, each at the phases ``phases_of(pitch)``; None when none scores above 0."""
    # every (pitch, phase) comb is a row: the share of edge near its lines is one pass over
    # all of them (:func:`_near_shares`); the pitches whose combs hold as many lines are
    # scored on their lines together (each row's sums see the same values in the same
    # order as one pitch at a time would: the same scores, bit for bit, in a few array passes)
    plist = [float(p) for p in pitches]
    if not plist:
        return None
    phases = [np.asarray(phases_of(p), np.float64) for p in plist]
    n = [len(ph) for ph in phases]
    starts = np.cumsum([0] + n)
    p_all = np.repeat(plist, n)[:, None]
    ph_all = np.concatenate(phases)[:, None]
    share = _near_shares(span, near, p_all, ph_all)
    ks = [np.arange(int(np.floor(span.a / p)) - 1, int(np.ceil(span.b / p)) + 2) for p in plist]
    scores = np.empty(len(ph_all))
    groups: dict = {}
    for j, k in enumerate(ks):
        groups.setdefault(len(k), []).append(j)
    for members in groups.values():
        rows = np.concatenate([np.arange(starts[j], starts[j + 1]) for j in members])
        k = np.repeat(np.stack([ks[j] for j in members]), [n[j] for j in members], axis=0)
        scores[rows] = _comb_scores(profile, span, p_all[rows], ph_all[rows], k, share[rows])
    if not len(scores) or np.isnan(scores).any():
        return _first_best(plist, phases, np.split(scores, starts[1:-1]))
    # the first comb of the highest score, pitch by pitch and phase by phase: the one a walk
    # through the pitches in turn keeps (each pitch's first best, replaced only by a higher)
    i = int(np.argmax(scores))
    if not scores[i] > 0:
        return None
    j = int(np.searchsorted(starts, i, side="right")) - 1
    return plist[j], float(ph_all[i, 0]), float(scores[i])


def _first_best(plist, phases, scores):
    """:func:`_best_comb`'s choice walked pitch by pitch (scores that may hold NaN)."""
    best = None
    for p, ph, score in zip(plist, phases, scores):
        i = int(np.argmax(score))
        if score[i] > 0 and (best is None or score[i] > best[2]):
            best = (p, float(ph[i]), float(score[i]))
    return best


# a distance this close (share of the largest x and pitch) to a comb's tolerance is measured
# again exactly (rounding moves the quick one by some 1e-16 of them)
_RECHECK = 1e-9


def _near_shares(span: _Span, near: float, p: np.ndarray, ph: np.ndarray) -> np.ndarray:
    """Each comb's share of the span's edge within ``near`` of a pitch from one of its lines
    (a row each: pitch ``p``, phase ``ph``)."""
    xs, edge = span.xs, span.edge
    # each x's distance to its nearest line, only where there is edge to count (elsewhere
    # the product summed is 0 on any comb): y less the nearest multiple of the pitch is
    # that distance up to rounding, so it tells near from far as the exact distance past
    # the last line (fmod, slower than the rest together) does, except within _RECHECK of
    # the tolerance: there the exact one decides
    y = xs[edge][None, :] - ph
    dist = y * (1.0 / p)
    np.rint(dist, out=dist)
    dist *= p
    np.subtract(y, dist, out=dist)
    np.abs(dist, out=dist)
    t = near * p                                   # near a line on either side
    slack = _RECHECK * (float(np.abs(xs).max()) + float(p.max()) + 1.0)
    near_line = dist < t - slack
    if np.count_nonzero(near_line) != np.count_nonzero(dist < t + slack):
        r, c = np.nonzero((dist >= t - slack) & (dist < t + slack))
        near_line[r, c] = _exact_near(y[r, c], p[r, 0], t[r, 0], xs[0] >= 0)
    counted = np.zeros((len(ph), len(xs)))
    counted[:, edge] = span.excess[edge][None, :] * near_line
    return counted.sum(1) / span.total


def _exact_near(y: np.ndarray, p: np.ndarray, t: np.ndarray, from_zero: bool) -> np.ndarray:
    """Whether ``y`` lies within ``t`` of a multiple of ``p``, by np.mod's distance past the
    last one: every phase lies in [0, p] and, from x = 0 on (``from_zero``), y >= -p, where
    fmod (exact), or y + p below zero, is np.mod's own arithmetic."""
    if from_zero:
        d = np.fmod(y, p)
        np.add(y, p, out=d, where=y < 0)
    else:           # a negative border: np.mod itself
        d = np.mod(y, p)
    return (d < t) | (p - d < t)


def _comb_scores(profile: np.ndarray, span: _Span, p: np.ndarray, ph: np.ndarray,
                 k: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Each comb's score (a row each: pitch ``p``, phase ``ph``, its line numbers ``k``; every
    comb with as many lines; ``share`` its share of the span's edge near its lines,
    :func:`_near_shares`): that share times the mean edge on the lines over that on the
    mid-lines; 0 for a comb with no line or no mid-line in the span."""
    lines = ph + p * k
    mids = lines + 0.5 * p
    both = np.stack([lines, mids])
    within = (both >= span.a) & (both <= span.b)
    counts = within.sum(2)
    sums = (_sample(profile, both) * within).sum(2)
    on = sums[0] / np.maximum(counts[0], 1)
    off = sums[1] / np.maximum(counts[1], 1)
    return np.where((counts[0] >= 1) & (counts[1] >= 1), share * on / (off + 1e-6), 0.0)


def cell_cover(tiles: np.ndarray, xs: np.ndarray, ys: np.ndarray, inner: float) -> np.ndarray:
    """Mean of ``tiles`` over the central ``inner`` part of each cell between lines ``xs``
    (columns) and ``ys`` (rows): a (len(ys) - 1) x (len(xs) - 1) array."""
    H, W = tiles.shape
    out = np.zeros((len(ys) - 1, len(xs) - 1))
    a = (1 - inner) / 2
    # each cell's central part in whole px, once per column and per row (Python floats: the
    # same doubles as numpy's, their floor and ceiling without numpy's per-element calls)
    xs, ys = np.asarray(xs, np.float64).tolist(), np.asarray(ys, np.float64).tolist()
    cols = [(max(0, math.floor(x0 + a * (x1 - x0))), min(W, math.ceil(x1 - a * (x1 - x0))))
            for x0, x1 in zip(xs, xs[1:])]
    rows = [(max(0, math.floor(y0 + a * (y1 - y0))), min(H, math.ceil(y1 - a * (y1 - y0))))
            for y0, y1 in zip(ys, ys[1:])]
    for r, (i0, i1) in enumerate(rows):
        for c, (j0, j1) in enumerate(cols):
            if i1 > i0 and j1 > j0:
                out[r, c] = float(tiles[i0:i1, j0:j1].mean())
    return out


def tile_box(cover: np.ndarray, threshold: float, max_cells: int):
    """(r0, c0, rows, cols): the bounding box of the largest 4-connected group of cells whose
    cover is above ``threshold`` (a half-built kingdom's holes and notches stay inside it), cut
    to the ``max_cells`` window holding most cover when it is larger; None without such a cell."""
    on = (np.asarray(cover) > threshold).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(on, connectivity=4)
    if n <= 1:
        return None
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h = (int(v) for v in stats[k, :4])
    mine = np.where(labels == k, cover, 0.0)
    if h > max_cells:
        sums = [mine[y + i:y + i + max_cells].sum() for i in range(h - max_cells + 1)]
        y, h = y + int(np.argmax(sums)), max_cells
    if w > max_cells:
        sums = [mine[:, x + j:x + j + max_cells].sum() for j in range(w - max_cells + 1)]
        x, w = x + int(np.argmax(sums)), max_cells
    return y, x, h, w


def fit_lattice(image: np.ndarray, tiles: np.ndarray, quad: np.ndarray, rows: int, cols: int,
                lat: dict, aspect: float | None = None) -> Lattice | None:
    """The lattice of the kingdom found as ``quad`` (tl, tr, br, bl in ``image`` px) with a first
    count of ``rows x cols``: ``image`` a colour photo, ``tiles`` a tile probability map of the
    same size, ``lat`` the ``[lattice]`` section (see the module docstring). ``aspect``: the outline's width over its height on
    the table (``vision.find.gridcount.focal_aspect``), when known: the squares are square, so the
    two pitches must agree with it within ``MAX_SKEW``. None when the seams give no
    clear lattice (score under ``[lattice] min_score`` on an axis, or squares that are not
    square) or no tile cell."""
    c = float(PX_PER_CELL)
    m = MARGIN
    quad = np.asarray(quad, np.float32)
    W, H = int(round((cols + 2 * m) * c)), int(round((rows + 2 * m) * c))
    dst = np.float32([[m * c, m * c], [(cols + m) * c, m * c], [(cols + m) * c, (rows + m) * c],
                      [m * c, (rows + m) * c]])
    Hq = cv2.getPerspectiveTransform(quad, dst)
    rect = cv2.warpPerspective(image, Hq, (W, H), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)
    tmap = cv2.warpPerspective(tiles.astype(np.float32), Hq, (W, H), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=0.0)
    on = (tmap > 0.5).astype(np.uint8)
    reach = max(1, int(round(EDGE_REACH * c)))
    weight = cv2.dilate(on, np.ones((2 * reach + 1, 2 * reach + 1), np.uint8))
    px, cover_x, py, cover_y = edge_profiles(rect, weight)
    lo, hi = PITCH_RANGE
    pitches = c * np.exp(np.linspace(np.log(lo), np.log(hi), PITCH_STEPS))
    fit = dict(phase_step=PHASE_STEP, min_cover=MIN_COVER, border=BORDER * c, near=NEAR)
    least = MIN_CELLS
    # an axis of fewer squares than min_cells keeps the outline's own lines
    fx = fit_pitch(px, cover_x, pitches, **fit) if cols >= least else (c, m * c % c, np.inf)
    fy = fit_pitch(py, cover_y, pitches, **fit) if rows >= least else (c, m * c % c, np.inf)
    if fx is None or fy is None:
        return None
    if min(fx[2], fy[2]) < float(lat["min_score"]):
        return None
    if aspect and cols >= least and rows >= least:
        # a world square is (cols / aspect) : rows in the rectified outline's px
        expect = (cols / rows) / aspect
        if abs(np.log((fx[0] / fy[0]) / expect)) > MAX_SKEW:
            return None
    xs = fx[1] + fx[0] * np.arange(-int(fx[1] // fx[0]) - 1, int(W / fx[0]) + 2)
    ys = fy[1] + fy[0] * np.arange(-int(fy[1] // fy[0]) - 1, int(H / fy[0]) + 2)
    xs = xs[(xs > -fx[0]) & (xs < W + fx[0])]
    ys = ys[(ys > -fy[0]) & (ys < H + fy[0])]
    cover = cell_cover(tmap, xs, ys, INNER)
    # the lattice may cut the outline down (table taken in by the blob), never grow it: a
    # square whose centre lies beyond the outline (by more than GROW) is not the
    # kingdom's (a loose domino or the next kingdom across a narrow gap)
    g = GROW * c
    cx, cy = (xs[:-1] + xs[1:]) / 2, (ys[:-1] + ys[1:]) / 2
    out_x = (cx < m * c - g) | (cx > (cols + m) * c + g)
    out_y = (cy < m * c - g) | (cy > (rows + m) * c + g)
    cover[out_y[:, None] | out_x[None, :]] = 0.0
    box = tile_box(cover, TILE_COVER, MAX_CELLS)
    if box is None:
        return None
    r0, c0, nr, nc = box
    if cols < least:      # the outline's own extent along a short axis
        c0, nc = int(np.argmin(np.abs(xs - m * c))), cols
    if rows < least:
        r0, nr = int(np.argmin(np.abs(ys - m * c))), rows
    x0, x1, y0, y1 = xs[c0], xs[c0 + nc], ys[r0], ys[r0 + nr]
    pts = np.float32([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]])
    corners = cv2.perspectiveTransform(pts, np.linalg.inv(Hq))[0]
    return Lattice(corners.astype(np.float32), int(nr), int(nc), (fy[2], fx[2]))
