"""Reader configuration: thresholds live in ``config.toml``, not inline in the code."""
from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

CONFIG_PATH = Path(__file__).resolve().parent / "config.toml"


@lru_cache(maxsize=None)
def _load(path: str) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def load(path: str | Path | None = None) -> dict:
    """The configuration as nested dicts (``cfg["detect"]["..."]``); a fresh copy each call."""
    import copy

    return copy.deepcopy(_load(str(path or CONFIG_PATH)))
