"""The outline given by hand: corner text, order, checks, EXIF turns, 5x5/7x7, the reading."""
import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.find import by_hand as oh
from vision.photo import files as photo_files
from vision.geometry import corner_error
from vision.read.classify import MODELS_DIR

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"
needs_model = pytest.mark.skipif(not (MODELS_DIR / "squares.onnx").exists(),
                                 reason="no trained model in models/ (run `kingdomino train`)")


def with_orientation(jpeg: bytes, orientation: int) -> bytes:
    """The JPEG with an EXIF block (APP1) holding only the orientation tag."""
    tiff = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1)
    tiff += struct.pack("<HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack("<I", 0)
    body = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + jpeg[2:]


@pytest.fixture(scope="module")
def samples():
    """The bundled sample photos with their true outlines, from the generator's fixed seeds."""
    from vision.lab.scenes import synth

    out = {}
    for name in ("kingdom-5x5", "kingdom-7x7"):
        _, truth, corners = synth.make_sample(name)
        out[name] = ((SAMPLES / f"{name}.jpg").read_bytes(), truth, np.asarray(corners, float))
    return out


@pytest.fixture(scope="module")
def reader():
    from vision import Reader

    return Reader()


def right_squares(reading, truth) -> int:
    return sum((a["terrain"], a["crowns"]) == (b["terrain"], b["crowns"])
               for ra, rb in zip(reading.cells, truth["cells"]) for a, b in zip(ra, rb))


# ---------------------------------------------------------------- text and checks

SQUARE = [[100, 100], [500, 110], [490, 520], [90, 500]]


def test_parse_corners_reads_eight_numbers_with_spaces():
    pts = oh.parse_corners(" 100,100, 500,110,490.5,520 ,90,500")
    assert pts.shape == (4, 2) and pts[2].tolist() == [490.5, 520.0]


@pytest.mark.parametrize("text, says", [
    ("", "eight numbers"),
    ("1,2,3,4,5,6,7", "got 7"),
    ("1,2,3,4,5,6,7,8,9", "got 9"),
    ("100,100,500,x,490,520,90,500", "'x'"),
    ("100,100,500,nan,490,520,90,500", "finite"),
    ("100,100,100,101,490,520,90,500", "same point"),
    ("100,100,500,100,300,150,300,500", "convex"),
    ("0,0,400,0,800,2,400,300", "flat"),
])
def test_bad_corner_text_says_how_to_fix_it(text, says):
    with pytest.raises(oh.OutlineError) as err:
        oh.parse_corners(text)
    assert says in str(err.value)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("turn", range(4))
@pytest.mark.parametrize("backwards", [False, True])
def test_any_first_corner_either_direction_gives_the_same_order(turn, backwards):
    pts = np.array(SQUARE, float)
    given = np.roll(pts[::-1] if backwards else pts, turn, axis=0)
    assert oh.order_outline(given).tolist() == oh.order_outline(pts).tolist()
    assert oh.order_outline(given)[0].tolist() == [100, 100]  # tl: the top side's left end


def test_outline_far_outside_the_photo_is_refused():
    with pytest.raises(oh.OutlineError, match="outside the photo"):
        oh.check_outline([[100, 100], [5000, 110], [4900, 520], [90, 500]], (600, 800))
    # a corner a little beyond the edge (a kingdom cut by the frame) is fine
    assert oh.check_outline([[-20, 10], [820, 0], [800, 590], [0, 610]], (600, 800)).shape == (4, 2)


# ---------------------------------------------------------------- EXIF


@pytest.mark.parametrize("orientation", range(1, 9))
def test_stored_points_land_where_the_decoder_puts_them(orientation):
    from vision.photo.files import load_image

    stored = np.full((120, 200, 3), 40, np.uint8)
    stored[18:23, 28:33] = 255  # a bright mark centred on stored (30.5, 20.5)
    ok, enc = cv2.imencode(".jpg", stored, [cv2.IMWRITE_JPEG_QUALITY, 95])
    data = with_orientation(enc.tobytes(), orientation)
    assert photo_files.exif_orientation(data) == orientation
    upright = load_image(data)
    ys, xs = np.nonzero(upright[:, :, 1] > 150)
    seen = [xs.mean() + 0.5, ys.mean() + 0.5]
    mapped = photo_files.stored_to_upright([[30.5, 20.5]], orientation, 200, 120)[0]
    assert np.allclose(mapped, seen, atol=1.0), (mapped, seen)


def test_no_exif_is_orientation_1():
    ok, enc = cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))
    assert photo_files.exif_orientation(enc.tobytes()) == 1
    assert photo_files.exif_orientation(b"\x89PNG\r\n\x1a\n") == 1


# ---------------------------------------------------------------- size and reading


def test_decide_size_counts_the_squares_inside_the_outline(samples):
    from vision.photo.files import load_image

    for name, n in (("kingdom-5x5", 5), ("kingdom-7x7", 7)):
        data, _, corners = samples[name]
        assert oh.decide_size(load_image(data), oh.order_outline(corners)) == n


@needs_model
@pytest.mark.parametrize("name", ["kingdom-5x5", "kingdom-7x7"])
def test_reads_the_sample_inside_its_true_outline_from_any_corner(reader, samples, name):
    data, truth, corners = samples[name]
    given = np.roll(corners[::-1], 1, axis=0)  # another first corner, the other direction
    reading, _ = oh.read_photo_outline(reader, data, given)
    assert reading.size == truth["size"]
    assert right_squares(reading, truth) == truth["size"] ** 2
    # tl, tr, br, bl as the truth's, each moved onto the seams by at most [outline]
    # refine_max_move of a square along x and along y
    reach = float(reader.cfg["outline"]["refine_max_move"])
    assert corner_error(np.asarray(reading.corners), corners) * truth["size"] \
        <= reach * np.sqrt(2) * 1.05


def draw_grid(n: int = 5, cell: int = 80, at: int = 100, seam: int = 3):
    """A photo of an n x n kingdom of flat squares (a colour each) with dark seams between
    them on a grey table, and its outer corners (tl, tr, br, bl)."""
    rng = np.random.default_rng(1)
    image = np.full((2 * at + n * cell, 2 * at + n * cell, 3), 128, np.uint8)
    for r in range(n):
        for c in range(n):
            y, x = at + r * cell, at + c * cell
            image[y:y + cell, x:x + cell] = rng.integers(60, 250, 3)
            image[y:y + seam, x:x + cell] = image[y:y + cell, x:x + seam] = 25
    image[at + n * cell - seam:at + n * cell, at:at + n * cell] = 25
    image[at:at + n * cell, at + n * cell - seam:at + n * cell] = 25
    side = at + n * cell
    return image, np.float64([[at, at], [side, at], [side, side], [at, side]])


class _Recorder:
    """Stands in for the reader: keeps the corners it is asked to read."""

    def __init__(self):
        from vision import config

        self.cfg, self.asked = config.load(), []

    def read(self, image, size=None, *, corners=None, rows=None, cols=None):
        self.asked.append(np.asarray(corners, np.float64))
        self.rows = rows
        return type("Reading", (), {"warnings": []})()


class _Classifier:
    """Reads every square surely as a field when the outline is cut ``crisp_at`` a side, and
    every square as any terrain alike (blurred) otherwise."""
    t_terrain = 1.0

    def __init__(self, crisp_at):
        self.crisp_at = crisp_at

    def logits(self, crops, first_turn_only=False):
        out = np.zeros((len(crops), 12), np.float32)
        if len(crops) == self.crisp_at ** 2:
            out[:, 0] = 10.0
        return out


@pytest.mark.parametrize("crisp_at, margin, read_as", [
    (7, 0.03, 7),       # the squares cut 7x7 read far crisper: the reading overrules the seams
    (5, 0.03, 5),       # they agree
    (7, 100.0, 5),      # not crisper by the margin: the seams' count stands
])
def test_with_no_size_the_squares_reading_can_overrule_the_seams(crisp_at, margin, read_as):
    image, true = draw_grid()          # seams every 80 px: the seams count 5
    rec = _Recorder()
    rec.classifier = _Classifier(crisp_at)
    rec.cfg["outline"]["size_read_margin"] = margin
    oh.read_outline(rec, image, true)
    assert rec.rows == read_as
    rec.cfg["outline"]["size_by_reading"] = False
    oh.read_outline(rec, image, true)
    assert rec.rows == 5


def test_a_hand_outline_a_little_off_is_moved_onto_the_seams():
    """Each corner given 0.15 of a square off the kingdom's, in four directions: the squares
    are read from an outline on the seams ([outline] refine); with that off, from the
    outline as given."""
    image, true = draw_grid()
    cell = 80.0
    given = true + 0.15 * cell * np.float64([[1, 0.4], [-0.3, 1], [-1, -0.5], [0.6, -1]])
    rec = _Recorder()
    oh.read_outline(rec, image, given, size=5)
    assert corner_error(given, true) * 5 > 0.15
    assert corner_error(rec.asked[-1], true) * 5 < 0.05
    rec.cfg["outline"]["refine"] = False
    oh.read_outline(rec, image, given, size=5)
    assert np.allclose(rec.asked[-1], given)


@needs_model
def test_corners_in_stored_pixels_of_a_photo_turned_by_exif(reader, samples):
    data, truth, corners = samples["kingdom-5x5"]
    upright = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    h, w = upright.shape[:2]
    # stored a quarter turn anticlockwise; EXIF 6 tells the decoder to turn it back clockwise
    stored = cv2.rotate(upright, cv2.ROTATE_90_COUNTERCLOCKWISE)
    ok, enc = cv2.imencode(".jpg", stored, [cv2.IMWRITE_JPEG_QUALITY, 95])
    turned = with_orientation(enc.tobytes(), 6)
    # an upright (x, y) was stored at (y, w - x)
    given = np.stack([corners[:, 1], w - corners[:, 0]], axis=1)
    reading, up = oh.read_photo_outline(reader, turned, given, size=5)
    assert np.allclose(np.sort(up, axis=0), np.sort(corners, axis=0), atol=1.0)
    assert right_squares(reading, truth) == 25


def test_a_read_inside_an_outline_checks_the_photo_once(monkeypatch):
    from vision.photo import files as photo_files

    class Reader:  # stands in for the reader: only the photo's way in is under test
        def read(self, image, size=None, corners=None, rows=None, cols=None):
            from types import SimpleNamespace
            return SimpleNamespace(warnings=[], corners=corners)

    ok, enc = cv2.imencode(".jpg", np.full((200, 300, 3), 90, np.uint8))
    checked, real = [], photo_files.check_photo
    monkeypatch.setattr(photo_files, "check_photo", lambda *a, **k: checked.append(1) or real(*a, **k))
    oh.read_photo_outline(Reader(), enc.tobytes(), [[20, 20], [280, 20], [280, 180], [20, 180]], size=5)
    assert len(checked) == 1


@needs_model
@pytest.mark.parametrize("long_side, factor", [(0, 1), (0.5, 2), (1.0, 1)])
def test_an_outline_is_read_in_the_decode_score_reads(monkeypatch, reader, samples, long_side,
                                                      factor):
    """With [io] read_long_side set, a photo read inside an outline given by hand is decoded
    as `score` decodes it (here at half its side), unless its squares would come out under
    [io] whole_below_px there; the reading's corners come back in the photo's own pixels."""
    import copy

    from vision import config as vconfig

    data, truth, given = samples["kingdom-5x5"]
    info = photo_files.read_header(data)
    long = max(info.width, info.height)
    cfg = copy.deepcopy(vconfig.load())
    # a share of the photo's long side: half of it is decoded at half the side, the whole
    # of it is kept by no reduced decode
    cfg["io"]["read_long_side"] = int(long * long_side)
    cfg["io"]["whole_below_px"] = 64
    sizes = []
    real = photo_files.load_image
    monkeypatch.setattr(photo_files, "load_image",
                        lambda *a, **k: sizes.append(k.get("reduce", 1)) or real(*a, **k))
    reading, up = oh.read_photo_outline(reader, data, given, size=5, cfg=cfg)
    assert sizes == [factor]
    assert np.allclose(up, given)
    assert right_squares(reading, truth) == 25
    # the corners in the photo's pixels: each within a tenth of a square of the true ones
    assert corner_error(np.asarray(reading.corners), given) < 0.1 / 5


@needs_model
def test_a_small_outline_is_read_from_the_whole_decode(monkeypatch, reader, samples):
    """A kingdom whose squares would be under [io] whole_below_px in the reduced decode is read
    from the whole one, as `score` reads such a kingdom again."""
    import copy

    from vision import config as vconfig

    data, truth, given = samples["kingdom-5x5"]
    info = photo_files.read_header(data)
    long = max(info.width, info.height)
    side = np.linalg.norm(given - np.roll(given, -1, axis=0), axis=1).min()
    cfg = copy.deepcopy(vconfig.load())
    cfg["io"]["read_long_side"] = long // 2
    assert side / 2 / 7 > 64               # read reduced at the shipped line ...
    cfg["io"]["whole_below_px"] = side / 2 / 7 + 1      # ... whole just over a 7x7's square
    sizes = []
    real = photo_files.load_image
    monkeypatch.setattr(photo_files, "load_image",
                        lambda *a, **k: sizes.append(k.get("reduce", 1)) or real(*a, **k))
    reading, _ = oh.read_photo_outline(reader, data, given, size=5, cfg=cfg)
    assert sizes == [1]
    assert right_squares(reading, truth) == 25
