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


@pytest.fixture(autouse=True)
def english_messages(monkeypatch):
    """The CLI speaks the language LANG / LC_MESSAGES name (kingdomino.i18n): the tests expect
    English whatever the machine's locale (tests of the other languages set it themselves)."""
    for key in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.fixture
def fresh_jobs(monkeypatch):
    """An empty table of the web app's batches (``webapp.batch.jobs._JOBS`` is one per process,
    so the batches other tests left waiting would count against this test's limits); gives the
    jobs module."""
    from collections import OrderedDict

    from webapp.batch import jobs

    monkeypatch.setattr(jobs, "_JOBS", OrderedDict())
    return jobs


@pytest.fixture
def shared_dir() -> Path:
    return shared_path()


@pytest.fixture
def datasets_dir() -> Path:
    return shared_path("datasets")



def plain_classify_cfg(**overrides) -> dict:
    """The shipped ``[classify]`` section with every decoding extra off (no crown prior, no
    one-castle rule, no supply or tiling repair, 4 turns): unit tests of one extra turn on only
    the one they test. Every key is there, as the reader requires."""
    from vision import config

    cfg = config.load()["classify"]
    cfg.update({"cell": 64, "crop_margin": 12, "crown_prior": "none", "one_castle": False,
                "within_supply": False, "tiling_max_cost": False, "partner_floor": 1.0,
                "no_castle_candidates": 1, "tta": 4})
    cfg.update(overrides)
    return cfg
