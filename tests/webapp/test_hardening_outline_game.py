"""Issue 48, second round of hardening: the outline endpoint's numbers and nesting (4), decoding
memory held by pixels in flight (10), idle connections beside an ordinary request (11), the
game page's standings (14) and players' names (15)."""
from __future__ import annotations

import io

import pytest
from webapp_helpers import FakeReader, page_token, png_bytes


# ---------------------------------------------------------------- 4: the outline endpoint


class ReadAgain:
    """A fake ``READ_OUTLINE`` that only counts its calls (the refusals come before it)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, photo, corners, size, rules, bonuses=()):
        self.calls += 1
        return FakeReader()(photo, rules, bonuses)


@pytest.fixture
def outline_app(make_app):
    again = ReadAgain()
    client = make_app(READ_OUTLINE=again).test_client()
    token = page_token(client)
    resp = client.post("/api/score", data={"photo": (io.BytesIO(png_bytes()), "k.png"),
                                           "csrf_token": token},
                       content_type="multipart/form-data")
    assert resp.status_code == 200
    return client, token, resp.get_json()["id"], again


@pytest.mark.parametrize("corners", [
    [[int("9" * 400), 10], [500, 10], [500, 400], [10, 400]],
    [[10, 10], [500, -int("7" * 400)], [500, 400], [10, 400]],
    [10, 10, 500, 10, 500, 400, 10, int("1" * 400)],
    ",".join(["1" * 400] * 8),
])
def test_outline_with_a_huge_number_is_400_saying_so(outline_app, corners):
    client, token, rid, again = outline_app
    resp = client.post(f"/api/readings/{rid}/outline", json={"corners": corners},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 400, resp.get_data(as_text=True)
    error = resp.get_json()["error"]
    assert "corners" in error and ("number" in error or "finite" in error)
    assert len(error) < 400 and again.calls == 0


def test_outline_with_deeply_nested_json_is_400_saying_so(outline_app):
    client, token, rid, again = outline_app
    depth = 100_000
    body = '{"corners": ' + "[" * depth + "]" * depth + "}"
    resp = client.post(f"/api/readings/{rid}/outline", data=body,
                       headers={"X-CSRF-Token": token, "Content-Type": "application/json"})
    assert resp.status_code == 400, resp.get_data(as_text=True)[:300]
    assert "nested too deeply" in resp.get_json()["error"] and again.calls == 0
