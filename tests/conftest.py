"""Shared fixtures: where ``../shared`` is (tests that need it skip with a reason when absent)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KINGDOMINO_SHARED", ROOT.parent / "shared"))


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

