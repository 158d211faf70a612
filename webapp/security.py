"""Safety checks of the web app: CSRF protection, image header checks before decoding and the
budget of pixels being decoded and read at once.

CSRF (see ``docs/webapp.md``): every page gets a random per-session token (kept in the signed
session cookie) that its forms send as a hidden field and its scripts as the ``X-CSRF-Token``
header. An unsafe request (POST...) must carry the token, except a request to the contract's two
script endpoints (``/api/score``, ``/api/score-grid``) that carries no cookie and no cross-site
``Origin``: that is a script, not a browser session, so there is nothing to forge. A request
whose ``Origin`` (or ``Sec-Fetch-Site``) says it comes from another site is refused everywhere.
"""
from __future__ import annotations

import collections
import ctypes
import gc
import hmac
import os
import secrets
import threading
import time
import traceback
from contextlib import contextmanager
from urllib.parse import urlsplit

from flask import abort, current_app, has_app_context, request, session
from werkzeug.sansio.utils import host_is_trusted

from vision.photo import files as photo_io
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
# Thin calls into vision.photo.files, the one place that reads photo headers and applies the limits.


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


def check_image(data: bytes, max_pixels: int | None = None) -> tuple[str, int | None, int | None]:
    """Header checks run before any decoding (``vision.photo.files.check_photo``: the ``[io]`` limits of
    ``vision/config.toml``; ``max_pixels`` may only tighten them); ``ImageRejected`` says why."""
    if not data:
        raise ImageRejected("the uploaded file is empty: choose a photo of the kingdom")
    try:
        info = photo_io.check_photo(data, max_pixels=max_pixels)
    except PhotoError as exc:
        raise ImageRejected(str(exc)) from None
    return info.format, info.width, info.height


# ---------------------------------------------------------------- pixels in flight
# Decoding a photo takes memory in proportion to its pixels (3 bytes each, and the reading path
# decodes more than once), not to its file: a 350 KB PNG of 10950x10950 pixels is 360 MB once
# decoded. Counting decodes (vision.photo.files's turns) lets four such photos take gigabytes; this
# counts their pixels instead. Every upload holds its header's pixel count from before its
# decoding until it is read and stored (``PixelBudget.keep`` around the request's work); the
# pixels of all uploads held at once stay within the budget, a photo larger than the budget
# runs alone, and whoever waits longer than ``[io] decode_wait_s`` is told the server is busy
# (503). After a large photo, the memory the C allocator kept is handed back (``trim_memory``).

DEFAULT_PIXEL_BUDGET = 150_000_000  # one photo at the 120 MP limit, with a few phone photos
TRIM_AFTER_PIXELS = 4_000_000       # hand memory back after a photo this large


class PixelBudget:
    """A process-wide count of pixels in flight: ``hold(pixels)`` waits (first come, first
    served) until they fit within ``capacity``. Re-entrant: a thread that already holds pixels
    only adds what it lacks, and never waits for it (so two holders cannot wait on each other).
    """

    def __init__(self, capacity: int):
        self.capacity = max(1, int(capacity))
        self._used = 0
        self._queue: collections.deque = collections.deque()
        self._cond = threading.Condition()
        self._local = threading.local()

    def in_use(self) -> int:
        with self._cond:
            return self._used

    def waiting(self) -> int:
        with self._cond:
            return len(self._queue)

    def _take(self, extra: int, wait_s: float) -> None:
        with self._cond:
            if getattr(self._local, "held", 0):
                self._used += extra  # already a holder: waiting here could deadlock
                return
            ticket = object()
            self._queue.append(ticket)
            deadline = time.monotonic() + max(0.0, wait_s)
            try:
                while self._queue[0] is not ticket or self._used + extra > self.capacity:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise photo_io.PhotoBusy("too many large photos are being read at "
                                                 "once: try again in a minute")
                    self._cond.wait(left)
                self._used += extra
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()

    def _give(self, extra: int) -> None:
        with self._cond:
            self._used -= extra
            self._cond.notify_all()
        if extra >= TRIM_AFTER_PIXELS:
            gc.collect()  # decoded images caught in reference cycles go now, not some day
            trim_memory()

    @contextmanager
    def hold(self, pixels: int, wait_s: float | None = None):
        """Hold ``pixels`` (at most the whole budget) while the block runs; inside ``keep``,
        until ``keep`` ends. ``PhotoBusy`` when they do not fit within ``wait_s`` seconds
        (default: ``[io] decode_wait_s``)."""
        local = self._local
        held = getattr(local, "held", 0)
        extra = max(0, min(int(pixels), self.capacity) - held)
        if extra:
            self._take(extra, _decode_wait() if wait_s is None else wait_s)
            local.held = held + extra
        try:
            yield
        except BaseException as exc:
            _free_frames(exc)
            raise
        finally:
            if extra and getattr(local, "keeping", 0):
                local.kept += extra
            elif extra:
                local.held -= extra
                self._give(extra)

    @contextmanager
    def keep(self):
        """Pixels held inside this block stay held until it ends (an upload's pixels, from its
        decoding until it is read and stored)."""
        local = self._local
        depth = getattr(local, "keeping", 0)
        if not depth:
            local.kept = 0
        local.keeping = depth + 1
        try:
            yield
        except BaseException as exc:
            _free_frames(exc)
            raise
        finally:
            local.keeping = depth
            if not depth and local.kept:
                kept, local.kept = local.kept, 0
                local.held -= kept
                self._give(kept)


def _free_frames(exc: BaseException) -> None:
    """Drop the local variables of the finished calls an exception passed through (and of
    those of the exceptions it was raised from), so the decoded images they held are freed
    now: a refused photo (422) would keep them alive as long as the exception lives. The
    traceback itself (files, lines) stays for the log."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)  # frames still running are left alone
        exc = exc.__cause__ or exc.__context__


def _decode_wait() -> float:
    from vision import config

    return float(config.load()["io"]["decode_wait_s"])


_BUDGETS: dict[int, PixelBudget] = {}
_BUDGETS_LOCK = threading.Lock()


def _forget_budgets() -> None:  # a forked child holds nothing
    global _BUDGETS_LOCK
    _BUDGETS.clear()
    _BUDGETS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_budgets)


def pixel_budget() -> PixelBudget:
    """This process's budget (app config ``PIXEL_BUDGET``, pixels; default 150 MP): one for
    every app of the process with the same capacity."""
    capacity = DEFAULT_PIXEL_BUDGET
    if has_app_context():
        capacity = int(current_app.config.get("PIXEL_BUDGET") or DEFAULT_PIXEL_BUDGET)
    with _BUDGETS_LOCK:
        return _BUDGETS.setdefault(capacity, PixelBudget(capacity))


def hold_photo(data: bytes):
    """``pixel_budget().hold`` for a photo's header pixels (its checks have run: see
    ``check_image``)."""
    try:
        pixels = photo_io.read_header(data).pixels
    except PhotoError:
        pixels = 0
    return pixel_budget().hold(pixels)


_LIBC = None


def trim_memory() -> None:
    """Hand the memory the C allocator keeps after large frees back to the system (glibc's
    ``malloc_trim``); nothing where there is no such call."""
    global _LIBC
    if _LIBC is None:
        try:
            libc = ctypes.CDLL(None)
            _LIBC = libc if hasattr(libc, "malloc_trim") else False
        except (OSError, AttributeError, TypeError):
            _LIBC = False
    if _LIBC:
        try:
            _LIBC.malloc_trim(0)
        except (OSError, AttributeError, ctypes.ArgumentError):
            pass
