"""Tile likelihood from a small fully convolutional network (``models/tiles.onnx``), at reading time.

The per-pixel model of ``vision.find.tilemap`` sees colour and texture within 11 px of a pixel, so a
blue cutting mat or cloth and a lake tile look alike to it. This network sees about two squares
around each pixel (dilated convolutions on a quarter-resolution map): a lake square is framed by
tile seams and other terrain, a mat is not.

``TileNet(path).probability(small_bgr) -> H x W float32``: run by OpenCV's dnn module (no torch).
Its training lives in ``vision.lab.training.tiles`` (``python3 -m vision.lab.training.tiles --out models/tiles.onnx``).
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

STRIDE = 4          # input sides must be multiples of this (two 2x poolings); the output is half size


def preprocess(bgr: np.ndarray) -> np.ndarray:
    """uint8 H x W x 3 (or N x H x W x 3) BGR -> float32 N x 3 x H x W in [-0.5, 0.5]."""
    x = np.asarray(bgr, np.float32) / 255.0 - 0.5
    if x.ndim == 3:
        x = x[None]
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


class TileNet:
    """Loads ``tiles.onnx`` once; ``probability()`` gives the tile likelihood of each pixel."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.net = cv2.dnn.readNetFromONNX(str(self.path))

    def logits(self, small: np.ndarray) -> np.ndarray:
        h, w = small.shape[:2]
        ph, pw = -h % STRIDE, -w % STRIDE
        padded = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REFLECT) if ph or pw else small
        self.net.setInput(preprocess(padded))
        z = self.net.forward()[0, 0]
        z = cv2.resize(z, (padded.shape[1], padded.shape[0]), interpolation=cv2.INTER_LINEAR)
        return z[:h, :w]

    def probability(self, small: np.ndarray) -> np.ndarray:
        z = self.logits(small)
        return (1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))).astype(np.float32)
