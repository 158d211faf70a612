"""vision.photo.files: safe decoding of photos."""
from __future__ import annotations

import os
import struct
import threading
import zlib

import cv2
import numpy as np
import pytest

from vision import config as vision_config
from vision.photo import files as photo_io
from vision.errors import PhotoError
from vision.photo.files import PhotoInfo, check_photo, image_dimensions, load_image, read_header


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


def _png_header(w: int, h: int, depth: int = 8, colour: int = 2) -> bytes:
    """A PNG signature and IHDR chunk only (colour 2: RGB, 6: RGBA): no pixels follow."""
    ihdr = struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 0)
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
    with pytest.raises(PhotoError, match=r"too large: 100000x100000 pixels"):
        load_image(data)


def test_byte_limit_from_config(tmp_path):
    data = _jpeg(_sample())
    cfg = vision_config.load()
    cfg["io"]["max_bytes"] = 100
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
    with pytest.raises(PhotoError, match="60000x60000 pixels"):
        load_image(bytes(data))


def test_jpeg_with_bytes_after_the_end_marker_loads():
    data = _jpeg(_sample()) + b"\x00trailer written by some phones" * 4
    assert load_image(data).shape == (40, 80, 3)


# ---------------------------------------------------------------- decoded memory (issue 15 #10)


def test_decoded_size_is_counted_from_the_header():
    assert read_header(_png_header(7700, 7700, 16, 6)) == PhotoInfo("png", 7700, 7700, 4, 2)
    assert read_header(_jpeg(_sample())) == PhotoInfo("jpeg", 80, 40, 3, 1)
    assert PhotoInfo("png", 7700, 7700, 4, 2).decoded_bytes == 7700 * 7700 * 4 * 2
    assert PhotoInfo("png", 10, 10, 1, 1).decoded_bytes == 10 * 10 * 3  # decoded to BGR


def test_16_bit_rgba_png_under_the_pixel_cap_is_refused_for_its_memory():
    # the 461 KB PNG: 7700 x 7700 16-bit RGBA (59 MP, under the pixel cap), 474 MB decoded
    data = _png_header(7700, 7700, depth=16, colour=6)
    cfg = vision_config.load()
    assert 7700 * 7700 <= cfg["io"]["max_pixels"] < 7700 * 7700 * 8
    with pytest.raises(PhotoError, match="too large to decode: 7700x7700 pixels of 4 16-bit"):
        check_photo(data)
    # the same size in 8-bit RGB takes 178 MB: not refused for memory (only as cut short here)
    with pytest.raises(PhotoError, match="cut short"):
        check_photo(_png_header(7700, 7700))


def test_decoded_memory_limit_comes_from_the_config():
    data = _png_header(100, 100, depth=16, colour=6)  # 80 kB decoded
    cfg = vision_config.load()
    cfg["io"]["max_decoded_bytes"] = 80_000
    with pytest.raises(PhotoError, match="cut short"):  # within the limit
        check_photo(data, cfg)
    cfg["io"]["max_decoded_bytes"] = 79_999
    with pytest.raises(PhotoError, match="too large to decode"):
        check_photo(data, cfg)


def _bmp_info_header(width: int, height: int, bpp: int) -> bytes:
    """A Windows BMP file header and 40-byte BITMAPINFOHEADER claiming this size: no pixels."""
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, bpp, 0, 0, 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 0, 0, 0, 14 + len(info)) + info


def test_32_bit_bmp_claiming_a_large_top_down_image_is_refused_before_decoding(monkeypatch):
    def no_decode(*a, **k):
        raise AssertionError("decoded although the header should have been refused")
    monkeypatch.setattr(photo_io.cv2, "imdecode", no_decode)
    data = _bmp_info_header(10_000, -11_000, 32)  # 110 MP (under the pixel cap), 440 MB
    assert read_header(data) == PhotoInfo("bmp", 10_000, 11_000, 4, 1)
    with pytest.raises(PhotoError, match="too large to decode: 10000x11000 pixels"):
        load_image(data)


def test_16_bit_png_loads_as_8_bit():
    img16 = (np.arange(40 * 80 * 3, dtype=np.uint16).reshape(40, 80, 3) * 7) % 65535
    ok, buf = cv2.imencode(".png", img16.astype(np.uint16))
    assert ok and read_header(buf.tobytes()).sample_bytes == 2
    img = load_image(buf.tobytes())
    assert img.dtype == np.uint8 and img.shape == (40, 80, 3)


def test_decodes_at_once_are_bounded_by_the_config(monkeypatch):
    cfg = vision_config.load()
    cfg["io"]["max_decodes"] = 1
    cfg["io"]["decode_wait_s"] = 0
    entered, release = threading.Event(), threading.Event()
    real_imdecode = cv2.imdecode

    def slow_imdecode(buf, flags):
        entered.set()
        assert release.wait(30), "the test never released the first decode"
        return real_imdecode(buf, flags)

    monkeypatch.setattr(photo_io.cv2, "imdecode", slow_imdecode)
    data = _jpeg(_sample())
    results = []
    first = threading.Thread(target=lambda: results.append(load_image(data, cfg).shape))
    first.start()
    try:
        assert entered.wait(30), "the first decode never started"
        with pytest.raises(photo_io.PhotoBusy, match="too many photos"):
            load_image(data, cfg)  # its one turn is taken: refused at once (no wait configured)
    finally:
        release.set()
        first.join(30)
    assert results == [(40, 80, 3)]
    assert load_image(data, cfg).shape == (40, 80, 3)  # the turn was given back


# ---------------------------------------------------------------- BMP headers (issue 15 #13)


def _os2_bmp(img: np.ndarray) -> bytes:
    """A 24-bit OS/2 BMP (12-byte BITMAPCOREHEADER), bottom-up rows padded to 4 bytes."""
    h, w = img.shape[:2]
    stride = (w * 3 + 3) // 4 * 4
    rows = b"".join(img[y].tobytes() + b"\0" * (stride - w * 3) for y in range(h - 1, -1, -1))
    core = struct.pack("<IHHHH", 12, w, h, 1, 24)
    offset = 14 + len(core)
    return b"BM" + struct.pack("<IHHI", offset + len(rows), 0, 0, offset) + core + rows


def test_os2_bmp_header_is_read_right():
    img = np.zeros((80, 100, 3), np.uint8)
    img[:, :50] = (0, 0, 255)  # left half red
    data = _os2_bmp(img)
    assert read_header(data) == PhotoInfo("bmp", 100, 80, 3, 1)
    assert check_photo(data).format == "bmp"
    assert np.array_equal(load_image(data), img)


def test_web_check_agrees_on_the_os2_bmp():
    from webapp.security import check_image, image_format_and_size

    data = _os2_bmp(np.full((80, 100, 3), 90, np.uint8))
    assert image_format_and_size(data) == ("bmp", 100, 80)
    assert check_image(data, max_pixels=60_000_000) == ("bmp", 100, 80)


def test_windows_bmp_header_is_read_right():
    ok, buf = cv2.imencode(".bmp", _sample())
    assert read_header(buf.tobytes()) == PhotoInfo("bmp", 80, 40, 3, 1)
    assert np.array_equal(load_image(buf.tobytes()), _sample())


# ---------------------------------------------------------------- what a path is (issue 15 #13)


def test_photo_bytes_takes_every_bytes_kind_and_paths_through_the_file_checks(tmp_path):
    data = _jpeg(_sample())
    for given in (data, bytearray(data), memoryview(data)):
        got = photo_io.photo_bytes(given)
        assert type(got) is bytes and got == data
    path = tmp_path / "a.jpg"
    path.write_bytes(data)
    assert photo_io.photo_bytes(path) == data and photo_io.photo_bytes(str(path)) == data
    with pytest.raises(PhotoError, match="is a folder, not a photo"):
        photo_io.photo_bytes(tmp_path)
    assert load_image(memoryview(data)).shape == (40, 80, 3)


def test_a_folder_is_named(tmp_path):
    with pytest.raises(PhotoError, match="is a folder, not a photo"):
        load_image(tmp_path)


def test_a_symlink_loop_is_named(tmp_path):
    loop = tmp_path / "loop.jpg"
    loop.symlink_to(loop)
    with pytest.raises(PhotoError, match="symbolic link loop"):
        load_image(loop)


def test_a_broken_symlink_is_named(tmp_path):
    link = tmp_path / "gone.jpg"
    link.symlink_to(tmp_path / "deleted.jpg")
    with pytest.raises(PhotoError, match="broken symbolic link"):
        load_image(link)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "photo.jpg"
    os.mkfifo(fifo)
    outcome = []

    def read():
        try:
            load_image(fifo)
        except PhotoError as exc:
            outcome.append(str(exc))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():  # unblock the stuck open so the thread can end, then fail
        with open(fifo, "wb"):
            pass
        pytest.fail("reading a named pipe waited for a writer")
    assert outcome and "named pipe (FIFO), not a photo file" in outcome[0]


def test_a_regular_photo_through_a_symlink_loads(tmp_path):
    real = tmp_path / "real.jpg"
    real.write_bytes(_jpeg(_sample()))
    (tmp_path / "link.jpg").symlink_to(real)
    assert load_image(tmp_path / "link.jpg").shape == (40, 80, 3)


def test_shrink_photo_is_upright_and_small():
    data = _with_exif_orientation(_jpeg(np.zeros((400, 1000, 3), np.uint8)), 6)
    small, (w, h) = photo_io.shrink_photo(data, 250)
    assert (w, h) == (400, 1000)  # the upright original
    assert cv2.imdecode(np.frombuffer(small, np.uint8), cv2.IMREAD_COLOR).shape == (250, 100, 3)


@pytest.mark.parametrize("orientation", [1, 3, 6, 8])
def test_a_large_photos_copy_is_decoded_reduced_and_sized_as_a_whole_decodes(orientation):
    """The stored copy of a large JPEG comes from a reduced decode (a fraction of the work) yet
    has the size, the upright original's size and much the look of the copy a whole decode
    gives, turned by the EXIF orientation alike."""
    rng = np.random.default_rng(orientation)
    image = cv2.GaussianBlur(rng.integers(0, 255, (1203, 2405, 3), np.uint8), (0, 0), 9)
    data = _with_exif_orientation(_jpeg(image), orientation)
    info = photo_io.open_photo(data).info
    assert photo_io.copy_reduction(info, 500) == 4 and photo_io.copy_reduction(info, 2000) == 1
    small, size = photo_io.shrink_photo(data, 500)
    whole = load_image(data)
    assert size == (whole.shape[1], whole.shape[0])
    expected = cv2.imdecode(np.frombuffer(photo_io.shrink_image(whole, 500), np.uint8),
                            cv2.IMREAD_COLOR)
    got = cv2.imdecode(np.frombuffer(small, np.uint8), cv2.IMREAD_COLOR)
    assert got.shape == expected.shape
    assert np.abs(got.astype(int) - expected.astype(int)).mean() < 3


@pytest.mark.parametrize("orientation", [1, 6])
def test_a_photo_read_and_copied_inside_decode_once_is_decoded_once(request, orientation):
    """The web's upload and a batch photo: the copy and the reading share one decode, the
    copy as large as before and much the same, the shared image read-only (a reader that
    wrote into it would change what the copy shows)."""
    rng = np.random.default_rng(orientation)
    image = cv2.GaussianBlur(rng.integers(0, 255, (1203, 2405, 3), np.uint8), (0, 0), 9)
    data = _with_exif_orientation(_jpeg(image), orientation)
    alone, alone_size = photo_io.shrink_photo(data, 500)
    calls = request.getfixturevalue("decodes")    # counted from here on
    with photo_io.decode_once(data, 1):
        small, size = photo_io.shrink_photo(data, 500)
        first = load_image(data)
        again = load_image(bytes(bytearray(data)))   # equal bytes, another object
    assert calls == [cv2.IMREAD_COLOR]
    assert again is first and not first.flags.writeable
    with pytest.raises(ValueError):
        first[0, 0] = 0
    assert size == alone_size == (first.shape[1], first.shape[0])
    a = cv2.imdecode(np.frombuffer(alone, np.uint8), cv2.IMREAD_COLOR)
    b = cv2.imdecode(np.frombuffer(small, np.uint8), cv2.IMREAD_COLOR)
    assert a.shape == b.shape and np.abs(a.astype(int) - b.astype(int)).mean() < 3


def test_decode_once_shares_only_its_own_photo_at_its_own_reduction(decodes):
    """Other bytes, another reduction, or the same bytes after the block: decoded as usual."""
    rng = np.random.default_rng(3)
    data = _jpeg(cv2.GaussianBlur(rng.integers(0, 255, (400, 600, 3), np.uint8), (0, 0), 5))
    other = _jpeg(np.full((50, 60, 3), 90, np.uint8))
    calls = decodes
    with photo_io.decode_once(data, 2):
        shared = load_image(data, reduce=2)
        assert load_image(data, reduce=2) is shared and shared.shape[:2] == (200, 300)
        whole = load_image(data)
        assert whole.shape[:2] == (400, 600) and whole.flags.writeable
        assert load_image(other).shape[:2] == (50, 60)
        small, size = photo_io.shrink_photo(data, 100)   # from the shared reduced decode
        assert size == (600, 400)
    assert len(calls) == 3
    after = load_image(data, reduce=2)
    assert after is not shared and after.flags.writeable and len(calls) == 4
    with pytest.raises(ValueError, match="reduce"):
        with photo_io.decode_once(data, 3):
            pass


def test_a_shrunk_copy_through_whole_blocks_is_the_size_asked_and_looks_as_a_plain_resize():
    """``shrink_image`` first averages whole k x k blocks (odd sizes: the few edge pixels that
    make no block are left out), then resizes the rest of the way: the size asked for, and
    the same picture as one area resize."""
    rng = np.random.default_rng(5)
    image = cv2.GaussianBlur(rng.integers(0, 255, (1001, 1333, 3), np.uint8), (0, 0), 6)
    for size in [(400, 300), (333, 250), (1000, 751), (1333, 1001)]:
        got = cv2.imdecode(np.frombuffer(photo_io.shrink_image(image, 0, size), np.uint8),
                           cv2.IMREAD_COLOR)
        plain = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        assert got.shape == (size[1], size[0], 3)
        assert np.abs(got.astype(int) - plain.astype(int)).mean() < 2.5
