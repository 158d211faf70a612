"""Tournament standings from scored photos: per game, per table (Dynasty) and overall.

A *manifest* says whose kingdom each photo shows: CSV with the columns ``photo`` and ``player``
and, optionally, ``table`` and ``round`` (and, for whole-table photos read by ``kingdomino batch
--all``, ``kingdom``: the kingdom's number in the photo). Every game (one round at one table) is
ranked with the rule set's official tie-breaks (by ``engine.rank``), taken in order from the
score's ``"tiebreak"`` object that the engine fills (Kingdomino: largest region, then crowns; players still equal share the place).

Across rounds a player's totals are added (Kingdomino *Dynasty*: three games summed). The rules
name no tie-break for Dynasty totals, so, as in ``engine.dynasty``, equal sums share the place.

Places are shared "1, 1, 3" style. A player whose photo could not be read has no score for that
game: in the game's ranking the player comes last without a place, and in the sums the game is
counted as missing (``missing`` column) so that the organiser knows the total is not final.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from engine import rank as engine_rank
from kingdomino import csvsafe


class ManifestError(ValueError):
    """The manifest CSV cannot be used; the message says which line and how to fix it."""


@dataclass
class Entry:
    """One player's result in one game (the photo of their kingdom)."""

    player: str
    table: str
    round: str
    source: str | None = None
    total: int | None = None  # None: no score (photo missing or unreadable)
    tiebreak: dict = field(default_factory=dict)
    status: str = "ok"


@dataclass
class Standing:
    scope: str  # "game", "table" or "overall"
    round: str
    table: str
    place: int | None
    player: str
    total: int
    tiebreak: dict
    games: int
    missing: int
    needs_look: int
    shared: bool = False


MANIFEST_COLUMNS = ("photo", "player", "table", "round")


def _kingdom_number(value: str, line: int) -> int:
    if not value.isdigit() or len(value) > 3:
        raise ManifestError(
            f"manifest line {line}: kingdom {value!r} is not a kingdom number; write 0, 1, 2 "
            "or 3 (the kingdom's number in the table photo, counted from 0 as in the JSON of "
            "`kingdomino score PHOTO --all --json`: 0 is the leftmost, the one the game page "
            "and the text output call kingdom 1), or leave it empty for a photo of one kingdom")
    return int(value)


def read_manifest(text: str, kingdoms: bool = False) -> list[dict]:
    """Parse manifest CSV text into rows with the keys photo, player, table, round (strings).

    With ``kingdoms`` (``kingdomino batch --all``) an optional ``kingdom`` column names the
    players of a whole-table photo by kingdom number: such a row also has ``"kingdom": k``, and
    when it gives no table and no round its game is the photo (``table`` is the photo's name).
    A row without a kingdom number keeps its meaning: the photo shows that player's kingdom.
    Without ``kingdoms`` a kingdom number is refused (``ManifestError``)."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    try:
        return _manifest_rows(reader, kingdoms)
    except csv.Error as exc:  # what the csv module cannot split into fields at all
        line = max(reader.reader.line_num, 1)  # the DictReader's own count lags a row behind
        raise ManifestError(f"manifest line {line}: {_csv_problem(exc)}") from None


def _csv_problem(exc: csv.Error) -> str:
    """The csv module's complaint as a sentence for the person who wrote the manifest."""
    text = str(exc)
    if "field limit" in text:
        return (f"a field is longer than {csv.field_size_limit() // 1024} KB; a manifest holds "
                "photo names and players: is it the right file?")
    if "new-line" in text:
        return ("a line break inside a field that is not in double quotes (a lone carriage "
                "return?); put that field in double quotes, or save the file again as CSV")
    return f"not a CSV line this program can read ({text[:200]})"


def _manifest_rows(reader: csv.DictReader, kingdoms: bool) -> list[dict]:
    if not reader.fieldnames:
        raise ManifestError("the manifest is empty: give a CSV with the header photo,player,table,round")
    names = {(name or "").strip().lower(): name for name in reader.fieldnames}
    missing = [c for c in ("photo", "player") if c not in names]
    if missing:
        raise ManifestError(
            f"the manifest has no {' or '.join(missing)} column; its first line must be a header "
            f"such as photo,player,table,round (found: {','.join(reader.fieldnames)[:200]})"
        )
    rows, seen, games = [], {}, {}
    for line, raw in enumerate(reader, start=2):
        row = {c: (raw.get(names[c]) or "").strip() if c in names else "" for c in MANIFEST_COLUMNS}
        number = (raw.get(names["kingdom"]) or "").strip() if "kingdom" in names else ""
        if not any(row.values()) and not number:
            continue
        if not row["photo"] or not row["player"]:
            raise ManifestError(f"manifest line {line}: both photo and player are needed")
        if number:
            if not kingdoms:
                raise ManifestError(
                    f"manifest line {line}: a kingdom number names a kingdom of a whole-table "
                    "photo; read the photos with `kingdomino batch --all`, or leave the kingdom "
                    "column empty when each photo shows one kingdom")
            row["kingdom"] = _kingdom_number(number, line)
        spot = (row["photo"], row.get("kingdom"))
        # a photo is one player's, or each of its kingdoms (by number) is one player's
        first = seen.get(spot) or seen.get((row["photo"], None)) or (
            None if "kingdom" in row else min((n for (p, _), n in seen.items()
                                               if p == row["photo"]), default=None))
        if first:
            what = (f"kingdom {row['kingdom']} of photo {row['photo']!r}" if spot in seen
                    and "kingdom" in row else f"photo {row['photo']!r}")
            raise ManifestError(
                f"manifest line {line}: {what} is already listed on line {first}; one photo "
                "shows one player's kingdom (a whole-table photo: one line per kingdom, each "
                "with its number in the kingdom column)"
            )
        seen[spot] = line
        if "kingdom" in row and not row["table"] and not row["round"]:
            row["table"] = row["photo"]  # a table photo is one game unless the manifest says
        key = (row["player"], row["table"], row["round"])
        if key in games:
            raise ManifestError(
                f"manifest line {line}: player {row['player']!r} already has a photo for "
                f"round {row['round'] or '(none)'} at table {row['table'] or '(none)'} on line "
                f"{games[key]}; give each game its own round"
            )
        games[key] = line
        rows.append(row)
    if not rows:
        raise ManifestError("the manifest lists no photos")
    return rows


def _tiebreak_order(entries) -> list[str]:
    order: list[str] = []
    for e in entries:
        for k in e.tiebreak:
            if k not in order:
                order.append(k)
    return order


def _assign_places(items: list[tuple[int | None, dict, object]]):
    """items: (total or None, tie-break values, payload). Ranked by ``engine.rank`` (total, then
    the tie-breaks in order; equal players share a place); payloads without a total come last,
    unplaced. Returns ``(place, shared, payload)`` best first."""
    scored = [(t, tb, payload) for t, tb, payload in items if t is not None]
    standings = engine_rank([(str(i), {"total": t, "tiebreak": tb})
                             for i, (t, tb, _) in enumerate(scored)])
    out = [(s["place"], s["shared"], scored[int(s["player"])][2]) for s in standings]
    out.extend((None, False, payload) for t, _, payload in items if t is None)
    return out


def rank_game(entries: list[Entry]) -> list[Standing]:
    """Rank one game: total, then the tie-breaks in the engine's order, then a shared place."""
    order = _tiebreak_order(entries)
    items = [(e.total, {k: e.tiebreak.get(k, 0) or 0 for k in order}, e) for e in entries]
    result = []
    for place, shared, e in _assign_places(items):
        result.append(Standing(
            scope="game", round=e.round, table=e.table, place=place, player=e.player,
            total=e.total or 0, tiebreak={k: e.tiebreak.get(k, 0) for k in order}, games=1,
            missing=int(e.total is None), needs_look=int(e.status != "ok"), shared=shared,
        ))
    return result


def _rank_sums(entries: list[Entry], scope: str, table: str) -> list[Standing]:
    players: dict[str, dict] = {}
    for e in entries:
        p = players.setdefault(e.player, {"total": 0, "tb": {}, "games": 0,
                                          "missing": 0, "look": 0, "scored": 0})
        p["games"] += 1
        p["look"] += int(e.status != "ok")
        if e.total is None:
            p["missing"] += 1
            continue
        p["scored"] += 1
        p["total"] += e.total
    items = [(None if p["scored"] == 0 else p["total"], {}, (name, p))
             for name, p in players.items()]
    return [
        Standing(scope=scope, round="", table=table, place=place, player=name, total=p["total"],
                 tiebreak=p["tb"], games=p["games"], missing=p["missing"], needs_look=p["look"],
                 shared=shared)
        for place, shared, (name, p) in _assign_places(items)
    ]


def _natural(value: str):
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


def build(entries: list[Entry]) -> list[Standing]:
    """Every game ranked, then each table's sums over rounds, then the overall sums."""
    out: list[Standing] = []
    games: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        games.setdefault((e.round, e.table), []).append(e)
    for (rnd, table) in sorted(games, key=lambda k: (_natural(k[0]), _natural(k[1]))):
        out.extend(rank_game(games[(rnd, table)]))
    tables: dict[str, list[Entry]] = {}
    for e in entries:
        tables.setdefault(e.table, []).append(e)
    for table in sorted(tables, key=_natural):
        out.extend(_rank_sums(tables[table], "table", table))
    out.extend(_rank_sums(entries, "overall", ""))
    return out


def to_csv(standings: list[Standing]) -> str:
    """The standings as CSV text (one header; scope says which ranking a line belongs to); every
    cell is safe to open in a spreadsheet (``kingdomino.csvsafe``)."""
    order: list[str] = []
    for s in standings:
        for k in s.tiebreak:
            if k not in order:
                order.append(k)
    buf = io.StringIO()
    w = csvsafe.writer(buf, lineterminator="\n")
    w.writerow(["scope", "round", "table", "place", "shared", "player", "total", *order,
                "games", "missing", "needs_look"])
    for s in standings:
        w.writerow([s.scope, s.round, s.table, "" if s.place is None else s.place,
                    "yes" if s.shared else "", s.player, s.total,
                    *(s.tiebreak.get(k, "") for k in order), s.games, s.missing, s.needs_look])
    return buf.getvalue()


def format_table(standings: list[Standing], scope: str = "overall", limit: int = 20) -> str:
    """A short text table of one scope, for the terminal."""
    rows = [s for s in standings if s.scope == scope]
    if not rows:
        return ""
    lines = [f"{'place':>5}  {'player':<20} {'total':>6} {'games':>5}  note"]
    for s in rows[:limit]:
        place = "-" if s.place is None else (f"={s.place}" if s.shared else str(s.place))
        note = []
        if s.missing:
            note.append(f"{s.missing} photo(s) unreadable")
        look = s.needs_look - s.missing  # the unreadable ones are said above
        if look > 0:
            note.append(f"{look} photo(s) to check")
        lines.append(f"{place:>5}  {s.player[:20]:<20} {s.total:>6} {s.games:>5}  {', '.join(note)}")
    if len(rows) > limit:
        lines.append(f"  ... and {len(rows) - limit} more (see the standings CSV)")
    return "\n".join(lines)
