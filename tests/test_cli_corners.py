"""`kingdomino score PHOTO --corners ... [--size]`: the outline given by hand on the command line."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.read.classify import MODELS_DIR

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "kingdom-5x5.jpg"
needs_model = pytest.mark.skipif(not (MODELS_DIR / "squares.onnx").exists(),
                                 reason="no trained model in models/ (run `kingdomino train`)")


@pytest.fixture(scope="module")
def truth_5x5():
    from vision.lab.scenes import synth

    _, truth, corners = synth.make_sample("kingdom-5x5")
    return truth, np.asarray(corners, float)


def text_of(points) -> str:
    return ",".join(f"{v:.1f}" for v in np.asarray(points).reshape(-1))


@needs_model
def test_score_inside_the_given_outline(run_cli, truth_5x5):
    truth, corners = truth_5x5
    given = np.roll(corners, 2, axis=0)  # another corner first
    code, out, err = run_cli("score", str(SAMPLE), "--corners", text_of(given), "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["source"] == str(SAMPLE) and obj["size"] == 5
    assert [[c["terrain"] for c in row] for row in obj["cells"]] == \
        [[c["terrain"] for c in row] for row in truth["cells"]]
    assert obj["outline"]["by"] == "hand"
    assert np.allclose(obj["outline"]["corners"], corners, atol=0.1)  # used order: tl, tr, br, bl
    # the outline read is the given one moved onto the seams, at most [outline]
    # refine_max_move of a square along x and along y
    from vision import config

    reach = float(config.load()["outline"]["refine_max_move"])
    side = np.mean(np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1))
    assert np.abs(np.asarray(obj["corners"]) - corners).max() <= reach * side / 5 * 1.05


@needs_model
def test_size_given_is_the_size_read(run_cli, truth_5x5):
    _, corners = truth_5x5
    code, out, _ = run_cli("score", str(SAMPLE), "--corners", text_of(corners),
                           "--size", "7", "--json")
    assert code == 0 and json.loads(out)["size"] == 7


def test_corners_with_several_photos_is_a_usage_error(run_cli):
    code, out, err = run_cli("score", str(SAMPLE), str(SAMPLE), "--corners",
                             "100,100,500,110,490,520,90,500")
    assert code == 2 and out == ""
    assert "--corners" in err and "one photo" in err and "Traceback" not in err


@pytest.mark.parametrize("text", ["1,2,3", "a,b,c,d,e,f,g,h", "100,100,500,100,300,150,300,500"])
def test_bad_corner_text_is_a_usage_error(run_cli, text):
    code, out, err = run_cli("score", str(SAMPLE), "--corners", text)
    assert code == 2 and out == "" and "--corners" in err and "Traceback" not in err


def test_outline_outside_the_photo_is_that_photos_error_line(run_cli):
    code, out, err = run_cli("score", str(SAMPLE), "--corners",
                             "100,100,90000,110,89000,520,90,500", "--json")
    assert code == 1
    obj = json.loads(out)
    assert set(obj) == {"source", "error"} and "outside the photo" in obj["error"]


@needs_model
def test_the_service_reads_an_outline_from_the_photos_bytes_of_any_kind(truth_5x5):
    from kingdomino import service

    truth, corners = truth_5x5
    data = SAMPLE.read_bytes()
    from_path = service.score_photo(str(SAMPLE), corners=corners.tolist())
    for given in (data, bytearray(data), memoryview(data)):
        got = service.score_photo(given, corners=corners.tolist())
        assert got["score"] == from_path["score"] and got["cells"] == from_path["cells"]
        assert got["outline"]["corners"] == from_path["outline"]["corners"]
