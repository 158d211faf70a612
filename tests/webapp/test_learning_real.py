"""Learning from a correction with the real reader (shipped models) on the sample photo,
through the API as a person does it: upload into a store, correct a square, upload again:
the new reading says it was read with what the correction taught; a server started with
--no-learning reads without. Skipped when the sample or the models are absent."""
from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from webapp_helpers import page_token

from webapp import create_app
from webapp.reading import default_reader

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "kingdom-5x5.jpg"
MODEL = ROOT / "models" / "squares.onnx"


@pytest.fixture
def make(tmp_path):
    if not SAMPLE.exists() or not MODEL.exists():
        pytest.skip("needs samples/kingdom-5x5.jpg and models/squares.onnx (not built yet)")
    pytest.importorskip("vision.read.learned")

    def build(**extra):
        app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "r.sqlite3"),
                          "INSTANCE_PATH": str(tmp_path / "instance"), "READER": default_reader,
                          **extra})
        return app.test_client()
    return build


def upload(client, token) -> dict:
    resp = client.post("/api/score", data={"csrf_token": token,
                                           "photo": (io.BytesIO(SAMPLE.read_bytes()),
                                                     SAMPLE.name)},
                       content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


def test_a_correction_teaches_the_next_upload(make):
    client = make()
    token = page_token(client)
    first = upload(client, token)
    assert not first.get("learned")
    cells = [[{"terrain": c["terrain"], "crowns": c["crowns"]} for c in row]
             for row in first["cells"]]
    r, c = 0, 0
    cells[r][c] = {"terrain": "lake" if cells[r][c]["terrain"] != "lake" else "forest",
                   "crowns": 0}
    started = time.perf_counter()
    resp = client.post(f"/api/readings/{first['id']}/kingdom",
                       json={"size": first["size"], "cells": cells},
                       headers={"X-CSRF-Token": token})
    took = time.perf_counter() - started
    assert resp.status_code == 200, resp.get_data(as_text=True)
    got = resp.get_json()["learned"]
    assert got["added"] == 1 and got["seconds"] < 1 and took < 3, (got, took)
    second = upload(client, token)
    assert second.get("learned", 0) > 0
    # a server started with --no-learning on the same store reads as the network alone does
    off = make(LEARNING=False)
    assert not upload(off, page_token(off)).get("learned")
