"""The CLI's text table (kingdomino/report.py): what a person reads without --json."""
from __future__ import annotations

import json
from pathlib import Path

from kingdomino import service
from kingdomino.report import format_result

ROOT = Path(__file__).resolve().parents[1]


def _scored(name: str, **extra) -> dict:
    path = ROOT / "samples" / name
    text = path.read_text()
    kingdom = json.loads(text) if name.endswith(".json") else text
    return {**service.score_grid(kingdom), **extra}


def _points_end(lines: list[str]) -> int:
    header = next(line for line in lines if line.startswith("region"))
    return header.index("points") + len("points")


def test_a_legend_says_what_the_letters_of_the_grid_are():
    out = format_result(_scored("kingdomino.json"))
    legend = " ".join(line.strip() for line in out.splitlines()[:9])
    for letter, terrain in (("W", "forest"), ("F", "field"), ("M", "mine"), ("C", "castle")):
        assert f"{letter} {terrain}" in legend
    assert "Q quarry" not in legend  # only the letters the grid uses
    assert "crowns" in legend


def test_the_total_has_its_own_line_under_the_points_column():
    obj = _scored("queendomino.txt")
    lines = format_result(obj).splitlines()
    end = _points_end(lines)
    total = [line for line in lines if line.split()[:1] == ["total"]]
    assert len(total) == 1 and total[0].split() == ["total", str(obj["score"]["total"])]
    assert len(total[0].rstrip()) == end  # its number ends where the points column ends
    for line in lines:  # every number of the points column ends there too
        if line.split()[:1] in (["coins"], ["building"], ["mine"]):
            assert len(line.rstrip()) == end, line


def test_regions_worth_nothing_are_one_row_with_their_details_folded_under_it():
    obj = _scored("origins-tribe.txt")
    zero = [r for r in obj["score"]["regions"] if not r["points"]]
    assert len(zero) > 2
    lines = format_result(obj).splitlines()
    row = [line for line in lines if "without crowns" in line]
    assert len(row) == 1
    assert row[0].split() == [str(len(zero)), "regions", "without", "crowns",
                              str(sum(r["squares"] for r in zero)), "0", "0"]
    folded = " ".join(lines[lines.index(row[0]) + 1:lines.index(row[0]) + 3])
    for region in zero:
        assert f"{region['terrain']} {region['squares']}" in folded
    # no region row of 0 points is left in the table
    table = lines[lines.index(next(x for x in lines if x.startswith("region"))) + 1:
                  lines.index(row[0])]
    assert all(not line.endswith(" 0") for line in table)


def test_squares_are_named_from_1_as_people_count():
    obj = _scored("queendomino.txt", review=[[0, 1], [4, 4]])
    out = format_result(obj)
    assert "check by eye (r1c1 is the top-left square): r1c2, r5c5" in out
    first = obj["score"]["buildings"]["list"][0]
    r, c = first["cell"]
    assert f"{first['name']} r{r + 1}c{c + 1} " in out
