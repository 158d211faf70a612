"""Laying a read kingdom out as game dominoes (vision.read.tiling) and the repair decode makes."""
import numpy as np
import pytest

from tests.conftest import plain_classify_cfg, shared_path
from vision.read.classify import (N_CROWNS, TERRAINS, SquareClassifier, decode, domino_partners,
                             square_supply, supply_capacity)
from vision.read.tiling import max_domino_matching, repair, tileable, unpaired

PARTNERS = domino_partners()


def idx(text: str) -> list[int]:
    """'field0 forest1 empty0' -> flat reading indices."""
    return [TERRAINS.index(w[:-1]) * N_CROWNS + int(w[-1]) for w in text.split()]


def test_domino_pairs_by_hand():
    assert tileable(idx("field0 field0"), 1, 2, PARTNERS)
    assert tileable(idx("field0 castle0 field0 field0 empty0 field0"), 2, 3, PARTNERS)
    assert not tileable(idx("field0 field0 field0"), 1, 3, PARTNERS)          # odd count
    assert not tileable(idx("mine0 mine0"), 1, 2, PARTNERS)                   # not a domino
    assert not tileable(idx("field0 empty0 field0"), 1, 3, PARTNERS)          # not neighbours
    assert tileable(idx("field1 mine0"), 1, 2, PARTNERS)                      # domino 'field1|mine0'
    # 2x2: the two fields pair down the columns, the forest-lake pairs across would not both fit
    assert tileable(idx("field0 lake0 field0 lake0"), 2, 2, PARTNERS)


def test_matching_pairs_neighbours_both_ways():
    mate = max_domino_matching(idx("field0 field0 lake0 lake0"), 2, 2, PARTNERS)
    assert len(mate) == 4 and all(mate[mate[i]] == i for i in mate)
    assert all(abs(i - j) in (1, 2) for i, j in mate.items())
    assert unpaired(idx("field0 field0 field0"), 1, 3, PARTNERS) in ([0], [2])


def test_matching_wants_one_reading_per_square():
    with pytest.raises(ValueError, match="rows\\*cols"):
        max_domino_matching(idx("field0 field0"), 2, 2, PARTNERS)


def _probs(rows):
    p = np.zeros((len(rows), len(TERRAINS) * N_CROWNS))
    for i, options in enumerate(rows):
        for w, v in options.items():
            p[i, idx(w)[0]] = v
    return p


def test_repair_takes_the_cheapest_change_that_lays_out():
    # a plain field tile read as bare table (0.8) makes an odd field: it reads field again
    probs = _probs([{"field0": 1.0}, {"field0": 0.9, "lake0": 0.1},
                    {"empty0": 0.8, "field0": 0.2}, {"field0": 1.0}])
    best = probs.argmax(axis=1)
    assert repair(probs, best, 1, 4, PARTNERS, max_cost=4.0) == {2: idx("field0")[0]}
    # too costly a change (log(0.8/0.2) = 1.39 > 1) is not made
    assert repair(probs, best, 1, 4, PARTNERS, max_cost=1.0) is None
    # a reading that already lays out is left alone
    ok = np.array(idx("field0 field0 empty0 empty0"))
    assert repair(probs, ok, 1, 4, PARTNERS, max_cost=4.0) == {}


def test_repair_changes_two_squares_when_one_cannot_do():
    # both middle squares read as table: either alone back to field leaves an odd field out
    probs = _probs([{"field0": 1.0}, {"empty0": 0.7, "field0": 0.3},
                    {"empty0": 0.6, "field0": 0.4}, {"field0": 1.0}])
    best = probs.argmax(axis=1)
    f0 = idx("field0")[0]
    assert repair(probs, best, 1, 4, PARTNERS, max_cost=4.0) == {1: f0, 2: f0}
    assert repair(probs, best, 1, 4, PARTNERS, max_cost=4.0, max_pair_options=1) is None


def test_repair_keeps_within_the_game_supply_and_fixed_squares():
    # the lone field at the end needs a partner: the game's one 3-crown mine is taken already
    probs = _probs([{"field0": 1.0}, {"mine3": 1.0},
                    {"empty0": 0.5, "mine3": 0.4, "field0": 0.1}, {"field0": 1.0}])
    best = probs.argmax(axis=1)
    cap = supply_capacity(square_supply())
    assert repair(probs, best, 1, 4, PARTNERS, 4.0) == {2: idx("mine3")[0]}
    assert repair(probs, best, 1, 4, PARTNERS, 4.0, capacity=cap) == {2: idx("field0")[0]}
    assert repair(probs, best, 1, 4, PARTNERS, 4.0, fixed={2}) is None
    assert repair(probs, best, 1, 4, PARTNERS, 4.0, banned={idx("mine3")[0], idx("field0")[0]}) is None


def _logits(words, unsure=None):
    z = np.zeros((len(words), len(TERRAINS) + N_CROWNS))
    for i, w in enumerate(words):
        z[i, TERRAINS.index(w[:-1])] = 8.0
        z[i, len(TERRAINS) + int(w[-1])] = 8.0
    if unsure is not None:                 # (square, terrain read, runner-up, margin)
        i, read, second, margin = unsure
        z[i, :len(TERRAINS)] = 0.0
        z[i, TERRAINS.index(read)] = 4.0
        z[i, TERRAINS.index(second)] = 4.0 - margin
    return z


def test_decode_lays_the_kingdom_out_and_says_so():
    words = "castle0 field0 field0 empty0 field0 field0".split()
    z = _logits(words, unsure=(2, "empty", "field", 1.5))
    t, _, conf, _ = decode(z, shape=(2, 3), partners=PARTNERS)
    assert TERRAINS[t[2]] == "empty"
    report = {}
    t, _, conf, _ = decode(z, shape=(2, 3), partners=PARTNERS, tiling_max_cost=4.0, report=report)
    odds = report.pop("odds")     # each square's readings' odds, the retiled one's among them
    assert TERRAINS[t[2]] == "field" and conf[2] < 0.5 and report == {"retiled": [2], "unpaired": []}
    assert odds[2, t[2], 0] == pytest.approx(conf[2])
    clf = SquareClassifier(None, plain_classify_cfg(tiling_max_cost=4.0),
                           load_network=False)
    grid = clf.read_logits(z, 2, 3)
    assert grid[0][2].terrain == "field"
    assert any("dominoes" in f for f in grid[0][2].flags)
    assert not any(sq.flags for row in grid for sq in row if sq is not grid[0][2])


def test_a_kingdom_that_cannot_be_laid_out_is_flagged():
    # a crownless mine read sure beside a crownless field: no domino has them together
    z = _logits("castle0 field0 mine0".split())
    clf = SquareClassifier(None, plain_classify_cfg(tiling_max_cost=1.0),
                           load_network=False)
    grid = clf.read_logits(z, 1, 3)
    lone = [c for c in range(3) if any("no neighbour" in f for f in grid[0][c].flags)]
    assert lone == [1, 2]


def test_every_labelled_dev_kingdom_lays_out():
    """The rule the repair rests on: no true kingdom (dev labels of both datasets) fails it."""
    shared_path("datasets")
    from vision.lab.training.squares import dev_photos

    photos = dev_photos()
    assert len(photos) > 50
    for p in photos:
        words = [f"{t}{k}" for tr, kr in zip(p.terrain, p.crowns) for t, k in zip(tr, kr)]
        assert tileable(idx(" ".join(words)), p.rows, p.cols, PARTNERS), p.name


def _terrain_logits(rows):
    """Logits from each square's terrain odds (dict), 0 crowns sure."""
    z = np.full((len(rows), len(TERRAINS) + N_CROWNS), -20.0)
    for i, odds in enumerate(rows):
        for t, p in odds.items():
            z[i, TERRAINS.index(t)] = np.log(p)
        z[i, len(TERRAINS)] = 10.0
    return z


def test_a_castle_read_on_the_wrong_square_moves_so_the_kingdom_lays_out():
    # the true castle (square 0, castle odds 0.45) loses to a field square (0.5); the field at
    # the end is then left without a partner: the castle moves back and the fields pair up
    z = _terrain_logits([{"empty": 0.55, "castle": 0.45}, {"castle": 0.5, "field": 0.5},
                         {"field": 1.0}])
    t, _, _, _ = decode(z, shape=(1, 3), partners=PARTNERS, one_castle=True)
    assert [TERRAINS[i] for i in t] == ["empty", "castle", "field"]
    report = {}
    t, _, conf, _ = decode(z, shape=(1, 3), partners=PARTNERS, one_castle=True,
                           tiling_max_cost=4.0, report=report)
    assert [TERRAINS[i] for i in t] == ["castle", "field", "field"]
    assert report["retiled"] == [0, 1] and conf[0] < 0.5
    # too costly a move is not made
    t, _, _, _ = decode(z, shape=(1, 3), partners=PARTNERS, one_castle=True, tiling_max_cost=0.1)
    assert [TERRAINS[i] for i in t] == ["empty", "castle", "field"]


def test_a_change_near_a_reading_is_tileable_exactly_when_the_whole_reading_is():
    """repair asks about many changes of one reading from that reading's own matching
    (tiling._Near); its answer must be the whole reading's, tileable or not, for changes that
    add and remove tile squares, break pairs and mend them."""
    from vision.read.tiling import _Near

    rng = np.random.default_rng(7)
    pairs = np.argwhere(PARTNERS)
    others = np.flatnonzero(~PARTNERS.any(axis=1))        # castle, empty
    agree = {True: 0, False: 0}
    for t in range(150):
        rows, cols = [(5, 5), (7, 7), (3, 4), (2, 2), (5, 6)][t % 5]
        n = rows * cols
        readings = np.full(n, others[-1])
        free = set(range(n))
        for i in rng.permutation(n):                      # a random domino layout
            if i not in free:
                continue
            r, c = divmod(int(i), cols)
            near = [j for j, ok in ((i - cols, r > 0), (i + cols, r + 1 < rows), (i - 1, c > 0),
                                    (i + 1, c + 1 < cols)) if ok and j in free]
            if near:
                j = near[rng.integers(len(near))]
                readings[i], readings[j] = pairs[rng.integers(len(pairs))]
                free -= {int(i), int(j)}
        if t % 2:                                         # and one square misread
            readings[rng.integers(n)] = pairs[rng.integers(len(pairs)), 0]
        near = _Near(readings, rows, cols, PARTNERS)
        for _ in range(20):
            choices = np.concatenate([pairs[:, 0], others])
            changes = [(int(rng.integers(n)), int(rng.choice(choices)))
                       for _ in range(int(rng.integers(1, 3)))]
            trial = readings.copy()
            for i, a in changes:
                trial[i] = a
            whole = tileable(trial, rows, cols, PARTNERS)
            assert near.tileable(changes) == whole, (readings.tolist(), rows, cols, changes)
            agree[whole] += 1
    assert agree[True] > 100 and agree[False] > 100       # both answers were asked for


def test_repair_finds_the_cheapest_change_within_a_tight_supply():
    """repair against every single and pair change tried by brute force (tileable, and no
    reading newly on more squares than the supply has), on small boards whose supply is one
    or two of each reading: the same cost, and what it returns keeps to the supply."""
    import itertools

    rng = np.random.default_rng(11)
    n_read = PARTNERS.shape[0]
    tried = found = 0
    for t in range(120):
        rows, cols = [(2, 2), (2, 3), (3, 3), (1, 4)][t % 4]
        n = rows * cols
        probs = np.zeros((n, n_read))
        for i in range(n):         # a few likely readings a square, the rest impossible
            likely = rng.choice(n_read, size=4, replace=False)
            probs[i, likely] = rng.dirichlet(np.ones(4))
        best = probs.argmax(axis=1)
        capacity = rng.integers(1, 3, size=n_read)
        counts = np.bincount(best, minlength=n_read)

        def allowed(changes):
            trial = best.copy()
            for i, a in changes:
                trial[i] = a
            c = np.bincount(trial, minlength=n_read)
            return (not np.any((c > capacity) & (c > counts))
                    and tileable(trial, rows, cols, PARTNERS))

        if tileable(best, rows, cols, PARTNERS):
            continue
        tried += 1
        options = [(float(np.log(probs[i, best[i]] / probs[i, a])), i, int(a))
                   for i in range(n) for a in np.flatnonzero(probs[i] > 0) if a != best[i]]
        options = [o for o in options if o[0] <= 6.0]
        cheapest = min([c for c, i, a in options if allowed([(i, a)])]
                       + [c1 + c2 for (c1, i, a), (c2, j, b) in itertools.combinations(options, 2)
                          if i != j and allowed([(i, a), (j, b)])], default=None)
        got = repair(probs, best, rows, cols, PARTNERS, 6.0, capacity=capacity,
                     max_pair_options=len(options))
        if cheapest is None:
            assert got is None
            continue
        found += 1
        assert got is not None and allowed(list(got.items()))
        cost = sum(np.log(probs[i, best[i]] / probs[i, a]) for i, a in got.items())
        assert cost == pytest.approx(cheapest)
    assert tried > 50 and found > 10
