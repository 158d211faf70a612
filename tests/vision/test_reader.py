import json
from dataclasses import replace

import cv2
import numpy as np
import pytest

from tests.conftest import shared_path
from vision.find.detect import Grid, Outline
from vision.find.search import Candidate, Objective
from vision.find.whole_table import Kingdom


@pytest.fixture(scope="module")
def reader():
    from vision import Reader

    return Reader()


def aau_photo(n=1):
    from vision.lab.datasets import load_aau

    root = shared_path("datasets")
    photo = [p for p in load_aau(root) if p.name == f"aau-{n}"][0]
    return photo, cv2.imread(str(photo.path))


def matches(reading, photo):
    return sum((reading.cells[r][c]["terrain"], reading.cells[r][c]["crowns"])
               == (photo.terrain[r][c], photo.crowns[r][c])
               for r in range(photo.rows) for c in range(photo.cols))


def test_reads_an_aau_board_from_its_corners(reader):
    photo, image = aau_photo(1)
    h, w = image.shape[:2]
    reading = reader.read(image, corners=[[0, 0], [w, 0], [w, h], [0, h]], rows=5, cols=5)
    assert matches(reading, photo) >= 24


def test_reads_an_aau_photo_end_to_end(reader):
    photo, image = aau_photo(1)
    reading = reader.read(image)
    assert (reading.rows, reading.cols) == (5, 5)
    assert matches(reading, photo) >= 24


def test_photos_read_in_turn_read_as_each_does_alone(reader):
    """What one read makes once for its photo (vision.read.crops.read_once: boards, ring
    features) is never another photo's: two photos read in turn, and the first again, read
    as each alone."""
    from vision import Reader

    (_, first), (_, second) = aau_photo(1), aau_photo(2)
    alone = Reader().read(second).to_json()
    before = reader.read(first).to_json()
    assert reader.read(second).to_json() == alone
    assert reader.read(first).to_json() == before


def test_json_shape_and_confidences(reader):
    _, image = aau_photo(1)
    h, w = image.shape[:2]
    obj = reader.read(image, corners=[[0, 0], [w, 0], [w, h], [0, h]]).to_json()
    json.dumps(obj)
    assert obj["size"] == 5 and len(obj["cells"]) == 5 and all(len(r) == 5 for r in obj["cells"])
    for row in obj["cells"]:
        for cell in row:
            assert set(cell) == {"terrain", "crowns", "confidence"}
            assert 0 < cell["confidence"] <= 1
    assert np.array(obj["homography"]).shape == (3, 3)
    assert len(obj["corners"]) == 4
    for r, c in obj["review"]:
        assert 0 <= r < 5 and 0 <= c < 5


def test_incomplete_kingdom_is_padded_top_left(reader):
    _, image = aau_photo(1)
    part = image[:300, :400]          # 3 rows x 4 columns of the board
    reading = reader.read(part, corners=[[0, 0], [400, 0], [400, 300], [0, 300]], rows=3, cols=4)
    assert reading.size == 5 and (reading.rows, reading.cols) == (3, 4)
    for r in range(5):
        for c in range(5):
            if r >= 3 or c >= 4:
                assert reading.cells[r][c] == {"terrain": "empty", "crowns": 0, "confidence": 1.0}
                assert [r, c] not in reading.review


def test_square_outside_the_photo_goes_to_review(reader):
    _, image = aau_photo(1)
    # the board's right column lies beyond the image's right edge
    reading = reader.read(image, corners=[[0, 0], [625, 0], [625, 500], [0, 500]], rows=5, cols=5)
    for r in range(5):
        assert [r, 4] in reading.review


def test_not_an_image_is_a_photo_error(reader):
    from vision import PhotoError

    with pytest.raises(PhotoError):
        reader.read(np.zeros((10, 10), np.uint8))


def test_review_is_stricter_for_squares_with_many_crowns():
    """Hand-made readings: each crown multiplies a region, so 2+ crowns need more confidence."""
    from vision.read.classify import SquareReading
    from vision.read.review import review_reasons

    grid = [[SquareReading("mine", 3, 0.93), SquareReading("mine", 1, 0.93),
             SquareReading("swamp", 2, 0.99), SquareReading("field", 0, 0.5)]]
    from vision import config

    rcfg = dict(config.load()["review"], min_confidence=0.9, rich_crowns=2, flag_rich_below=0.97)
    reasons = review_reasons(grid, rcfg)
    assert sorted(reasons) == [(0, 0), (0, 3)]
    assert "3 crowns" in reasons[(0, 0)][0] and "low confidence" in reasons[(0, 3)][0]
    # with the rich-square threshold at the plain one only the plain threshold applies
    assert sorted(review_reasons(grid, dict(rcfg, flag_rich_below=0.9))) == [(0, 3)]


def test_a_tile_whose_odds_of_more_crowns_reach_the_line_is_flagged():
    """Hand-made readings with their crown odds ([review] flag_more_crowns 0.02 here): a lake
    read without crowns, surely (0.954), with 0.026 odds of one crown (harder dev scene 9892 on
    an AAU board: it had one) is flagged for its confidence; odds of fewer crowns, odds under
    the line, the castle and bare table are not; 0 turns the flag off."""
    from vision import config
    from vision.read.classify import SquareReading
    from vision.read.review import more_crowns, review_reasons

    rcfg = dict(config.load()["review"], min_confidence=0.92, flag_rich_below=0.97,
                flag_castle_neighbours_below=0.97, flag_more_crowns=0.02)
    grid = [[SquareReading("lake", 0, 0.954, crown_odds=(0.954, 0.026, 0.0, 0.0)),
             SquareReading("field", 1, 0.95, crown_odds=(0.04, 0.95, 0.005, 0.0)),
             SquareReading("forest", 1, 0.96, crown_odds=(0.0, 0.96, 0.015, 0.004)),
             SquareReading("empty", 0, 0.95, crown_odds=(0.95, 0.0, 0.0, 0.0)),
             SquareReading("swamp", 0, 0.99)]]
    assert more_crowns(grid[0][0]) == pytest.approx(0.026)
    assert more_crowns(grid[0][2]) == pytest.approx(0.019)
    assert more_crowns(grid[0][4]) == 0.0       # odds unknown
    reasons = review_reasons(grid, rcfg)
    assert sorted(reasons) == [(0, 0)]
    assert "low confidence (0.95)" in reasons[(0, 0)][0]
    assert sorted(review_reasons(grid, dict(rcfg, flag_more_crowns=0.015))) == [(0, 0), (0, 2)]
    assert review_reasons(grid, dict(rcfg, flag_more_crowns=0)) == {}


def test_squares_under_glare_read_less_than_surely_are_flagged():
    """Hand-made readings and glare shares ([review] flag_glare 0.15, flag_glare_below 0.99 here):
    a square is flagged for glare when both hold; the shares are not measured when no square is
    unsure; a square already flagged for its confidence keeps that one reason."""
    from vision import config
    from vision.read.classify import SquareReading
    from vision.read.review import glare_squares, review_reasons

    rcfg = dict(config.load()["review"], flag_glare=0.15, flag_glare_below=0.99,
                min_confidence=0.9)
    grid = [[SquareReading("lake", 1, 0.98), SquareReading("lake", 0, 0.98),
             SquareReading("field", 0, 0.995), SquareReading("field", 0, 0.5)]]
    shares = np.array([[0.2, 0.1, 0.6, 0.3]])
    assert glare_squares(grid, rcfg, lambda: shares) == {(0, 0), (0, 3)}
    assert glare_squares(grid, dict(rcfg, flag_glare=0), lambda: shares) == set()
    assert glare_squares(grid, dict(rcfg, flag_glare=0.05), lambda: shares) == {(0, 0), (0, 1),
                                                                                 (0, 3)}

    def not_measured():
        raise AssertionError("the shares were measured for a board read surely")

    sure = [[SquareReading("lake", 0, 0.995)] * 4]
    assert glare_squares(sure, rcfg, not_measured) == set()
    reasons = review_reasons(grid, rcfg, glare={(0, 0), (0, 3)})
    assert sorted(reasons) == [(0, 0), (0, 3)]
    assert "glare" in str(reasons[(0, 0)][0]) and "0.98" in str(reasons[(0, 0)][0])
    assert [str(m) for m in reasons[(0, 3)]] == ["low confidence (0.50)"]


def test_table_in_a_short_gap_between_tiles_unlike_the_table_is_flagged():
    """Glare-washed tiles read as table: squares read as table in a gap of one or two squares
    between tiles (in a row or a column, [review] flag_gaps) that look unlike the table around
    the kingdom go to review; a gap that looks like the table (a hole), bare squares beside one
    tile only, in a longer gap, or with no table to compare with, do not."""
    from vision import config
    from vision.read.classify import SquareReading
    from vision.read.review import gap_squares, gaps_unlike_table, review_reasons

    rows = ["FF.FF",     # (0,2): a gap of one between two fields in its row
            "C...F",     # (1,1)-(1,3): a gap of three: not a short gap
            ".....",     # (2,0): between the castle and a lake in its column
            "L.L..",     # (3,1): between two lakes; (3,3), (3,4) beside one
            "F..F."]     # (4,1), (4,2): a gap of two
    names = {"F": "field", "C": "castle", "L": "lake", ".": "empty"}
    grid = [[SquareReading(names[ch], 0, 1.0) for ch in row] for row in rows]
    assert gap_squares(grid, 2) == {(0, 2), (2, 0), (3, 1), (4, 1), (4, 2)}
    assert gap_squares(grid, 1) == {(0, 2), (2, 0), (3, 1)}
    assert gap_squares(grid, 0) == set()
    rcfg = dict(config.load()["review"], flag_gaps=2, gap_unlike_table=2.0)
    distance = np.full((5, 5), 5.0)
    distance[2, 0] = 0.3                 # looks like the table: a hole
    distance[4, 1] = np.inf              # no table to compare with
    gaps = gaps_unlike_table(grid, distance, rcfg)
    assert gaps == {(0, 2), (3, 1), (4, 2)}
    reasons = review_reasons(grid, rcfg, gaps=gaps)
    assert sorted(reasons) == [(0, 2), (3, 1), (4, 2)]
    assert all("between two tiles" in str(why[0]) for why in reasons.values())
    assert gaps_unlike_table(grid, distance, dict(rcfg, flag_gaps=0)) == set()


def test_shipped_settings_flag_a_washed_gap_a_little_unlike_the_table():
    """With the shipped [review] settings a gap square at distance 1.4 from the table (a
    grassland washed by glare beside white checks, read as table at 0.98) is flagged; a gap at
    0.6 looks like the table (a hole) and is not."""
    from vision import config
    from vision.read.classify import SquareReading
    from vision.read.review import gaps_unlike_table

    rcfg = config.load()["review"]
    names = {"F": "field", "G": "grassland", ".": "empty"}
    grid = [[SquareReading(names[ch], 0, 1.0) for ch in row] for row in ["F.GFF", "FF.GG"]]
    distance = np.full((2, 5), 5.0)
    distance[0, 1], distance[1, 2] = 1.4, 0.6
    assert gaps_unlike_table(grid, distance, rcfg) == {(0, 1)}


def test_a_bare_square_at_the_rim_unlike_the_kingdoms_other_bare_squares_is_flagged():
    """A tile at the kingdom's rim washed out by glare lies in no gap: a square read as table
    beside a tile is flagged when it lies at least [review] bare_unlike_table from the table
    around the kingdom and bare_unlike_ratio times the median of the squares read as table;
    on a textured table, where every bare square lies as far, none is; at least
    bare_far_from_table, always."""
    from vision import config
    from vision.read.classify import SquareReading
    from vision.read.review import bare_squares, bare_unlike_table, review_reasons

    rows = ["CF...",     # (0,2) beside a field; (0,3), (0,4) beside no tile
            "FF...",     # (1,2) beside a field
            ".F..."]     # (2,0), (2,2) beside a field
    names = {"F": "field", "C": "castle", ".": "empty"}
    grid = [[SquareReading(names[ch], 0, 1.0) for ch in row] for row in rows]
    assert bare_squares(grid) == {(0, 2), (1, 2), (2, 0), (2, 2)}
    rcfg = dict(config.load()["review"], bare_unlike_table=1.0, bare_unlike_ratio=5.0)
    distance = np.full((3, 5), 0.2)
    distance[2, 0] = 1.6                 # washed out: unlike the table
    distance[0, 4] = 3.0                 # unlike too, but beside no tile
    distance[1, 2] = np.inf              # no table to compare with
    assert bare_unlike_table(grid, distance, rcfg) == {(2, 0)}
    reasons = review_reasons(grid, rcfg, bare={(2, 0)})
    assert sorted(reasons) == [(2, 0)] and "beside a tile" in str(reasons[(2, 0)][0])
    textured = np.full((3, 5), 1.4)      # every bare square as far from the ring
    textured[2, 0] = 1.6
    assert bare_unlike_table(grid, textured, rcfg) == set()
    assert bare_unlike_table(grid, distance, dict(rcfg, bare_unlike_table=0.0)) == set()
    assert bare_unlike_table(grid, distance, dict(rcfg, bare_unlike_table=2.0)) == set()
    # a corner of tiles washed out together stands out from nothing, but lies far from the
    # table: at least [review] bare_far_from_table is flagged whatever the others
    washed = np.full((3, 5), 4.0)
    assert bare_unlike_table(grid, washed, rcfg) == bare_squares(grid)
    assert bare_unlike_table(grid, washed, dict(rcfg, bare_far_from_table=np.inf)) == set()


def test_a_pale_washed_bare_square_is_flagged_whatever_the_other_bare_squares():
    """Glare washes a corner of a full kingdom white and the classifier reads it as table:
    every bare square is washed, so none stands out from the others and none lies as far as
    bare_far_from_table. A bare square that is pale (white or pale grey) and at least
    bare_unlike_table from the table is flagged ([review] washed_light, washed_chroma); a
    pale one like the table (a white cloth's hole), a coloured one, or one beside no tile is
    not. review_distances measures it from the window's ring features."""
    from vision import config
    from vision.read import holes
    from vision.read.classify import SquareReading
    from vision.read.review import bare_squares, review_distances, washed_bare

    rows = ["FFF..",     # (0,3) beside a field; (0,4) beside no tile
            "FFF..",
            "FFFFF"]
    names = {"F": "field", ".": "empty"}
    grid = [[SquareReading(names[ch], 0, 1.0) for ch in row] for row in rows]
    rcfg = dict(config.load()["review"], bare_unlike_table=1.0, bare_unlike_ratio=5.0,
                bare_far_from_table=3.0, washed_light=190, washed_chroma=20)
    distance = np.full((3, 5), 1.8)      # all four bare squares as far: none stands out
    pale = np.zeros((3, 5), bool)
    pale[0, 3] = pale[0, 4] = pale[1, 3] = True
    assert washed_bare(grid, distance, pale, rcfg) == {(0, 3), (1, 3)}
    near = distance.copy()
    near[0, 3] = 0.4                     # pale, but like the table: a white cloth's hole
    assert washed_bare(grid, near, pale, rcfg) == {(1, 3)}
    # the features: L and a, b (8-bit Lab) of the window and its ring, one square wide
    feats = np.zeros((5, 7, holes.N_FEATURES))
    feats[..., 0], feats[..., 1], feats[..., 2] = 120.0, 128.0, 180.0     # yellow fields
    feats[1:3, 4:6, 0], feats[1:3, 4:6, 2] = 215.0, 132.0                 # washed: white
    feats[2, 5, 1] = 160.0                                                # (1,4): pinkish
    assert holes.pale_squares(feats, 190, 20).tolist() == [
        [False, False, False, True, True],
        [False, False, False, True, False],
        [False, False, False, False, False]]

    class _Ring:
        calls = 0

    def ring_of():
        _Ring.calls += 1
        return feats, np.zeros((5, 7), bool)

    hcfg = config.load()["holes"]
    rcfg = dict(rcfg, bare_far_from_table=np.inf)     # the washed squares alone stand out
    _, bare, _ = review_distances(grid, rcfg, ring_of, hcfg)
    assert _Ring.calls == 1 and bare == {(0, 3), (1, 3)}
    _, bare, _ = review_distances(grid, dict(rcfg, washed_light=0), ring_of, hcfg)
    assert bare == set()


def _green_is_field(crops, first_turn_only=False):
    """A stand-in classifier: a crop green in its middle is a field (the first one the
    castle), any other bare table, all without crowns."""
    from vision.read.labels import TERRAINS

    out = np.zeros((len(crops), len(TERRAINS) + 4))
    for i, crop in enumerate(crops):
        b, g, r = crop[crop.shape[0] // 2, crop.shape[1] // 2].astype(int)
        tile = g - min(b, r) > 50
        out[i, TERRAINS.index("castle" if tile and i == 0 else "field" if tile else "empty")] = 9.0
        out[i, len(TERRAINS)] = 9.0
    return out


@pytest.mark.parametrize("n, holes, washed_at", [
    (3, (), (1, 1)),                           # between tiles in its row and its column
    (4, ((0, 3), (1, 3), (3, 0)), (3, 3)),     # at the rim, in no gap; true holes beside it
])
def test_a_glare_washed_square_read_as_table_is_flagged_when_read(reader, monkeypatch, n, holes,
                                                                  washed_at):
    """End to end on a drawn photo: a grey table, an n x n kingdom of green tiles, holes
    showing the table, and one square washed white (read as table by the stub classifier,
    as the holes are): in a gap between tiles or at the rim it is in review, the holes are
    not; painted the table's grey instead (a hole), it is not either."""
    monkeypatch.setattr(reader.classifier, "logits", _green_is_field)
    rng = np.random.default_rng(3)
    corners = np.float32([[300, 200], [600, 200], [600, 500], [300, 500]])
    side = 300 // n

    def square(r, c):
        return slice(200 + side * r, 200 + side * (r + 1)), slice(300 + side * c,
                                                                   300 + side * (c + 1))

    for washed, flagged in (((250, 250, 250), True), ((128, 128, 128), False)):
        image = np.clip(rng.normal(128, 4, (700, 900, 3)), 0, 255).astype(np.uint8)
        image[200:500, 300:600] = (40, 170, 60)
        for r, c in holes:                     # the table shows
            image[square(r, c)] = image[50:50 + side, 50:50 + side]
        image[square(*washed_at)] = washed
        reading = reader.read(image, corners=corners, rows=n, cols=n)
        assert reading.cells[washed_at[0]][washed_at[1]]["terrain"] == "empty"
        assert (list(washed_at) in reading.review) == flagged
        assert not set(holes) & {tuple(rc) for rc in reading.review}


def test_a_tile_read_where_the_square_looks_like_the_table_is_flagged(reader, monkeypatch):
    """A bare square of a cloth printed in a terrain's colours can read as a tile however
    much vision.read.holes raises its odds of table: a square read as a tile that looks like the
    table around the kingdom ([review] flag_tile_like_table) goes to review, the kingdom's
    own tiles do not; 0 turns it off."""
    from vision.read.labels import TERRAINS
    from vision.read.review import tiles_like_table

    def logits(crops, first_turn_only=False):
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        out[:, TERRAINS.index("field")] = 12.0           # every square read as a field ...
        out[0, TERRAINS.index("castle")] = 14.0          # ... but the first, the castle
        out[:, len(TERRAINS)] = 12.0
        return out

    monkeypatch.setattr(reader.classifier, "logits", logits)
    # the stub reads by a square's place in the batch: no second reading of the grey (pale,
    # glare-like) bare square by itself (vision.read.glare, tested on its own); the flat
    # squares hold no dark pixel, so their glare share is their darkest channel: no glare flag
    monkeypatch.setitem(reader.cfg["deglare"], "enabled", False)
    monkeypatch.setitem(reader.cfg["review"], "flag_glare", 0)
    # flat squares of one colour look like no tile the network learned from (vision.read.novelty,
    # tested on its own): only the table's likeness is asked about here
    monkeypatch.setitem(reader.cfg["novelty"], "flag_above", 0)
    rng = np.random.default_rng(4)
    image = np.clip(rng.normal(128, 4, (700, 900, 3)), 0, 255).astype(np.uint8)
    image[200:500, 300:600] = (40, 170, 60)
    image[300:400, 500:600] = np.clip(rng.normal(128, 4, (100, 100, 3)), 0, 255)   # bare
    corners = np.float32([[300, 200], [600, 200], [600, 500], [300, 500]])
    reading = reader.read(image, corners=corners, rows=3, cols=3)
    assert reading.cells[1][2]["terrain"] == "field" and reading.review == [[1, 2]]
    assert "looks like the table" in str(reading.reasons["1,2"][0])
    monkeypatch.setitem(reader.rcfg, "flag_tile_like_table", 0.0)
    assert reader.read(image, corners=corners, rows=3, cols=3).review == []
    # by hand: a bare square (distance 0.2) read as a tile is flagged, table read as table not
    from vision.read.classify import SquareReading
    grid = [[SquareReading("lake", 0, 1.0), SquareReading("empty", 0, 1.0)]]
    assert tiles_like_table(grid, np.array([[0.2, 0.1]]), {"flag_tile_like_table": 1.0}) == {(0, 0)}
    assert tiles_like_table(grid, np.array([[1.2, 0.1]]), {"flag_tile_like_table": 1.0}) == set()


def test_a_find_holding_no_domino_is_no_kingdom(reader, monkeypatch):
    """A kingdom is the castle plus dominoes: a find read as fewer than two domino halves (a
    loose tile, a mat's printed grid) is reported as no kingdom, unless the caller placed it."""
    from vision import PhotoError
    from vision.read.classify import SquareReading
    image = np.full((300, 400, 3), 90, np.uint8)

    def found_and_read(*terrains):
        n = len(terrains)
        found = Candidate(np.float32([[0, 0], [60 * n, 0], [60 * n, 60], [0, 60]]), 1, n, 5)
        monkeypatch.setattr(reader, "find", lambda img, size=None: found)
        monkeypatch.setattr(reader.classifier, "logits", lambda crops, **kw: np.zeros((len(crops), 12)))
        monkeypatch.setattr(reader.classifier, "read_logits", lambda logits, rows, cols: [
            [SquareReading(t, 0, 0.9) for t in terrains]])
        return found.corners

    for terrains in (("castle", "field"), ("empty", "castle", "empty"), ("empty", "empty")):
        found_and_read(*terrains)
        with pytest.raises(PhotoError, match="no kingdom found"):
            reader.read(image)
    found_and_read("castle", "field", "field")
    reading = reader.read(image)
    assert [c["terrain"] for c in reading.cells[0][:3]] == ["castle", "field", "field"]
    corners = found_and_read("castle", "field")
    reading = reader.read(image, corners=corners, rows=1, cols=2)
    assert [c["terrain"] for c in reading.cells[0][:2]] == ["castle", "field"]


@pytest.mark.slow
def test_generated_tables_without_a_kingdom(reader):
    """Tables with clutter, loose dominoes and cutting mats but no kingdom: 'no kingdom found'
    for nearly all: before the two-domino-halves rule, 3 of these 12 gave a small "kingdom"."""
    from vision import PhotoError
    from vision.lab.scenes import synth

    board, mask = np.full((500, 500, 3), 128, np.uint8), np.zeros((500, 500), np.uint8)
    found = []
    for k in range(12):
        scene, _ = synth.make_scene(board, np.random.default_rng(9000 + k), width=1600,
                                    board_mask=mask)
        try:
            reader.read(scene)
        except PhotoError:
            continue
        found.append(9000 + k)
    assert len(found) <= 1, found


def test_find_tries_the_next_outline_when_one_holds_no_kingdom(reader, monkeypatch):
    """The detector's first outline holds table only (read as empty): the reader goes on to
    the next outline it found and reads the kingdom there; with none holding one, "no kingdom"
    (each outline judged by what the square classifier reads, not by the blob)."""
    from vision import PhotoError
    from vision.find import detect
    from vision.read.labels import TERRAINS

    image = np.full((400, 800, 3), 128, np.uint8)
    image[100:300, 500:700] = (40, 160, 60)          # the kingdom: 2x2 squares of 100 px

    def logits(crops, first_turn_only=False):
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        for i, crop in enumerate(crops):
            mid = crop[crop.shape[0] // 2, crop.shape[1] // 2].astype(int)
            green = mid[1] - mid[0] > 50
            out[i, TERRAINS.index("field" if green else "empty")] = 9.0
            out[i, TERRAINS.index("castle")] = 8.5 if green and i == 0 else 0.0
            out[i, len(TERRAINS)] = 9.0                # no crowns
        return out

    table = Outline(np.float32([[100, 100], [300, 100], [300, 300], [100, 300]]), 2, 2, 0.9)
    kingdom = Outline(np.float32([[500, 100], [700, 100], [700, 300], [500, 300]]), 2, 2, 0.5)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [table, kingdom]))
    found = reader.find(image)
    assert np.allclose(found.corners, kingdom.corners) and (found.rows, found.cols) == (2, 2)
    reading = reader.read(image)
    assert [c["terrain"] for c in reading.cells[0][:2] + reading.cells[1][:2]].count("field") >= 2
    # an outline reaching one row of table too far: that row leaves, and the reading says so
    longer = Outline(np.float32([[500, 100], [700, 100], [700, 400], [500, 400]]), 3, 2, 0.5)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [longer]))
    reading = reader.read(image)
    assert (reading.rows, reading.cols) == (2, 2)
    assert np.allclose(reading.corners, kingdom.corners, atol=0.5)
    assert any("held 3x2 squares" in w for w in reading.warnings)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [table, table]))
    with pytest.raises(PhotoError, match="no kingdom found"):
        reader.find(image)


def test_find_reads_on_past_an_unsure_castle_and_keeps_the_likeliest(reader, monkeypatch):
    """Two places that each hold tiles: the detector's first (a box lid, say) reads a castle
    at odds under [reader] sure_castle_odds, so the next outline is read too and the one with
    the likelier castle is the kingdom; a sure castle first ends the search there."""
    # the search itself: no second tile network's search after it (test_second_net.py)
    monkeypatch.setitem(reader.cfg["reader"], "second_tile_net", "")
    from vision.find import detect
    from vision.read.labels import TERRAINS

    image = np.full((400, 800, 3), 128, np.uint8)
    image[100:300, 100:300] = (40, 160, 60)          # the lid: tiles, an unsure castle
    image[100:300, 500:700] = (60, 160, 40)          # the kingdom: tiles and a sure castle
    reads = []

    def logits(crops, first_turn_only=False):
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        for i, crop in enumerate(crops):
            b, g, r = crop[crop.shape[0] // 2, crop.shape[1] // 2].astype(int)
            out[i, TERRAINS.index("field" if g - min(b, r) > 50 else "empty")] = 9.0
            if i == 0 and g - min(b, r) > 50:           # the castle odds: e^c / (e^c + e^9)
                out[i, TERRAINS.index("castle")] = 11.0 if b > r else 8.0
            out[i, len(TERRAINS)] = 9.0
        b, _, r = crops[0][crops.shape[1] // 2, crops.shape[2] // 2].astype(int)
        reads.append("kingdom" if b > r else "lid")
        return out

    lid = Outline(np.float32([[100, 100], [300, 100], [300, 300], [100, 300]]), 2, 2, 0.9)
    kingdom = Outline(np.float32([[500, 100], [700, 100], [700, 300], [500, 300]]), 2, 2, 0.5)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [lid, kingdom]))
    assert np.allclose(reader.find(image).corners, kingdom.corners)
    assert reads == ["lid", "kingdom"]
    reads.clear()
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [kingdom, lid]))
    assert np.allclose(reader.find(image).corners, kingdom.corners)
    assert reads == ["kingdom"]                       # sure at once: the lid is never read
    # the lid alone is still a kingdom (its castle passes [reader] min_castle_odds)
    reads.clear()
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter([lid]))
    assert np.allclose(reader.find(image).corners, lid.corners)


def test_among_unsure_castles_a_frame_wins_over_a_likelier_castle_short_of_one(reader,
                                                                            monkeypatch):
    """A 2x2 patch of tiles with an unsure castle (odds 0.27) and a 5x5 kingdom whose castle
    reads less likely still (0.18): neither ends the search, and the 5x5 frame is the kingdom."""
    from vision.find import detect
    from vision.read.labels import TERRAINS

    image = np.full((400, 800, 3), 128, np.uint8)
    image[100:300, 100:300] = (40, 160, 60)          # the patch: 2x2 squares of 100 px
    image[50:350, 450:750] = (60, 160, 40)           # the kingdom: 5x5 squares of 60 px

    def logits(crops, first_turn_only=False):
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        for i, crop in enumerate(crops):
            b, g, r = crop[crop.shape[0] // 2, crop.shape[1] // 2].astype(int)
            out[i, TERRAINS.index("field" if g - min(b, r) > 50 else "empty")] = 9.0
            if i == 0 and g - min(b, r) > 50:
                out[i, TERRAINS.index("castle")] = 7.5 if b > r else 8.0
            out[i, len(TERRAINS)] = 9.0
        return out

    patch = Outline(np.float32([[100, 100], [300, 100], [300, 300], [100, 300]]), 2, 2, 0.9)
    kingdom = Outline(np.float32([[450, 50], [750, 50], [750, 350], [450, 350]]), 5, 5, 0.5)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    for order in ([patch, kingdom], [kingdom, patch]):
        monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, _o=order, **kw:
                            iter(_o))
        found = reader.find(image)
        assert (found.rows, found.cols) == (5, 5) and np.allclose(found.corners, kingdom.corners)


@pytest.mark.parametrize("by_crisp", [True, False])
def test_among_unsure_castles_the_crisper_window_wins(reader, monkeypatch, by_crisp):
    """No window holds a sure castle (a 3D castle seen from the side): a kingdom read crisply
    with its castle at odds 0.18 and a window of the same size read blurred (cut across
    tiles, or table and clutter) whose likeliest castle is at 0.27. With [reader]
    unsure_by_crisp the crisp one is the kingdom, in either order; without, the likelier
    castle (a network's castle odds under 0.5 are noise: a held-out 5x5 lost to a 7x7 of
    table at 0.12 against 0.10)."""
    from vision.find import detect
    from vision.read.labels import TERRAINS

    image = np.full((400, 800, 3), 128, np.uint8)
    image[100:300, 100:300] = (40, 160, 60)          # blurred: field or forest
    image[100:300, 500:700] = (60, 160, 40)          # crisp: field

    def logits(crops, first_turn_only=False):
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        for i, crop in enumerate(crops):
            b, g, r = crop[crop.shape[0] // 2, crop.shape[1] // 2].astype(int)
            if g - min(b, r) <= 50:
                out[i, TERRAINS.index("empty")] = 9.0
            elif b > r:
                out[i, TERRAINS.index("field")] = 9.0
                out[i, TERRAINS.index("castle")] = 7.5 if i == 0 else 0.0
            else:
                out[i, TERRAINS.index("field")], out[i, TERRAINS.index("forest")] = 9.0, 8.5
                out[i, TERRAINS.index("castle")] = 8.0 if i == 0 else 0.0
            out[i, len(TERRAINS)] = 9.0
        return out

    blurred = Outline(np.float32([[100, 100], [300, 100], [300, 300], [100, 300]]), 2, 2, 0.9)
    crisp = Outline(np.float32([[500, 100], [700, 100], [700, 300], [500, 300]]), 2, 2, 0.9)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setitem(reader.cfg["reader"], "unsure_by_crisp", by_crisp)
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)
    for order in ([blurred, crisp], [crisp, blurred]):
        monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, _o=order, **kw:
                            iter(_o))
        found = reader.find(image)
        assert np.allclose(found.corners, (crisp if by_crisp else blurred).corners)


@pytest.mark.parametrize("blurred", [False, True])
def test_past_a_sure_castle_short_of_a_frame_outlines_over_it_are_read(reader, monkeypatch,
                                                                       blurred):
    """The detector's first outline is a 2x2 piece of a 5x5 kingdom (a tile-coloured table cut
    it), counted unsurely, with a sure castle: the outlines over it are read too ([reader]
    past_short_castle) and the 5x5 frame wins, unless its squares read more blurred than the
    piece's; an outline elsewhere (a box lid) is not read; with the piece's count sure, or
    past_short_castle 0, the piece ends the search."""
    # the search itself: no second tile network's search after it (test_second_net.py)
    monkeypatch.setitem(reader.cfg["reader"], "second_tile_net", "")
    from vision.find import detect
    from vision.read.labels import TERRAINS

    image = np.full((400, 800, 3), 128, np.uint8)
    image[100:300, 100:300] = (40, 160, 60)          # the lid
    image[50:350, 450:750] = (60, 160, 40)           # the kingdom: 5x5 squares of 60 px
    reads = []

    def logits(crops, first_turn_only=False):
        b, _, r = crops[0][crops.shape[1] // 2, crops.shape[2] // 2].astype(int)
        reads.append("lid" if b < r else f"{len(crops)} squares")
        sure = 3.0 if blurred and len(crops) >= 25 else 9.0
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        for i, crop in enumerate(crops):
            b, g, r = crop[crop.shape[0] // 2, crop.shape[1] // 2].astype(int)
            out[i, TERRAINS.index("field" if g - min(b, r) > 50 else "empty")] = sure
            if i == 0 and g - min(b, r) > 50:
                out[i, TERRAINS.index("castle")] = sure + 2.0
            out[i, len(TERRAINS)] = 9.0
        return out

    piece = Outline(np.float32([[450, 50], [570, 50], [570, 170], [450, 170]]), 2, 2, 0.5)
    lid = Outline(np.float32([[100, 100], [300, 100], [300, 300], [100, 300]]), 2, 2, 0.8)
    kingdom = Outline(np.float32([[450, 50], [750, 50], [750, 350], [450, 350]]), 5, 5, 0.5)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [piece, lid, kingdom]))
    found = reader.find(image)
    assert "lid" not in reads and reads[0] == "4 squares" and "25 squares" in reads
    want = piece if blurred else kingdom
    assert (found.rows, found.cols) == (want.rows, want.cols) and np.allclose(found.corners, want.corners)
    # the detector sure of the piece's count (a half-built kingdom): the search ends there
    reads.clear()
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [replace(piece, confidence=0.95), lid, kingdom]))
    found = reader.find(image)
    assert reads == ["4 squares"] and (found.rows, found.cols) == (2, 2)
    reads.clear()
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [piece, lid, kingdom]))
    monkeypatch.setitem(reader.cfg["reader"], "past_short_castle", 0)
    found = reader.find(image)
    assert reads == ["4 squares"] and (found.rows, found.cols) == (2, 2)


def _tiles_and_lid():
    """A photo of a 5x5 kingdom (squares of 60 px at (450, 50), each its own colour) and a box
    lid elsewhere, and a stand-in classifier that reads a crop whose middle is one colour
    crisply (table or field), one across tiles blurred, a castle in each window's first
    square; ``reads`` lists what was read ("lid" or "N squares")."""
    from vision.read.labels import TERRAINS

    image = np.full((400, 800, 3), 128, np.uint8)
    image[100:300, 100:300] = (40, 160, 60)          # the lid
    rng = np.random.default_rng(3)
    for r in range(5):
        for c in range(5):
            image[50 + 60 * r:110 + 60 * r, 450 + 60 * c:510 + 60 * c] = (
                int(rng.integers(0, 100)), int(rng.integers(150, 256)), int(rng.integers(100, 256)))
    reads = []

    def logits(crops, first_turn_only=False):
        b, _, r = crops[0][crops.shape[1] // 2, crops.shape[2] // 2].astype(int)
        reads.append("lid" if b < 50 and r < 70 else f"{len(crops)} squares")
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        for i, crop in enumerate(crops):
            h, w = crop.shape[:2]
            middle = crop[h // 3:2 * h // 3, w // 3:2 * w // 3].reshape(-1, 3).astype(int)
            grey = np.abs(middle - 128).max() < 10
            one = np.ptp(middle, axis=0).max() < 10
            if grey:
                out[i, TERRAINS.index("empty")] = 9.0
            elif one:
                out[i, TERRAINS.index("field")] = 9.0
            else:                                     # a crop across tiles: blurred
                out[i, TERRAINS.index("field")], out[i, TERRAINS.index("forest")] = 2.0, 1.5
            if i == 0 and not grey:
                out[i, TERRAINS.index("castle")] = out[i].max() + 2.0
            out[i, len(TERRAINS)] = 9.0
        return out

    return image, logits, reads


_KINGDOM = np.float32([[450, 50], [750, 50], [750, 350], [450, 350]])
_LID = Outline(np.float32([[100, 100], [300, 100], [300, 300], [100, 300]]), 5, 5, 0.8)


def test_past_a_blurred_frame_the_crispest_outline_over_it_wins(reader, monkeypatch):
    """The detector's first outline is a 5x5 frame half a square off the kingdom (its crops
    straddle two tiles each: blurred) with a sure castle: the outlines over it that can
    frame a 5x5 are read too ([reader] recheck_crisp_below, recheck_more) and the crisp one
    on the tiles' own grid wins; a box lid elsewhere and a 1x1 outline are not read. With the
    recheck off, the first frame ends the search."""
    from vision.find import detect

    image, logits, reads = _tiles_and_lid()
    off = Outline(_KINGDOM + np.float32([30, 0]), 5, 5, 0.5)
    small = Outline(np.float32([[510, 110], [570, 110], [570, 170], [510, 170]]), 1, 1, 0.9)
    kingdom = Outline(_KINGDOM, 5, 5, 0.9)
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)  # the outlines alone
    monkeypatch.setitem(reader.cfg["reader"], "other_frame_below", float("-inf"))  # ... as cut
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [off, _LID, small, kingdom]))
    found = reader.find(image)
    assert reads == ["25 squares", "25 squares"]
    assert (found.rows, found.cols) == (5, 5) and np.allclose(found.corners, kingdom.corners)
    reads.clear()
    monkeypatch.setitem(reader.cfg["reader"], "recheck_crisp_below", float("-inf"))
    found = reader.find(image)
    assert reads == ["25 squares"] and np.allclose(found.corners, off.corners)


def test_the_whole_table_search_is_read_when_the_outlines_convince_not(reader, monkeypatch):
    """The detector's only outline is a 5x5 half a square off the kingdom (blurred, castle
    sure): the whole-table search's kingdoms ([reader] table_fallback; here the kingdom's own
    crisp 5x5) are read and the crisper wins. A crisp 5x5 with a sure castle from the
    detector is not searched past, nor a crisp piece of it from a sure count; no outline at
    all is, and a crisp piece from an unsure count; a kingdom of the table search that reads
    blurred ([reader] table_fallback_crisp) is taken only when crisper than the outlines'
    best by table_fallback_margin."""
    from vision import PhotoError
    from vision.find import detect
    from vision.find import whole_table as table
    from vision.find.frame import crispness

    image, logits, reads = _tiles_and_lid()
    searched = []

    def kingdoms(img, cfg, t, window, reading):
        searched.append(True)
        framed = window(_KINGDOM, 5, 5)
        return [Kingdom(None, framed, None, crispness(framed.logits, t))]

    off = Outline(_KINGDOM + np.float32([30, 0]), 5, 5, 0.5)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setattr(table, "read_kingdoms", kingdoms)
    monkeypatch.setitem(reader.cfg["reader"], "recheck_more", 0)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter([off]))
    found = reader.find(image)
    assert searched and np.allclose(found.corners, _KINGDOM)
    searched.clear()
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [Outline(_KINGDOM, 5, 5, 0.9)]))
    found = reader.find(image)
    assert not searched and np.allclose(found.corners, _KINGDOM)

    def nothing(img, cfg, size=None, **kw):
        raise PhotoError("no kingdom found")
        yield

    monkeypatch.setattr(detect, "candidates", nothing)
    assert np.allclose(reader.find(image).corners, _KINGDOM) and searched
    # a crisp piece short of a frame with a sure castle: searched past when the detector was
    # unsure of its count ([reader] past_short_count_below), not when it was sure
    piece = np.float32([[450, 50], [630, 50], [630, 170], [450, 170]])
    for conf, search in ((0.5, True), (0.95, False)):
        searched.clear()
        monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, _c=conf, **kw:
                            iter([Outline(piece, 2, 3, _c)]))
        found = reader.find(image)
        assert bool(searched) == search
        assert np.allclose(found.corners, _KINGDOM if search else piece)
    # a kingdom of the table search that reads under [reader] table_fallback_crisp is taken
    # only when crisper than the detector's blurred frame by table_fallback_margin (camo
    # cloth: the kingdom's 5x5 at -0.137 against a 2x6 strip at -0.265)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter([off]))
    off_crisp = crispness(reader.framed(image, off.corners, off.rows, off.cols).logits, reader.classifier.t_terrain)
    least = float(reader.cfg["reader"]["table_fallback_crisp"])
    margin = float(reader.cfg["reader"]["table_fallback_margin"])
    assert off_crisp + 2 * margin < least
    for read_as, taken in ((off_crisp + margin / 2, False), (off_crisp + 2 * margin, True)):
        monkeypatch.setattr(table, "read_kingdoms", lambda img, cfg, t, window, reading,
                            _c=read_as: [Kingdom(None, window(_KINGDOM, 5, 5), None, _c)])
        assert np.allclose(reader.find(image).corners, _KINGDOM if taken else off.corners)
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)
    monkeypatch.setattr(detect, "candidates", nothing)
    with pytest.raises(PhotoError):
        reader.find(image)


def test_a_kingdom_of_the_table_search_comes_with_no_count_of_the_detectors(reader, monkeypatch):
    """The detector's count confidence goes with its own window to the second tile network's
    turn (``Objective.doubts``: a window short of a frame from a sure count is a half-built
    kingdom, the second network is not asked about it). A kingdom of the whole-table search
    that replaces that window was never counted by the detector: it goes with 0, whatever the
    count of the window it replaced."""
    from vision.find import detect
    from vision.find import whole_table as table
    from vision.find.frame import crispness

    image, logits, _ = _tiles_and_lid()
    piece = np.float32([[450, 50], [630, 50], [630, 170], [450, 170]])
    shifted = Outline(piece + np.float32([30, 0]), 2, 3, 0.95)   # blurred, from a sure count
    told = []

    def doubts(self, found, count):
        told.append(count)
        return False

    monkeypatch.setattr(Objective, "doubts", doubts)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setitem(reader.cfg["reader"], "recheck_more", 0)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter([shifted]))
    for search_finds in (False, True):
        def kingdoms(img, cfg, t, window, reading, _finds=search_finds):
            if not _finds:
                return []
            framed = window(piece, 2, 3)
            return [Kingdom(None, framed, None, crispness(framed.logits, t))]

        monkeypatch.setattr(table, "read_kingdoms", kingdoms)
        told.clear()
        found = reader.find(image)
        assert np.allclose(found.corners, piece) == search_finds
        assert told == [0.0 if search_finds else 0.95]


def test_against_a_blurred_window_a_crisp_frame_of_the_table_search_ranks_as_sure(
        reader, monkeypatch):
    """The detector's only outline is a 5x5 half a square off the kingdom (blurred, castle
    sure); the whole-table search's kingdom is the kingdom's own crisp 5x5 with its castle
    read unsure (a meeple for a castle, dev 135938 taken from farther away). With [reader]
    table_crisp_frame it ranks as a sure castle and wins on its crispness; without, the sure
    castle in the blurred window wins, as it does against the same 5x5 read blurred."""
    from vision.find import detect
    from vision.find import whole_table as table
    from vision.find.frame import crispness, terrain_odds
    from vision.read.labels import TERRAINS

    image, logits, _ = _tiles_and_lid()
    off = Outline(_KINGDOM + np.float32([30, 0]), 5, 5, 0.5)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setitem(reader.cfg["reader"], "recheck_more", 0)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter([off]))
    t = reader.classifier.t_terrain
    least = float(reader.cfg["reader"]["table_fallback_crisp"])
    off_crisp = crispness(reader.framed(image, off.corners, off.rows, off.cols).logits, t)
    margin = float(reader.cfg["reader"]["table_fallback_margin"])
    assert off_crisp < least

    def kingdoms(img, cfg, t, window, reading, blur=0.0):
        framed = window(_KINGDOM, 5, 5)
        logits = framed.logits.copy()
        logits[0, TERRAINS.index("castle")] = logits[0].max() - 2.0
        logits[:, TERRAINS.index("forest")] += blur
        return [Kingdom(None, replace(framed, logits=logits), None, crispness(logits, t))]

    def own(corners, rows, cols, warnings=(), framing=None):    # the reader's own window
        return reader.framed(image, corners, rows, cols)

    assert crispness(kingdoms(image, None, t, own, None)[0].window.logits, t) >= least
    assert terrain_odds(kingdoms(image, None, t, own, None)[0].window.logits, "castle", t).max() < \
        float(reader.cfg["reader"]["sure_castle_odds"])
    for on, blur, wins in ((True, 0.0, True), (False, 0.0, False), (True, 7.5, False)):
        monkeypatch.setitem(reader.cfg["reader"], "table_crisp_frame", on)
        monkeypatch.setattr(table, "read_kingdoms", lambda img, cfg, t, window, reading, _b=blur:
                            kingdoms(img, cfg, t, window, reading, _b))
        if blur:
            assert off_crisp + 2 * margin < kingdoms(image, None, t, own, None, blur)[0].crisp < least
        found = reader.find(image)
        assert np.allclose(found.corners, _KINGDOM if wins else off.corners), (on, blur)


def test_the_table_searchs_kingdom_wins_a_tie_only_by_a_margin(reader, monkeypatch):
    """The detector's only outline is a 2x3 piece of the kingdom from an unsure count (castle
    sure: the search is unconvinced), and the whole-table search's kingdom is another piece
    short of a frame with a sure castle, the same key: it wins only when its squares read
    crisper by [reader] table_fallback_margin (a window padded with table reads crisper for
    its sure bare squares)."""
    from vision.find import detect
    from vision.find import whole_table as table
    from vision.find.frame import crispness

    image, logits, _ = _tiles_and_lid()
    piece = Outline(np.float32([[450, 50], [630, 50], [630, 170], [450, 170]]), 2, 3, 0.5)
    other = np.float32([[450, 50], [630, 50], [630, 230], [450, 230]])      # 3x3
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter([piece]))
    outlines = crispness(reader.framed(image, piece.corners, piece.rows, piece.cols).logits, reader.classifier.t_terrain)
    margin = float(reader.cfg["reader"]["table_fallback_margin"])
    assert margin > 0 and outlines >= float(reader.cfg["reader"]["table_fallback_crisp"])
    for more, wins in ((margin / 2, False), (margin * 2, True)):
        monkeypatch.setattr(table, "read_kingdoms", lambda img, cfg, t, window, reading,
                            _m=more: [Kingdom(None, window(other, 3, 3), None, outlines + _m)])
        found = reader.find(image)
        assert np.allclose(found.corners, other if wins else piece.corners)


def test_past_a_blurred_7x7_a_crisp_5x5_wins_only_by_a_wider_margin(reader, monkeypatch):
    """The first outline cuts the 5x5 kingdom 7x7 (every crop across tiles: a blurred 7x7
    frame, castle sure); the next is the kingdom's own 5x5 outline, crisp. A smaller frame
    wins past a blurred one only when crisper by [reader] recheck_smaller_margin as well:
    a 5x5 piece of a real 7x7 reads as crisply as the whole."""
    from vision.find import detect

    image, logits, reads = _tiles_and_lid()
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)  # the outlines alone
    monkeypatch.setitem(reader.cfg["reader"], "other_frame_below", float("-inf"))  # ... as cut
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [Outline(_KINGDOM, 7, 7, 0.5), Outline(_KINGDOM, 5, 5, 0.9)]))
    found = reader.find(image)
    assert reads == ["49 squares", "25 squares"] and (found.rows, found.cols) == (5, 5)
    reads.clear()
    monkeypatch.setitem(reader.cfg["reader"], "recheck_smaller_margin", 10.0)
    found = reader.find(image)
    assert reads == ["49 squares", "25 squares"] and (found.rows, found.cols) == (7, 7)


def test_past_a_blurred_window_a_crisp_frame_wins(reader, monkeypatch):
    """The first outline cuts the 5x5 kingdom 7x7 with a count the detector was sure of (a
    blurred 7x7 window, castle sure, a frame: a crisp one would end the search); the
    kingdom's own 5x5 outline is read too and wins. With the recheck off, the 7x7 ends the
    search. Cut 6x6 (no frame size), the sure count does not end the search either
    (Objective.sure_count): the 5x5 is read and wins, recheck or not."""
    from vision.find import detect

    image, logits, reads = _tiles_and_lid()
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)  # the outlines alone
    monkeypatch.setitem(reader.cfg["reader"], "other_frame_below", float("-inf"))  # ... as cut
    monkeypatch.setattr(reader.classifier, "logits", logits)
    for n in (7, 6):
        monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, _n=n, **kw: iter(
            [Outline(_KINGDOM, _n, _n, 0.95), _LID, Outline(_KINGDOM, 5, 5, 0.9)]))
        for recheck in (-0.05, float("-inf")):
            reads.clear()
            monkeypatch.setitem(reader.cfg["reader"], "recheck_crisp_below", recheck)
            found = reader.find(image)
            if n == 7 and recheck == float("-inf"):
                assert reads == ["49 squares"] and (found.rows, found.cols) == (7, 7)
            else:
                assert reads == [f"{n * n} squares", "25 squares"]
                assert (found.rows, found.cols) == (5, 5)


def test_a_blurred_piece_with_a_sure_castle_does_not_beat_a_crisp_frame(reader, monkeypatch):
    """The kingdom's own 5x5 outline reads crisply, its castle unsure (washed by glare); a later
    outline cuts a 3x4 piece of it half a square off (blurred) where a square reads as a sure
    castle. Against the 5x5 frame already read, the blurred piece's castle is not taken as
    sure ([reader] short_sure_crisp) and the 5x5 is the kingdom; with the rule off, the piece
    wins on its sure castle."""
    # the search itself: no second tile network's search after it (test_second_net.py)
    monkeypatch.setitem(reader.cfg["reader"], "second_tile_net", "")
    from vision.find import detect
    from vision.read.labels import TERRAINS

    image, crisp_logits, reads = _tiles_and_lid()

    def logits(crops, first_turn_only=False):
        out = crisp_logits(crops, first_turn_only)
        if len(crops) == 25:                         # the 5x5: its castle at odds of about 0.1
            out[0, TERRAINS.index("castle")] = out[0].max() - 2.0
        return out

    piece = Outline(_KINGDOM[:1] + np.float32([[30, 30], [210, 30], [210, 270], [30, 270]]),
                    4, 3, 0.5)
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)  # the outlines alone
    # the stand-in's flat squares have no dark pixel, so they look washed by glare: an unsure
    # castle would have them read again with the glare taken off (tested in test_deglare)
    monkeypatch.setitem(reader.cfg["deglare"], "enabled", False)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [Outline(_KINGDOM, 5, 5, 0.9), piece]))
    found = reader.find(image)
    assert reads == ["25 squares", "12 squares"] and (found.rows, found.cols) == (5, 5)
    reads.clear()
    monkeypatch.setitem(reader.cfg["reader"], "short_sure_crisp", float("-inf"))
    found = reader.find(image)
    assert reads == ["25 squares", "12 squares"] and (found.rows, found.cols) == (4, 3)


@pytest.mark.parametrize("kind", ["lattice", "blob", "seams"])
@pytest.mark.parametrize("lattice_first", [True, False])
def test_find_reads_the_crisper_of_the_lattice_and_the_outlines_own_grid(reader, monkeypatch,
                                                                          lattice_first, kind):
    """When the seams' lattice moved the detector's grid (or the vanishing points moved the
    blob's own quadrilateral: ``kind`` "blob"; or the seams' directions gave another
    quadrilateral: "seams"), both grids are read and the one whose squares read crisply (cut
    on the tiles' own lines) wins over the one that cuts tiles; the blob's quadrilateral must
    read crisper by [detect] blob_quad_margin, the seams' by seam_crisp_margin."""
    from vision.find import detect
    from vision.read.labels import TERRAINS

    image = np.full((600, 800, 3), 128, np.uint8)
    rng = np.random.default_rng(1)
    for r in range(3):
        for c in range(3):   # 3x3 squares of 100 px, each its own colour, no two alike
            image[150 + 100 * r:250 + 100 * r, 250 + 100 * c:350 + 100 * c] = rng.integers(
                0, 100, 3) + (0, 150, 0)

    reads = []

    def logits(crops, first_turn_only=False):
        reads.append(first_turn_only)
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        for i, crop in enumerate(crops):
            h, w = crop.shape[:2]
            centre = crop[h // 2 - 12:h // 2 + 12, w // 2 - 12:w // 2 + 12].reshape(-1, 3)
            spread = float(centre.astype(float).std(0).max())
            sure = 9.0 if spread < 5 else 1.0          # a square cut across two tiles: unsure
            out[i, TERRAINS.index("field")] = sure
            out[i, TERRAINS.index("castle")] = sure - 0.5 if i == 4 else 0.0
            out[i, len(TERRAINS)] = 9.0
        return out

    right = np.float32([[250, 150], [550, 150], [550, 450], [250, 450]])
    shifted = right + np.float32([45, 40])
    lattice, own = (shifted, right) if not lattice_first else (right, shifted)
    monkeypatch.setattr(reader.classifier, "logits", logits)
    other = (Grid(own, 3, 3, kind),)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [Outline(lattice, 3, 3, 0.9, (), other)]))
    found = reader.find(image)
    assert np.allclose(found.corners, right, atol=1.0)
    # both grids compared on the squares as cut, the winner alone read in full
    assert reads == [True, True, False]
    monkeypatch.setitem(reader.cfg["detect"], "blob_quad_margin", 10.0)
    monkeypatch.setitem(reader.cfg["detect"], "seam_crisp_margin", 10.0)
    found = reader.find(image)
    keep = lattice if kind in ("blob", "seams") else right
    assert np.allclose(found.corners, keep, atol=1.0)


@pytest.mark.slow
@pytest.mark.parametrize("scale", [1.0, 0.6])
def test_a_kingdom_beside_another_is_framed_whatever_the_photos_size(reader, scale):
    """The dev phone photo of a 5x5 kingdom seen steeply on wood, a second kingdom touching
    its tile blob (the dev photo most like the held-out photos' hardest failures): at its own
    size and shrunk to 0.6, the outline the reader keeps lies on the kingdom. At 0.6 the first
    outline with a sure castle was a 3x5 grown two rows into the table, its squares read
    blurred; at its own size a 5x5 0.18 of a side off."""
    from vision.find.detect import corner_error
    from vision.lab.datasets import load_phone

    root = shared_path("datasets", "phone-photos")
    photo = [p for p in load_phone(root.parent) if p.name.endswith("20201102_193730.jpg")][0]
    image = cv2.imread(str(photo.path))
    if scale != 1.0:
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    found = reader.find(image)
    assert (found.rows, found.cols) == (5, 5)
    err = corner_error(np.asarray(found.corners, float) / scale,
                       np.asarray(photo.corners, float), any_first=True)
    assert err < 0.12


def test_a_column_of_table_read_surely_as_tiles_leaves_a_window_over_a_frame(reader,
                                                                            monkeypatch):
    """The detector's grid is 5x6: a 5x5 kingdom and a column of the grey table beside it,
    which the classifier reads as fields so surely that vision.read.holes cannot make it table.
    The column looks like the table around the window: it leaves it ([frame]
    trim_like_table) and the window is the kingdom's 5x5; with the setting off it stays 5x6.
    A 5x5 window (no longer than the smallest frame: it may be a piece of a kingdom, whose
    ring is tiles) keeps such a column."""
    from vision.read.labels import TERRAINS

    square, pad = 60, 3
    image = np.full(((5 + 2 * pad) * square,) * 2 + (3,), 128, np.uint8)
    rng = np.random.default_rng(1)
    for r in range(5):
        for c in range(5):
            y, x = (pad + r) * square, (pad + c) * square
            image[y:y + square, x:x + square] = rng.integers(0, 256, 3) * [1, 0, 1] + [0, 200, 0]

    def logits(crops, first_turn_only=False):
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        out[:, TERRAINS.index("field")] = 30.0
        out[:, len(TERRAINS)] = 9.0
        return out

    monkeypatch.setattr(reader.classifier, "logits", logits)
    x0, y0 = pad * square, pad * square
    grid = np.float32([[x0, y0], [x0 + 6 * square, y0], [x0 + 6 * square, y0 + 5 * square],
                       [x0, y0 + 5 * square]])
    found = reader.framed(image, grid, 5, 6)
    assert (found.rows, found.cols) == (5, 5) and len(found.logits) == 25
    assert np.allclose(found.corners[1], [x0 + 5 * square, y0], atol=1.0)
    assert any("5x5" in w for w in found.warnings)
    cfg = {k: dict(v) for k, v in reader.cfg.items()}
    cfg["frame"]["trim_like_table"] = 0
    off = reader.framed(image, grid, 5, 6, cfg=cfg)
    assert (off.rows, off.cols) == (5, 6)
    # four of the kingdom's columns and the table column: a 5x5 window keeps the column
    piece = np.float32([[x0 + square, y0], [x0 + 6 * square, y0],
                        [x0 + 6 * square, y0 + 5 * square], [x0 + square, y0 + 5 * square]])
    kept = reader.framed(image, piece, 5, 5)
    assert (kept.rows, kept.cols) == (5, 5) and np.allclose(kept.corners, piece, atol=1.0)


def test_a_sure_count_ends_the_search_only_for_a_window_within_a_frame(reader, monkeypatch):
    """The detector's first outline, counted surely (0.95), holds a sure castle: a 3x4 window
    or a 5x7 one (half-built kingdoms, the 5x7 as long as a 7x7 frame) ends the search there,
    but a 5x6 one (a 5x5 with a column of table read as tiles, as brown wood is read as swamp)
    does not: the 5x5 outline over it is read and, a frame, wins."""
    from vision.find import detect
    from vision.read.labels import TERRAINS

    image = np.full((400, 900, 3), 128, np.uint8)
    image[50:350, 450:750] = (60, 160, 40)           # the kingdom: 5x5 squares of 60 px

    def logits(crops, first_turn_only=False):
        out = np.zeros((len(crops), len(TERRAINS) + 4))
        for i, crop in enumerate(crops):
            b, g, r = crop[crop.shape[0] // 2, crop.shape[1] // 2].astype(int)
            # the table too, but less surely than the kingdom's squares
            out[i, TERRAINS.index("field")] = 30.0 if g - min(b, r) > 50 else 5.0
        out[0, TERRAINS.index("castle")] = 40.0
        out[:, len(TERRAINS)] = 9.0
        return out

    monkeypatch.setattr(reader.classifier, "logits", logits)
    monkeypatch.setitem(reader.cfg["frame"], "trim_like_table", 0)
    monkeypatch.setitem(reader.cfg["holes"], "enabled", False)
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)
    # a third of a square off the kingdom's own grid (the same grid is not read twice)
    wide = Outline(np.float32([[430, 50], [790, 50], [790, 350], [430, 350]]), 5, 6, 0.95)
    piece = Outline(np.float32([[450, 50], [690, 50], [690, 230], [450, 230]]), 3, 4, 0.95)
    kingdom = Outline(np.float32([[450, 50], [750, 50], [750, 350], [450, 350]]), 5, 5, 0.9)
    long = Outline(np.float32([[430, 50], [850, 50], [850, 350], [430, 350]]), 5, 7, 0.95)
    for first, want in ((wide, kingdom), (piece, piece)):
        monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, _f=first, **kw:
                            iter([_f, kingdom]))
        found = reader.find(image)
        assert (found.rows, found.cols) == (want.rows, want.cols)
        assert np.allclose(found.corners, want.corners, atol=1.0)
    # the 5x7 is read (and grown to its 7x7 frame over the table read as tiles): not the 5x5
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw:
                        iter([long, kingdom]))
    found = reader.find(image)
    assert found.cols == 7 and np.allclose(found.corners[0], [430, found.corners[0][1]], atol=1.0)


def _scripted_windows(reader, monkeypatch, windows):
    """Make ``reader.framed`` (and the quick reading of ``vision.find.frame.choose``) read each
    outline as ``windows`` says, keyed by its first corner's x: (rows, cols, field logit)
    -- the field logit sets how crisply its squares read (9: crisp; 1.2: blurred), a sure
    castle in its first square. Returns the list of outlines read in full (first x)."""
    from vision.find import frame
    from vision.read.labels import TERRAINS
    read = []

    def logits_of(x):
        rows, cols, field = windows[x]
        lg = np.zeros((rows * cols, len(TERRAINS) + 4))
        lg[:, TERRAINS.index("field")] = field
        lg[:, TERRAINS.index("forest")] = 1.0
        lg[0, TERRAINS.index("castle")] = field + 4.0
        lg[:, len(TERRAINS)] = 9.0
        return rows, cols, lg

    def framed(image, corners, rows, cols, size=None, warnings=(), cfg=None):
        x = int(round(float(np.asarray(corners)[0][0])))
        read.append(x)
        r, c, lg = logits_of(x)
        grid = reader.classifier.read_logits(lg, r, c)
        return Candidate(np.asarray(corners, np.float32), r, c, 5 if max(r, c) <= 5 else 7, (),
                         lg, grid)

    def choose(image, corners, rows, cols, classifier, cfg, size=None, first_turn_only=False):
        r, c, lg = logits_of(int(round(float(np.asarray(corners)[0][0]))))
        return np.asarray(corners, np.float32), r, c, lg

    monkeypatch.setattr(reader, "framed", framed)
    monkeypatch.setattr(frame, "choose", choose)
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)
    return read


def _quad(x0, y0, side):
    return np.float32([[x0, y0], [x0 + side, y0], [x0 + side, y0 + side], [x0, y0 + side]])


def test_past_a_blurred_piece_a_blurred_frame_does_not_end_the_search(reader, monkeypatch):
    """A 2x2 piece with a sure castle read blurred (the 3D castle outlined alone) is read
    first, and rechecked ([reader] recheck_crisp_below): the next outline over it gives a 5x5
    frame read blurred too, if less so (a row off the kingdom), which does not end the search;
    the crisp 5x5 outline read after it wins. With the recheck off the blurred frame ends it."""
    from vision.find import detect

    read = _scripted_windows(reader, monkeypatch, {100: (2, 2, 1.2), 110: (5, 5, 3.0),
                                                   140: (5, 5, 9.0)})
    outlines = [Outline(_quad(100, 100, 120), 2, 2, 0.5),    # half a square apart:
                Outline(_quad(110, 100, 300), 5, 5, 0.5),    # other grids
                Outline(_quad(140, 100, 300), 5, 5, 0.5)]
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(outlines))
    image = np.zeros((600, 600, 3), np.uint8)
    assert reader.find(image).corners[0][0] == 140 and read == [100, 110, 140]
    read.clear()
    monkeypatch.setitem(reader.cfg["reader"], "recheck_crisp_below", float("-inf"))
    assert reader.find(image).corners[0][0] == 110 and read == [100, 110]


def test_an_outline_on_a_grid_already_read_brings_its_other_grids(reader, monkeypatch):
    """The detector gives the same 5x5 outline twice, the second time with the seams'
    quadrilateral as another grid for it. The first reading is a blurred frame, so the next
    outlines over it are read (the recheck): the repeated outline is not read again for
    itself, but its new grid is, and, crisper, wins."""
    from vision.find import detect

    read = _scripted_windows(reader, monkeypatch, {100: (2, 2, 1.2), 130: (5, 5, 3.0),
                                                   160: (5, 5, 9.0)})
    seams = Grid(_quad(160, 100, 300), 5, 5, "seams")        # half a square off: another grid
    outlines = [Outline(_quad(100, 100, 120), 2, 2, 0.5),
                Outline(_quad(130, 100, 300), 5, 5, 0.5),
                Outline(_quad(130, 100, 300), 5, 5, 0.5, (), (seams,))]
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(outlines))
    monkeypatch.setitem(reader.cfg["detect"], "seam_crisp_margin", 0.0)
    found = reader.find(np.zeros((600, 600, 3), np.uint8))
    assert found.corners[0][0] == 160 and read == [100, 130, 160]
    read.clear()
    outlines[2] = outlines[1]           # no other grid: the same outline is not read twice
    found = reader.find(np.zeros((600, 600, 3), np.uint8))
    assert found.corners[0][0] == 130 and read == [100, 130]


def test_a_kingdom_on_a_cloth_the_tile_maps_take_for_tiles_is_framed_by_its_seams(reader):
    """Generated hard table 9003: a 7x7 kingdom on a green printed cloth that the tile maps
    take for tiles, so their blob is the table and their outlines frame a 5x5 of it
    (corner error 1.14 of a side, total 4 for 79, with ``[detect] seam_regions`` 0). The
    region its straight seams cross (vision.find.outline.seam_regions) is read after the tile
    maps' outlines, and its sure castle in a 7x7 frame wins."""
    from vision.find.detect import corner_error
    from vision.lab.scenes import hard_tables as tables

    scene = tables.make_hard_scene(9003, 4000, 3000)
    reading = reader.read(scene.image)
    assert (reading.size, reading.rows, reading.cols) == (7, 7, 7)
    found = np.asarray(reading.corners, np.float32).reshape(4, 2)
    assert corner_error(found, np.asarray(scene.corners, np.float32), any_first=True) < 0.1
