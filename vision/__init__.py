"""Photo -> kingdom reader: find the kingdom, lay the grid, read every square.

Public API:

- ``Reader(config=None)``: loads the models once; ``Reader.read(image, size=None) -> Reading``
  where ``image`` is a BGR ``numpy`` array (already EXIF-oriented).
- ``load_image(path_or_bytes)``: decode a photo safely (EXIF orientation honoured, size limits),
  raising ``PhotoError`` with a message a person understands.
- ``Reading``: ``size``, ``cells`` (rows of dicts ``terrain``, ``crowns``, ``confidence``),
  ``review`` (list of ``[row, col]``), ``corners`` (4 image points, tl tr br bl), ``homography``
  (3x3 list, image -> rectified board), ``warnings``; ``Reading.to_json()`` gives the
  contract's kingdom JSON fields (``size``, ``cells``, ``review``) plus ``corners``.
- ``PhotoError(ValueError)``: the photo cannot be read or holds no kingdom.
"""
from vision.errors import PhotoError


def load_image(path_or_bytes):
    """Decode a photo (path or bytes) to a BGR array; see ``vision.photo.files.load_image``."""
    from vision.photo import files as io

    return io.load_image(path_or_bytes)


def __getattr__(name):
    # the reader pulls in the models and OpenCV's DNN module: load it only when asked for
    if name in ("Reader", "Reading"):
        from vision import reader

        return getattr(reader, name)
    raise AttributeError(f"module 'vision' has no attribute {name!r}")


__all__ = ["Reader", "Reading", "PhotoError", "load_image"]
