"""Age of Giants (Kingdomino expansion): giants hide crowns; the quest tiles are the bonuses.

Per square: ``giants`` (each hides one of its crowns). The two quests drawn for the game are
chosen as bonuses by name. Rules, with how sure each value is: ``rules/EXPANSIONS.md`` (shared).
"""
from __future__ import annotations

from collections import Counter

from engine.kingdom import BASE_TERRAINS, Kingdom, square_code, square_name
from engine.messages import Message, N_
from engine.rules import (HARMONY, MIDDLE_KINGDOM, Bonus, Kingdomino, RegionScore,
                          connection_warnings, frame_filled, register, start_in_centre)

# Bleak King counts regions of these terrains only (never swamp or mine).
BLEAK_TERRAINS = ("field", "forest", "grassland", "lake")
BLEAK_MIN_SQUARES = 5
# Squares of each terrain on the 60 dominoes (48 + the 12 of the expansion).
SET_SQUARES = {"field": 30, "forest": 26, "lake": 22, "grassland": 19, "swamp": 14, "mine": 9}
WOODEN_GIANTS = 6
# quest -> (points, test, rule), as Rules.bonuses holds them; quest() scores each with its
# arithmetic. The base game's two variants are quest tiles too (engine.rules).
QUESTS = {
    "harmony": HARMONY,
    "middle-kingdom": MIDDLE_KINGDOM,
    "lost-corner": (20, None, "castle on a corner square of the frame"),
    "bleak-king": (10, None, "10 per field, forest, grassland or lake region of 5+ squares "
                             "without a visible crown"),
    "folie-des-grandeurs": (10, None, "10 per line of 3 crowned squares (lines share at most "
                                      "one square)"),
    **{f"four-corners-{t}": (5, None, f"5 per corner square of the frame that is {t}")
       for t in BASE_TERRAINS},
    **{f"local-business-{t}": (5, None, f"5 per {t} square among the 8 around the castle")
       for t in BASE_TERRAINS},
}


def crowned(cell) -> bool:
    """A square showing at least one crown (giants hide theirs; castle and empty never)."""
    return cell.is_land and cell.visible_crowns > 0


def corners(kingdom: Kingdom) -> list[tuple[int, int]]:
    last = kingdom.size - 1
    return [(0, 0), (0, last), (last, 0), (last, last)]


# a run of crowned squares as the Folie des Grandeurs reason lists it (``run``: r1c1-r1c3; ``n``:
# the lines it counts); a diagonal is named by its run alone
Q_RUN_ROW = N_("row %(row)s %(run)s (%(n)s)")
Q_RUN_COLUMN = N_("column %(col)s %(run)s (%(n)s)")
Q_RUN_DIAGONAL = N_("diagonal %(run)s (%(n)s)")


def lines_of(kingdom: Kingdom) -> list[tuple[str, int, list[tuple[int, int]]]]:
    """Every row, column and diagonal (both directions) of the grid: ``(kind, number counted
    from 1, its squares)``; a diagonal's number is 0."""
    n = kingdom.size
    out = [("row", r + 1, [(r, c) for c in range(n)]) for r in range(n)]
    out += [("column", c + 1, [(r, c) for r in range(n)]) for c in range(n)]
    for start in range(-(n - 1), n):
        down = [(r, r - start) for r in range(n) if 0 <= r - start < n]
        up = [(r, start + (n - 1) - r) for r in range(n) if 0 <= start + (n - 1) - r < n]
        out += [("diagonal", 0, line) for line in (down, up) if len(line) >= 3]
    return out


def folie_lines(kingdom: Kingdom) -> list[tuple[Message, int]]:
    """Counted lines per run: a run of k >= 3 crowned squares in a row, column or diagonal
    gives (k - 1) // 2 lines (no two counted lines share two squares: EXPANSIONS.md, literal
    reading of the clarification). Each run as its reason lists it (row 1 r1c1-r1c3 (1))."""
    found = []
    for kind, number, squares in lines_of(kingdom):
        run: list[tuple[int, int]] = []
        for rc in squares + [None]:
            if rc is not None and crowned(kingdom[rc]):
                run.append(rc)
                continue
            if len(run) >= 3:
                k = (len(run) - 1) // 2
                where = f"{square_code(*run[0])}-{square_code(*run[-1])}"
                said = (Message(Q_RUN_ROW, "n", row=number, run=where, n=k) if kind == "row" else
                        Message(Q_RUN_COLUMN, "n", col=number, run=where, n=k) if kind == "column"
                        else Message(Q_RUN_DIAGONAL, "n", run=where, n=k))
                found.append((said, k))
            run = []
    return found


def bleak_regions(regions: list[RegionScore]) -> list[RegionScore]:
    return [reg for reg in regions if reg.terrain in BLEAK_TERRAINS
            and reg.squares >= BLEAK_MIN_SQUARES and reg.crowns == 0]


# the quest tiles' reasons (templates of the catalogs; ``square`` is a square like r1c1)
Q_FILLED = N_("frame completely filled: %(points)s")
Q_EMPTY = N_("not met: %(n)s empty square(s), first %(square)s")
Q_UNFILLED = N_("not met: the kingdom does not fill its frame")
Q_NO_CASTLE = N_("not met: no castle")
Q_CENTRE = N_("castle on the centre (%(square)s): %(points)s")
Q_CORNER = N_("castle on a corner (%(square)s): %(points)s")
Q_NOT_CENTRE = N_("not met: the castle is on %(square)s, not on the centre")
Q_NOT_CORNER = N_("not met: the castle is on %(square)s, not on a corner")
Q_NO_BLEAK = N_("not met: no field, forest, grassland or lake region of %(min)s+ squares without "
                "a visible crown")
Q_BLEAK = N_("%(n)s region(s) x %(each)s = %(points)s (%(listed)s)")
Q_BLEAK_REGION = N_("%(terrain)s %(squares)s squares at %(square)s")
Q_NO_LINE = N_("not met: no 3 crowned squares in a row, column or diagonal")
Q_LINES = N_("%(n)s line(s) x %(each)s = %(points)s: %(listed)s")
Q_NO_CORNER = N_("not met: no corner square is %(terrain)s")
Q_CORNERS = N_("%(n)s %(terrain)s corner(s) x %(each)s = %(points)s (%(listed)s)")
Q_NOT_AROUND = N_("not met: no %(terrain)s square around the castle (%(square)s)")
Q_AROUND = N_("%(n)s %(terrain)s square(s) around the castle x %(each)s = %(points)s (%(listed)s)")


def quest(name: str, kingdom: Kingdom, regions: list[RegionScore]) -> Bonus:
    """One quest tile's points with the arithmetic, or 0 and why not."""
    each = QUESTS[name][0]
    start = kingdom.start
    if name == "harmony":
        if frame_filled(kingdom):
            return Bonus(name, each, Message(Q_FILLED, points=each))
        empty = [(r, c) for r, c, cell in kingdom.squares() if cell.terrain == "empty"]
        return Bonus(name, 0, Message(Q_EMPTY, "n", n=len(empty), square=square_code(*empty[0]))
                     if empty else Message(Q_UNFILLED))
    if name in ("middle-kingdom", "lost-corner"):
        if start is None:
            return Bonus(name, 0, Message(Q_NO_CASTLE))
        centre = name == "middle-kingdom"
        ok = start_in_centre(kingdom) if centre else start in corners(kingdom)
        if ok:
            return Bonus(name, each, Message(Q_CENTRE if centre else Q_CORNER,
                                             square=square_code(*start), points=each))
        return Bonus(name, 0, Message(Q_NOT_CENTRE if centre else Q_NOT_CORNER,
                                      square=square_code(*start)))
    if name == "bleak-king":
        found = bleak_regions(regions)
        if not found:
            return Bonus(name, 0, Message(Q_NO_BLEAK, min=BLEAK_MIN_SQUARES))
        listed = tuple(Message(Q_BLEAK_REGION, terrain=reg.terrain, squares=reg.squares,
                               square=square_code(*reg.cells[0])) for reg in found)
        return Bonus(name, each * len(found), Message(Q_BLEAK, "n", n=len(found), each=each,
                                                      points=each * len(found), listed=listed))
    if name == "folie-des-grandeurs":
        found = folie_lines(kingdom)
        n = sum(k for _, k in found)
        if not n:
            return Bonus(name, 0, Message(Q_NO_LINE))
        return Bonus(name, each * n, Message(Q_LINES, "n", n=n, each=each, points=each * n,
                                             listed=tuple(said for said, _ in found)))
    terrain = name.rsplit("-", 1)[1]
    if name.startswith("four-corners-"):
        hits = [rc for rc in corners(kingdom) if kingdom[rc].terrain == terrain]
        if not hits:
            return Bonus(name, 0, Message(Q_NO_CORNER, terrain=terrain))
        return Bonus(name, each * len(hits), Message(
            Q_CORNERS, "n", n=len(hits), terrain=terrain, each=each, points=each * len(hits),
            listed=", ".join(square_code(*rc) for rc in hits)))
    if start is None:
        return Bonus(name, 0, Message(Q_NO_CASTLE))
    hits = [rc for rc in kingdom.around(*start) if kingdom[rc].terrain == terrain]
    if not hits:
        return Bonus(name, 0, Message(Q_NOT_AROUND, terrain=terrain, square=square_code(*start)))
    return Bonus(name, each * len(hits), Message(
        Q_AROUND, "n", n=len(hits), terrain=terrain, each=each, points=each * len(hits),
        listed=", ".join(square_code(*rc) for rc in hits)))


TOO_MANY_GIANTS = N_("%(n)s giants, but the game has only %(have)s")
TOO_MANY_SQUARES = N_("%(n)s %(terrain)s squares, but the 60 dominoes have only %(have)s")
TOO_MANY_CROWNS = N_("%(where)s: no square shows more than 3 crowns, not %(crowns)s")
COMBINED = N_("this kingdom has %(pieces)s, which belong to the other expansion; no rulebook "
              "covers playing both, so they are scored as the reference scorer does (unofficial)")
# the other expansion's pieces, as COMBINED names them (a word of the catalogs each)
PIECES = (N_("The Court's tokens or tiles"), N_("giants (Age of Giants)"))


def giant_warnings(kingdom: Kingdom) -> list[str]:
    """Against the expansion's pieces: 60 dominoes' squares, 6 wooden giants."""
    out = []
    giants = sum(cell.giants for _, _, cell in kingdom.squares())
    if giants > WOODEN_GIANTS:
        out.append(Message(TOO_MANY_GIANTS, "n", n=giants, have=WOODEN_GIANTS))
    seen = Counter(cell.terrain for _, _, cell in kingdom.squares())
    for terrain, have in SET_SQUARES.items():
        if seen[terrain] > have:
            out.append(Message(TOO_MANY_SQUARES, "n", n=seen[terrain], terrain=terrain, have=have))
    for r, c, cell in kingdom.squares():
        if cell.crowns > 3:
            out.append(Message(TOO_MANY_CROWNS, "crowns", where=square_name(r, c), crowns=cell.crowns))
    return out


def combined_warning(pieces: str) -> list[str]:
    return [Message(COMBINED, pieces=pieces)]


@register
class AgeOfGiants(Kingdomino):
    name = "age-of-giants"
    aliases = ("giants", "aog")
    title = "Kingdomino: Age of Giants (giants, quest tiles)"
    cell_pieces = ("giants",)
    piece_options = {"giants": {"kind": "count", "min": 0, "max": 3, "label": "Giants",
                                "hint": "each giant hides one crown of this square"}}
    bonuses = QUESTS

    def region_crowns(self, kingdom, cells):
        return sum(kingdom[rc].visible_crowns for rc in cells)

    def check_terrains(self, kingdom):
        from engine.court import check_court

        super().check_terrains(kingdom)
        check_court(kingdom)   # Court tiles, when a kingdom has both expansions

    def bonus(self, name, kingdom, regions):
        return quest(name, kingdom, regions)

    def extras(self, kingdom, regions):
        from engine.court import courtier_extras, has_court

        hidden = sum(min(cell.giants, cell.crowns + cell.building_crowns)
                     for _, _, cell in kingdom.squares())
        out = {"giants": {"count": sum(cell.giants for _, _, cell in kingdom.squares()),
                          "hidden_crowns": hidden}}
        if has_court(kingdom):
            out.update(courtier_extras(kingdom))
        return out

    def tiebreak(self, kingdom, regions):
        return [("largest_region", max((r.squares for r in regions), default=0)),
                ("crowns", sum(r.crowns for r in regions))]

    def warnings(self, kingdom):
        from engine.court import court_warnings, has_court

        out = giant_warnings(kingdom)
        if has_court(kingdom):
            out += combined_warning(PIECES[0]) + court_warnings(kingdom)
        return out + connection_warnings(kingdom, self.start_terrain)
