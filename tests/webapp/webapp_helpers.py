"""Helpers for the web app tests: a fake reader of a known kingdom (and of a table of two),
test images, tokens.

The fake reader returns a fixed reading of a known kingdom, so the flow tests do not depend on
the vision models; ``real_reader`` tests use the shipped models on a sample photo instead.
"""
from __future__ import annotations

import re

import cv2
import numpy as np
import pytest


# The kingdom the fake reader "sees". Regions, worked out by hand (squares x crowns):
# field {(0,0),(0,1),(0,2),(1,0),(1,1)} 5x1 = 5; forest {(0,3),(0,4),(1,3),(1,4)} 4x1 = 4;
# lake {(1,2)} 1x1 = 1; lake {(2,3),(2,4),(3,4)} 3x0 = 0; grassland {(2,0),(2,1)} 0;
# swamp {(3,0),(3,1),(4,0),(4,1)} 4x2 = 8; mine {(3,2),(3,3)} 2x3 = 6. Total 24.
GRID = [
    "F1 F0 F0 W0 W0",
    "F0 F0 L1 W1 W0",
    "G0 G0 C0 L0 L0",
    "S0 S2 M0 M3 L0",
    "S0 S0 .0 .0 .0",
]
NAMES = {"F": "field", "W": "forest", "L": "lake", "G": "grassland", "S": "swamp", "M": "mine",
         "C": "castle", ".": "empty"}
FAKE_TOTAL = 24
REVIEW = [[2, 3]]  # the reader was unsure of this lake square (it has 1 crown, in truth)
CORNERS = [[100.0, 50.0], [500.0, 60.0], [520.0, 450.0], [80.0, 440.0]]


def kingdom_cells():
    return [[{"terrain": NAMES[tok[0]], "crowns": int(tok[1])} for tok in row.split()]
            for row in GRID]


def fake_homography():
    board = np.float32([[0, 0], [500, 0], [500, 500], [0, 500]])
    return cv2.getPerspectiveTransform(np.float32(CORNERS), board).tolist()


class FakeReader:
    """Records its calls; returns the fixed reading scored by the real engine."""

    def __init__(self):
        self.calls = 0

    def __call__(self, photo: bytes, rules: str, bonuses=()) -> dict:
        from kingdomino import service

        self.calls += 1
        cells = kingdom_cells()
        obj = service.score_grid({"rules": rules, "size": 5, "cells": cells}, rules=rules,
                                 bonuses=bonuses)
        for r, row in enumerate(obj["cells"]):
            for c, cell in enumerate(row):
                cell["confidence"] = 0.5 if [r, c] in REVIEW else 0.97
        obj["review"] = [list(rc) for rc in REVIEW]
        obj["corners"] = CORNERS
        obj["homography"] = fake_homography()
        obj["rows"] = obj["cols"] = 5
        return obj


class FakeTableReader:
    """Two kingdoms: the fake reader's kingdom (kingdom 0) and the same one with its two mine
    crowns gone (kingdom 1, fewer points); ``empty`` in the photo bytes: no kingdom."""

    def __init__(self):
        self.calls = 0

    def __call__(self, photo: bytes, rules: str, bonuses=(), size=None) -> list[dict]:
        from kingdomino import service

        self.calls += 1
        if self.fail:
            raise self.fail
        first = FakeReader()(photo, rules, bonuses)
        cells = [[dict(c) for c in row] for row in first["cells"]]
        cells[3][3]["crowns"] = 0
        second = service.score_grid({"rules": rules, "size": 5, "cells": cells}, rules=rules)
        second.update({k: first[k] for k in ("review", "homography", "rows", "cols")})
        second["corners"] = [[x + 1000, y] for x, y in first["corners"]]
        return [{**first, "kingdom": 0, "cut": False}, {**second, "kingdom": 1, "cut": True}]

    fail = None


def png_bytes(w=600, h=500) -> bytes:
    img = np.full((h, w, 3), 200, np.uint8)
    cv2.rectangle(img, (100, 50), (500, 450), (40, 120, 40), -1)
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.tobytes()


def jpeg_bytes(w=600, h=500) -> bytes:
    img = np.random.default_rng(0).integers(0, 255, (h, w, 3), dtype=np.uint8)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()



def page_token(client, url="/") -> str:
    """The CSRF token a page hands to its forms and scripts."""
    html = client.get(url).get_data(as_text=True)
    m = re.search(r'name="csrf-token" content="([^"]+)"', html)
    assert m, "the page carries no CSRF token"
    return m.group(1)


class NotListening:
    """What ``waitress.create_server`` gives ``webapp.serve``, without a socket: ``run``
    returns at once."""

    def run(self):
        pass

    def close(self):
        pass


def not_listening(seen: dict):
    """A stand-in for ``waitress.create_server`` that keeps its options and app in ``seen``."""
    def create_server(app, **options):
        seen.update(options, app=app)
        return NotListening()
    return create_server
