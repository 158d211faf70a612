"""`kingdomino score` on photos: JSON Lines in input order, one error line per unreadable photo,
exit 1 after the others are done, usage errors exit 2, never a traceback."""
from __future__ import annotations

import json
import os
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


# ---------------------------------------------------------------- one photo's failure (issue 15 #1)


def _cells_with_two_lost_squares():
    """A castle with a field each side, and two lakes in the corners joined to nothing."""
    cells = [[{"terrain": "empty", "crowns": 0} for _ in range(5)] for _ in range(5)]
    cells[2][2] = {"terrain": "castle", "crowns": 0}
    cells[2][1] = {"terrain": "field", "crowns": 1}
    cells[2][3] = {"terrain": "field", "crowns": 0}
    cells[0][0] = {"terrain": "lake", "crowns": 1}
    cells[4][4] = {"terrain": "lake", "crowns": 0}
    return cells


@pytest.fixture
def three_photos(tmp_path):
    """Three decodable photos told apart by their width: 300, 400 (the one that fails), 500."""
    paths = []
    for width in (300, 400, 500):
        ok, enc = cv2.imencode(".jpg", np.full((200, width, 3), 128, np.uint8))
        path = tmp_path / f"photo{width}.jpg"
        path.write_bytes(enc.tobytes())
        paths.append(str(path))
    return paths


@pytest.fixture
def reader_failing_on_the_second(fake_reader):
    """The reader (after decoding) raises TypeError on the 400 px photo, as detect's _disk did;
    it reads the others as the kingdom with two lost squares."""
    def fail(image):
        if image.shape[1] == 400:
            raise TypeError("Can't parse 'ksize'. Sequence item with index 0 has a wrong type")

    return fake_reader(_cells_with_two_lost_squares(), fail=fail)


def test_a_reader_crash_on_one_photo_becomes_its_error_line(three_photos, reader_failing_on_the_second,
                                                            run_cli):
    code, out, err = run_cli("score", *three_photos, "--json")
    assert code == 1
    lines = [json.loads(line) for line in out.splitlines()]
    assert [obj["source"] for obj in lines] == three_photos  # the third is still read
    assert lines[0]["score"]["total"] == lines[2]["score"]["total"] == 2
    assert set(lines[1]) == {"source", "error"}
    message = lines[1]["error"]
    assert "internal error" in message and "TypeError" in message and "--verbose" in message
    assert "Traceback" not in out + err and "ksize" not in out + err


def test_verbose_prints_the_traceback(three_photos, reader_failing_on_the_second, run_cli):
    code, out, err = run_cli("score", *three_photos, "--json", "--verbose")
    assert code == 1
    assert len(out.splitlines()) == 3
    assert "Traceback" in err and "TypeError: Can't parse 'ksize'" in err
    assert "Traceback" not in out


def test_table_output_goes_on_after_a_reader_crash(three_photos, reader_failing_on_the_second, run_cli):
    code, out, err = run_cli("score", *three_photos)
    assert code == 1
    assert three_photos[0] in out and three_photos[2] in out and three_photos[1] not in out
    assert err.count("\n") == 1 and three_photos[1] in err and "internal error" in err


# ---------------------------------------------------------------- paths that are not photos (issue 15 #13)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_folder_pipe_and_link_loop_are_named_and_never_hang(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    fifo = tmp_path / "pipe.jpg"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.jpg"
    loop.symlink_to(loop)
    paths = [str(folder), str(fifo), str(loop)]
    proc = subprocess.run([sys.executable, "-m", "kingdomino", "score", *paths, "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # a read of the FIFO would hang
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [obj["source"] for obj in lines] == paths
    errors = [obj["error"] for obj in lines]
    assert "is a folder, not a photo" in errors[0]
    assert "is a named pipe (FIFO), not a photo file" in errors[1]
    assert "symbolic link loop" in errors[2]
    assert not any("no such photo file" in e for e in errors)


# ---------------------------------------------------------------- warnings (issue 14 paper cut)


def test_json_top_level_warnings_carry_the_scores_warnings(three_photos, fake_reader, run_cli):
    # every photo read as the kingdom with two lost squares, with one warning of its own
    fake_reader(_cells_with_two_lost_squares(), ["part of the kingdom may be outside the photo"])
    code, out, _ = run_cli("score", three_photos[0], "--json")
    assert code == 0
    (obj,) = [json.loads(line) for line in out.splitlines()]
    lost = "2 square(s) not joined to the castle: row 1 col 1, row 5 col 5"
    assert obj["score"]["warnings"] == [lost]  # kept where it was (the contract only grows)
    assert obj["warnings"] == ["part of the kingdom may be outside the photo", lost]
