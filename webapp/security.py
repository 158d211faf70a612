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
from urllib.parse import urlsplit

from flask import abort, current_app, request, session
from werkzeug.sansio.utils import host_is_trusted

from vision import io as photo_io
from vision.errors import PhotoError

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
# Thin calls into vision.io, the one place that reads photo headers and applies the limits.


class ImageRejected(PhotoError):
    """The upload is not an image we read, or its header announces too large an image."""


def image_format_and_size(data: bytes) -> tuple[str, int | None, int | None]:
    """``(format, width, height)`` from the header, without decoding pixels.

    Raises ``ImageRejected`` when the bytes are not a JPEG, PNG, WebP or BMP image.
    """
    try:
        info = photo_io.read_header(data)
    except PhotoError as exc:
        raise ImageRejected(str(exc)) from None
    return info.format, info.width, info.height


def looks_complete(fmt: str, data: bytes) -> bool:
    """Cheap check that a file was not cut off in transfer (decoders often fill in grey)."""
    return not photo_io.is_truncated(data, fmt)


def check_image(data: bytes, max_pixels: int | None = None) -> tuple[str, int | None, int | None]:
    """Header checks run before any decoding (``vision.io.check_photo``: the ``[io]`` limits of
    ``vision/config.toml``; ``max_pixels`` may only tighten them); ``ImageRejected`` says why."""
    if not data:
        raise ImageRejected("the uploaded file is empty: choose a photo of the kingdom")
    try:
        info = photo_io.check_photo(data, max_pixels=max_pixels)
    except PhotoError as exc:
        raise ImageRejected(str(exc)) from None
    return info.format, info.width, info.height
