"""Reading one photo's bytes for the batch, through ``vision.photo.files`` (the project's one photo opener).

``read_item`` returns an item's bytes once ``vision.photo.files`` has checked them (a regular file, the
size, pixel and memory limits of ``vision/config.toml`` ``[io]``, a readable header);
``photo_copy`` makes the small copy the web app's review page shows.
"""
from __future__ import annotations

import zipfile

from kingdomino.batch import limits
from kingdomino.store import PHOTO_COPY_SIDE
from vision.photo import files as photo_io
from vision.errors import PhotoError


class ItemError(Exception):
    """One photo cannot be read; the message is for a person."""


def looks_like_image(head: bytes) -> bool:
    """Whether the first bytes (32 are enough) are those of an image format ``vision.photo.files`` knows
    (HEIC too: it is refused with a message that says how to export it)."""
    return photo_io.sniff_format(head) is not None


def not_a_photo_file(path: str) -> str | None:
    """Why ``path`` cannot be a photo file (a FIFO, a folder, a symlink loop...), or None."""
    return photo_io.file_problem(path)


def _member_bytes(item, budget: dict) -> bytes:
    used = budget.get(id(item.archive), 0)
    if used > limits.ZIP_MAX_TOTAL_BYTES:
        raise ItemError("the zip holds more data than one batch reads from a zip "
                        f"({limits.ZIP_MAX_TOTAL_BYTES // 2**30} GB); split it")
    try:
        with item.archive.open(item.member) as fh:
            data = fh.read(limits.MAX_PHOTO_BYTES + 1)
    except RuntimeError as exc:  # encrypted member
        raise ItemError(f"cannot read this file from the zip: {exc}")
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ItemError(f"this file is damaged in the zip ({exc})")
    except Exception as exc:  # zlib.error and friends: a damaged archive
        raise ItemError(f"this file is damaged in the zip ({type(exc).__name__}: {exc})")
    budget[id(item.archive)] = used + len(data)
    return data


def read_item(item, budget: dict) -> bytes:
    """The item's bytes, checked by ``vision.photo.files``; raises ``ItemError`` with a message for a
    person (a folder, a FIFO, too large, not an image, a damaged header...)."""
    if item.error:
        raise ItemError(item.error)
    try:
        if item.data is not None:
            data = item.data
        elif item.member is not None:
            data = _member_bytes(item, budget)
        else:
            data = photo_io.read_photo_file(item.path)
        if len(data) > limits.MAX_PHOTO_BYTES:
            raise ItemError(f"the photo is larger than the {limits.MAX_PHOTO_BYTES / 1e6:g} MB a "
                            "photo may be; export it smaller")
        if not data:
            raise ItemError("the file is empty")
        if not looks_like_image(data[:32]):
            raise ItemError(f"not a photo: the file is not a {photo_io.SUPPORTED} image")
        photo_io.check_photo(data)
    except PhotoError as exc:
        raise ItemError(str(exc)) from None
    return data


def photo_copy(data: bytes):
    """A small upright JPEG of the photo and the original's ``[width, height]``, for the web
    app's review page (``/r/<id>`` draws the grid on it); None when it cannot be decoded."""
    try:
        small, (w, h) = photo_io.shrink_photo(data, PHOTO_COPY_SIDE)
    except (PhotoError, MemoryError):  # undecodable photo: no copy, the reading still counts
        return None
    return small, [w, h]
