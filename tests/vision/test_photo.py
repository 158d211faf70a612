"""vision.photo: a large JPEG decoded at the reader's size, its reading put back in the photo's pixels."""
from __future__ import annotations

import copy

import cv2
import numpy as np
import pytest

from vision import config as vision_config
from vision.photo import scale as photo
from vision.geometry import board_homography
from vision.photo.files import PhotoInfo, load_image
from vision.reader import Reading

from tests.vision.test_io import _jpeg, _with_exif_orientation


def _cfg(long_side: int) -> dict:
    cfg = copy.deepcopy(vision_config.load())
    cfg["io"]["read_long_side"] = long_side
    return cfg


@pytest.mark.parametrize("fmt, w, h, long_side, factor", [
    ("jpeg", 4000, 3000, 2000, 2),     # a 12 MP phone photo: read at 3 MP
    ("jpeg", 3000, 4000, 2000, 2),     # portrait: the long side counts
    ("jpeg", 4000, 3000, 2001, 1),     # halved it would fall short
    ("jpeg", 4001, 3000, 2001, 2),     # libjpeg rounds up: 2001 px
    ("jpeg", 8064, 6048, 2000, 4),
    ("jpeg", 64000, 1000, 2000, 8),    # 8 is the most libjpeg reduces
    ("jpeg", 4000, 3000, 0, 1),        # 0: never reduced
    ("png", 4000, 3000, 2000, 1),      # only JPEG decoders reduce while decoding
    ("webp", 4000, 3000, 2000, 1),
])
def test_reduction(fmt, w, h, long_side, factor):
    assert photo.reduction(PhotoInfo(fmt, w, h), long_side) == factor


def _stripes(h: int, w: int) -> np.ndarray:
    img = np.zeros((h, w, 3), np.uint8)
    img[:, : w // 2] = (0, 0, 255)          # left half red
    return img


def test_a_large_jpeg_is_decoded_reduced_and_a_png_whole(tmp_path):
    cfg = _cfg(500)
    data = _jpeg(_stripes(600, 1200))
    image, factor = photo.load_for_reading(data, cfg)
    assert factor == 2 and image.shape == (300, 600, 3)
    # the same picture, smaller: red on the left, black on the right
    assert image[150, 100, 2] > 200 and image[150, 500, 2] < 50
    path = tmp_path / "a.png"
    ok, buf = cv2.imencode(".png", _stripes(600, 1200))
    path.write_bytes(buf.tobytes())
    image, factor = photo.load_for_reading(path, cfg)
    assert factor == 1 and image.shape == (600, 1200, 3)


def test_the_photo_is_checked_once_a_read_reduced_or_not(tmp_path, monkeypatch):
    from vision.photo import files as photo_io

    path = tmp_path / "a.jpg"
    path.write_bytes(_jpeg(_stripes(600, 1200)))
    checked, real = [], photo_io.check_photo
    monkeypatch.setattr(photo_io, "check_photo", lambda *a, **k: checked.append(1) or real(*a, **k))
    image, factor = photo.load_for_reading(path, _cfg(0))
    assert factor == 1 and image.shape == (600, 1200, 3) and len(checked) == 1
    photo.load_for_reading(path, _cfg(500))
    assert len(checked) == 2        # on: checked once too; the reduction and the decode share it


def test_a_reduced_jpeg_is_upright():
    data = _with_exif_orientation(_jpeg(_stripes(600, 1200)), 6)   # 6: turn 90 degrees clockwise
    image, factor = photo.load_for_reading(data, _cfg(500))
    assert factor == 2 and image.shape == (600, 300, 3)
    assert image[20, 150, 2] > 200 and image[-20, 150, 2] < 50      # the red half on top


def test_reduce_is_refused_for_what_cannot_be_reduced():
    ok, buf = cv2.imencode(".png", _stripes(40, 80))
    with pytest.raises(ValueError, match="JPEG"):
        load_image(buf.tobytes(), reduce=2)
    with pytest.raises(ValueError, match="2, 4 or 8"):
        load_image(_jpeg(_stripes(40, 80)), reduce=3)


def _reading(corners, rows=5, cols=5, cell=64) -> Reading:
    h = board_homography(np.float32(corners), rows, cols, cell)
    return Reading(size=5, cells=[], review=[], corners=[[float(x), float(y)] for x, y in corners],
                   homography=h.tolist(), rows=rows, cols=cols)


@pytest.mark.parametrize("factor", [2, 4])
def test_a_reading_is_put_back_in_the_photos_pixels(factor):
    reduced = [[100.0, 50.0], [400.0, 80.0], [380.0, 360.0], [90.0, 330.0]]
    out = photo.to_photo_pixels(_reading(reduced), factor)
    off = (factor - 1) / 2
    assert np.allclose(out.corners, np.array(reduced) * factor + off)
    # the homography maps the photo's corners to the board's, as the reduced one did the
    # reduced corners, and any point as the reduced reading mapped the same place
    h = np.array(out.homography)
    board = cv2.perspectiveTransform(np.float64(out.corners).reshape(-1, 1, 2), h).reshape(-1, 2)
    assert np.allclose(board, [[0, 0], [320, 0], [320, 320], [0, 320]], atol=1e-6)
    inside = np.float64([[[250.0, 200.0]]])
    seen = cv2.perspectiveTransform(inside, np.array(_reading(reduced).homography))
    assert np.allclose(cv2.perspectiveTransform(inside * factor + off, h), seen, atol=1e-6)
    assert out.rows == 5 and out.cols == 5


@pytest.mark.parametrize("factor", [1, 2, 4, 8])
def test_photo_points_go_to_the_reduced_pixels_and_back(factor):
    reduced = [[100.0, 50.0], [400.0, 80.0], [380.0, 360.0], [90.0, 330.0]]
    in_photo = photo.to_photo_pixels(_reading(reduced), factor).corners
    assert np.allclose(photo.to_reduced_pixels(in_photo, factor), reduced)
    # the reduced image's pixel 0 covers the photo's pixels 0 .. factor - 1
    assert np.allclose(photo.to_reduced_pixels([[0.0, factor - 1.0]], factor),
                       [[-(factor - 1) / 2 / factor, (factor - 1) / 2 / factor]])


def test_a_reading_of_the_whole_photo_is_unchanged():
    reading = _reading([[0, 0], [10, 0], [10, 10], [0, 10]])
    assert photo.to_photo_pixels(reading, 1) is reading


def _read_photo(tmp_path, long_side, answers):
    """vision.photo.scale.read_photo of a 2400x1600 JPEG whose reads give ``answers`` in turn
    (a square side in px, or an exception): the image shapes read and what came back."""
    path = tmp_path / "photo.jpg"
    cv2.imwrite(str(path), np.full((1600, 2400, 3), 128, np.uint8))
    cfg = _cfg(long_side)
    cfg["io"]["whole_below_px"] = 64
    shapes, answers = [], list(answers)

    def read(image):
        shapes.append(image.shape[:2])
        got = answers.pop(0)
        if isinstance(got, Exception):
            raise got
        return got

    return shapes, photo.read_photo(str(path), read, lambda side: side, cfg)


def test_a_kingdom_with_large_squares_is_read_from_the_reduced_decode(tmp_path):
    shapes, (result, factor) = _read_photo(tmp_path, 1000, [80.0])
    assert shapes == [(800, 1200)] and (result, factor) == (80.0, 2)


def test_a_kingdom_with_small_squares_in_the_reduced_decode_is_read_again_whole(tmp_path):
    shapes, (result, factor) = _read_photo(tmp_path, 1000, [40.0, 80.0])
    assert shapes == [(800, 1200), (1600, 2400)] and (result, factor) == (80.0, 1)


def test_a_reduced_decode_with_no_kingdom_is_read_again_whole(tmp_path):
    from vision.errors import NO_KINGDOM, PhotoError

    shapes, (result, factor) = _read_photo(tmp_path, 1000, [PhotoError(NO_KINGDOM), 70.0])
    assert shapes == [(800, 1200), (1600, 2400)] and (result, factor) == (70.0, 1)
    with pytest.raises(PhotoError):           # not found whole either: the photo's error
        _read_photo(tmp_path, 1000, [PhotoError(NO_KINGDOM), PhotoError(NO_KINGDOM)])


def test_a_photo_decoded_whole_is_read_once_whatever_its_squares(tmp_path):
    shapes, (result, factor) = _read_photo(tmp_path, 0, [10.0])
    assert shapes == [(1600, 2400)] and (result, factor) == (10.0, 1)


def test_the_side_of_a_readings_squares_is_the_shorter_way():
    # 5 rows over 300 px, 4 columns over 400 px: 60 px squares down, 100 across
    reading = _reading([[0, 0], [400, 0], [400, 300], [0, 300]], rows=5, cols=4)
    assert photo.square_side(reading) == pytest.approx(60.0)
