"""Safety checks of the web app: CSRF protection and image header checks before decoding.

CSRF (see ``docs/webapp.md``): every page gets a random per-session token (kept in the signed
session cookie) that its forms send as a hidden field and its scripts as the ``X-CSRF-Token``
header. An unsafe request (POST...) must carry the token, except a request to the contract's two
script endpoints (``/api/score``, ``/api/score-grid``) that carries no cookie and no cross-site
``Origin``: that is a script, not a browser session, so there is nothing to forge. A request
whose ``Origin`` (or ``Sec-Fetch-Site``) says it comes from another site is refused everywhere.
"""
from __future__ import annotations

import hmac
import secrets
import struct
from urllib.parse import urlsplit

from flask import abort, current_app, request, session
from werkzeug.sansio.utils import host_is_trusted

TOKEN_KEY = "csrf"
HEADER = "X-CSRF-Token"
FIELD = "csrf_token"
SCRIPT_ENDPOINTS = ("api.score", "api.score_grid")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def csrf_token() -> str:
    """This session's token (created on first use)."""
    token = session.get(TOKEN_KEY)
    if not token:
        token = secrets.token_urlsafe(32)
        session[TOKEN_KEY] = token
    return token


def _same_origin(origin: str) -> bool:
    parts = urlsplit(origin)
    return bool(parts.scheme and parts.netloc) and parts.netloc == request.host


def is_cross_site() -> bool:
    """True when a browser tells us the request comes from another site."""
    origin = request.headers.get("Origin")
    if origin is not None and not _same_origin(origin):
        return True
    return request.headers.get("Sec-Fetch-Site", "") == "cross-site"


def check_csrf() -> None:
    """``before_request`` hook: abort with 403 when an unsafe request may be forged."""
    if request.method in SAFE_METHODS or request.endpoint is None:
        return  # reading, or no such route (Flask answers 404/405 next)
    if is_cross_site():
        abort(403, description="request refused: it comes from another web site")
    if request.endpoint in SCRIPT_ENDPOINTS and not request.cookies:
        return  # a script (curl, requests) without a browser session: nothing to forge
    sent = request.headers.get(HEADER) or request.form.get(FIELD) or ""
    expected = session.get(TOKEN_KEY) or ""
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        abort(403, description="missing or expired form token: reload the page and try again")


def host_trusted() -> bool:
    """True when the request's ``Host`` is one the app serves (``TRUSTED_HOSTS``; unset: any).

    Reads the raw header: ``request.host`` itself refuses an untrusted host on Flask >= 3.1.
    """
    trusted = current_app.config.get("TRUSTED_HOSTS")
    if not trusted:
        return True
    raw = request.environ.get("HTTP_HOST") or request.environ.get("SERVER_NAME") or ""
    return host_is_trusted(raw, list(trusted))


UNTRUSTED_HOST = ("this server does not answer to the host name this request was sent to: open "
                  "it with the address it was started for, or start it with that name trusted "
                  "(KINGDOMINO_TRUSTED_HOSTS; see docs/webapp.md)")


def check_host() -> None:
    """``before_request`` hook: 400 for a ``Host`` header the server was not started for (a DNS
    rebinding page, or a forged link), before anything is read, stored or linked."""
    if not host_trusted():
        abort(400, description=UNTRUSTED_HOST)


# ---------------------------------------------------------------- image headers


class ImageRejected(ValueError):
    """The upload is not an image we read, or its header announces too many pixels."""


def image_format_and_size(data: bytes) -> tuple[str, int | None, int | None]:
    """Sniff ``(format, width, height)`` from the first bytes, without decoding pixels.

    Raises ``ImageRejected`` when the bytes are not a JPEG, PNG, WebP or BMP image.
    Width/height are ``None`` when the header does not say (then decoding decides).
    """
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        if len(data) < 24 or data[12:16] != b"IHDR":
            raise ImageRejected("the PNG file is cut short or damaged: upload the photo again")
        w, h = struct.unpack(">II", data[16:24])
        return "png", w, h
    if data.startswith(b"\xff\xd8"):
        w, h = _jpeg_size(data)
        return "jpeg", w, h
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ("webp", *_webp_size(data))
    if data.startswith(b"BM") and len(data) >= 26:
        w, h = struct.unpack("<ii", data[18:26])
        return "bmp", abs(w), abs(h)
    if data[4:12] in (b"ftypheic", b"ftypheix", b"ftypmif1", b"ftyphevc"):
        raise ImageRejected("HEIC photos are not supported: upload a JPEG or PNG (on an iPhone, "
                            "Settings > Camera > Formats > Most Compatible)")
    raise ImageRejected("this file is not an image: upload a JPEG, PNG or WebP photo")


def _jpeg_size(data: bytes) -> tuple[int | None, int | None]:
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            raise ImageRejected("the JPEG file is damaged: upload the photo again")
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2:i + 4])
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if i + 9 > n:
                break
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return w, h
        if marker == 0xDA:
            break
        i += 2 + length
    raise ImageRejected("the JPEG file is cut short or damaged: upload the photo again")


def _webp_size(data: bytes) -> tuple[int | None, int | None]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        w = 1 + int.from_bytes(data[24:27], "little")
        h = 1 + int.from_bytes(data[27:30], "little")
        return w, h
    if chunk == b"VP8 " and len(data) >= 30:
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    raise ImageRejected("the WebP file is cut short or damaged: upload the photo again")


def looks_complete(fmt: str, data: bytes) -> bool:
    """Cheap check that a file was not cut off in transfer (decoders often fill in grey)."""
    if fmt == "jpeg":
        # the end-of-image marker must come after the last start-of-scan marker
        return data.rfind(b"\xff\xd9") > data.rfind(b"\xff\xda") > 0
    if fmt == "png":
        return b"IEND" in data[-64:]
    return True


def check_image(data: bytes, max_pixels: int) -> tuple[str, int | None, int | None]:
    """Header checks run before any decoding; raise ``ImageRejected`` with a clear message."""
    if not data:
        raise ImageRejected("the uploaded file is empty: choose a photo of the kingdom")
    fmt, w, h = image_format_and_size(data)
    if w is not None and h is not None:
        if w <= 0 or h <= 0:
            raise ImageRejected("the image header says it has no pixels: the file is damaged")
        if w * h > max_pixels:
            raise ImageRejected(
                f"the image is {w}x{h} pixels, more than the {max_pixels // 1_000_000} megapixels "
                "this server reads: send a smaller photo")
    if not looks_complete(fmt, data):
        raise ImageRejected(f"the {fmt.upper()} file is cut short (truncated): upload the photo again")
    return fmt, w, h
