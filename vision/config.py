"""Reader configuration: every threshold lives in ``config.toml``, and only there.

``load()`` gives the sections as :class:`Section` dicts: reading a key the file does not have
raises :class:`ConfigError` naming the section and the key. Code reads ``section["key"]`` and
keeps no second default that could disagree with the file.
"""
from __future__ import annotations

import copy
import tomllib
from functools import lru_cache
from pathlib import Path

CONFIG_PATH = Path(__file__).resolve().parent / "config.toml"


class ConfigError(ValueError):
    """A setting the code needs is missing from the configuration."""


class Section(dict):
    """One ``[section]`` of the configuration; a missing key is an error that names it."""

    def __init__(self, name: str, values: dict):
        super().__init__(values)
        self.name = name

    def __missing__(self, key):
        raise ConfigError(f"the reader's configuration has no [{self.name}] {key}: add it to "
                          f"vision/config.toml (or to the dict passed as config)")


@lru_cache(maxsize=None)
def _load(path: str) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def load(path: str | Path | None = None) -> dict:
    """The configuration as ``{section: Section}`` (``cfg["detect"]["..."]``); a fresh copy
    each call."""
    raw = copy.deepcopy(_load(str(path or CONFIG_PATH)))
    return Section("", {name: Section(name, values) if isinstance(values, dict) else values
                        for name, values in raw.items()})
