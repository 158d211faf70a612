"""Trained classifier files shipped with the package; see vision/train.py to rebuild them."""
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent


def model_path(name: str) -> Path:
    """Path of a shipped model file, e.g. ``model_path("squares.onnx")``."""
    return MODELS_DIR / name

