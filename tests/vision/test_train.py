import argparse

import cv2
import numpy as np
import pytest

from tests.conftest import shared_path


def test_training_on_two_boards_writes_a_loadable_onnx(tmp_path):
    pytest.importorskip("torch", reason="training needs torch (pip install '.[train]')")
    from vision import train
    from vision.classify import SquareClassifier

    datasets = shared_path("datasets")
    rc = train.main(argparse.Namespace(datasets=str(datasets), out=str(tmp_path), epochs=1, limit=2))
    assert rc == 0
    onnx = tmp_path / "squares.onnx"
    assert onnx.exists() and (tmp_path / "squares.json").exists()
    net = cv2.dnn.readNetFromONNX(str(onnx))
    assert net is not None
    clf = SquareClassifier(onnx)
    crops = np.zeros((2, clf.input_size, clf.input_size, 3), np.uint8)
    assert clf.logits(crops).shape == (2, 12)


def test_temperature_fit_recovers_a_known_temperature():
    from vision.train import fit_temperature

    rng = np.random.default_rng(0)
    true = rng.normal(0, 2, size=(4000, 5))
    p = np.exp(true) / np.exp(true).sum(1, keepdims=True)
    labels = np.array([rng.choice(5, p=row) for row in p])
    assert abs(fit_temperature(true * 2.0, labels) - 2.0) < 0.3
