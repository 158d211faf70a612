"""Reading one photo's bytes for the batch: the one place that opens a photo.

``read_item`` checks the size, that a file is a regular file and that the bytes look like an
image; ``photo_copy`` makes the small copy the web app's review page shows. When ``vision.io``
offers one photo-opening function (headers, limits, EXIF, shrink), it replaces these two.
"""
from __future__ import annotations

import os
import stat
import zipfile

from kingdomino.batch import limits


class ItemError(Exception):
    """One photo cannot be read; the message is for a person."""


_ItemError = ItemError  # older name


def looks_like_image(head: bytes) -> bool:
    """Whether the first bytes are those of an image format a phone or camera writes."""
    return (
        head.startswith(b"\xff\xd8\xff")  # JPEG
        or head.startswith(b"\x89PNG\r\n\x1a\n")
        or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")
        or head.startswith(b"BM")
        or head[:4] in (b"II*\x00", b"MM\x00*")  # TIFF
        or (head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"mif1", b"msf1", b"heif"))
    )


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def not_a_photo_file(path: str) -> str | None:
    """Why ``path`` cannot be a photo file (a FIFO, a folder, a symlink loop...), or None."""
    try:
        st = os.stat(path)
    except OSError as exc:
        if os.path.islink(path):
            if exc.errno == getattr(os, "ELOOP", 40) or "loop" in str(exc).lower():
                return "a symlink loop: the link points back to itself; give the photo itself"
            return "a symlink to a file that does not exist"
        return f"cannot read the file: {exc.strerror or exc}"
    if stat.S_ISREG(st.st_mode):
        return None
    return f"{file_kind(st.st_mode)}, not a photo file; only regular files are read"


def _read_file(path: str) -> bytes:
    # O_NONBLOCK: opening a FIFO that appeared since the folder was walked must not wait forever
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        why = not_a_photo_file(path)
        raise ItemError(why or f"cannot read the file: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ItemError(f"{file_kind(st.st_mode)}, not a photo file; only regular files "
                            "are read")
        if st.st_size > limits.MAX_PHOTO_BYTES:
            raise ItemError(f"the file is larger than the {limits.MAX_PHOTO_BYTES // 2**20} MB "
                            "a photo may be; export it smaller")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            fd = None
            return fh.read(limits.MAX_PHOTO_BYTES + 1)
    except OSError as exc:
        raise ItemError(f"cannot read the file: {exc.strerror or exc}") from None
    finally:
        if fd is not None:
            os.close(fd)


def read_item(item, budget: dict) -> bytes:
    """The item's bytes, size-capped; raises ``ItemError`` with a message for a person."""
    if item.error:
        raise ItemError(item.error)
    if item.data is not None:
        data = item.data
    elif item.member is not None:
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
    else:
        data = _read_file(item.path)
    if len(data) > limits.MAX_PHOTO_BYTES:
        raise ItemError(f"the photo is larger than the {limits.MAX_PHOTO_BYTES // 2**20} MB a "
                        "photo may be; export it smaller")
    if not data:
        raise ItemError("the file is empty")
    if not looks_like_image(data[:16]):
        raise ItemError("not a photo: the file is not a JPEG, PNG, WebP, BMP, TIFF or HEIC image")
    return data


def photo_copy(data: bytes):
    """A small upright JPEG of the photo and the original's ``[width, height]``, for the web
    app's review page (``/r/<id>`` draws the grid on it); None when it cannot be decoded."""
    try:
        from webapp.reading import shrink_photo

        small, (w, h) = shrink_photo(data)
    except Exception:  # undecodable photo, or the web app is not installed: no copy
        return None
    return small, [w, h]
