"""Through the real reader (shipped models) on the sample photo; skipped when either is absent."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from webapp import create_app
from webapp.reading import default_reader

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "kingdom-5x5.jpg"
MODEL = ROOT / "models" / "squares.onnx"


@pytest.fixture
def real_client(tmp_path):
    if not SAMPLE.exists() or not MODEL.exists():
        pytest.skip("needs samples/kingdom-5x5.jpg and models/squares.onnx (not built yet)")
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "r.sqlite3"),
                      "INSTANCE_PATH": str(tmp_path / "instance"), "READER": default_reader})
    return app.test_client()


def test_real_photo_through_the_api(real_client):
    import engine

    resp = real_client.post("/api/score", data={"photo": (io.BytesIO(SAMPLE.read_bytes()), SAMPLE.name)},
                            content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    body = resp.get_json()
    assert body["size"] == 5 and len(body["cells"]) == 5
    assert all(0 <= cell["confidence"] <= 1 for row in body["cells"] for cell in row)
    # the score is the engine's score of the cells the reader returned
    kingdom = engine.Kingdom.from_json({k: body[k] for k in ("rules", "size", "cells")})
    assert body["score"]["total"] == engine.score(kingdom).total
    view = real_client.get(f"/api/readings/{body['id']}").get_json()
    assert view["score"]["total"] == body["score"]["total"]
    grid = view["grid"]
    assert len(grid) == 6 and len(grid[0]) == 6
    width, height = view["photo_size"]
    assert max(width, height) <= 1600
    # the projected grid lies on the stored photo
    assert all(-0.05 * width <= x <= 1.05 * width and -0.05 * height <= y <= 1.05 * height
               for row in grid for x, y in row)
