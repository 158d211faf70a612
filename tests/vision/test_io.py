"""vision.io: safe decoding of photos."""
from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
import pytest

from vision.errors import PhotoError
from vision.io import image_dimensions, load_image


def _jpeg(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


def _with_exif_orientation(jpeg: bytes, orientation: int) -> bytes:
    """Insert a minimal EXIF APP1 segment (big-endian TIFF, one IFD entry: Orientation)."""
    tiff = (b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1)
            + struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack(">I", 0))
    payload = b"Exif\x00\x00" + tiff
    app1 = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    return jpeg[:2] + app1 + jpeg[2:]


def _png_header(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


def _sample() -> np.ndarray:
    img = np.zeros((40, 80, 3), np.uint8)
    img[:, :40] = (0, 0, 255)  # left half red
    return img


def test_loads_jpeg_bytes_and_path(tmp_path):
    data = _jpeg(_sample())
    assert load_image(data).shape == (40, 80, 3)
    path = tmp_path / "a.jpg"
    path.write_bytes(data)
    img = load_image(path)
    assert img.dtype == np.uint8 and img.shape == (40, 80, 3)
    assert image_dimensions(data) == (80, 40)


def test_png_roundtrip():
    ok, buf = cv2.imencode(".png", _sample())
    img = load_image(buf.tobytes())
    assert np.array_equal(img, _sample())
    assert image_dimensions(buf.tobytes()) == (80, 40)


def test_exif_orientation_is_honoured():
    data = _with_exif_orientation(_jpeg(_sample()), 6)  # 6: rotate 90 degrees clockwise
    img = load_image(data)
    assert img.shape == (80, 40, 3)
    # the red left half of the stored image ends up on top
    assert img[5, 20, 2] > 200 and img[5, 20, 0] < 50
    assert img[-5, 20, 2] < 50


@pytest.mark.parametrize("data, words", [
    (b"", "empty"),
    (b"hello, this is a text file\n" * 10, "not an image"),
    (b"\x00\x00\x00\x18ftypheic" + b"\x00" * 64, "HEIC"),
])
def test_refuses_non_images(data, words):
    with pytest.raises(PhotoError, match=words):
        load_image(data)


def test_refuses_truncated_jpeg():
    rng = np.random.default_rng(0)
    data = _jpeg(rng.integers(0, 255, (200, 200, 3), dtype=np.uint8))
    with pytest.raises(PhotoError, match="truncated"):
        load_image(data[: len(data) // 2])
    with pytest.raises(PhotoError, match="truncated|damaged"):
        load_image(data[:20])


def test_refuses_truncated_png():
    ok, buf = cv2.imencode(".png", _sample())
    with pytest.raises(PhotoError, match="truncated"):
        load_image(buf.tobytes()[:-20])


def test_refuses_decompression_bomb_before_decoding():
    data = _png_header(100_000, 100_000)  # no pixel data at all: must fail on the header
    assert image_dimensions(data) == (100_000, 100_000)
    with pytest.raises(PhotoError, match=r"too large: 100000 x 100000 pixels"):
        load_image(data)


def test_byte_limit_from_config(tmp_path):
    data = _jpeg(_sample())
    cfg = {"io": {"max_bytes": 100, "max_pixels": 10**8}}
    with pytest.raises(PhotoError, match="too large"):
        load_image(data, cfg)
    path = tmp_path / "b.jpg"
    path.write_bytes(data)
    with pytest.raises(PhotoError, match="too large"):
        load_image(path, cfg)


def test_missing_file(tmp_path):
    with pytest.raises(PhotoError, match="no such"):
        load_image(tmp_path / "nope.jpg")


def test_dimensions_of_garbage_is_none():
    assert image_dimensions(b"not an image at all") is None
    assert image_dimensions(b"") is None


def test_refuses_jpeg_claiming_huge_size():
    data = bytearray(_jpeg(_sample()))
    sof = data.find(b"\xff\xc0")
    assert sof > 0
    data[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)  # height, width in the SOF
    assert image_dimensions(bytes(data)) == (60000, 60000)
    with pytest.raises(PhotoError, match="60000 x 60000 pixels"):
        load_image(bytes(data))


def test_jpeg_with_bytes_after_the_end_marker_loads():
    data = _jpeg(_sample()) + b"\x00trailer written by some phones" * 4
    assert load_image(data).shape == (40, 80, 3)
