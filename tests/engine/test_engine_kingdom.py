"""The kingdom: readers, writers, validation errors that name the square, immutability."""
from __future__ import annotations

import dataclasses
import json

import pytest

import engine
from engine_helpers import grid, kingdom

GOOD = """\
F1 F0 W0 W1 L0
F0 G2 W0 L1 L0
S0 G0 C  M2 M3
S1 G0 G1 M0 F0
W0 W0 L0 L0 F1
"""


def cells_json(size=5, terrain="field", crowns=0):
    return [[{"terrain": terrain, "crowns": crowns} for _ in range(size)] for _ in range(size)]


def test_text_grid_reads_terrain_letters_and_crowns():
    k = kingdom(GOOD)
    assert k.size == 5 and k.rules == "kingdomino"
    assert (k[0, 0].terrain, k[0, 0].crowns) == ("field", 1)
    assert (k[0, 2].terrain, k[0, 2].crowns) == ("forest", 0)
    assert k[2, 2].terrain == "castle" and k.start == (2, 2)
    assert (k[2, 4].terrain, k[2, 4].crowns) == ("mine", 3)
    assert k[3, 0].terrain == "swamp"


def test_text_and_json_round_trip():
    k = kingdom(GOOD)
    assert engine.Kingdom.from_text(k.to_text()) == k
    assert engine.Kingdom.from_json(json.loads(json.dumps(k.to_json()))) == k
    assert set(k.to_json()) == {"rules", "size", "cells"}


def test_load_kingdom_takes_json_or_text():
    k = kingdom(GOOD)
    assert engine.load_kingdom(json.dumps(k.to_json())) == k
    assert engine.load_kingdom(GOOD) == k


def test_empty_square_and_full_names():
    k = kingdom(grid("field0", r0c0=".", r2c2="castle", r1c1="Grassland2"))
    assert k[0, 0].terrain == "empty" and k[1, 1].terrain == "grassland" and k[1, 1].crowns == 2


def test_photo_reading_extras_are_accepted():
    obj = {"rules": "kingdomino", "size": 5, "cells": cells_json(),
           "review": [[0, 1]], "corners": [[0, 0], [1, 0], [1, 1], [0, 1]],
           "homography": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "source": "a.jpg",
           "score": {"total": 3}, "warnings": ["x"]}
    obj["cells"][0][1]["confidence"] = 0.42
    k = engine.Kingdom.from_json(obj)
    assert k[0, 1].confidence == 0.42
    assert engine.score(k).total == 0


def test_rules_default_and_seven_by_seven():
    obj = {"size": 7, "cells": cells_json(7)}
    k = engine.Kingdom.from_json(obj)
    assert k.rules == "kingdomino" and k.size == 7


@pytest.mark.parametrize("size", [4, 6, 8])
def test_wrong_size_is_an_error(size):
    with pytest.raises(engine.KingdomError, match="5x5 or 7x7|5 or 7"):
        engine.Kingdom.from_json({"size": size, "cells": cells_json(size)})
    text = "\n".join(" ".join(["F0"] * size) for _ in range(size))
    with pytest.raises(engine.KingdomError, match="5x5 or 7x7"):
        engine.Kingdom.from_text(text)


def test_ragged_rows_name_the_row():
    obj = {"size": 5, "cells": cells_json()}
    obj["cells"][2] = obj["cells"][2][:4]
    with pytest.raises(engine.KingdomError, match="row 2"):
        engine.Kingdom.from_json(obj)
    lines = GOOD.splitlines()
    lines[3] = "S1 G0 G1 M0"
    with pytest.raises(engine.KingdomError, match="row 3"):
        engine.Kingdom.from_text("\n".join(lines))


def test_size_must_match_the_rows():
    with pytest.raises(engine.KingdomError, match="size"):
        engine.Kingdom.from_json({"size": 7, "cells": cells_json(5)})


def test_unknown_terrain_names_the_square():
    obj = {"size": 5, "cells": cells_json()}
    obj["cells"][1][3] = {"terrain": "ocean", "crowns": 0}
    with pytest.raises(engine.KingdomError, match=r"row 1, col 3.*ocean"):
        engine.Kingdom.from_json(obj)
    with pytest.raises(engine.KingdomError, match=r"row 0, col 4.*X"):
        engine.Kingdom.from_text(grid("F0", r0c4="X1"))


@pytest.mark.parametrize("crowns", [-1, 1.5, True, "2", None])
def test_bad_crowns_name_the_square(crowns):
    obj = {"size": 5, "cells": cells_json()}
    obj["cells"][4][2]["crowns"] = crowns
    with pytest.raises(engine.KingdomError, match=r"row 4, col 2.*crowns"):
        engine.Kingdom.from_json(obj)


def test_two_castles_are_an_error():
    with pytest.raises(engine.KingdomError, match=r"castle.*\(0, 0\).*\(3, 3\)"):
        kingdom(grid("F0", r0c0="C", r3c3="C"))
    with pytest.raises(engine.KingdomError, match="start square"):
        kingdom(grid("D0", r0c0="H", r3c3="H"))


def test_crowns_on_castle_or_empty_are_an_error():
    with pytest.raises(engine.KingdomError, match=r"row 2, col 2.*castle"):
        kingdom(grid("F0", r2c2="C1"))
    with pytest.raises(engine.KingdomError, match=r"row 0, col 1.*empty"):
        kingdom(grid("F0", r0c1=".2"))


def test_cell_that_is_not_an_object():
    obj = {"size": 5, "cells": cells_json()}
    obj["cells"][0][0] = 7
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0"):
        engine.Kingdom.from_json(obj)


@pytest.mark.parametrize("obj", [[], "x", {"size": 5}, {"size": 5, "cells": "F0"},
                                 {"size": 5, "cells": [1, 2, 3, 4, 5]}])
def test_not_a_kingdom(obj):
    with pytest.raises(engine.KingdomError):
        engine.Kingdom.from_json(obj)


def test_unknown_rules_in_the_file():
    with pytest.raises(engine.RulesError, match="unknown rule set"):
        engine.Kingdom.from_json({"rules": "chess", "size": 5, "cells": cells_json()})


def test_malformed_json_and_empty_text():
    with pytest.raises(engine.KingdomError, match="malformed JSON"):
        engine.load_kingdom('{"size": 5, "cells": [')
    with pytest.raises(engine.KingdomError, match="empty"):
        engine.load_kingdom("  \n")


def test_deeply_nested_json_is_a_kingdom_error():
    with pytest.raises(engine.KingdomError, match="malformed JSON"):
        engine.load_kingdom("[" * 100000)


def test_json_cells_may_be_text_tokens():
    obj = {"size": 5, "cells": [["F1", "W0", "L0", "G2", "S0"]] * 2 + [["M3", "C", ".", "F0", "F0"]]
           + [["F0"] * 5] * 2}
    k = engine.Kingdom.from_json(obj)
    assert (k[0, 3].terrain, k[0, 3].crowns) == ("grassland", 2)
    assert k[2, 1].terrain == "castle" and k[2, 2].terrain == "empty"


def test_unknown_text_setting_names_the_line():
    with pytest.raises(engine.KingdomError, match=r"line 1.*colour"):
        engine.Kingdom.from_text("colour: red\n" + GOOD)


def test_errors_are_value_errors():
    assert issubclass(engine.KingdomError, ValueError)
    assert issubclass(engine.RulesError, ValueError)


def test_kingdom_is_immutable():
    k = kingdom(GOOD)
    with pytest.raises(dataclasses.FrozenInstanceError):
        k.size = 7
    with pytest.raises(dataclasses.FrozenInstanceError):
        k[0, 0].crowns = 3
    with pytest.raises(TypeError):
        k.cells[0][0] = k.cells[0][1]


def test_rotation_and_mirror_move_squares():
    k = kingdom(GOOD)
    r = k.rotated()
    # a quarter turn clockwise: the top-left square goes to the top-right
    assert r[0, 4] == k[0, 0] and r[4, 4] == k[0, 4]
    assert k.mirrored()[0, 4] == k[0, 0]
    assert r.rotated().rotated().rotated() == k


def test_pieces_validated():
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0.*resource"):
        kingdom("rules: origins-totem\n" + grid("G0", r0c0="G0@gold", r2c2="H"))
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0.*caveman"):
        kingdom("rules: origins-tribe\n" + grid("G0", r0c0="G0!wizard", r2c2="H"))
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0.*warrior"):
        kingdom("rules: origins-tribe\n" + grid("G0", r0c0="G0^4", r2c2="H"))
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0.*fire_tokens"):
        kingdom("rules: origins-tribe\n" + grid("G0", r0c0="G0+5", r2c2="H"))
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0.*caveman or a warrior"):
        kingdom("rules: origins-tribe\n" + grid("G0", r0c0="G0!hunter^2", r2c2="H"))


def test_buildings_validated():
    base = "rules: queendomino\n" + grid("F0", r0c0="T", r2c2="C")
    with pytest.raises(engine.KingdomError, match=r"row 1, col 1.*town"):
        kingdom(base + "building 1 1 name=Statue points=5\n")
    with pytest.raises(engine.KingdomError, match="per"):
        kingdom(base + "building 0 0 points=2 per=dragon\n")
    with pytest.raises(engine.KingdomError, match="terrain"):
        kingdom(base + "building 0 0 points=2 per=region\n")
    with pytest.raises(engine.KingdomError, match="outside"):
        kingdom(base + "building 9 0 points=2\n")
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0.*town.*crowns"):
        kingdom("rules: queendomino\n" + grid("F0", r0c0="T2", r2c2="C"))


def test_kingdom_extras_validated_and_kept():
    obj = {"rules": "queendomino", "size": 5, "cells": cells_json(), "coins": 4, "knights": 2,
           "queen": True}
    k = engine.Kingdom.from_json(obj)
    assert (k.coins, k.knights, k.queen) == (4, 2, True)
    assert engine.Kingdom.from_json(k.to_json()) == k
    for key, bad in (("coins", -1), ("knights", 1.5), ("queen", "yes"), ("totems", ["gold"])):
        with pytest.raises(engine.KingdomError, match=key):
            engine.Kingdom.from_json({**obj, key: bad})
