"""Fixtures of the batch tests (helpers in batch_helpers.py, the fake reader in batch_fakes.py)."""
from __future__ import annotations

import pytest


@pytest.fixture
def calls(tmp_path, monkeypatch):
    """The fake reader counts its calls in this file (``batch_fakes.calls``); no stop or kill
    left over from the environment."""
    path = tmp_path / "calls.txt"
    monkeypatch.setenv("KD_FAKE_CALLS", str(path))
    monkeypatch.delenv("KD_FAKE_STOP_AFTER", raising=False)
    monkeypatch.delenv("KD_FAKE_KILL_AFTER", raising=False)
    return path
