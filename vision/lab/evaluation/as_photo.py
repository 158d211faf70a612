"""Generated scenes read as the product reads a phone's file.

A scene is an image in memory at full size; the product reads a JPEG decoded by
``vision.photo.scale.load_for_reading``, reduced by libjpeg when ``[io] read_long_side`` asks
for it (the decode the square classifier learnt from). :class:`AsPhoto` writes each scene as a
JPEG (``QUALITY``, like a phone's file), decodes and reads it that way
(``vision.photo.scale.read_photo``: again whole when its squares come out too small) and puts the
reading's corners back in the scene's pixels, so a measurement on generated scenes reads what a user's
photo would give the reader.
"""
from __future__ import annotations

import cv2
import numpy as np

from vision.photo import scale

QUALITY = 90      # the JPEG quality a scene is written with (a phone's file; benchmarks/bench_pipeline.py too)


def as_file(image: np.ndarray, quality: int = QUALITY) -> bytes:
    """``image`` (BGR) written as a JPEG file's bytes."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("the scene could not be written as a JPEG")
    return buf.tobytes()


class AsPhoto:
    """``reader`` (a ``vision.Reader``) reading each image as the JPEG file a phone would give:
    ``read(image, size=None)`` returns the reading in ``image``'s pixels. Everything else is
    the reader's."""

    def __init__(self, reader, quality: int = QUALITY):
        self.reader = reader
        self.quality = quality

    def read(self, image: np.ndarray, size: int | None = None):
        def read(decoded):
            return self.reader.read(decoded) if size is None else self.reader.read(decoded, size)

        reading, factor = scale.read_photo(as_file(image, self.quality), read, _side,
                                           getattr(self.reader, "cfg", None))
        return scale.to_photo_pixels(reading, factor)

    def __getattr__(self, name):
        return getattr(self.reader, name)


def read_table(reader, image: np.ndarray, size: int | None = None) -> list:
    """``vision.find.whole_table.read_table_photo`` (what ``score --all`` reads) of ``image``
    written as a JPEG, each kingdom's reading in ``image``'s pixels."""
    from vision.find import whole_table

    return whole_table.read_table_photo(reader, as_file(image), size,
                                        getattr(reader, "cfg", None))


def _side(reading) -> float:
    """:func:`vision.photo.scale.square_side` of a reading, or of its JSON (a stub's)."""
    if isinstance(reading, dict):
        from types import SimpleNamespace

        reading = SimpleNamespace(corners=reading["corners"], rows=reading.get("rows") or
                                  reading["size"], cols=reading.get("cols") or reading["size"])
    return scale.square_side(reading)
