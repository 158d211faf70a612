"""The site's icon (``GET /favicon.ico``, which every browser asks for): a gold crown on the
header's brown, drawn here pixel by pixel and packed as a PNG inside an ICO file, so the
project ships no binary image and needs no drawing library for it."""
from __future__ import annotations

import struct
import zlib
from functools import lru_cache

SIDE = 32                                # pixels; browsers scale it for the tab
BROWN = (0x3B, 0x2A, 0x1A, 255)          # the header's colour (static/app.css, .top)
GOLD = (0xFF, 0xD7, 0x00, 255)           # the crowns' colour on the result page
CLEAR = (0, 0, 0, 0)
CORNER = 6                               # radius of the rounded corners
# the crown: a band, and three spikes from the band up to their tips (x of the tip, y of the tip)
BAND = (6, 25, 19, 24)                   # x from, x to, y from, y to (inclusive)
SPIKES = ((8, 9), (16, 6), (23, 9))
SPIKE_BASE = 19                          # the y where the spikes meet the band
SPIKE_SLOPE = 0.45                       # half a spike's width grows by this per row down


def _rounded_out(x: int, y: int) -> bool:
    """Outside the rounded square's corners."""
    last = SIDE - 1
    cx = CORNER if x < CORNER else last - CORNER if x > last - CORNER else None
    cy = CORNER if y < CORNER else last - CORNER if y > last - CORNER else None
    return cx is not None and cy is not None and (x - cx) ** 2 + (y - cy) ** 2 > CORNER ** 2


def _in_crown(x: int, y: int) -> bool:
    x0, x1, y0, y1 = BAND
    if x0 <= x <= x1 and y0 <= y <= y1:
        return True
    return any(tip_y <= y < SPIKE_BASE and abs(x - tip_x) <= (y - tip_y) * SPIKE_SLOPE + 0.5
               for tip_x, tip_y in SPIKES)


def pixel(x: int, y: int) -> tuple[int, int, int, int]:
    if _rounded_out(x, y):
        return CLEAR
    return GOLD if _in_crown(x, y) else BROWN


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png() -> bytes:
    """The icon as a PNG (RGBA, 8 bits a channel, no filter)."""
    rows = b"".join(b"\x00" + bytes(v for x in range(SIDE) for v in pixel(x, y))
                    for y in range(SIDE))
    header = struct.pack(">IIBBBBB", SIDE, SIDE, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows, 9))
            + _chunk(b"IEND", b""))


@lru_cache(maxsize=1)
def ico() -> bytes:
    """The icon as an ICO file holding one PNG image (every current browser reads these)."""
    image = png()
    directory = struct.pack("<HHH", 0, 1, 1)                          # reserved, icon, 1 image
    entry = struct.pack("<BBBBHHII", SIDE, SIDE, 0, 0, 1, 32, len(image), 6 + 16)
    return directory + entry + image
