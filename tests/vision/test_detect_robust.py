"""The detector's outlines (``detect.candidates``) on any array: outlines, or the reader's
PhotoError -- never anything else.

Issue 15, defect 1: a generated photo whose tile blob filled the whole tile map made ``_disk``
raise ``TypeError: Can't parse 'ksize'`` (a mask with no background pixel has a huge distance
transform maximum, and the kernel size derived from it overflowed).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vision import config

from vision.find import detect

from vision.find import tilemap
from vision.errors import PhotoError


def _all_tile(small, det):
    return np.ones(small.shape[:2], np.float32)


@pytest.mark.parametrize("shape", [(300, 400, 3), (900, 500, 3), (64, 64, 3)])
def test_a_tile_map_that_is_all_tile_does_not_crash(monkeypatch, shape):
    monkeypatch.setattr(detect, "pixel_map", _all_tile)
    monkeypatch.setattr(detect, "tile_net", lambda det: type("Net", (), {
        "probability": staticmethod(lambda small: np.ones(small.shape[:2], np.float32))})())
    image = np.full(shape, 90, np.uint8)
    try:
        found = list(detect.candidates(image, alternatives=True))
    except PhotoError:
        return
    assert all(f.rows >= 1 and f.cols >= 1 and np.isfinite(f.corners).all() for f in found)


def test_half_thickness_of_a_full_mask_is_bounded_by_the_map():
    full = np.ones((120, 200), np.uint8)
    assert 0 < tilemap.half_thickness(full) <= np.hypot(120, 200)
    part = np.zeros((120, 200), np.uint8)
    part[20:100, 30:170] = 1
    # 40 px to the nearest edge; the 3x3 distance mask measures it a few per cent short
    assert tilemap.half_thickness(part) == pytest.approx(40, rel=0.06)


@pytest.mark.parametrize("image", [
    None,
    np.zeros((0, 0, 3), np.uint8),
    np.zeros((200, 300), np.uint8),                       # grey
    np.zeros((200, 300, 4), np.uint8),                    # with alpha
    np.zeros((200, 300, 1), np.uint8),
    np.full((200, 300, 3), 0.5, np.float64),              # not 8-bit
    np.full((200, 300, 3), 40000, np.uint16),
    np.full((200, 300, 3), np.nan, np.float32),
    np.zeros((8, 4000, 3), np.uint8),                     # a line
    np.zeros((4000, 12, 3), np.uint8),
    np.zeros((200, 300, 3), bool),
    "photo.jpg",
    [[1, 2, 3]],
], ids=lambda a: getattr(a, "dtype", type(a).__name__).__str__() + str(getattr(a, "shape", "")))
def test_odd_arrays_give_the_readers_error(image):
    with pytest.raises(PhotoError):
        next(detect.candidates(image))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(h=st.integers(16, 260), w=st.integers(16, 260), seed=st.integers(0, 2**31 - 1),
       kind=st.sampled_from(["noise", "flat", "blocks", "stripes"]))
def test_any_colour_image_gives_outlines_or_the_readers_error(h, w, seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "noise":
        image = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    elif kind == "flat":
        image = np.full((h, w, 3), rng.integers(0, 256, 3), np.uint8)
    elif kind == "blocks":
        cells = rng.integers(0, 256, (max(1, h // 20), max(1, w // 20), 3), dtype=np.uint8)
        image = np.ascontiguousarray(np.kron(cells, np.ones((20, 20, 1), np.uint8))[:h, :w])
        if image.shape[:2] != (h, w):
            image = np.resize(image, (h, w, 3))
    else:
        image = np.zeros((h, w, 3), np.uint8)
        image[:, ::7] = rng.integers(0, 256, 3)
    try:
        found = list(detect.candidates(image, config.load(), alternatives=True))
    except PhotoError:
        return
    assert found and all(np.isfinite(f.corners).all() and 1 <= min(f.rows, f.cols)
                         and max(f.rows, f.cols) <= 7 for f in found)
