"""vision/config.toml is the one place of every reader threshold: the code reads each key it
needs from it, with no second default that could disagree, and a missing key is an error."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from vision import config

ROOT = Path(__file__).resolve().parents[2]
# the names a reader module gives a section of the configuration, and which section each is
SECTION_NAMES = {"det": "detect", "rcfg": "review", "ccfg": "classify", "oc": "outline",
                 "self.rcfg": "review", "self.ccfg": "classify"}
PER_FILE = {"classify.py": {"self.cfg": "classify"}}
# vision/io.py is being rewritten on another branch (one photo-opening function for all callers)
NOT_HERE: set = set()


def _name(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _reads(path: Path):
    """(section, key, line) for each ``section["key"]`` read, and (name, line) for each
    ``section.get(...)`` call, in one reader module."""
    names = dict(SECTION_NAMES, **PER_FILE.get(path.name, {}))
    reads, gets = [], []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            base = node.value
            if _name(base) in names:
                reads.append((names[_name(base)], node.slice.value, node.lineno))
            elif isinstance(base, ast.Subscript) and _name(base.value) in ("cfg", "self.cfg") \
                    and isinstance(base.slice, ast.Constant):  # cfg["section"]["key"]
                reads.append((base.slice.value, node.slice.value, node.lineno))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and _name(node.func.value) in names:
            gets.append((_name(node.func.value), node.lineno))
    return reads, gets


def _reader_modules():
    return [p for p in sorted((ROOT / "vision").glob("*.py")) + sorted((ROOT / "vision").glob("*/*.py"))
            if p.name not in NOT_HERE and p.parent.name != "lab"]


def test_every_key_the_reader_reads_is_in_the_config_file():
    cfg = config.load()
    missing = [f"{p.name}:{line} [{section}] {key}" for p in _reader_modules()
               for section, key, line in _reads(p)[0]
               if section not in cfg or key not in cfg[section]]
    assert not missing, "keys the code reads that vision/config.toml lacks: " + ", ".join(missing)
    # the scan sees the detector's reads (a scan that finds nothing proves nothing)
    keys = {(s, k) for p in _reader_modules() for s, k, _ in _reads(p)[0]}
    assert {("detect", "prob_threshold"), ("holes", "enabled"), ("review", "min_confidence"),
            ("classify", "tta"), ("reader", "min_tiles")} <= keys


def test_no_reader_module_keeps_a_second_default():
    found = [f"{p.name}:{line} {name}.get(...)" for p in _reader_modules()
             for name, line in _reads(p)[1]]
    assert not found, "read config keys as section['key'] (no default in code): " + ", ".join(found)


def test_a_missing_key_is_an_error_that_names_it():
    from vision.find.detect import locate

    cfg = config.load()
    del cfg["detect"]["prob_threshold"]
    image = np.full((300, 400, 3), 128, np.uint8)
    with pytest.raises(config.ConfigError, match=r"\[detect\] prob_threshold"):
        locate(image, cfg)
    with pytest.raises(ValueError, match="vision/config.toml"):
        config.load()["review"]["no_such_key"]


def test_pixel_model_weights_live_in_models_with_their_record():
    cfg = config.load()
    assert isinstance(cfg["detect"]["pixel_model"], str)   # a file name, not the weights
    model = json.loads((ROOT / "models" / cfg["detect"]["pixel_model"]).read_text())
    assert model["record"]["command"].startswith("python3 -m vision.lab.training.pixels --fit")
    n = len(model["mean"])
    assert len(model["scale"]) == n and len(model["w1"]) == n * len(model["b1"])
    assert len(model["w2"]) == len(model["b1"])
