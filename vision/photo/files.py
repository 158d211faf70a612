"""Opening photos: the one place that sniffs headers, applies the size limits, decodes and shrinks.

Every door in (``kingdomino score``, the batch, the web app) opens photos here, so a photo is
refused or read the same way everywhere. The limits come from ``config.toml`` ``[io]`` only.

- ``check_photo(data) -> PhotoInfo``: format, size, channels and sample depth read from the
  header, and every limit checked, without decoding a pixel (cheap: run it before anything else).
- ``read_photo_file(path) -> bytes``: a regular file's bytes, within the byte limit; a folder, a
  named pipe, a device or a symbolic link loop is named as what it is (and never read from).
- ``photo_bytes(path_or_bytes) -> bytes``: the bytes given, or ``read_photo_file``'s.
- ``open_photo(path_or_bytes) -> Photo``: the bytes and their ``PhotoInfo``, checked once; every
  function below that takes a photo takes a ``Photo`` too and does not check it again.
- ``load_image(photo) -> BGR uint8 array``: ``check_photo`` then decode, EXIF orientation
  honoured (OpenCV applies it), at most ``[io] max_decodes`` decodes at once in one process.
- ``exif_orientation(data) -> 1..8``: the EXIF orientation tag of a JPEG (1 when none);
  ``stored_to_upright(points, orientation, width, height)``: stored pixels -> the upright image's.
- ``shrink_photo(data, max_side) -> (JPEG bytes, (width, height))``: a small upright copy.
- ``decode_once(data, reduce)``: a block in which a photo both read and kept as a copy (a web
  upload, a batch photo) is decoded once: ``load_image`` and ``shrink_photo`` share that decode.

Every refusal is a ``PhotoError`` (a ``ValueError``) whose message says what is wrong and what to
do about it. JPEG, PNG, WebP and BMP (both BMP header kinds) are read; HEIC is named and refused.
"""
from __future__ import annotations

import errno
import os
import stat
import struct
import threading
from contextlib import contextmanager
from dataclasses import dataclass

import cv2
import numpy as np

from vision import config as _config
from vision.errors import PhotoError

SUPPORTED = "JPEG, PNG, WebP or BMP"
REDUCTIONS = (2, 4, 8)      # how many times smaller a side libjpeg can decode (IMREAD_REDUCED_COLOR_*)

_JPEG_SOF = (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF)
_PNG_CHANNELS = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}  # colour type -> samples per pixel (palette: RGB)


class PhotoBusy(PhotoError):
    """Too many photos are being decoded at once in this process: try again shortly."""


@dataclass(frozen=True)
class PhotoInfo:
    """What a photo's header says: ``format`` ('jpeg', 'png', 'webp', 'bmp'), size in pixels,
    samples per pixel and bytes per sample of the stored image."""

    format: str
    width: int
    height: int
    channels: int = 3
    sample_bytes: int = 1

    @property
    def pixels(self) -> int:
        return self.width * self.height

    @property
    def decoded_bytes(self) -> int:
        """Memory one decoded copy takes: the stored samples, or the 8-bit BGR result if larger."""
        return self.pixels * max(self.channels, 3) * self.sample_bytes


def _io_settings(cfg) -> dict:
    return dict((cfg if cfg is not None else _config.load())["io"])


def sniff_format(data: bytes) -> str | None:
    """'jpeg', 'png', 'webp', 'bmp', 'heic' (recognised but unsupported) or None, from the
    first bytes (16 are enough for everything but BMP, which needs 26)."""
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[:2] == b"BM" and len(data) >= 26:
        return "bmp"
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"hevc", b"mif1", b"msf1",
                                                b"heis", b"heif", b"avif"):
        return "heic"
    return None


def _jpeg_scan(data: bytes):
    """Walk the JPEG marker segments: ``(frame header offset, start of scan data offset)``,
    either None when the file ends before it (a truncated or damaged file)."""
    pos, n = 2, len(data)
    sof = None
    while pos + 4 <= n:
        if data[pos] != 0xFF:
            return sof, None  # not a marker where one must be: damaged
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length field
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2:pos + 4])
        if length < 2:
            return sof, None
        if marker in _JPEG_SOF and sof is None and pos + 10 <= n:
            sof = pos
        if marker == 0xDA:  # start of scan: entropy-coded data follows
            return sof, pos + 2 + length
        if marker == 0xD9:
            return sof, None
        pos += 2 + length
    return sof, None


def _jpeg_info(data: bytes) -> PhotoInfo | None:
    sof, _ = _jpeg_scan(data)
    if sof is None:
        return None
    precision = data[sof + 4]
    h, w = struct.unpack(">HH", data[sof + 5:sof + 9])
    return PhotoInfo("jpeg", w, h, data[sof + 9], 2 if precision > 8 else 1)


def _png_info(data: bytes) -> PhotoInfo | None:
    if len(data) < 26 or data[12:16] != b"IHDR":
        return None
    w, h = struct.unpack(">II", data[16:24])
    depth, colour = data[24], data[25]
    if colour not in _PNG_CHANNELS:
        return None
    return PhotoInfo("png", w, h, _PNG_CHANNELS[colour], 2 if depth == 16 else 1)


def _webp_info(data: bytes) -> PhotoInfo | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        alpha = bool(data[20] & 0x10)
        w = 1 + int.from_bytes(data[24:27], "little")
        h = 1 + int.from_bytes(data[27:30], "little")
        return PhotoInfo("webp", w, h, 4 if alpha else 3)
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", data[26:30])
        return PhotoInfo("webp", w & 0x3FFF, h & 0x3FFF, 3)
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        alpha = bool(bits >> 28 & 1)
        return PhotoInfo("webp", 1 + (bits & 0x3FFF), 1 + (bits >> 14 & 0x3FFF), 4 if alpha else 3)
    return None


def _bmp_info(data: bytes) -> PhotoInfo | None:
    """Both header kinds: the OS/2 BITMAPCOREHEADER (12 bytes: 16-bit unsigned width and
    height) and the Windows BITMAPINFOHEADER family (40+ bytes: 32-bit signed, height < 0
    when stored top-down)."""
    (header,) = struct.unpack("<I", data[14:18])
    if header == 12:
        w, h, _planes, bpp = struct.unpack("<HHHH", data[18:26])
    elif header >= 16 and len(data) >= 30:
        w, h, _planes, bpp = struct.unpack("<iiHH", data[18:30])
        h = abs(h)
    else:
        return None
    return PhotoInfo("bmp", w, h, 4 if bpp in (32, 64) else 3, 2 if bpp == 64 else 1)


_READERS = {"jpeg": _jpeg_info, "png": _png_info, "webp": _webp_info, "bmp": _bmp_info}


def read_header(data: bytes) -> PhotoInfo:
    """The header's ``PhotoInfo``, no limit applied; ``PhotoError`` when it cannot be read."""
    data = bytes(data)
    if not data:
        raise PhotoError("the image file is empty (0 bytes): send the photo again")
    fmt = sniff_format(data[:32])
    if fmt == "heic":
        raise PhotoError("HEIC/AVIF photos are not supported: save the photo as JPEG "
                         "(on an iPhone: Settings > Camera > Formats > Most Compatible)")
    if fmt is None:
        raise PhotoError(f"not an image file: send a photo as {SUPPORTED}")
    try:
        info = _READERS[fmt](data)
    except struct.error:
        info = None
    if info is None:
        raise PhotoError(f"the {fmt.upper()} file is cut short or damaged (its header cannot be "
                         "read): send the photo again")
    return info


def image_dimensions(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the header of a JPEG/PNG/WebP/BMP file, else None."""
    try:
        info = read_header(data)
    except PhotoError:
        return None
    return info.width, info.height


def is_truncated(data: bytes, fmt: str) -> bool:
    """Whether the file was cut off in transfer (decoders often fill in grey instead of failing)."""
    try:
        if fmt == "jpeg":
            _, sos = _jpeg_scan(data)
            return sos is None or data.find(b"\xff\xd9", sos) < 0
        if fmt == "png":
            pos, n = 8, len(data)
            while pos + 8 <= n:
                length, kind = struct.unpack(">I4s", data[pos:pos + 8])
                pos += 12 + length
                if kind == b"IEND":
                    return pos > n
            return True
        if fmt == "webp":
            (riff,) = struct.unpack("<I", data[4:8])
            return len(data) < riff + 8
        if fmt == "bmp":
            (size,) = struct.unpack("<I", data[2:6])
            return size > 0 and len(data) < size
    except struct.error:
        return True
    return False


def check_photo(data: bytes, cfg=None, max_pixels: int | None = None) -> PhotoInfo:
    """Every check that needs no decoding: a supported format, a readable header, the byte,
    pixel and decoded-memory limits of ``[io]`` (``max_pixels`` may only tighten the pixel limit:
    a server's own) and a file not cut short. The header's ``PhotoInfo``, or ``PhotoError``."""
    io = _io_settings(cfg)
    max_bytes = int(io["max_bytes"])
    limit = int(io["max_pixels"]) if max_pixels is None else min(int(max_pixels), int(io["max_pixels"]))
    max_decoded = int(io["max_decoded_bytes"])
    data = bytes(data)
    if len(data) > max_bytes:
        raise PhotoError(f"the image file is too large: {len(data) / 1e6:.1f} MB, the limit is "
                         f"{max_bytes / 1e6:g} MB: send a smaller photo")
    info = read_header(data)
    if info.width <= 0 or info.height <= 0:
        raise PhotoError(f"the {info.format.upper()} file is damaged: its header says it has "
                         "no pixels; send the photo again")
    if info.pixels > limit:
        raise PhotoError(f"the image is too large: {info.width}x{info.height} pixels, more than "
                         f"the {limit / 1e6:g} megapixels a photo may have: send a smaller photo")
    if info.decoded_bytes > max_decoded:
        bits = 8 * info.sample_bytes
        raise PhotoError(f"the image is too large to decode: {info.width}x{info.height} pixels of "
                         f"{info.channels} {bits}-bit channels take {info.decoded_bytes / 1e6:.0f} MB, "
                         f"more than the {max_decoded / 1e6:g} MB allowed: send an 8-bit JPEG "
                         "or a smaller photo")
    if is_truncated(data, info.format):
        raise PhotoError(f"the {info.format.upper()} file is cut short (truncated) or damaged: "
                         "send the photo again")
    return info


# ---------------------------------------------------------------- files


def _kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder, not a photo: name the photo files in it (kingdomino batch reads whole folders)"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), not a photo file: save the photo to a file and give that"
    if stat.S_ISSOCK(mode):
        return "a socket, not a photo file: give a photo file"
    return "a device, not a photo file: give a photo file"


def file_problem(path) -> str | None:
    """Why ``path`` cannot be read as a photo file, in words (a folder, a named pipe, a symbolic
    link loop, a broken link, no such file), or None for a regular file. Opens nothing."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return (f"{name} is a symbolic link loop (it leads back to itself), not a photo: "
                    "point it at the photo file")
        if os.path.islink(name):
            return f"{name} is a broken symbolic link (what it points to does not exist): check the path"
        if isinstance(exc, FileNotFoundError):
            return f"no such photo file: {name}; check the path"
        return f"{name} cannot be read: {exc.strerror or exc}"
    kind = _kind_of(st.st_mode)
    return None if kind is None else f"{name} is {kind}"


def read_photo_file(path, cfg=None) -> bytes:
    """A regular file's bytes (at most ``[io] max_bytes``); ``PhotoError`` naming what the path
    is otherwise. Never blocks on a named pipe: it is opened non-blocking and refused."""
    max_bytes = int(_io_settings(cfg)["max_bytes"])
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:  # what the path is (a folder, a link loop, ...), else the OS's reason
        why = None if isinstance(exc, PermissionError) else file_problem(name)
        raise PhotoError(why or f"{name} cannot be read: {exc.strerror or exc}; check the path "
                         "and who may read it") from None
    try:
        st = os.fstat(fd)
        kind = _kind_of(st.st_mode)
        if kind is not None:
            raise PhotoError(f"{name} is {kind}")
        if st.st_size > max_bytes:
            raise PhotoError(f"the image file is too large: {st.st_size / 1e6:.1f} MB, the limit "
                             f"is {max_bytes / 1e6:g} MB: send a smaller photo")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise PhotoError(f"{name} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return data


def photo_bytes(path_or_bytes, cfg=None) -> bytes:
    """A photo file's bytes: those given, or those :func:`read_photo_file` reads from a path."""
    if isinstance(path_or_bytes, Photo):
        return path_or_bytes.data
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    return read_photo_file(path_or_bytes, cfg)


@dataclass(frozen=True)
class Photo:
    """A photo's bytes and what their header says, made only by :func:`open_photo` once every
    check has passed: the steps of one read pass it on instead of checking the bytes again."""

    data: bytes
    info: PhotoInfo


def open_photo(path_or_bytes, cfg=None) -> Photo:
    """The photo's bytes (a path, bytes or a ``Photo`` already opened) checked by
    :func:`check_photo`, once."""
    if isinstance(path_or_bytes, Photo):
        return path_or_bytes
    data = photo_bytes(path_or_bytes, cfg)
    return Photo(data, check_photo(data, cfg))


# ---------------------------------------------------------------- EXIF

_ORIENTATION_TAG = 0x0112


def _tiff_orientation(tiff: bytes) -> int:
    if len(tiff) < 8 or tiff[:2] not in (b"II", b"MM"):
        return 1
    end = "<" if tiff[:2] == b"II" else ">"
    (first,) = struct.unpack(end + "I", tiff[4:8])
    if first + 2 > len(tiff):
        return 1
    (count,) = struct.unpack(end + "H", tiff[first:first + 2])
    for k in range(count):
        at = first + 2 + 12 * k
        if at + 12 > len(tiff):
            break
        tag, kind = struct.unpack(end + "HH", tiff[at:at + 4])
        if tag == _ORIENTATION_TAG and kind == 3:  # SHORT
            (value,) = struct.unpack(end + "H", tiff[at + 8:at + 10])
            return int(value) if 1 <= value <= 8 else 1
    return 1


def exif_orientation(data: bytes) -> int:
    """The EXIF orientation (1..8) a JPEG's header gives; 1 for no tag or another format."""
    if len(data) < 4 or data[:2] != b"\xff\xd8":
        return 1
    at = 2
    while at + 4 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no EXIF after this
            break
        (length,) = struct.unpack(">H", data[at + 2:at + 4])
        body = data[at + 4:at + 2 + length]
        if marker == 0xE1 and body[:6] == b"Exif\x00\x00":
            return _tiff_orientation(body[6:])
        at += 2 + length
    return 1


def stored_to_upright(points, orientation: int, width: int, height: int) -> np.ndarray:
    """Points in the stored image (``width`` x ``height``) -> the upright image's pixels, for the
    EXIF ``orientation`` (1 upright, 3 turned half a turn, 6 a quarter clockwise, 8 a quarter
    anticlockwise; 2, 4, 5, 7 their mirror images)."""
    p = np.asarray(points, np.float64).reshape(-1, 2)
    x, y, w, h = p[:, 0], p[:, 1], float(width), float(height)
    out = {
        1: (x, y), 2: (w - x, y), 3: (w - x, h - y), 4: (x, h - y),
        5: (y, x), 6: (h - y, x), 7: (h - y, w - x), 8: (y, w - x),
    }.get(int(orientation), (x, y))
    return np.stack(out, axis=1)


# ---------------------------------------------------------------- decoding

_TURNS: dict[int, threading.BoundedSemaphore] = {}
_TURNS_LOCK = threading.Lock()


def _forget_turns() -> None:  # a forked child starts with every turn free
    global _TURNS_LOCK
    _TURNS.clear()
    _TURNS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_turns)


@contextmanager
def decode_turn(cfg=None):
    """Hold one of the ``[io] max_decodes`` decoding turns of this process while decoding;
    ``PhotoBusy`` when none comes free within ``[io] decode_wait_s`` seconds."""
    io = _io_settings(cfg)
    slots = max(1, int(io["max_decodes"]))
    with _TURNS_LOCK:
        turns = _TURNS.setdefault(slots, threading.BoundedSemaphore(slots))
    if not turns.acquire(timeout=max(0.0, float(io["decode_wait_s"]))):
        raise PhotoBusy("too many photos are being read at once: try again in a minute")
    try:
        yield
    finally:
        turns.release()


class _Shared:
    """One photo's decode shared inside a :func:`decode_once` block."""

    def __init__(self, data: bytes, reduce: int):
        self.data, self.reduce, self.image = data, reduce, None

    def holds(self, data: bytes) -> bool:
        return data is self.data or (len(data) == len(self.data) and data == self.data)


_SHARED = threading.local()


def _shared_decode(data: bytes) -> _Shared | None:
    shared = getattr(_SHARED, "photo", None)
    return shared if shared is not None and shared.holds(data) else None


@contextmanager
def decode_once(data: bytes, reduce: int = 1):
    """A block (in this thread) in which the photo ``data`` is decoded at most once, ``reduce``
    times smaller a side (as its reading decodes it: ``vision.photo.scale.reading_reduction``).
    Inside it, :func:`load_image` of these bytes at that ``reduce`` decodes them the first time
    and gives the same array after, and :func:`shrink_photo` makes its copy from that decode
    (decoding it first when nothing has) instead of a decode of its own: a web upload or a
    batch photo that is both read and kept as a copy costs one decode, not two. The shared
    array is read-only. Other bytes, and other reductions, decode as outside the block."""
    data = photo_bytes(data)
    if reduce != 1 and reduce not in REDUCTIONS:
        raise ValueError(f"reduce must be 1, 2, 4 or 8, not {reduce!r}")
    before = getattr(_SHARED, "photo", None)
    _SHARED.photo = _Shared(data, int(reduce))
    try:
        yield
    finally:
        _SHARED.photo = before


def load_image(path_or_bytes, cfg=None, reduce: int = 1) -> np.ndarray:
    """Decode a photo (a path, the file's bytes, or a ``Photo`` already checked) into a BGR
    uint8 array, EXIF-oriented.

    ``check_photo`` runs first, so an oversized or damaged file is refused before any pixel
    is decoded. ``reduce`` (one of ``REDUCTIONS``, JPEG only): that many times smaller a side, as
    libjpeg decodes it (``vision.photo``). Raises ``PhotoError`` (``PhotoBusy``: no turn free).
    Inside :func:`decode_once` for these bytes and this ``reduce``: the one shared decode
    (read-only)."""
    photo = open_photo(path_or_bytes, cfg)
    data, info = photo.data, photo.info
    if reduce != 1 and (info.format != "jpeg" or reduce not in REDUCTIONS):
        raise ValueError(f"reduce must be 1, or 2, 4 or 8 for a JPEG, not {reduce!r} ({info.format})")
    shared = _shared_decode(data)
    if shared is not None and shared.reduce == reduce:
        if shared.image is None:
            shared.image = _decode(data, info, reduce, cfg)
            shared.image.flags.writeable = False
        return shared.image
    return _decode(data, info, reduce, cfg)


def _decode(data: bytes, info: PhotoInfo, reduce: int, cfg) -> np.ndarray:
    flag = cv2.IMREAD_COLOR if reduce == 1 else getattr(cv2, f"IMREAD_REDUCED_COLOR_{reduce}")
    with decode_turn(cfg):
        try:
            image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), flag)
        except cv2.error:
            image = None
    if image is None or image.size == 0:
        raise PhotoError(f"the {info.format.upper()} file is damaged and cannot be decoded: "
                         "send the photo again")
    if image.dtype != np.uint8:  # 16-bit samples
        image = (image / 257).astype(np.uint8)
    return image


def _copy_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """The size of a ``width`` x ``height`` image's copy at most ``max_side`` px long."""
    scale = min(1.0, max_side / max(height, width))
    if scale >= 1.0:
        return width, height
    return max(1, round(width * scale)), max(1, round(height * scale))


def shrink_image(image: np.ndarray, max_side: int, size: tuple[int, int] | None = None) -> bytes:
    """A JPEG of the image, scaled down so its long side is at most ``max_side`` px (``size``:
    ``(w, h)`` to scale it to instead). An image at least twice the size is first averaged over
    whole blocks of k x k pixels (OpenCV's fast path for a whole factor; the last few rows and
    columns that make no whole block are left out), then area-resized the rest of the way."""
    h, w = image.shape[:2]
    size = size if size is not None else _copy_size(w, h, max_side)
    k = min(w // max(size[0], 1), h // max(size[1], 1))
    if k >= 2:
        bw, bh = w // k, h // k
        image = cv2.resize(image[:bh * k, :bw * k], (bw, bh), interpolation=cv2.INTER_AREA)
        h, w = image.shape[:2]
    if size != (w, h):
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not ok:
        raise PhotoError("the photo cannot be re-encoded as JPEG: send it as a JPEG")
    return buf.tobytes()


def copy_reduction(info: PhotoInfo, max_side: int) -> int:
    """How much smaller a side a photo is decoded for a copy at most ``max_side`` px long: the
    largest of ``REDUCTIONS`` that leaves a JPEG at least that long (libjpeg decodes it in the
    DCT, a fraction of a whole decode), else 1 (other formats, small photos)."""
    factor = 1
    if info.format == "jpeg":
        longest = max(info.width, info.height)
        for k in REDUCTIONS:
            if -(-longest // k) >= max_side:
                factor = max(factor, k)
    return factor


def shrink_photo(data: bytes, max_side: int, cfg=None) -> tuple[bytes, tuple[int, int]]:
    """A small upright JPEG copy of the photo and the upright original's ``(width, height)``.
    A large JPEG is decoded reduced (:func:`copy_reduction`); the copy has the size the whole
    decode's would have. Inside :func:`decode_once` for these bytes, the copy is made from the
    block's one decode."""
    photo = open_photo(data, cfg)
    shared = _shared_decode(photo.data)
    factor = shared.reduce if shared is not None else copy_reduction(photo.info, max_side)
    image = load_image(data, cfg, reduce=factor)   # checked again there, as every decode is
    h, w = image.shape[:2]
    if factor > 1:   # the upright original's size: the header's, turned as the decode turned it
        sw, sh = photo.info.width, photo.info.height
        rw, rh = -(-sw // factor), -(-sh // factor)
        turned = (w, h) != (rw, rh) if rw != rh else exif_orientation(photo.data) in (5, 6, 7, 8)
        w, h = (sh, sw) if turned else (sw, sh)
    return shrink_image(image, max_side, _copy_size(w, h, max_side)), (w, h)
