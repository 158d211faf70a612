"""A 5x5 or 7x7 window the reader chose that reads blurred, cut as the other square frame.

The detector's count of a kingdom's outline can be wrong by a whole frame: a 7x7 kingdom on a
striped or mottled table whose outline was counted 4x6 and grown to 5x5 (its squares then cut
across the tiles' seams) reads blurred; the same outline cut 7x7 reads crisply, every square
on a tile. :func:`other_frame` reads the chosen window's outline cut into the other square
frames of ``[frame] square_frames`` and keeps the crispest when it reads clearly crisper.
"""
from __future__ import annotations

from vision.find import detect

from vision.find import frame


def other_frame(reader, image, found, size: int | None = None):
    """``found`` (the reader's chosen window, ``vision.reader._Found``) or, when it is a square
    frame whose squares read less crisply than ``[reader] other_frame_below``
    (:func:`vision.find.frame.crispness`), the same outline cut n x n for another n of ``[frame]
    square_frames`` (at most ``size`` when the caller gave one): the one whose squares read
    crispest, by at least ``other_frame_margin`` over ``found``, whose window stays the whole
    frame (``reader.framed``), holds a domino (``vision.find.frame.too_few_tiles``) and a square
    with castle odds of at least ``[reader] min_castle_odds``."""
    cfg = reader.cfg
    frames = [int(n) for n in cfg["frame"]["square_frames"]]
    t = reader.classifier.t_terrain
    if found is None or found.logits is None or not detect.is_frame(found.rows, found.cols,
                                                                      frames):
        return found
    crisp = frame.crispness(found.logits, t)
    if crisp >= float(cfg["reader"]["other_frame_below"]):
        return found
    best, best_crisp = found, crisp + float(cfg["reader"]["other_frame_margin"])
    for n in frames:
        if n == found.rows or (size is not None and n > size):
            continue
        other = reader.framed(image, found.corners, n, n, size, found.warnings)
        if (other.rows, other.cols) != (n, n):
            continue    # the cut's own window is no whole frame: not this count either
        c = frame.crispness(other.logits, t)
        castle = frame.terrain_odds(other.logits, "castle", t).max()
        terrains = [sq.terrain for row in other.grid for sq in row]
        if c > best_crisp and castle >= float(cfg["reader"]["min_castle_odds"]) \
                and not frame.too_few_tiles(terrains, cfg):
            best, best_crisp = other, c
    if best is not found:
        best.warnings.append(f"the outline found was read as {found.rows}x{found.cols} squares; "
                             f"they read crisper as {best.rows}x{best.cols}: check its outline")
    return best
