"""A second tile network's reading, asked when the first found no 5x5 / 7x7 kingdom.

Two tile networks trained on different recipes (``models/tiles.json``, ``models/tiles_lit.json``:
the second also saw glare, hard shadows and far-away kingdoms drawn over its training crops)
miss different kingdoms. Neither frames the other's failures better on the whole (docs/
detection.md), so the second is not mixed in: it reads the photo again only when the first
reading is not a 5x5 or 7x7 window (a kingdom counted 6x3 on checks, or none found under a
lamp's reflection), and not for a window the detector counted surely (a half-built kingdom
on a plain table, ``Reader._sure_count``). The second's reading is taken only when it is a
5x5 or 7x7 window with a sure castle: anything less, where the first found nothing, made a
"kingdom" of tables with none (loose dominoes, a mat), and a half-built kingdom keeps its
reading unless the second network frames a whole kingdom there.
"""
from __future__ import annotations

import copy

from vision.find import detect

from vision.find import frame
from vision.errors import NO_KINGDOM, PhotoError


def second_opinion(reader, image, size, best, count_conf: float = 0.0):
    """``best`` (the reader's choice, or None: nothing found), or the reading with ``[reader]
    second_tile_net`` as the detector's network when ``best`` is none or no 5x5 / 7x7 window
    and that one is, with a castle at least ``sure_castle_odds`` likely. A window short of a
    frame from a row and column count the detector was sure of (``count_conf``,
    ``Reader._sure_count``: a half-built kingdom) is kept without asking. Raises
    ``PhotoError`` when neither found a kingdom."""
    cfg = reader.cfg
    name = str(cfg["reader"]["second_tile_net"])
    frames = [int(n) for n in cfg["frame"]["square_frames"]]
    if name and (best is None or not detect.is_frame(best.rows, best.cols, frames)
                 and not reader._sure_count(count_conf, best.rows, best.cols)):
        other = copy.copy(reader)
        other.cfg = copy.deepcopy(cfg)
        other.cfg["reader"]["second_tile_net"] = ""     # one second opinion, not a chain
        if other.cfg["detect"]["tile_net"]:    # every tile map is made from [detect]'s
            other.cfg["detect"]["tile_net"] = name
        try:    # the class's own find: a method set on the reader itself is bound to it
            found = type(reader).find(other, image, size)
        except PhotoError:
            found = None
        if found is not None and detect.is_frame(found.rows, found.cols, frames):
            castle = frame.terrain_odds(found.logits, "castle", reader.classifier.t_terrain).max()
            if castle >= float(cfg["reader"]["sure_castle_odds"]):
                best = found
    if best is None:
        raise PhotoError(NO_KINGDOM)
    return best
