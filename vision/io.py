"""Safe photo decoding: size limits checked from the file header before any pixel is decoded.

``load_image`` accepts JPEG, PNG, WebP and BMP (what phones, browsers and scanners produce),
honours the EXIF orientation tag (OpenCV applies it when decoding), and refuses empty,
non-image, truncated, oversized files and decompression bombs with a ``PhotoError`` whose
message says what is wrong and what to do about it.
"""
from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np

from . import config as _config
from .errors import PhotoError

SUPPORTED = "JPEG, PNG, WebP or BMP"


def _section(cfg, name: str) -> dict:
    if cfg is None:
        cfg = _config.load()
    return dict(cfg.get(name, {}))


def sniff_format(data: bytes) -> str | None:
    """'jpeg', 'png', 'webp', 'bmp', 'heic' (recognised but unsupported) or None."""
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[:2] == b"BM" and len(data) >= 26:
        return "bmp"
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"mif1", b"msf1", b"heis", b"avif"):
        return "heic"
    return None


def _jpeg_scan(data: bytes):
    """Walk the JPEG marker segments: ``(width, height, start_of_scan_offset)``.

    Any field may be None when the file ends before it (a truncated file).
    """
    pos, n = 2, len(data)
    w = h = None
    while pos + 4 <= n:
        if data[pos] != 0xFF:
            return w, h, None  # not a marker where one must be: damaged
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length field
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2:pos + 4])
        if length < 2:
            return w, h, None
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if pos + 9 <= n:
                h, w = struct.unpack(">HH", data[pos + 5:pos + 9])
        if marker == 0xDA:  # start of scan: entropy-coded data follows
            return w, h, pos + 2 + length
        if marker == 0xD9:
            return w, h, None
        pos += 2 + length
    return w, h, None


def _png_chunks_complete(data: bytes) -> bool:
    pos, n = 8, len(data)
    while pos + 8 <= n:
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        pos += 12 + length
        if ctype == b"IEND":
            return pos <= n
    return False


def _dimensions(data: bytes, fmt: str):
    if fmt == "jpeg":
        w, h, _ = _jpeg_scan(data)
        return (w, h) if w is not None else None
    if fmt == "png":
        if len(data) >= 24 and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        return None
    if fmt == "webp":
        chunk = data[12:16]
        if chunk == b"VP8X" and len(data) >= 30:
            w = 1 + int.from_bytes(data[24:27], "little")
            h = 1 + int.from_bytes(data[27:30], "little")
            return w, h
        if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
            w, h = struct.unpack("<HH", data[26:30])
            return w & 0x3FFF, h & 0x3FFF
        if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
            bits = int.from_bytes(data[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        return None
    if fmt == "bmp":
        header_size = struct.unpack("<I", data[14:18])[0]
        if header_size == 12:
            w, h = struct.unpack("<HH", data[18:22])
        else:
            w, h = struct.unpack("<ii", data[18:26])
        return abs(w), abs(h)
    return None


def image_dimensions(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` read from the header of a JPEG/PNG/WebP/BMP file, else None.

    Cheap (no pixels decoded): lets a web app refuse a huge image before accepting it.
    """
    fmt = sniff_format(bytes(data[:32]))
    if fmt is None or fmt == "heic":
        return None
    try:
        dims = _dimensions(bytes(data), fmt)
    except struct.error:
        return None
    if dims is None:
        return None
    return int(dims[0]), int(dims[1])


def _truncated(data: bytes, fmt: str) -> bool:
    if fmt == "jpeg":
        _, _, sos = _jpeg_scan(data)
        return sos is None or data.find(b"\xff\xd9", sos) < 0
    if fmt == "png":
        return not _png_chunks_complete(data)
    if fmt == "webp":
        (riff,) = struct.unpack("<I", data[4:8])
        return len(data) < riff + 8
    if fmt == "bmp":
        (size,) = struct.unpack("<I", data[2:6])
        return size > 0 and len(data) < size
    return False


def _read_bytes(path_or_bytes, max_bytes: int) -> bytes:
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
    else:
        path = Path(path_or_bytes)
        if not path.is_file():
            raise PhotoError(f"no such photo file: {path}; check the path")
        size = path.stat().st_size
        if size > max_bytes:
            raise PhotoError(f"the image file is too large: {size / 1e6:.1f} MB, the limit is "
                             f"{max_bytes / 1e6:.0f} MB; send a smaller photo")
        data = path.read_bytes()
    if len(data) > max_bytes:
        raise PhotoError(f"the image file is too large: {len(data) / 1e6:.1f} MB, the limit is "
                         f"{max_bytes / 1e6:.0f} MB; send a smaller photo")
    return data


def load_image(path_or_bytes, cfg=None) -> np.ndarray:
    """Decode a photo (a path or the file's bytes) into a BGR uint8 array, EXIF-oriented.

    Raises ``PhotoError`` for an empty, non-image, unsupported, truncated, damaged, too big
    (bytes) or too large (pixels, checked from the header before decoding) file.
    """
    io = _section(cfg, "io")
    max_bytes = int(io.get("max_bytes", 60_000_000))
    max_pixels = int(io.get("max_pixels", 120_000_000))
    data = _read_bytes(path_or_bytes, max_bytes)
    if len(data) == 0:
        raise PhotoError("the image file is empty (0 bytes); send the photo again")
    fmt = sniff_format(data[:32])
    if fmt == "heic":
        raise PhotoError("HEIC/AVIF photos are not supported; save the photo as JPEG "
                         "(on an iPhone: Settings > Camera > Formats > Most Compatible)")
    if fmt is None:
        raise PhotoError(f"not an image file: send a photo as {SUPPORTED}")
    try:
        dims = _dimensions(data, fmt)
        truncated = _truncated(data, fmt)
    except struct.error:
        dims, truncated = None, True
    if dims is None:
        raise PhotoError("the image file is truncated or damaged (its header cannot be read); "
                         "send the photo again")
    w, h = int(dims[0]), int(dims[1])
    if w <= 0 or h <= 0:
        raise PhotoError("the image file is damaged (it claims a size of zero pixels)")
    if w * h > max_pixels:
        raise PhotoError(f"the image is too large: {w} x {h} pixels, the limit is "
                         f"{max_pixels / 1e6:.0f} megapixels; send a smaller photo")
    if truncated:
        raise PhotoError("the image file is truncated or damaged; send the photo again")
    image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None or image.size == 0:
        raise PhotoError("the image file is truncated or damaged and cannot be decoded; "
                         "send the photo again")
    if image.dtype != np.uint8:  # 16-bit PNG
        image = (image / 257).astype(np.uint8)
    return image
