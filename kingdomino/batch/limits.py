"""The batch's limits and exit codes: what one photo, one zip and one run may be."""
from __future__ import annotations

from vision import config as _vision_config

IMAGE_EXTENSIONS = {".jpg", ".jpeg", ".jpe", ".png", ".webp", ".bmp", ".tif", ".tiff",
                    ".heic", ".heif"}
# one photo: vision/config.toml [io] max_bytes (the one limit of CLI, web and batch; a 12 MP
# phone JPEG is 3-6 MB); a name here so a test can lower it
MAX_PHOTO_BYTES = int(_vision_config.load()["io"]["max_bytes"])
ZIP_MAX_MEMBERS = 10_000
ZIP_MAX_TOTAL_BYTES = 8 * 2**30  # all members of one zip, uncompressed

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class BatchUsageError(ValueError):
    """The batch cannot start (no such path, bad manifest, ...): exit code 2."""
