"""The per-pixel tile model (vision.find.tilemap): features and probabilities exactly as the plain
formulas give them (they are computed in place, column by column, for speed)."""
import cv2
import numpy as np
import pytest

from vision.find.tilemap import pixel_features, tile_probability


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
