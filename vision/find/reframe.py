"""A 5x5 or 7x7 window the reader chose that reads blurred, cut as the other square frame.

The detector's count of a kingdom's outline can be wrong by a whole frame: a 7x7 kingdom on a
striped or mottled table whose outline was counted 4x6 and grown to 5x5 (its squares then cut
across the tiles' seams) reads blurred; the same outline cut 7x7 reads crisply, every square
on a tile. :func:`other_frames` reads the chosen window's outline cut into the other square
frames of ``[frame] square_frames``; the reader keeps the crispest when it reads clearly
crisper (``vision.find.search.Objective.pick_reframed``).
"""
from __future__ import annotations

from dataclasses import replace

from vision.find import frame


def other_frames(found, window, cfg: dict, t_terrain: float, size: int | None = None) -> list:
    """When ``found`` (a ``vision.find.search.Candidate``) is a square frame whose squares
    read less crisply than ``[reader] other_frame_below`` (:func:`vision.find.frame.crispness`
    with the classifier's ``t_terrain``), the same outline cut n x n for each other n of
    ``[frame] square_frames`` (at most ``size`` when the caller gave one), each window read by
    ``window(corners, rows, cols, warnings)`` (``Reader.framed``) and kept when it stays the
    whole frame, with a warning that says so; otherwise none."""
    frames = [int(n) for n in cfg["frame"]["square_frames"]]
    if not frame.is_frame(found.rows, found.cols, frames) or frame.crispness(
            found.logits, t_terrain) >= float(cfg["reader"]["other_frame_below"]):
        return []
    out = []
    for n in frames:
        if n == found.rows or (size is not None and n > size):
            continue
        other = window(found.corners, n, n, found.warnings)
        if (other.rows, other.cols) != (n, n):
            continue    # the cut's own window is no whole frame: not this count either
        out.append(replace(other, warnings=tuple(other.warnings) + (
            f"the outline found was read as {found.rows}x{found.cols} squares; they read "
            f"crisper as {n}x{n}: check its outline",)))
    return out
