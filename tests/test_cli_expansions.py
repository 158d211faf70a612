"""The expansions on the command line: the samples, the quests of a file's own rule set, help."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "kingdomino", *map(str, args)],
                          cwd=ROOT, capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_quests_are_checked_against_the_files_own_rule_set():
    code, out, err = run("score-grid", "samples/age-of-giants.txt", "--json",
                         "--bonus", "folie-des-grandeurs", "--bonus", "bleak-king")
    assert code == 0, err
    score = json.loads(out)["score"]
    assert score["rules"] == "age-of-giants"
    assert [b["name"] for b in score["bonuses"]] == ["folie-des-grandeurs", "bleak-king"]
    assert score["bonuses"][0]["points"] > 0


def test_a_quest_the_files_rule_set_lacks_is_a_usage_error():
    code, out, err = run("score-grid", "samples/the-court.txt", "--bonus", "lost-corner")
    assert code == 2
    assert "Traceback" not in out + err
    assert "unknown bonus 'lost-corner' for rules 'the-court'" in err


def test_the_table_lists_every_courtier_with_its_arithmetic():
    code, out, err = run("score-grid", "samples/the-court.txt")
    assert code == 0, err
    obj = json.loads(run("score-grid", "samples/the-court.txt", "--json")[1])
    for courtier in obj["score"]["courtiers"]["list"]:
        assert courtier["reason"] in out
    assert any(line.rstrip().endswith(f" {obj['score']['total']}") and line.startswith("total")
               for line in out.splitlines())


def test_help_lists_the_expansions_and_their_quests():
    code, out, _ = run("--help")
    assert code == 0
    assert "age-of-giants:" in out and "the-court:" in out
    assert "folie-des-grandeurs" in out and "local-business-lake" in out
