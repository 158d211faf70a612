"""The per-pixel tile model (vision.find.tilemap): features and probabilities exactly as the plain
formulas give them (they are computed in place, column by column, for speed)."""
import cv2
import numpy as np
import pytest

from vision.find.tilemap import largest, pixel_features, tile_probability


def _plain_features(small):
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    sat = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)[..., 1].astype(np.float32)
    L, a, b = lab[..., 0], lab[..., 1], lab[..., 2]
    feats = [L, a, b, sat, np.hypot(a - 128, b - 128)]
    for k in (5, 11):
        for ch in (L, a, b):
            mu = cv2.blur(ch, (k, k))
            feats.append(np.sqrt(np.maximum(cv2.blur(ch * ch, (k, k)) - mu * mu, 0)))
    feats.append(L - np.median(L))
    return np.stack(feats, -1).reshape(-1, len(feats))


def _photo(seed, shape=(61, 83)):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, shape + (3,), dtype=np.uint8)
    return cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.5, 3)))   # some local texture


def _model(seed, hidden):
    rng = np.random.default_rng(100 + seed)
    m = {"mean": rng.normal(60, 30, 12).tolist(), "scale": rng.uniform(5, 40, 12).tolist()}
    if hidden:
        m.update(w1=rng.normal(0, 0.5, 12 * hidden).tolist(), b1=rng.normal(0, 1, hidden).tolist(),
                 w2=rng.normal(0, 1, hidden).tolist(), b2=float(rng.normal()))
    else:
        m.update(coef=rng.normal(0, 0.1, 12 + 78).tolist(), intercept=float(rng.normal()))
    return m


@pytest.mark.parametrize("seed", range(4))
def test_features_are_the_plain_formulas_bit_for_bit(seed):
    small = _photo(seed)
    got = pixel_features(small)
    assert got.dtype == np.float32 and got.shape == (61 * 83, 12)
    assert got.tobytes() == _plain_features(small).tobytes()


@pytest.mark.parametrize("shape", [(60, 83), (64, 64), (1, 2), (3, 1)])
def test_features_of_an_even_or_tiny_photo_are_the_plain_formulas(shape):
    """The median of L (taken from its histogram) is the mean of the middle two values for
    an even count of pixels, and the middle one for an odd count."""
    small = _photo(5, shape)
    assert pixel_features(small).tobytes() == _plain_features(small).tobytes()
    flat = np.full(shape + (3,), 90, np.uint8)
    assert pixel_features(flat).tobytes() == _plain_features(flat).tobytes()


@pytest.mark.parametrize("seed, hidden", [(0, 32), (1, 8), (2, 0)])
def test_probabilities_are_the_plain_formulas_bit_for_bit(seed, hidden):
    small, model = _photo(seed), _model(seed, hidden)
    x = (_plain_features(small) - np.asarray(model["mean"], np.float32)) \
        / np.asarray(model["scale"], np.float32)
    if hidden:
        hdn = np.maximum(x @ np.asarray(model["w1"], np.float32).reshape(12, -1)
                         + np.asarray(model["b1"], np.float32), 0)
        z = hdn @ np.asarray(model["w2"], np.float32) + np.float32(model["b2"])
    else:
        coef = np.asarray(model["coef"], np.float32)
        iu, ju = np.triu_indices(12)
        A = np.zeros((12, 12), np.float32)
        A[iu, ju] = coef[12:]
        z = np.einsum("ij,ij->i", x @ A, x) + x @ coef[:12] + np.float32(model["intercept"])
    want = (1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))).reshape(61, 83).astype(np.float32)
    got = tile_probability(small, model)
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    assert 0.0 <= got.min() and got.max() <= 1.0


@pytest.mark.parametrize("seed", range(6))
def test_the_largest_blob_is_the_one_by_opencvs_own_areas(seed):
    """largest counts each label's pixels itself: the blob is the one OpenCV's statistics
    give (equal areas: the first labelled), and none without a blob."""
    rng = np.random.default_rng(seed)
    side = (520, 540) if seed == 5 else (int(rng.integers(20, 200)), int(rng.integers(20, 200)))
    noise = rng.random(side).astype(np.float32)       # 520 x 540: more labels than 16 bits
    mask = (cv2.GaussianBlur(noise, (0, 0), float(rng.uniform(0.7, 3))) > 0.5).astype(np.uint8)
    if seed == 0:       # two blobs of the same area
        mask[:] = 0
        mask[2:6, 2:6], mask[10:14, 10:14] = 1, 1
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    want = (labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))).astype(np.uint8)
    got = largest(mask)
    assert got.dtype == np.uint8 and np.array_equal(got, want)
    assert largest(np.zeros_like(mask)) is None
