"""``--all`` reads a kingdom as plain ``score`` does (issue 52): each kingdom the whole-table
search finds is framed and read by the single-kingdom search, and is cut only at the photo's
edge. Real photos: the bundled samples (and the dev phone photos of ``../shared`` when there)."""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.find.whole_table import read_table
from vision.reader import Reader

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def reader():
    return Reader()


def _cells(reading):
    return [[(c["terrain"], c["crowns"]) for c in row] for row in reading.cells]


def _total(reading) -> int:
    from vision.lab.evaluation.evaluate import score

    return score([[c["terrain"] for c in row] for row in reading.cells],
                 [[int(c["crowns"]) for c in row] for row in reading.cells])


def test_all_on_a_one_kingdom_photo_reads_what_plain_score_reads(reader):
    image = cv2.imread(str(SAMPLES / "kingdom-5x5.jpg"))
    plain = reader.read(image)
    found = read_table(reader, image)
    assert len(found) == 1 and not found[0].cut
    assert _cells(found[0].reading) == _cells(plain)
    assert np.allclose(found[0].reading.corners, plain.corners)


def test_all_on_the_two_samples_side_by_side_reads_each_as_plain_score_does(reader):
    """Two photos side by side, each with its own table around it: two kingdoms, numbered
    left to right, none cut, each scored as plain ``score`` scores its own photo."""
    photos = [cv2.imread(str(SAMPLES / name)) for name in ("kingdom-5x5.jpg", "kingdom-7x7.jpg")]
    plain = [reader.read(image) for image in photos]
    found = read_table(reader, np.hstack(photos))
    assert [k.kingdom for k in found] == [0, 1]
    assert [k.cut for k in found] == [False, False]
    assert [(k.reading.rows, k.reading.cols) for k in found] == [(p.rows, p.cols) for p in plain]
    assert [_total(k.reading) for k in found] == [_total(p) for p in plain]


def test_real_composites_of_dev_photos_are_made_with_their_truth():
    from vision.lab import datasets

    root = datasets.default_datasets_dir() / "phone-photos"
    if not root.exists():
        pytest.skip("needs the dev phone photos in ../shared/datasets/phone-photos")
    from vision.lab.scenes import real_tables as rt

    groups = rt.composite_groups(datasets.load_phone(), groups=(2,))
    scene = rt.composite(groups[0])
    assert len(scene.kingdoms) == 2
    for k in scene.kingdoms:
        c = np.asarray(k.corners)
        assert c.min() >= 0 and c[:, 0].max() <= scene.image.shape[1]
        assert c[:, 1].max() <= scene.image.shape[0]
        assert not rt._cut_in(c, scene.image.shape)
    assert scene.kingdoms[0].corners[:, 0].mean() < scene.kingdoms[1].corners[:, 0].mean()
