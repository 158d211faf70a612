"""Moved to ``vision.photo.files``; this name stays only until its last callers move (issue 49)."""
import sys

from vision.photo import files as _moved

sys.modules[__name__] = _moved
