"""Property tests: the score adds up, regions partition the land, symmetry never changes a score."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

import engine
from engine.kingdom import CAVEMEN, RESOURCES, Building, Cell, Kingdom
from engine.rules import get_rules

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KINGDOMINO = ("field", "forest", "lake", "grassland", "swamp", "mine")
ORIGINS = ("desert", "grassland", "lake", "forest", "quarry", "volcano")


@st.composite
def kingdoms(draw, rules="kingdomino"):
    size = draw(st.sampled_from((5, 7)))
    land = {"kingdomino": KINGDOMINO, "queendomino": KINGDOMINO + ("town",)}.get(rules, ORIGINS)
    start = "castle" if rules in ("kingdomino", "queendomino") else "hut"
    # few terrains so that regions of several squares are common
    palette = draw(st.lists(st.sampled_from(land), min_size=1, max_size=3, unique=True))
    n = size * size
    terrains = draw(st.lists(st.sampled_from(palette + ["empty"]), min_size=n, max_size=n))
    # the castle/hut: anywhere, often on the middle row or column (where symmetry bugs hide)
    mid = size // 2
    start_at = draw(st.none() | st.integers(0, n - 1)
                    | st.sampled_from([mid * size + c for c in range(size)] + [r * size + mid for r in range(size)]))
    cavemen = iter(draw(st.permutations(CAVEMEN)))
    cells = []
    for i, terrain in enumerate(terrains):
        if i == start_at:
            cells.append(Cell(start))
            continue
        if terrain == "empty":
            cells.append(Cell("empty"))
            continue
        crowns = 0 if terrain == "town" else draw(st.integers(0, 3))
        extra = {}
        if terrain == "town":
            per = draw(st.sampled_from((None, "region", "tower", "knight")))
            extra["building"] = draw(st.none() | st.builds(
                Building, crowns=st.integers(0, 2), points=st.integers(0, 3), per=st.just(per),
                terrain=st.just(draw(st.sampled_from(land))) if per == "region" else st.none(),
                towers=st.integers(0, 2)))
        if rules.startswith("origins"):
            extra["fire_tokens"] = draw(st.sampled_from((0, 0, 1, 2, 3)))
            extra["resource"] = draw(st.sampled_from((None, None) + RESOURCES))
            piece = draw(st.sampled_from(("none", "none", "caveman", "warrior")))
            if piece == "caveman":
                extra["caveman"] = next(cavemen, None)
            elif piece == "warrior":
                extra["warrior"] = draw(st.integers(1, 3))
        cells.append(Cell(terrain, crowns, **extra))
    grid = tuple(tuple(cells[r * size:(r + 1) * size]) for r in range(size))
    return Kingdom(size=size, cells=grid, rules=rules,
                   coins=draw(st.integers(0, 20)), knights=draw(st.integers(0, 5)),
                   queen=draw(st.booleans()),
                   totems=tuple(draw(st.lists(st.sampled_from(RESOURCES), unique=True, max_size=2))))


ANY_RULES = st.sampled_from(("kingdomino", "queendomino", "origins-discovery", "origins-totem",
                             "origins-tribe"))


@st.composite
def scored(draw):
    rules = draw(ANY_RULES)
    k = draw(kingdoms(rules))
    bonuses = draw(st.lists(st.sampled_from(engine.bonus_names(rules)), unique=True))
    return k, bonuses


def summary(s):
    return (s.total, s.tiebreak, sorted((r.terrain, r.squares, r.crowns, r.points) for r in s.regions),
            [(b.name, b.points) for b in s.bonuses])


@SETTINGS
@given(scored())
def test_total_is_regions_plus_bonuses_plus_extras(case):
    k, bonuses = case
    s = engine.score(k, bonuses=bonuses)
    j = s.to_json()
    extras = sum(v["points"] for key, v in j.items()
                 if isinstance(v, dict) and key != "tiebreak" and "points" in v)
    assert j["total"] == sum(r["points"] for r in j["regions"]) + sum(b["points"] for b in j["bonuses"]) + extras
    assert j["total"] >= 0
    json.dumps(j)  # plain JSON


@SETTINGS
@given(scored())
def test_rotating_or_mirroring_never_changes_the_score(case):
    k, bonuses = case
    base = summary(engine.score(k, bonuses=bonuses))
    turned = k
    for _ in range(3):
        turned = turned.rotated()
        assert summary(engine.score(turned, bonuses=bonuses)) == base
    assert summary(engine.score(k.mirrored(), bonuses=bonuses)) == base


@SETTINGS
@given(scored())
def test_regions_partition_the_land_and_are_maximal(case):
    k, _ = case
    s = engine.score(k)
    rules = get_rules(k.rules)
    owner = {}
    for i, region in enumerate(s.regions):
        for rc in region.cells:
            assert rc not in owner
            owner[rc] = i
            assert k[rc].terrain == region.terrain
    land = {(r, c) for r, c, cell in k.squares() if cell.is_land}
    assert set(owner) == land
    for (r, c), i in owner.items():
        for rc in ((r + 1, c), (r, c + 1)):
            if rc in owner and rules.region_key(k[rc]) == rules.region_key(k[r, c]):
                assert owner[rc] == i  # joined squares of one terrain share a region
    if k.rules == "kingdomino":
        for region in s.regions:
            assert region.crowns == sum(k[rc].crowns for rc in region.cells)
            assert region.points == region.squares * region.crowns


@SETTINGS
@given(kingdoms("kingdomino"), st.data())
def test_one_more_crown_adds_its_regions_size(k, data):
    land = [(r, c) for r, c, cell in k.squares() if cell.is_land]
    if not land:
        return
    r, c = data.draw(st.sampled_from(land))
    before = engine.score(k)
    size = next(reg.squares for reg in before.regions if (r, c) in reg.cells)
    rows = [list(row) for row in k.cells]
    rows[r][c] = Cell(rows[r][c].terrain, rows[r][c].crowns + 1)
    after = engine.score(k.replace(cells=tuple(tuple(row) for row in rows)))
    assert after.total == before.total + size


@SETTINGS
@given(scored())
def test_text_and_json_round_trip(case):
    k, _ = case
    assert Kingdom.from_text(k.to_text()) == k
    assert Kingdom.from_json(json.loads(json.dumps(k.to_json()))) == k


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 25), st.integers(0, 20)),
                min_size=1, max_size=6), st.randoms())
def test_rank_places_do_not_depend_on_input_order(rows, rnd):
    players = [(f"p{i}", {"total": t, "rules": "kingdomino",
                          "tiebreak": {"largest_region": lr, "crowns": cr}})
               for i, (t, lr, cr) in enumerate(rows)]
    first = {row["player"]: row["place"] for row in engine.rank(players)}
    rnd.shuffle(players)
    standings = engine.rank(players)
    assert {row["player"]: row["place"] for row in standings} == first
    assert [row["place"] for row in standings] == sorted(row["place"] for row in standings)
    for row in standings:
        equal = [p for p in standings if (p["total"], p["tiebreak"]) == (row["total"], row["tiebreak"])]
        assert row["shared"] == (len(equal) > 1)
        assert all(p["place"] == row["place"] for p in equal)
        better = [p for p in standings if (p["total"], *p["tiebreak"].values())
                  > (row["total"], *row["tiebreak"].values())]
        assert row["place"] == len(better) + 1
