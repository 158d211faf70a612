"""What the web app does with a reading: read a photo, keep a small copy, lay the grid on it,
explain a disputed score and export a result. No Flask here: every function is plain data in,
plain data out, so it is tested without a server.
"""
from __future__ import annotations

import io
import json
import threading

import numpy as np

from kingdomino import csvsafe
from kingdomino.store import PHOTO_COPY_SIDE as PHOTO_MAX_SIDE

LOW_CONFIDENCE = 0.8  # a square read with less confidence than this may explain a dispute


READ_LOCK = threading.Lock()  # one reading at a time, the whole-table reader too (webapp.table)


def default_reader(photo: bytes, rules: str, bonuses=(), corners=None, size=None) -> dict:
    """The real reader: the contract's scored JSON of a photo (``kingdomino.service``);
    ``corners`` (stored pixels) and ``size``: the outline given by hand.

    One photo at a time: the server runs requests in threads and the models' networks are not
    safe to run concurrently (and each read already uses every core).
    """
    from kingdomino import service

    with READ_LOCK:
        return service.score_photo(photo, rules=rules, bonuses=bonuses, size=size,
                                   corners=corners)


def decode(photo: bytes):
    """The photo as a BGR array, upright (EXIF honoured); ``vision.PhotoError`` (a ValueError)
    when it cannot be (``vision.photo.files.load_image``: limits checked before decoding)."""
    from vision.photo import files as photo_io

    return photo_io.load_image(photo)


def shrink_photo(photo: bytes, max_side: int = PHOTO_MAX_SIDE) -> tuple[bytes, tuple[int, int]]:
    """A JPEG copy of the photo at most ``max_side`` px, and the upright original's (w, h)."""
    from vision.photo import files as photo_io

    # a large JPEG decoded reduced for it (a fraction of a whole decode); inside an upload's
    # vision.photo.files.decode_once (webapp.service.decode_upload), from the reading's decode
    return photo_io.shrink_photo(photo, max_side)


# ---------------------------------------------------------------- grid on the photo


def _perspective(src, dst) -> np.ndarray:
    """The 3x3 matrix mapping the 4 ``src`` points onto the 4 ``dst`` points."""
    a, b = [], []
    for (x, y), (u, v) in zip(src, dst):
        a.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        a.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        b.extend([u, v])
    h = np.linalg.solve(np.asarray(a, float), np.asarray(b, float))
    return np.append(h, 1.0).reshape(3, 3)


def _apply(m: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.c_[pts, np.ones(len(pts))] @ m.T
    return p[:, :2] / p[:, 2:3]


def grid_points(reading: dict) -> list[list[list[float]]] | None:
    """Image (x, y) of every grid corner: ``points[r][c]`` for r in 0..rows, c in 0..cols.

    Board units are projected through the inverse of the reading's homography (image -> board
    pixels; its scale and margin are recovered from where it sends the corners). Without a
    usable homography the corners alone define the mapping. ``None`` when the reading has no
    outline (a kingdom built by hand).
    """
    corners = reading.get("corners")
    if not corners or len(corners) != 4:
        return None
    rows = int(reading.get("rows") or reading.get("size") or len(reading.get("cells") or []))
    cols = int(reading.get("cols") or reading.get("size") or rows)
    if rows < 1 or cols < 1:
        return None
    corners = np.asarray(corners, float).reshape(4, 2)
    units = np.array([[c, r] for r in range(rows + 1) for c in range(cols + 1)], float)
    square = np.array([[0, 0], [cols, 0], [cols, rows], [0, rows]], float)
    pts = None
    hom = reading.get("homography")
    try:
        if hom is not None:
            hmat = np.asarray(hom, float).reshape(3, 3)
            board = _apply(hmat, corners)  # where the outline lands on the rectified board
            to_board = _perspective(square, board)  # board units -> board pixels
            pts = _apply(np.linalg.inv(hmat), _apply(to_board, units))
        if pts is None or not np.all(np.isfinite(pts)):
            pts = _apply(_perspective(square, corners), units)
    except (np.linalg.LinAlgError, ValueError):
        try:
            pts = _apply(_perspective(square, corners), units)
        except np.linalg.LinAlgError:
            return None
    pts = pts.reshape(rows + 1, cols + 1, 2)
    return [[[round(float(x), 2), round(float(y), 2)] for x, y in row] for row in pts]


def copy_scale(size) -> tuple[float, list[int]]:
    """From a photo's ``(w, h)`` to its stored copy's pixels (the copy the pages draw on, at
    most ``PHOTO_MAX_SIDE`` on its long side): the factor, and the copy's ``[w, h]``."""
    factor = min(1.0, PHOTO_MAX_SIDE / max(size))
    return factor, [round(size[0] * factor), round(size[1] * factor)]


def scale_points(points, factor: float):
    if points is None:
        return None
    return [[[round(x * factor, 2), round(y * factor, 2)] for x, y in row] for row in points]


# ---------------------------------------------------------------- dispute


def doubtful_squares(machine: dict | None, threshold: float = LOW_CONFIDENCE) -> set[tuple[int, int]]:
    """Squares the machine was unsure of: flagged for review, or read with low confidence."""
    if not machine:
        return set()
    out = {tuple(rc) for rc in machine.get("review") or []}
    for r, row in enumerate(machine.get("cells") or []):
        for c, cell in enumerate(row):
            conf = cell.get("confidence") if isinstance(cell, dict) else None
            if conf is not None and conf < threshold:
                out.add((r, c))
    return out


def dispute(claimed: int | None, score: dict, machine: dict | None, corrected: bool) -> dict | None:
    """Compare a player's claimed total with the score; name the regions that may explain it.

    ``None`` when no score was claimed. Suspect regions are those holding a square the machine
    flagged or was unsure of (a misread terrain or crown changes exactly those regions).
    """
    if claimed is None:
        return None
    total = int(score.get("total", 0))
    diff = claimed - total
    doubtful = doubtful_squares(machine)
    suspects = []
    for i, region in enumerate(score.get("regions") or []):
        cells = {tuple(rc) for rc in region.get("cells") or []}
        hits = sorted(cells & doubtful)
        if hits:
            suspects.append({"index": i, "terrain": region.get("terrain"),
                             "points": region.get("points"), "squares": region.get("squares"),
                             "crowns": region.get("crowns"),
                             "doubtful": [list(rc) for rc in hits]})
    if diff == 0:
        message = "The claimed score matches."
    elif suspects:
        message = (f"The claim is {abs(diff)} point{'s' if abs(diff) != 1 else ''} "
                   f"{'above' if diff > 0 else 'below'} the score. Check the highlighted regions: "
                   "they hold squares the reader was unsure of.")
    else:
        message = (f"The claim is {abs(diff)} point{'s' if abs(diff) != 1 else ''} "
                   f"{'above' if diff > 0 else 'below'} the score, and the reader was sure of "
                   "every square" + (" (after corrections)" if corrected else "") +
                   ": recount the regions with the player.")
    return {"claimed": claimed, "total": total, "difference": diff, "suspects": suspects,
            "message": message}


# ---------------------------------------------------------------- export


def breakdown_csv(reading_id: str, rules: str, score: dict) -> str:
    """The score breakdown as CSV: one line per region, per bonus, then the total."""
    out = io.StringIO()
    w = csvsafe.writer(out, lineterminator="\n")  # cells safe to open in a spreadsheet
    w.writerow(["id", "rules", "item", "name", "squares", "crowns", "points"])
    for region in score.get("regions") or []:
        w.writerow([reading_id, rules, "region", region.get("terrain"), region.get("squares"),
                    region.get("crowns"), region.get("points")])
    for bonus in score.get("bonuses") or []:
        w.writerow([reading_id, rules, "bonus", bonus.get("name"), "", "", bonus.get("points")])
    for key, value in (score.items()):
        if key in ("total", "regions", "bonuses", "tiebreak", "warnings", "rules"):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            w.writerow([reading_id, rules, "extra", key, "", "", value])
        elif key == "courtiers" and isinstance(value, dict):  # The Court: a line per courtier
            for item in value.get("list") or []:
                w.writerow([reading_id, rules, "courtier", item.get("reason"), "", "",
                            item.get("points")])
    w.writerow([reading_id, rules, "total", "", "", "", score.get("total")])
    return out.getvalue()


def _state(kingdom: dict, rules: str, bonuses) -> dict:
    """One state of the editor: the kingdom as the engine writes it, its rules and bonuses."""
    import engine

    rules = kingdom.get("rules") or rules
    bonuses = sorted(kingdom.get("bonuses", bonuses) or [])
    try:
        clean = engine.Kingdom.from_json({**kingdom, "rules": rules}).to_json()
    except (ValueError, TypeError, KeyError, AttributeError):  # stored before a rule changed
        clean = {k: v for k, v in kingdom.items() if k != "bonuses"}
    return {"kingdom": clean, "rules": rules, "bonuses": bonuses}


def undo_stack(machine: dict | None, rules: str, bonuses, corrections: list[dict]) -> list[dict]:
    """What Undo goes back to, oldest first, worked out again from the stored corrections.

    ``machine`` is the machine's reading (None for a kingdom built by hand), ``corrections`` the
    stored kingdoms in the order they were saved. The result page saves an undo as a correction
    equal to the kingdom before the last change, so a correction equal to the top of the stack
    takes that change back; one equal to the kingdom already there (a save sent twice) changes
    nothing. Each state is ``{"kingdom", "rules", "bonuses"}``, the kingdom as the engine writes it.
    Two states are the same whatever the reader's confidence in their squares (``state_key``).
    """
    def key(state):
        return json.dumps({**state, "kingdom": _without_confidence(state["kingdom"])},
                          sort_keys=True)

    stack: list[dict] = []
    now = _state(machine, rules, bonuses) if machine else None
    for kingdom in corrections:
        state = _state(kingdom, rules, bonuses)
        if now is not None and key(state) == key(now):
            now = state  # the same state, as last saved (the store's Undo goes back to it)
            continue
        if stack and key(state) == key(stack[-1]):
            stack.pop()
        elif now is not None:
            stack.append(now)
        now = state
    return stack



def state_key(rules: str, bonuses):
    """When two stored kingdoms of a reading are the same editor state (as ``undo_stack``
    compares them): the key the store links its undo history by (``Store.add_correction``).
    The reader's confidence in a square is not part of it: the machine's reading posted back
    as it is (a confirmation, or an Undo back to it) is that same state."""
    def key(kingdom: dict) -> str:
        return json.dumps(_state(_without_confidence(kingdom), rules, bonuses), sort_keys=True)
    return key


def _without_confidence(kingdom):
    """The kingdom without the reader's per-square ``confidence`` (what a correction is
    stored without: ``webapp.service.kingdom_of``)."""
    cells = kingdom.get("cells") if isinstance(kingdom, dict) else None
    if not isinstance(cells, list):
        return kingdom
    return {**kingdom, "cells": [
        [{k: v for k, v in cell.items() if k != "confidence"} if isinstance(cell, dict) else cell
         for cell in row] if isinstance(row, list) else row for row in cells]}


def undo_states(kingdoms: list[dict], rules: str, bonuses) -> list[dict]:
    """The kingdoms of ``Store.undo_history`` as the editor's states (``undo_stack``'s form)."""
    return [_state(kingdom, rules, bonuses) for kingdom in kingdoms]
