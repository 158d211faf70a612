"""Our labels of the Queendomino photos (vision/lab/data/queendomino_labels.json) and their
loader: the file ships and checks itself; the photos, in ../shared, are needed only where said."""
from __future__ import annotations

import json

import pytest

from tests.conftest import shared_path
from vision.lab import datasets


def test_the_shipped_labels_pass_their_own_checks():
    doc = datasets.queendomino_labels()
    names = [p["photo"].rsplit("_", 1)[1] for p in doc["photos"]]
    assert names == ["15.jpg", "16.jpg", "17.jpg", "18.jpg", "19.jpg", "24.jpg"]
    for p in doc["photos"]:
        castles = sum(t == "castle" for row in p["terrain"] for t in row)
        assert castles == 1, p["photo"]
        for piece in p["pieces"]:
            assert 0 <= piece["row"] < p["rows"] and 0 <= piece["col"] < p["cols"]
            assert piece["piece"] in ("knight", "tower", "queen", "coins")


@pytest.mark.parametrize("change, words", [
    (lambda p: p["terrain"][0].append("empty"), "rows of"),
    (lambda p: p["terrain"][0].__setitem__(0, "wheat"), "unknown terrain 'wheat'"),
    (lambda p: p["crowns"][2].__setitem__(4, 1), "town, cannot carry 1 crowns"),
    (lambda p: p["buildings"].append({"row": 0, "col": 1, "crowns": 0}), "not on a town"),
])
def test_a_wrong_label_is_refused_by_name(tmp_path, change, words):
    doc = json.loads(datasets.QUEENDOMINO_LABELS.read_text(encoding="utf-8"))
    change(doc["photos"][1])                           # photo 16: 5x5, town at (2, 4)
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="16.jpg") as err:
        datasets.queendomino_labels(path)
    assert words in str(err.value)


def test_without_the_photos_the_loader_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match="queendomino-photos"):
        datasets.load_queendomino(tmp_path)


def test_the_photos_load_with_their_towns_and_corners():
    root = shared_path("datasets", "queendomino-photos")
    photos = datasets.load_queendomino(root.parent)
    assert [p.path.is_file() for p in photos] == [True] * 6
    by = {p.name.rsplit("_", 1)[1]: p for p in photos}
    assert by["16.jpg"].towns == ((2, 4), (3, 4), (4, 4))
    assert by["17.jpg"].towns == ()                    # the close view shows no town
    assert dict(by["24.jpg"].buildings) == {(0, 2): 1, (2, 2): 0}
    assert all(p.corners.shape == (4, 2) for p in photos)
    assert {p.group for p in photos} == {"queendomino:queendomino-game"}   # one game: one group
