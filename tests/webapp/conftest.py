"""Fixtures for the web app tests: an app on a temporary database with a fake reader, and a
fake whole-table reader."""
from __future__ import annotations

import pytest
from webapp_helpers import FakeReader, FakeTableReader

from webapp import create_app


@pytest.fixture
def reader():
    return FakeReader()


@pytest.fixture
def table_reader():
    """The fake whole-table reader (``TABLE_READER``): two kingdoms a photo."""
    return FakeTableReader()


@pytest.fixture
def make_app(tmp_path, reader):
    """Build an app on the test's database; call again to 'restart the server'."""
    def build(**extra):
        config = {"TESTING": True, "DATABASE": str(tmp_path / "test.sqlite3"),
                  "INSTANCE_PATH": str(tmp_path / "instance"), "READER": reader}
        config.update(extra)
        return create_app(config)
    return build


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def client(app):
    return app.test_client()
