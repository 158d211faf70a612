"""The whole-table photo generator (vision.lab.scenes.whole_tables): kingdoms apart, truth in
numbering order, seeds reproducible, measuring seeds kept apart from training."""
from __future__ import annotations

import numpy as np
import pytest

from vision.lab.scenes import whole_tables as tp
from vision.find.whole_table import number_order


@pytest.fixture(scope="module")
def scene():
    return tp.make_table_scene(tp.SEEDS_FROM, n=3, width=1600, height=1200)


def test_every_kingdom_lies_inside_the_photo_and_apart(scene):
    assert len(scene.kingdoms) == 3 and scene.image.shape == (1200, 1600, 3)
    boxes = []
    for k in scene.kingdoms:
        assert np.all(k.corners >= 0) and np.all(k.corners[:, 0] <= 1600) \
            and np.all(k.corners[:, 1] <= 1200)
        side = np.mean(np.linalg.norm(k.corners - np.roll(k.corners, -1, 0), axis=1))
        assert 0.8 * 700 * 1200 / 3000 < side < 1.2 * 1000 * 1200 / 3000
        assert len(k.terrain) == k.size and sum(row.count("castle") for row in k.terrain) == 1
        boxes.append((k.corners.min(0), k.corners.max(0)))
    for i in range(3):
        for j in range(i + 1, 3):
            (a0, a1), (b0, b1) = boxes[i], boxes[j]
            assert np.any(a1 < b0) or np.any(b1 < a0), "two kingdoms overlap"


def test_truth_is_in_numbering_order(scene):
    centres = [k.corners.mean(0) for k in scene.kingdoms]
    sides = [np.mean(np.linalg.norm(k.corners - np.roll(k.corners, -1, 0), axis=1))
             for k in scene.kingdoms]
    assert number_order(centres, sides) == [0, 1, 2]


def test_same_seed_same_photo():
    a = tp.make_table_scene(tp.SEEDS_FROM + 1, n=2, width=800, height=600, clutter=False)
    b = tp.make_table_scene(tp.SEEDS_FROM + 1, n=2, width=800, height=600, clutter=False)
    assert np.array_equal(a.image, b.image)


def test_summary_adds_up_the_photos():
    rows = [{"kingdoms": 3, "found": 3, "exact": 2, "phantom": 0, "numbering_right": True,
             "seconds": 1.0},
            {"kingdoms": 4, "found": 2, "exact": 2, "phantom": 1, "numbering_right": False,
             "seconds": 3.0}]
    s = tp.summarise(rows)
    assert (s["kingdoms"], s["found"], s["exact"], s["phantom"], s["numbering_right"]) == \
        (7, 5, 4, 1, 1)
    assert s["seconds_median"] == 2.0 and s["seconds_max"] == 3.0


def test_training_seeds_are_refused():
    with pytest.raises(SystemExit) as exc:
        tp.main(["--seed", str(tp.SEEDS_FROM - 1)])
    assert exc.value.code == 2
