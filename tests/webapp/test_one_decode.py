"""An uploaded photo is decoded once: its stored copy and its reading share the decode
(``vision.photo.files.decode_once``), for a kingdom and for a whole table alike."""
from __future__ import annotations

import io

import cv2
import numpy as np
from webapp_helpers import FakeReader, FakeTableReader

from vision.photo import scale as photo_scale


def _photo(w=2400, h=1800) -> bytes:
    rng = np.random.default_rng(7)
    img = cv2.GaussianBlur(rng.integers(0, 255, (h // 8, w // 8, 3), np.uint8), (0, 0), 2)
    ok, buf = cv2.imencode(".jpg", cv2.resize(img, (w, h), interpolation=cv2.INTER_LINEAR))
    assert ok
    return buf.tobytes()


class Decoding:
    """A reader that decodes its photo as the real one does, then gives the fake reading."""

    def __init__(self, inner):
        self.inner, self.shapes = inner, []

    def __call__(self, photo: bytes, rules: str, bonuses=(), **options):
        image, factor = photo_scale.load_for_reading(photo)
        self.shapes.append((image.shape, factor))
        return self.inner(photo, rules, bonuses, **options)


def test_an_upload_is_decoded_once_for_its_copy_and_its_reading(make_app, decodes):
    reader = Decoding(FakeReader())
    client = make_app(READER=reader).test_client()
    data = _photo()
    resp = client.post("/api/score", data={"photo": (io.BytesIO(data), "k.jpg")},
                       content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert reader.shapes == [((1800, 2400, 3), 1)]
    assert decodes == [cv2.IMREAD_COLOR]
    page = client.get(f"/r/{resp.get_json()['id']}/photo.jpg")
    assert page.status_code == 200
    copy = cv2.imdecode(np.frombuffer(page.data, np.uint8), cv2.IMREAD_COLOR)
    assert max(copy.shape[:2]) < 2400 and copy.shape[1] > copy.shape[0]


def test_the_next_upload_decodes_its_own_photo(make_app, decodes):
    """Nothing of one upload's decode is left for the next (another photo, the same bytes)."""
    reader = Decoding(FakeReader())
    client = make_app(READER=reader).test_client()
    data = _photo()
    for _ in range(2):
        resp = client.post("/api/score", data={"photo": (io.BytesIO(data), "k.jpg")},
                           content_type="multipart/form-data")
        assert resp.status_code == 200
    assert len(decodes) == 2


def test_a_table_upload_is_decoded_once_too(make_app, decodes):
    table = FakeTableReader()
    reader = Decoding(table)
    client = make_app(TABLE_READER=reader).test_client()
    resp = client.post("/api/score", data={"photo": (io.BytesIO(_photo()), "t.jpg"), "all": "1"},
                       content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert reader.shapes == [((1800, 2400, 3), 1)] and decodes == [cv2.IMREAD_COLOR]
