"""Walking the batch's inputs: files, folders (sorted, hidden files skipped) and zips.

Zip members are read in memory (their names are only labels, nothing is extracted to disk);
member count and sizes are capped. Only regular files are photos: a FIFO, a socket or a symlink
loop is an error row that says what it is, never a read that waits forever.
"""
from __future__ import annotations

import io
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from kingdomino.batch import limits
from kingdomino.batch.limits import BatchUsageError
from kingdomino.batch.photo import looks_like_image, not_a_photo_file


@dataclass
class Item:
    """One photo to score: a file, a zip member or bytes already in memory (web uploads)."""

    source: str
    path: str | None = None
    archive: zipfile.ZipFile | None = None
    member: zipfile.ZipInfo | None = None
    data: bytes | None = None
    error: str | None = None  # known before reading (e.g. a zip member too large)


@dataclass
class Collection:
    items: list[Item] = field(default_factory=list)
    skipped: int = 0  # files in folders / zips that are not photos
    _zips: list[zipfile.ZipFile] = field(default_factory=list)

    def close(self) -> None:
        for zf in self._zips:
            zf.close()
        self._zips.clear()


def _is_hidden(name: str) -> bool:
    if name in (".", ".."):
        return False
    return name.startswith(".") or name in ("__MACOSX", "Thumbs.db", "desktop.ini")


def _file_head(path: str) -> bytes:
    """The first bytes of a regular file (b"" for anything else: a FIFO is never opened)."""
    if not_a_photo_file(path) is not None:
        return b""
    try:
        with open(path, "rb") as fh:
            return fh.read(32)
    except OSError:
        return b""


def _add_zip(coll: Collection, source: str, opener) -> None:
    try:
        zf = zipfile.ZipFile(opener())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        coll.items.append(Item(source, error=f"not a readable zip file ({exc})"))
        return
    infos = [i for i in zf.infolist() if not i.is_dir()]
    if len(infos) > limits.ZIP_MAX_MEMBERS:
        zf.close()
        coll.items.append(Item(source, error=(
            f"the zip holds {len(infos)} files, more than the {limits.ZIP_MAX_MEMBERS} one batch "
            "reads from a zip; split it into smaller zips")))
        return
    coll._zips.append(zf)
    for info in sorted(infos, key=lambda i: i.filename):
        label = info.filename.replace("\\", "/")
        parts = [p for p in label.split("/") if p]
        if not parts or any(_is_hidden(p) for p in parts):
            continue
        if Path(parts[-1]).suffix.lower() not in limits.IMAGE_EXTENSIONS:
            coll.skipped += 1
            continue
        item = Item(f"{source}!{label}", archive=zf, member=info)
        if info.file_size > limits.MAX_PHOTO_BYTES:
            item.error = (f"the photo is {info.file_size // 2**20} MB, more than the "
                          f"{limits.MAX_PHOTO_BYTES // 2**20} MB a photo may be; export it smaller")
        coll.items.append(item)


def _walk(coll: Collection, folder: str) -> None:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _is_hidden(d))
        for name in sorted(files):
            if _is_hidden(name):
                continue
            full = os.path.join(root, name)
            ext = Path(name).suffix.lower()
            why = not_a_photo_file(full)
            if why is not None:
                if ext in limits.IMAGE_EXTENSIONS or ext == ".zip":
                    coll.items.append(Item(full, error=why))  # named like a photo: say why not
                else:
                    coll.skipped += 1
            elif ext == ".zip":
                _add_zip(coll, full, lambda full=full: full)
            elif ext in limits.IMAGE_EXTENSIONS or looks_like_image(_file_head(full)):
                coll.items.append(Item(full, path=full))
            else:
                coll.skipped += 1


def collect(paths) -> Collection:
    """All photos under ``paths`` (files, folders walked in sorted order, zip files).

    Files named on the command line are always read (a non-photo, a FIFO or a symlink loop
    becomes an error row that says what it is); in folders and zips only files with a photo
    extension (or, in folders, photo content) are. Raises ``BatchUsageError`` for a path that
    does not exist.
    """
    coll = Collection()
    for raw in paths:
        path = str(raw)
        if not os.path.lexists(path):
            raise BatchUsageError(f"no such file or folder: {path}")
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            _walk(coll, path)
            continue
        why = not_a_photo_file(path)
        if why is not None:
            coll.items.append(Item(path, error=why))
        elif Path(path).suffix.lower() == ".zip" or (
            not looks_like_image(_file_head(path)) and zipfile.is_zipfile(path)
        ):
            _add_zip(coll, path, lambda path=path: path)
        else:
            coll.items.append(Item(path, path=path))
    return coll


def collect_uploads(files) -> Collection:
    """Like ``collect`` for uploaded ``(filename, bytes)`` pairs (the web page): zips are opened."""
    coll = Collection()
    for name, data in files:
        if Path(name).suffix.lower() == ".zip" or (
            data[:4] == b"PK\x03\x04" and not looks_like_image(data[:16])
        ):
            _add_zip(coll, name, lambda data=data: io.BytesIO(data))
        else:
            coll.items.append(Item(name, data=data))
    return coll
