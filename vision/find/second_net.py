"""A second tile network's search, asked when the first found no 5x5 / 7x7 kingdom.

Two tile networks trained on different recipes (``models/tiles.json``, ``models/tiles_lit.json``:
the second also saw glare, hard shadows and far-away kingdoms drawn over its training crops)
miss different kingdoms. Neither frames the other's failures better on the whole (docs/
detection.md), so the second is not mixed in: it searches the photo again only when the first
search found no 5x5 or 7x7 window (a kingdom counted 6x3 on checks, or none found under a
lamp's reflection), and not for a window the detector counted surely (a half-built kingdom on
a plain table). Its window is taken only when it is a 5x5 or 7x7 with a sure castle: anything
less, where the first found nothing, made a "kingdom" of tables with none (loose dominoes, a
mat), and a half-built kingdom keeps its reading unless the second network frames a whole
kingdom there. When to ask and what to take: ``vision.find.search.Objective.doubts`` and
``pick_second``.
"""
from __future__ import annotations

import copy

from vision.errors import PhotoError


def second_look(cfg: dict, search):
    """The window ``search(cfg)`` finds (the reader's whole search, ``Reader.find``'s, with
    the configuration given) with ``[reader] second_tile_net`` as the detector's network and
    no second look of its own; None when no second network is set or it finds no kingdom.
    ``cfg`` itself is left as it is."""
    name = str(cfg["reader"]["second_tile_net"])
    if not name:
        return None
    other = copy.deepcopy(cfg)
    other["reader"]["second_tile_net"] = ""     # one second look, not a chain
    if other["detect"]["tile_net"]:             # every tile map is made from [detect]'s
        other["detect"]["tile_net"] = name
    try:
        return search(other)
    except PhotoError:
        return None
