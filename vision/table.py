"""Moved to ``vision.find.whole_table``; this name stays only until its last callers move (issue 49)."""
import sys

from vision.find import whole_table as _moved

sys.modules[__name__] = _moved
