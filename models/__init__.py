"""Trained model files shipped with the package, each with a JSON record of how it was made;
vision/lab/ rebuilds them (kingdomino train, python3 -m vision.lab.training.pixels --fit)."""
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent


def model_path(name: str) -> Path:
    """Path of a shipped model file, e.g. ``model_path("squares.onnx")``."""
    return MODELS_DIR / name

