"""Standings: official tie-breaks (hand-worked), Dynasty sums, manifest parsing."""
from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kingdomino import standings as S


def entry(player, total, largest=0, crowns=0, table="T", rnd="1", status="ok"):
    return S.Entry(player=player, table=table, round=rnd, total=total,
                   tiebreak={"largest_region": largest, "crowns": crowns}, status=status)


def places(result, scope="game"):
    return [(s.place, s.player) for s in result if s.scope == scope]


def test_game_tiebreaks_largest_region_then_crowns_then_shared():
    game = [
        entry("ann", 40, largest=6, crowns=8),   # loses to bob on the largest region
        entry("bob", 40, largest=7, crowns=5),   # loses to cat/dan on crowns
        entry("cat", 40, largest=7, crowns=9),
        entry("dan", 40, largest=7, crowns=9),   # equal with cat on everything: shared
        entry("eve", 52, largest=2, crowns=1),   # the total decides first
        entry("fay", None, status="error"),       # unreadable: no place, listed last
    ]
    result = S.rank_game(game)
    assert [(s.place, s.player) for s in result] == [
        (1, "eve"), (2, "cat"), (2, "dan"), (4, "bob"), (5, "ann"), (None, "fay")]
    assert [s.shared for s in result] == [False, True, True, False, False, False]
    assert result[-1].missing == 1 and result[-1].needs_look == 1


def test_tiebreak_order_comes_from_the_score():
    # a rule set whose only tie-break is the largest region (Queendomino): crowns play no part
    a = S.Entry("a", "T", "1", total=30, tiebreak={"largest_region": 5})
    b = S.Entry("b", "T", "1", total=30, tiebreak={"largest_region": 5})
    assert [(s.place, s.shared) for s in S.rank_game([a, b])] == [(1, True), (1, True)]
    # the order of the keys decides: crowns first here
    c = S.Entry("c", "T", "1", total=30, tiebreak={"crowns": 9, "largest_region": 1})
    d = S.Entry("d", "T", "1", total=30, tiebreak={"crowns": 2, "largest_region": 8})
    assert [s.player for s in S.rank_game([d, c])] == ["c", "d"]


def test_dynasty_three_games_summed_per_table_and_overall():
    games = [
        # table T, rounds 1-3: ann 30+20+25 = 75, bob 25+25+25 = 75, cat 40+10+20 = 70
        entry("ann", 30, 9, 9, "T", "1"), entry("bob", 25, 1, 1, "T", "1"), entry("cat", 40, 1, 1, "T", "1"),
        entry("ann", 20, 9, 9, "T", "2"), entry("bob", 25, 1, 1, "T", "2"), entry("cat", 10, 1, 1, "T", "2"),
        entry("ann", 25, 9, 9, "T", "3"), entry("bob", 25, 1, 1, "T", "3"), entry("cat", 20, 1, 1, "T", "3"),
        # table U: dan 80 in total, eve 74 with one game unreadable
        entry("dan", 30, table="U", rnd="1"), entry("eve", 40, table="U", rnd="1"),
        entry("dan", 30, table="U", rnd="2"), entry("eve", 34, table="U", rnd="2"),
        entry("dan", 20, table="U", rnd="3"), entry("eve", None, table="U", rnd="3", status="error"),
    ]
    result = S.build(games)
    table_t = [(s.place, s.player, s.total, s.shared) for s in result
               if s.scope == "table" and s.table == "T"]
    # Dynasty totals: no tie-break is named, so ann and bob share first place
    assert table_t == [(1, "ann", 75, True), (1, "bob", 75, True), (3, "cat", 70, False)]
    overall = [(s.place, s.player, s.total) for s in result if s.scope == "overall"]
    assert overall == [(1, "dan", 80), (2, "ann", 75), (2, "bob", 75), (4, "eve", 74), (5, "cat", 70)]
    eve = next(s for s in result if s.scope == "overall" and s.player == "eve")
    assert (eve.games, eve.missing, eve.needs_look) == (3, 1, 1)
    # every game ranked on its own, rounds in numeric order
    assert [(s.round, s.table) for s in result if s.scope == "game"][:3] == [("1", "T")] * 3
    round2_t = [(p, n) for p, n in places([s for s in result if s.round == "2" and s.table == "T"])]
    assert round2_t == [(1, "bob"), (2, "ann"), (3, "cat")]


def test_rounds_sort_numerically():
    result = S.build([entry("a", 1, rnd="10"), entry("a", 1, rnd="2"), entry("a", 1, rnd="1")])
    assert [s.round for s in result if s.scope == "game"] == ["1", "2", "10"]


def test_standings_csv_round_trips_places():
    text = S.to_csv(S.build([entry("a", 10, 3, 1), entry("b", 10, 3, 1), entry("c", 5)]))
    rows = list(csv.DictReader(io.StringIO(text)))
    game = [(r["place"], r["shared"], r["player"], r["largest_region"]) for r in rows if r["scope"] == "game"]
    assert game == [("1", "yes", "a", "3"), ("1", "yes", "b", "3"), ("3", "", "c", "0")]
    assert "scope,round,table,place,shared,player,total,largest_region,crowns" in text.splitlines()[0]


scores = st.tuples(st.integers(0, 60), st.integers(1, 12), st.integers(0, 20))


@settings(max_examples=60, deadline=None)
@given(st.lists(scores, min_size=1, max_size=6))
def test_game_ranking_agrees_with_the_engine(values):
    import engine

    players = [(f"p{i}", {"rules": "kingdomino", "total": t,
                          "tiebreak": {"largest_region": lr, "crowns": cr}})
               for i, (t, lr, cr) in enumerate(values)]
    ours = {s.player: (s.place, s.shared) for s in S.rank_game(
        [S.Entry(name, "T", "1", total=obj["total"], tiebreak=obj["tiebreak"]) for name, obj in players])}
    theirs = {r["player"]: (r["place"], r["shared"]) for r in engine.rank(players)}
    assert ours == theirs


def test_manifest_parsing():
    rows = S.read_manifest("\ufeffPhoto, Player ,Table,Round\n a.jpg ,Ann,1,1\n\n,,,\nb.jpg,Bob,1,1\n")
    assert rows == [{"photo": "a.jpg", "player": "Ann", "table": "1", "round": "1"},
                    {"photo": "b.jpg", "player": "Bob", "table": "1", "round": "1"}]
    assert S.read_manifest("photo,player\nx.jpg,Xi\n")[0] == {
        "photo": "x.jpg", "player": "Xi", "table": "", "round": ""}


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("file,name\na,b\n", "no photo or player column"),
    ("photo,table\na,1\n", "no player column"),
    ("photo,player\na.jpg,\n", "line 2"),
    ("photo,player,round\na.jpg,A,1\na.jpg,B,1\n", "already listed on line 2"),
    ("photo,player,round\na.jpg,A,1\nb.jpg,A,1\n", "already has a photo"),
    ("photo,player\n", "lists no photos"),
])
def test_manifest_errors_say_what_to_fix(text, message):
    with pytest.raises(S.ManifestError, match=message):
        S.read_manifest(text)
    assert issubclass(S.ManifestError, ValueError)
