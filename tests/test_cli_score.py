"""`kingdomino score` on photos: JSON Lines in input order, one error line per unreadable photo,
exit 1 after the others are done, usage errors exit 2, never a traceback."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "kingdom-5x5.jpg"


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "kingdomino", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def bad_photos(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a photo at all\n")
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    ok, enc = cv2.imencode(".jpg", np.full((600, 800, 3), 128, np.uint8))
    truncated = tmp_path / "cut.jpg"
    truncated.write_bytes(enc.tobytes()[: len(enc) // 2])
    blank = tmp_path / "blank.jpg"
    blank.write_bytes(enc.tobytes())  # a decodable photo with no kingdom in it
    return [text, empty, truncated, blank, tmp_path / "missing.jpg"]


def test_bad_photos_give_error_lines_in_order_and_exit_1(bad_photos):
    paths = [str(SAMPLE)] + [str(p) for p in bad_photos]
    proc = run("score", *paths, "--json")
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [obj["source"] for obj in lines] == paths
    assert isinstance(lines[0]["score"]["total"], int) and "error" not in lines[0]
    assert lines[0]["size"] == 5 and len(lines[0]["cells"]) == 5
    for obj in lines[1:]:
        assert set(obj) == {"source", "error"} and obj["error"].strip(), obj


def test_table_output_names_the_bad_photo_on_stderr(bad_photos):
    proc = run("score", str(bad_photos[0]))
    assert proc.returncode == 1 and proc.stdout == ""
    assert str(bad_photos[0]) in proc.stderr and proc.stderr.count("\n") == 1


def test_unknown_rules_is_a_usage_error():
    proc = run("score", str(SAMPLE), "--rules", "chess")
    assert proc.returncode == 2 and "unknown rule set" in proc.stderr
