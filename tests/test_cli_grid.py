"""``kingdomino score-grid`` end to end: good files, bad input, exit codes, no tracebacks."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.suffix in (".json", ".txt"))

GOOD_TEXT = """\
F1 F0 W0 W1 L0
F0 G2 W0 L1 L0
S0 G0 C  M2 M3
S1 G0 G1 M0 F0
W0 W0 L0 L0 F1
"""


def run(*args, stdin: bytes | None = None):
    proc = subprocess.run([sys.executable, "-m", "kingdomino", "score-grid", *map(str, args)],
                          cwd=ROOT, input=stdin, capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def assert_one_clear_line(out: str, err: str):
    text = out + err
    assert "Traceback" not in text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_sample_scores(sample):
    code, out, err = run(sample.relative_to(ROOT), "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["source"] == str(sample.relative_to(ROOT))
    assert isinstance(obj["score"]["total"], int) and obj["score"]["total"] > 0
    assert obj["size"] in (5, 7) and len(obj["cells"]) == obj["size"]


def test_published_examples_through_the_cli():
    code, out, _ = run("samples/queendomino.txt", "--json")
    assert code == 0 and json.loads(out)["score"]["total"] == 71
    code, out, _ = run("samples/origins-discovery.txt", "--json")
    assert code == 0 and json.loads(out)["score"]["total"] == 29


def test_text_grid_with_bonuses_and_table(tmp_path):
    path = tmp_path / "k.txt"
    path.write_text(GOOD_TEXT)
    code, out, _ = run(path, "--json", "--bonus", "middle-kingdom", "--bonus", "harmony")
    assert code == 0 and json.loads(out)["score"]["total"] == 40 + 10 + 5
    code, out, err = run(path)
    assert code == 0 and "Traceback" not in err
    # the text report's total line has no bonuses (the path printed above may hold any digits)
    totals = [line.split() for line in out.splitlines() if line.startswith("total")]
    assert totals == [["total", "40"]]


def test_rules_option_overrides_the_file(tmp_path):
    path = tmp_path / "k.txt"
    path.write_text(GOOD_TEXT)
    code, out, _ = run(path, "--json", "--rules", "queendomino")
    assert code == 0
    obj = json.loads(out)
    assert obj["rules"] == "queendomino" and obj["score"]["rules"] == "queendomino"


def test_stdin_dash_has_no_source():
    code, out, _ = run("-", "--json", stdin=GOOD_TEXT.encode())
    assert code == 0
    obj = json.loads(out)
    assert "source" not in obj and obj["score"]["total"] == 40


BAD_CONTENT = {
    "malformed.json": (b'{"size": 5, "cells": [[', "malformed JSON"),
    "terrain.txt": (GOOD_TEXT.replace("M3", "X3").encode(), "row 2, col 4"),
    "six.txt": (("F0 " * 6 + "\n").encode() * 6, "5x5 or 7x7"),
    "empty.txt": (b"", "empty"),
    "binary.bin": (bytes(range(256)) * 4, "not a text file"),
    "nul.txt": (b"F0\x00F0\n", "not a text file"),
    "deep.json": (b"[" * 100000, "malformed JSON"),
    "ragged.txt": (GOOD_TEXT.replace("S1 G0 G1 M0 F0", "S1 G0 G1").encode(), "row 3"),
    "castles.txt": (GOOD_TEXT.replace("F0\nW0", "C\nW0").encode(), "castle"),
    "crowns.json": (json.dumps({"size": 5, "cells": [[{"terrain": "field", "crowns": -2}] * 5] * 5}).encode(),
                    "crowns"),
}


@pytest.mark.parametrize("name", sorted(BAD_CONTENT))
def test_bad_content_exits_1_with_one_line(tmp_path, name):
    data, expected = BAD_CONTENT[name]
    path = tmp_path / name
    path.write_bytes(data)
    code, out, err = run(path)
    assert code == 1
    line = assert_one_clear_line(out, err)
    assert expected in line and line.startswith("kingdomino: error:")
    code, out, err = run(path, "--json")
    assert code == 1
    obj = json.loads(assert_one_clear_line(out, err))
    assert expected in obj["error"] and obj["source"] == str(path)


def test_bad_content_on_stdin():
    code, out, err = run("-", "--json", stdin=b"{nope")
    assert code == 1
    obj = json.loads(assert_one_clear_line(out, err))
    assert "malformed JSON" in obj["error"] and "source" not in obj


@pytest.mark.parametrize("args,expected", [
    (("samples/kingdomino.json", "--rules", "chess"), "unknown rule set"),
    (("samples/kingdomino.json", "--bonus", "free-beer"), "unknown bonus"),
    (("samples/kingdomino.json", "--rules", "origins-discovery", "--bonus", "harmony"), "unknown bonus"),
])
def test_usage_errors_exit_2(args, expected):
    code, out, err = run(*args)
    assert code == 2
    assert expected in assert_one_clear_line(out, err)


def test_kingdom_for_other_rules_is_bad_content():
    code, out, err = run("samples/queendomino.txt", "--rules", "kingdomino")
    assert code == 1
    assert "town" in assert_one_clear_line(out, err)


def test_table_explains_queendomino_extras():
    code, out, err = run("samples/queendomino.txt")
    assert code == 0 and "Traceback" not in err
    assert "Sawmill" in out and "coins (11 // 3)" in out and "+queen" in out
    assert out.strip().splitlines()[-2].split()[-1] == "71"  # the total line, before the tie-break
