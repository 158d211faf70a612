"""Shared fixtures: where ``../shared`` is (tests that need it skip with a reason when absent),
the command line run in this process (``run_cli``), a real ``kingdomino serve`` process
(``kingdomino_server``), a fake reader behind the services (``fake_reader``), fake square
classifier output (``classifier_logits``), an empty table of the web app's batches and the
photo decodes counted (``decodes``)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

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


# ---------------------------------------------------------------- fake square classifier output


def classifier_logits(terrain, crowns, strength: float = 9.0, unsure=(),
                      unsure_strength: float = 0.3):
    """What the square network would output for a grid it reads with no doubt: one row per
    square in reading order, the terrain ``terrain[r][c]`` and the crowns ``crowns[r][c]`` each
    ``strength`` above the rest; the crowns of the squares ``(r, c)`` in ``unsure`` only
    ``unsure_strength`` above."""
    import numpy as np

    from vision.read.labels import N_CROWNS, TERRAINS

    rows = []
    for r, (t_row, c_row) in enumerate(zip(terrain, crowns)):
        for c, (t, k) in enumerate(zip(t_row, c_row)):
            z = np.zeros(len(TERRAINS) + N_CROWNS)
            z[TERRAINS.index(t)] = strength
            z[len(TERRAINS) + k] = unsure_strength if (r, c) in unsure else strength
            rows.append(z)
    return np.array(rows)


# ---------------------------------------------------------------- a fake reader for the services


class FakeReading:
    """What ``vision.Reader.read`` gives, as far as ``kingdomino.service`` looks at it."""

    def __init__(self, cells, warnings=(), review=()):
        self.cells, self.warnings, self.review = cells, list(warnings), list(review)

    def to_json(self) -> dict:
        return {"size": len(self.cells), "cells": self.cells, "review": list(self.review),
                "warnings": list(self.warnings)}


@dataclass
class FakeReader:
    """Stands in for ``vision.Reader`` behind ``kingdomino.service.reader()``: every photo is
    read as ``cells`` with ``warnings``; ``fail(image)``, when set, may raise instead (a reader
    bug on one photo). ``images`` keeps the decoded photos it was given."""

    cells: list
    warnings: list = field(default_factory=list)
    fail: object = None
    images: list = field(default_factory=list)

    def read(self, image, size=None):
        self.images.append(image)
        if self.fail is not None:
            self.fail(image)
        return FakeReading(self.cells, self.warnings)


@pytest.fixture
def decodes(monkeypatch) -> list:
    """Every ``cv2.imdecode`` that ``vision.photo.files`` makes from now on in the test, as the
    flags it was asked with (each decode still made)."""
    from vision.photo import files as photo_io

    calls = []
    real = photo_io.cv2.imdecode

    def counted(buf, flags):
        calls.append(flags)
        return real(buf, flags)

    monkeypatch.setattr(photo_io.cv2, "imdecode", counted)
    return calls


@pytest.fixture
def fake_reader(monkeypatch):
    """``fake_reader(cells, warnings=(), fail=None)``: the services (``kingdomino score``, the
    web app's default reader) read every photo with a ``FakeReader``; gives the reader."""
    from kingdomino import service

    def install(cells, warnings=(), fail=None) -> FakeReader:
        reader = FakeReader(cells, list(warnings), fail)
        monkeypatch.setattr(service, "reader", lambda: reader)
        return reader

    return install


# ---------------------------------------------------------------- the command line, in process


class CliRun(NamedTuple):
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys):
    """``run_cli("score", PHOTO, "--json")``: ``kingdomino.cli.main`` in this process, as
    ``(code, out, err)``: the exit status (a usage error's ``SystemExit`` too), stdout, stderr."""
    from kingdomino.cli import main

    def run(*argv) -> CliRun:
        capsys.readouterr()  # only this run's output
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        return CliRun(code, out.out, out.err)

    return run


# ---------------------------------------------------------------- a real server process


def free_port() -> int:
    """A TCP port on 127.0.0.1 free at the time of asking."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(port: int, path: str, timeout: float) -> int:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


@dataclass
class Server:
    """A ``kingdomino serve`` process started by ``kingdomino_server``."""

    proc: subprocess.Popen
    port: int
    store: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def status(self, path: str, timeout: float = 5) -> int:
        """The HTTP status of ``GET path``."""
        return _status(self.port, path, timeout)


SERVER_START_LIMIT = 120.0   # seconds a starting server may take to answer (a busy machine)


@pytest.fixture
def kingdomino_server(tmp_path):
    """``python3 -m kingdomino serve`` as a real process on 127.0.0.1 and a free port, this
    checkout on its path, its store and data folder in tmp_path (no ``$KINGDOMINO_STORE``);
    yields a ``Server`` once it answers ``GET /api/rules`` (polled, at most
    ``SERVER_START_LIMIT`` seconds); stopped (or killed) after the test."""
    port = free_port()
    store = tmp_path / "server-store.sqlite3"
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("KINGDOMINO_STORE", None)
    proc = subprocess.Popen([sys.executable, "-m", "kingdomino", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--store", str(store)],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + SERVER_START_LIMIT
        while True:
            assert proc.poll() is None, "the server stopped at start"
            try:
                if _status(port, "/api/rules", 5) == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, \
                f"the server did not answer within {SERVER_START_LIMIT:.0f} s"
            time.sleep(0.2)
        yield Server(proc, port, store)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
