"""The outline of a blob of tiles (vision.find.outline.fit_quad): a cut corner restored, and the
quadrilaterals' measures, computed for all of them at once, equal to one at a time."""
import cv2
import numpy as np
import pytest

from vision import config
from vision.find.outline import (_inside_fractions, _norms, _seg_dist, _seg_dists,
                            _tangent_lines, _vanishing_point, _wrap, fit_quad, order_top_first)


def _inside_one(quad, pts, tol):
    """Share of ``pts`` inside one convex quad grown by ``tol``, side by side (the plain form)."""
    sign = np.sign(cv2.contourArea(quad.astype(np.float32).reshape(-1, 1, 2), oriented=True)) or 1.0
    ok = np.ones(len(pts), bool)
    for k in range(4):
        a, b = quad[k], quad[(k + 1) % 4]
        d = b - a
        cross = (d[0] * (pts[:, 1] - a[1]) - d[1] * (pts[:, 0] - a[0])) / (np.hypot(*d) + 1e-12)
        ok &= sign * cross >= -tol
    return float(ok.mean())


def _quads(rng, k):
    centre = rng.uniform(100, 300, (k, 1, 2))
    ang = np.sort(rng.uniform(0, 2 * np.pi, (k, 4)), axis=1)
    ang[rng.random(k) < 0.5] *= -1                      # both orientations
    r = rng.uniform(40, 120, (k, 4, 1))
    return centre + r * np.stack([np.cos(ang), np.sin(ang)], -1)


@pytest.mark.parametrize("seed", range(3))
def test_inside_fractions_of_many_quads_equal_one_at_a_time(seed):
    rng = np.random.default_rng(seed)
    quads, pts = _quads(rng, 40), rng.uniform(0, 400, (300, 2))
    signs = np.array([np.sign(cv2.contourArea(q.astype(np.float32).reshape(-1, 1, 2),
                                              oriented=True)) or 1.0 for q in quads])
    got = _inside_fractions(quads, signs, pts, 3.0)
    assert got.tolist() == [_inside_one(q, pts, 3.0) for q in quads]
    assert 0 < got.max() and got.min() < 1


@pytest.mark.parametrize("seed", range(3))
def test_distances_to_many_segments_equal_one_at_a_time(seed):
    rng = np.random.default_rng(10 + seed)
    a, b, pts = rng.uniform(0, 500, (30, 2)), rng.uniform(0, 500, (30, 2)), \
        rng.uniform(-50, 550, (240, 2))
    got = _seg_dists(pts, a, b)
    want = np.stack([_seg_dist(pts, a[i], b[i]) for i in range(len(a))])
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


def test_a_cut_corner_of_the_blob_is_restored():
    """A square blob with one corner cut off (a half-built kingdom): the outline's corners are
    the square's, the cut corner where its two sides meet."""
    mask = np.zeros((400, 400), np.uint8)
    square = np.array([[100, 80], [320, 80], [320, 300], [100, 300]], np.int32)
    cv2.fillPoly(mask, [square], 1)
    cv2.fillPoly(mask, [np.array([[250, 300], [320, 230], [320, 300]], np.int32)], 0)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    ys, xs = np.nonzero(mask)
    pick = np.random.default_rng(0).choice(len(xs), 300, replace=False)
    quad = fit_quad(max(contours, key=cv2.contourArea),
                    np.stack([xs[pick] + 0.5, ys[pick] + 0.5], 1).astype(np.float64))
    assert quad is not None
    assert np.abs(order_top_first(quad) - (square + 0.5)).max() < 3.0


def test_wrap_is_numpys_remainder_over_its_range():
    """_wrap replaces ``%`` for angles in (-period, 2 * period): the same values, bit for bit,
    edges included."""
    period = 2 * np.pi
    rng = np.random.default_rng(7)
    y = np.concatenate([rng.uniform(-np.pi, 3 * np.pi, 20000), [0.0, period, -1e-300, 1e-300,
                        np.nextafter(period, 0), np.nextafter(period, 10), -np.pi, 3 * np.pi]])
    assert _wrap(y, period).tobytes() == (y % period).tobytes()
    inplace = y.copy()
    assert _wrap(inplace, period, out=inplace) is inplace
    assert inplace.tobytes() == (y % period).tobytes()


def _vp_full(seg, iters=3, keep=0.75):
    """The vanishing point as found with the full SVD (U too)."""
    p1, p2 = np.c_[seg[:, :2], np.ones(len(seg))], np.c_[seg[:, 2:], np.ones(len(seg))]
    lines = np.cross(p1, p2)
    lines /= np.linalg.norm(lines[:, :2], axis=1, keepdims=True) + 1e-12
    w = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    idx, v = np.arange(len(seg)), None
    for _ in range(iters):
        v = np.linalg.svd(lines[idx] * w[idx, None])[2][-1]
        mid, d_seg = (seg[:, :2] + seg[:, 2:]) / 2, seg[:, 2:] - seg[:, :2]
        d_vp = v[:2] - mid * v[2]
        cosang = np.abs((d_seg * d_vp).sum(1)) / (np.linalg.norm(d_seg, axis=1)
                                                  * np.linalg.norm(d_vp, axis=1) + 1e-12)
        idx = np.argsort(np.arccos(np.clip(cosang, 0, 1)))[:max(2, int(keep * len(seg)))]
    return v


@pytest.mark.parametrize("n", [2, 3, 4, 7, 40, 300])
def test_vanishing_point_is_the_full_svds(n):
    rng = np.random.default_rng(n)
    vp = np.array([rng.uniform(-2000, 3000), rng.uniform(-4000, -500)])
    start = rng.uniform(0, 800, (n, 2))
    end = start + (vp - start) * rng.uniform(0.02, 0.1, (n, 1)) + rng.normal(0, 1.5, (n, 2))
    seg = np.hstack([start, end])
    assert _vanishing_point(seg).tobytes() == _vp_full(seg).tobytes()


def test_tangent_lines_with_the_centre_given_are_the_same():
    pts = np.random.default_rng(2).uniform(100, 300, (5000, 2))
    for v in (np.array([1.0, 0.02, 0.001]), np.array([0.3, 1.0, 0.0]), np.array([900.0, -50, 1])):
        assert np.array_equal(_tangent_lines(v, pts, 0.002, pts.mean(0)),
                              _tangent_lines(v, pts, 0.002))


def test_norms_are_numpys_row_norms():
    v = np.random.default_rng(4).normal(0, 300, (5000, 2))
    v[:3] = [[0.0, -0.0], [-0.0, 3.0], [1e-300, -1e-300]]
    assert _norms(v).tobytes() == np.linalg.norm(v, axis=1).tobytes()


def _segments_along(rng, degrees, n, centre=(200.0, 200.0), spread=40.0, length=12.0):
    """``n`` segments ``length`` px long running at ``degrees``, scattered around ``centre``."""
    a = np.radians(degrees)
    d = np.array([np.cos(a), np.sin(a)]) * length / 2
    mid = np.asarray(centre) + rng.uniform(-spread, spread, (n, 2))
    return np.hstack([mid - d, mid + d]).astype(np.float32)


def test_seam_directions_are_the_two_ways_most_edge_runs():
    """Edge segments running two ways (25 and 112 degrees, as a turned, tilted kingdom's seams
    do) and a few stray ones: the two directions found are those, to a bin; one way alone
    gives no second direction."""
    from vision.find.outline import seam_directions

    rng = np.random.default_rng(4)
    segs = np.vstack([_segments_along(rng, 25, 40), _segments_along(rng, 112, 30),
                      _segments_along(rng, 70, 3), _segments_along(rng, 160, 2)])
    dirs = seam_directions(segs, 2.0, 40.0)
    found = sorted(np.degrees(np.arctan2(v[1], v[0])) % 180 for v in dirs)
    assert abs(found[0] - 25) <= 2 and abs(found[1] - 112) <= 2
    assert seam_directions(_segments_along(rng, 25, 40), 2.0, 40.0) is None


def test_seam_quad_takes_its_turn_from_the_seams_not_the_blobs_shape():
    """A round blob (a kingdom 20 degrees turned, its corners blurred into a disc by glare and
    a tile-coloured table) with seams along 20 and 110 degrees inside: the quadrilateral's
    sides run along the seams and bound the blob."""
    from vision.find.outline import seam_quad

    rng = np.random.default_rng(5)
    ang = rng.uniform(0, 2 * np.pi, 3000)
    rad = 50.0 * np.sqrt(rng.uniform(0, 1, 3000))
    pts = np.c_[200 + rad * np.cos(ang), 200 + rad * np.sin(ang)]
    segs = np.vstack([_segments_along(rng, 20, 40, spread=30.0),
                      _segments_along(rng, 110, 40, spread=30.0)])
    quad = seam_quad(segs, pts)
    assert quad is not None
    sides = np.roll(quad, -1, axis=0) - quad
    turns = np.degrees(np.arctan2(sides[:, 1], sides[:, 0])) % 90
    assert np.all(np.minimum(np.abs(turns - 20), 90 - np.abs(turns - 20)) < 3)
    # a square 100 px a side around the disc, its corners 50 * sqrt(2) from the centre
    assert np.allclose(np.linalg.norm(quad - 200.0, axis=1), 50 * np.sqrt(2), atol=4.0)


def _seamed_table(turn: float = 20.0, blotches: int = 60, seed: int = 6, kingdom: bool = True):
    """An 800 x 600 grey photo at the refinement size: a table of soft blotches (curved
    edges only, as a camouflage cloth of terrain colours), and on it (``kingdom``) a 5x5
    kingdom 200 px a side, turned ``turn`` degrees about (520, 300), drawn as its squares'
    seams (dark lines a square apart, each square a different shade). Returns the photo and
    the kingdom's four corners."""
    rng = np.random.default_rng(seed)
    img = np.full((600, 800), 120, np.uint8)
    for _ in range(blotches):
        centre = (int(rng.integers(0, 800)), int(rng.integers(0, 600)))
        axes = (int(rng.integers(15, 60)), int(rng.integers(15, 60)))
        cv2.ellipse(img, centre, axes, float(rng.uniform(0, 180)), 0, 360,
                    int(rng.integers(60, 200)), -1, cv2.LINE_AA)
    img = cv2.GaussianBlur(img, (0, 0), 2.0)
    if not kingdom:
        return img, None
    a = np.radians(turn)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    centre, side, n = np.array([520.0, 300.0]), 200.0, 5

    def at(u, v):       # a point of the kingdom, (u, v) in squares from its top left corner
        return centre + rot @ (np.array([u, v]) * side / n - side / 2)

    for r in range(n):
        for c in range(n):
            square = np.round([at(c, r), at(c + 1, r), at(c + 1, r + 1), at(c, r + 1)])
            cv2.fillConvexPoly(img, square.astype(np.int32), int(rng.integers(90, 230)),
                               cv2.LINE_AA)
    for k in range(n + 1):
        for p, q in ((at(k, 0), at(k, n)), (at(0, k), at(n, k))):
            cv2.line(img, tuple(np.round(p).astype(int)), tuple(np.round(q).astype(int)), 25, 2,
                     cv2.LINE_AA)
    corners = np.array([at(0, 0), at(n, 0), at(n, n), at(0, n)], np.float32)
    return img, corners


def test_seam_regions_find_the_seamed_kingdom_on_a_table_of_blotches():
    """A kingdom drawn as seams on a table of curved blotches: the first region, at the tile
    maps' size (half the photo), is the kingdom (its quadrilateral covered, little beyond);
    the blotches' curved edges make no region of their own as large."""
    from vision.find.seams import seam_regions

    det = config.load()["detect"]
    img, corners = _seamed_table()
    regions = seam_regions(img, (300, 400), det)
    assert regions and all(r.shape == (300, 400) and r.dtype == np.uint8 for r in regions)
    truth = np.zeros((300, 400), np.uint8)
    cv2.fillConvexPoly(truth, np.round(corners / 2).astype(np.int32), 1)
    first = regions[0].astype(bool)
    inside = (first & truth.astype(bool)).sum() / truth.sum()
    beyond = (first & ~truth.astype(bool)).sum() / truth.sum()
    assert inside > 0.9 and beyond < 0.25, (inside, beyond)
    for other in regions[1:]:
        assert other.sum() < 0.5 * first.sum()


def test_seam_regions_need_straight_seams_and_can_be_turned_off():
    """The table of blotches alone (curved edges only) gives no region as large as a
    kingdom; ``seam_regions`` 0 gives none at all, seams or not."""
    from vision.find.seams import seam_regions

    det = config.load()["detect"]
    img, corners = _seamed_table()
    bare, _ = _seamed_table(kingdom=False)
    kingdom_area = cv2.contourArea(corners / 2)
    assert all(r.sum() < 0.5 * kingdom_area for r in seam_regions(bare, (300, 400), det))
    assert seam_regions(img, (300, 400), dict(det, seam_regions=0)) == []
