"""A photo decoded at the size the reader needs, and its reading put back in the photo's pixels.

A phone's 12 MP JPEG is four times the pixels the reader uses: the detector works on the photo
shrunk to ``[detect] refine_long_side`` and the square classifier on cells of ``[classify]
cell`` px, and a 5x5 kingdom that fills a third of a 4000 px photo has squares of 250 px. The
dev phone photos of 3 MP read as well as those of 12 MP. libjpeg can decode a JPEG 2, 4 or 8
times smaller a side while it decodes (in the DCT: a quarter of the work for half the side), so
with ``[io] read_long_side`` set a large JPEG is decoded reduced, down to at least that many px
on its long side, and what was read is put back in the upright photo's own pixels.

As shipped it is 2000 (since 2026-12-07, issue 51's fifth round): a 12 MP phone photo is decoded
at half its side, and the square classifier learnt from crops of that decode (``kingdomino
train`` cuts its crops from the decode this setting asks for:
``vision.lab.training.squares.reader_view``). Change it, and retrain, cross-validate
(``kingdomino evaluate --folds 4``) and run ``kingdomino evaluate --online`` before shipping
both together (docs/history.md, Speed). A half decode of these files costs about two thirds of
a whole one (libjpeg's entropy decoding is not reduced); a small or far kingdom is read again
from the whole decode (:func:`read_photo`).

- ``reduction(info, long_side) -> 1, 2, 4 or 8``: how much smaller a photo is decoded.
- ``load_for_reading(path_or_bytes, cfg=None) -> (image, factor)``: the decoded image and how
  much smaller a side it is than the upright photo; ``reading_reduction(path_or_bytes, cfg=None,
  square_px=None)`` that factor alone, from the header (1 when squares known to be
  ``square_px`` would come out under ``[io] whole_below_px``).
- ``read_photo(path_or_bytes, read, sides, cfg=None) -> (result, factor)``: ``read(image)`` of
  the decode for reading, read again from the whole decode when a reduced one gives squares
  under ``[io] whole_below_px`` (``sides(result)``; :func:`square_side` for a reading) or no
  kingdom: a small or far kingdom keeps the detail a reduced decode would lose.
- ``to_photo_pixels(reading, factor)``: a ``vision.Reading`` of the reduced image with its
  ``corners`` and ``homography`` in the upright photo's pixels; ``to_reduced_pixels(points,
  factor)`` the other way, for points (``reduced_map`` is the map itself).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from vision import config as _config
from vision.photo import files as photo_io

FACTORS = (1,) + photo_io.REDUCTIONS      # a photo decoded whole, or reduced by libjpeg


def reduction(info: photo_io.PhotoInfo, long_side: int) -> int:
    """The largest of 2, 4 and 8 that leaves a JPEG's long side at least ``long_side`` px, else 1
    (``long_side`` 0 or less: 1). Other formats are decoded whole (1): their decoders cannot
    reduce, so a smaller copy would cost a resize on top of the decode."""
    if info.format != "jpeg" or long_side <= 0:
        return 1
    longest = max(info.width, info.height)
    factor = 1
    while factor < FACTORS[-1] and -(-longest // (2 * factor)) >= long_side:
        factor *= 2
    return factor


def reading_reduction(path_or_bytes, cfg=None, square_px: float | None = None) -> int:
    """How much smaller a side :func:`load_for_reading` decodes this photo (1: whole), from its
    header (a ``PhotoError`` for one that is refused); for ``vision.photo.files.decode_once``.
    ``square_px``: the side of the kingdom's squares in the upright photo's pixels when it is
    known before reading (an outline given by hand): a photo whose squares would come out
    under ``[io] whole_below_px`` reduced is decoded whole (1), as :func:`read_photo` reads
    such a kingdom again."""
    cfg = cfg if cfg is not None else _config.load()
    long_side = int(cfg["io"]["read_long_side"])
    if long_side <= 0:
        return 1
    factor = reduction(photo_io.open_photo(path_or_bytes, cfg).info, long_side)
    if square_px is not None and factor > 1 and not _enough(square_px / factor, cfg):
        return 1
    return factor


def _enough(square_px: float, cfg) -> bool:
    """Whether squares of ``square_px`` px in a reduced decode keep the detail to read them."""
    return square_px >= float(cfg["io"]["whole_below_px"])


def load_for_reading(path_or_bytes, cfg=None) -> tuple[np.ndarray, int]:
    """The photo decoded for reading (``vision.photo.files.load_image``: the same checks and messages),
    reduced by :func:`reduction` for ``[io] read_long_side``; ``(image, factor)``."""
    cfg = cfg if cfg is not None else _config.load()
    photo = photo_io.open_photo(path_or_bytes, cfg)     # checked once, for both steps
    factor = reading_reduction(photo, cfg)
    return photo_io.load_image(photo, cfg, reduce=factor), factor


def square_side(reading) -> float:
    """The side in px of a reading's squares, the shorter way: its outline's (``corners``)
    two top-to-bottom sides over its rows, or its two left-to-right ones over its columns."""
    c = np.asarray(reading.corners, np.float64).reshape(4, 2)
    across = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 2 / max(1, reading.cols)
    down = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 2 / max(1, reading.rows)
    return float(min(across, down))


def read_photo(path_or_bytes, read, sides, cfg=None) -> tuple[object, int]:
    """``(read(image), factor)`` of the photo decoded for reading (:func:`load_for_reading`).

    A reduced decode is read again from the whole decode (``factor`` 1) when ``sides(result)``,
    the side in px of the squares read (a table's smallest kingdom's), is under ``[io]
    whole_below_px``, or when its reading raises ``PhotoError`` (no kingdom): a small or far
    kingdom keeps the detail the reduced decode would lose. A photo decoded whole is read once.
    """
    from vision.errors import PhotoError

    cfg = cfg if cfg is not None else _config.load()
    photo = photo_io.open_photo(path_or_bytes, cfg)
    factor = reading_reduction(photo, cfg)
    image = photo_io.load_image(photo, cfg, reduce=factor)
    if factor == 1:
        return read(image), 1
    try:
        result = read(image)
    except PhotoError:
        result = None
    if result is not None and _enough(sides(result), cfg):
        return result, factor
    del image
    return read(photo_io.load_image(photo, cfg)), 1


def reduced_map(factor: int) -> np.ndarray:
    """The 3 x 3 map from the upright photo's pixels to those of the image decoded ``factor``
    times smaller a side. Pixel centres are at whole coordinates: the reduced image's pixel
    ``x`` covers the photo's pixels ``factor * x`` to ``factor * x + factor - 1``, so its centre
    is the photo's ``factor * x + (factor - 1) / 2``."""
    f = float(factor)
    off = (f - 1.0) / 2.0
    return np.array([[1.0 / f, 0.0, -off / f], [0.0, 1.0 / f, -off / f], [0.0, 0.0, 1.0]])


def to_reduced_pixels(points, factor: int) -> np.ndarray:
    """Points ``(N, 2)`` in the upright photo's pixels -> the reduced image's pixels."""
    m = reduced_map(factor)
    return np.asarray(points, np.float64).reshape(-1, 2) * m[0, 0] + m[0, 2]


def to_photo_pixels(reading, factor: int):
    """``reading`` (of an image ``factor`` times smaller a side than the upright photo) with its
    corners and homography (image px -> rectified board px) in the photo's own pixels (the
    inverse of :func:`reduced_map`)."""
    if factor == 1:
        return reading
    to_reduced = reduced_map(factor)
    back = np.linalg.inv(to_reduced)
    corners = [[float(x) * back[0, 0] + back[0, 2], float(y) * back[1, 1] + back[1, 2]]
               for x, y in reading.corners]
    h = np.asarray(reading.homography, np.float64) @ to_reduced
    h = h / h[2, 2]
    return dataclasses.replace(reading, corners=corners,
                               homography=[[float(v) for v in row] for row in h])
