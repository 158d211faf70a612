"""Shared fixtures: where ``../shared`` is (tests that need it skip with a reason when absent)."""
from __future__ import annotations

from pathlib import Path

import pytest

from vision.lab.datasets import shared_dir

ROOT = Path(__file__).resolve().parent.parent
SHARED = shared_dir()   # $KINGDOMINO_SHARED, else ../shared: the same folder the loaders read


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or a pytest skip when it is not there (a new user's machine)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {Path('..', 'shared', *parts)} (the datasets and rules), which is absent here")
    return path


@pytest.fixture
def shared_dir() -> Path:
    return shared_path()


@pytest.fixture
def datasets_dir() -> Path:
    return shared_path("datasets")

