"""The batch's results: rows built from the store (a person's correction wins), the results
CSV, JSON Lines and the standings (see ``docs/batch.md``)."""
from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from kingdomino import csvsafe
from kingdomino import standings as standings_mod
from kingdomino.store import Store

if TYPE_CHECKING:
    from kingdomino.batch.pool import Outcome

def _score_of(store: Store, reading: dict, rules: str, bonuses):
    """(scored JSON, review squares, corrected?, error) of a stored reading, correction first.

    Only corrections of this reading count (and of the reading it re-scores for other bonuses):
    another upload of the same bytes is another person's reading.
    """
    from kingdomino import service

    corrected = reading.get("corrected")
    if corrected is None:
        corrected = store.correction_of(reading["id"])
    if corrected:
        try:
            return service.score_grid(corrected, rules=rules, bonuses=bonuses), [], True, None
        except ValueError as exc:
            return None, [], True, f"the corrected kingdom cannot be scored: {exc}"
    if reading.get("error"):
        return None, [], False, reading["error"]
    machine = reading.get("machine") or {}
    if "score" not in machine:
        try:
            machine = service.score_grid({k: machine[k] for k in ("rules", "size", "cells")
                                          if k in machine}, rules=rules, bonuses=bonuses)
        except (ValueError, KeyError) as exc:
            return None, [], False, f"the stored reading cannot be scored: {exc}"
    return machine, list(machine.get("review") or []), False, None


def _put_score(row: dict, store: Store, reading: dict, rules: str, bonuses) -> bool:
    """Fill ``row`` with a stored reading's score (its correction first): ``corrected``, and
    ``total``, ``tiebreak``, ``review`` and ``result``, or an ``error:`` status. True when the
    reading could be scored (the caller then says its status)."""
    scored, review, corrected, error = _score_of(store, reading, rules, bonuses)
    row["corrected"] = corrected
    if error:
        row["status"] = f"error: {error}"
        return False
    score = scored["score"]
    row.update(total=score.get("total"), tiebreak=dict(score.get("tiebreak") or {}),
               review=review, result=scored)
    return True


def match_manifest(manifest: list[dict], outcomes: list[Outcome]) -> dict[int, dict]:
    """Manifest row index -> outcome index (or -1 when the photo is not among the inputs).

    A manifest photo matches an input whose source is the same, or ends with ``/photo`` or
    ``!photo`` (zip member). Raises ``ManifestError`` when it matches several inputs.
    """
    result: dict[int, int] = {}
    for m, row in enumerate(manifest):
        photo = row["photo"].replace("\\", "/")
        while photo.startswith("./"):
            photo = photo[2:]
        hits = [i for i, o in enumerate(outcomes)
                if o.item.source.replace("\\", "/") in (photo, row["photo"])
                or o.item.source.replace("\\", "/").endswith(("/" + photo, "!" + photo))]
        if len(hits) > 1:
            names = ", ".join(outcomes[i].item.source for i in hits[:3])
            raise standings_mod.ManifestError(
                f"manifest photo {row['photo']!r} matches several photos ({names}); "
                "write more of its path in the manifest")
        result[m] = hits[0] if hits else -1
    return result


CUT_REASON = ("the kingdom is cut by the photo's edge: its total is not complete; take the photo "
              "again with every kingdom whole in view, or correct the kingdom at /r/<reading_id>")


def _empty_row(source: str, status: str, **extra) -> dict:
    """A row with nothing scored yet (``extra`` fills in what is known)."""
    row = {"source": source, "total": None, "status": status, "player": "", "table": "",
           "round": "", "tiebreak": {}, "review": [], "corrected": False, "reading_id": "",
           "content_hash": "", "result": None}
    row.update(extra)
    return row


def _blank_row(source: str, status: str, **extra) -> dict:
    """A --all row with nothing scored yet: also its kingdom number, outline and reason."""
    return _empty_row(source, status, **{"kingdom": None, "corners": None, "reason": "", **extra})


def _table_rows(store: Store, o: Outcome, rules: str, bonuses) -> list[dict]:
    """--all: one row per kingdom of the photo (by number), or the photo's one error row."""
    if o.error:
        return [_blank_row(o.item.source, f"error: {o.error}",
                           content_hash=o.content_hash or "")]
    if o.reading_id is None:
        return [_blank_row(o.item.source, "error: not read (the batch was stopped)",
                           content_hash=o.content_hash or "")]
    readings = (store.table_readings(o.table_read) if o.table_read
                else [store.get(o.reading_id)])
    rows = []
    for reading in readings:
        row = _blank_row(o.item.source, "", reading_id=reading["id"],
                         content_hash=o.content_hash or "", kingdom=reading.get("kingdom"))
        machine = reading.get("machine") or {}
        row["corners"] = machine.get("corners")
        if _put_score(row, store, reading, rules, bonuses):
            if row["corrected"]:  # a person has looked at this kingdom: the correction wins
                row["status"] = "ok"
            elif machine.get("cut"):
                row["status"], row["reason"] = "review", CUT_REASON
            else:
                row["status"] = "review" if row["review"] else "ok"
        rows.append(row)
    return rows


def _name_kingdoms(rows: list[dict], manifest: list[dict], outcomes) -> None:
    """--all: the manifest's players on the rows of their kingdoms (by number); a listed
    kingdom the photo does not have, or a photo that could not be read, gives the player an
    ``error:`` row (so the standings show the player without a score)."""
    by_photo: dict[int, list[dict]] = {}
    for row in rows:
        by_photo.setdefault(row.pop("_outcome"), []).append(row)
    # the kingdoms each photo holds (before any error row is given a listed number)
    kingdoms = {i: [r for r in mine if r["kingdom"] is not None] for i, mine in by_photo.items()}
    for m, i in match_manifest(manifest, outcomes).items():
        info = manifest[m]
        names = {"player": info["player"], "table": info["table"], "round": info["round"]}
        if i < 0:
            rows.append(_blank_row(info["photo"], "error: listed in the manifest but not among "
                                   "the photos given; check the name or add the photo",
                                   kingdom=info.get("kingdom"), **names))
            continue
        mine, read = by_photo[i], kingdoms[i]
        k = info.get("kingdom")
        if not read:  # the photo could not be read: each named player gets its error
            free = next((r for r in mine if not r["player"]), None)
            if free is None:
                free = dict(mine[0], tiebreak={}, review=[])
                rows.append(free)
            free.update(kingdom=k, **names)
            continue
        if k is None and len(read) == 1:
            k = read[0]["kingdom"]  # a photo of one kingdom: that kingdom is the player's
        target = next((r for r in read if r["kingdom"] == k), None)
        if target is not None:
            target.update(names)
            continue
        if k is None:
            why = (f"the photo holds {len(read)} kingdoms: give this player's line in the "
                   "manifest its kingdom number")
        else:
            why = (f"listed in the manifest as kingdom {k}, but the photo holds {len(read)} "
                   f"kingdom(s), numbered 0 to {len(read) - 1} from the left (the game page's "
                   "kingdom 1 is 0); check the number")
        rows.append(_blank_row(outcomes[i].item.source, f"error: {why}", kingdom=k,
                               content_hash=mine[0]["content_hash"], **names))


def build_rows(store: Store, outcomes: list[Outcome], *, rules: str, bonuses=(),
               manifest: list[dict] | None = None, all_kingdoms: bool = False) -> list[dict]:
    """One row per photo (and per manifest photo not found), from the store; look-first order.

    ``all_kingdoms`` (``--all``): one row per kingdom of each photo (``kingdom``, its number;
    ``corners``; ``reason``: why a row needs a look beyond its squares, e.g. a kingdom cut by
    the photo's edge), the photo's one ``error:`` row when it holds no kingdom; the manifest
    names players by kingdom number."""
    if all_kingdoms:
        rows = []
        for i, o in enumerate(outcomes):
            for row in _table_rows(store, o, rules, bonuses):
                row["_outcome"] = i
                rows.append(row)
        if manifest:
            _name_kingdoms(rows, manifest, outcomes)
        else:
            for row in rows:
                row.pop("_outcome")
        return _look_first(rows)
    rows = []
    for o in outcomes:
        row = _empty_row(o.item.source, "", reading_id=o.reading_id or "",
                         content_hash=o.content_hash or "")
        if o.error:
            row["status"] = f"error: {o.error}"
        elif o.reading_id is None:
            row["status"] = "error: not read (the batch was stopped)"
        else:
            if _put_score(row, store, store.get(o.reading_id), rules, bonuses):
                row["status"] = "review" if row["review"] else "ok"
        rows.append(row)
    if manifest:
        for m, i in match_manifest(manifest, outcomes).items():
            info = manifest[m]
            if i < 0:
                rows.append(_empty_row(info["photo"], "error: listed in the manifest but not "
                                       "among the photos given; check the name or add the photo",
                                       _manifest=m))
                row = rows[-1]
            else:
                row = rows[i]
            row.update(player=info["player"], table=info["table"], round=info["round"])
    return _look_first(rows)


def _look_first(rows: list[dict]) -> list[dict]:
    order = {"error": 0, "review": 1, "ok": 2}
    indexed = sorted(enumerate(rows), key=lambda p: (order[p[1]["status"].split(":")[0]], p[0]))
    return [r for _, r in indexed]


def tiebreak_columns(rows) -> list[str]:
    cols: list[str] = []
    for r in rows:
        for k in r["tiebreak"]:
            if k not in cols:
                cols.append(k)
    return cols


BASE_COLUMNS = ["source", "total", "status", "player", "table", "round"]
TAIL_COLUMNS = ["review", "corrected", "reading_id", "link", "rules", "bonuses", "content_hash"]
# --all adds these (the kingdom's number after status; why it needs a look and its outline
# after review)
TABLE_COLUMNS = ["kingdom"]
TABLE_TAIL_COLUMNS = ["reason", "corners"]


def corners_text(corners) -> str:
    """A kingdom's outline in the photo as JSON ``[[x, y], ...]`` (pixels, one decimal)."""
    if not corners:
        return ""
    return json.dumps([[round(float(v), 1) for v in point] for point in corners],
                      separators=(",", ":"))


def review_for_people(review) -> str:
    """The review squares as ``[[row, column], ...]`` counted from 1, as people read (the JSON
    keeps the contract's 0-based indexes)."""
    if not review:
        return ""
    return json.dumps([[r + 1, c + 1] for r, c, *_ in review], separators=(",", ":"))


def rows_to_csv(rows, *, rules: str, bonuses=(), all_kingdoms: bool = False) -> str:
    """The results table as CSV; every cell is safe to open in a spreadsheet. ``all_kingdoms``
    (``--all``): with the columns ``kingdom`` (after ``status``), ``reason`` and ``corners``
    (after ``review``)."""
    tb = tiebreak_columns(rows)
    buf = io.StringIO()
    w = csvsafe.writer(buf, lineterminator="\n")
    if all_kingdoms:
        w.writerow(BASE_COLUMNS[:3] + TABLE_COLUMNS + BASE_COLUMNS[3:] + tb + TAIL_COLUMNS[:1]
                   + TABLE_TAIL_COLUMNS + TAIL_COLUMNS[1:])
    else:
        w.writerow(BASE_COLUMNS + tb + TAIL_COLUMNS)
    for r in rows:
        number = [] if not all_kingdoms else ["" if r["kingdom"] is None else r["kingdom"]]
        why = [] if not all_kingdoms else [r["reason"], corners_text(r["corners"])]
        w.writerow([
            r["source"], "" if r["total"] is None else r["total"], r["status"], *number,
            r["player"], r["table"], r["round"], *(r["tiebreak"].get(k, "") for k in tb),
            review_for_people(r["review"]), *why,
            "yes" if r["corrected"] else "", r["reading_id"],
            f"/r/{r['reading_id']}" if r["reading_id"] else "", rules, " ".join(sorted(bonuses)),
            r["content_hash"],
        ])
    return buf.getvalue()


def row_json(row: dict) -> dict:
    """A row as one JSON Lines object: like ``kingdomino score --json`` plus batch fields."""
    extra = {"status": row["status"], "player": row["player"], "table": row["table"],
             "round": row["round"], "reading_id": row["reading_id"] or None,
             "corrected": row["corrected"]}
    if "kingdom" in row:  # --all: the kingdom's number, outline and why it needs a look
        extra.update(kingdom=row["kingdom"], reason=row["reason"] or None)
        if row["corners"] is not None:
            extra["corners"] = row["corners"]
    if row["result"] is None:
        return {"source": row["source"], "error": row["status"].partition(": ")[2], **extra}
    return {"source": row["source"], **row["result"], **extra}


def standings_for(rows) -> list:
    entries = [
        standings_mod.Entry(player=r["player"], table=r["table"], round=r["round"],
                            source=r["source"], total=r["total"], tiebreak=r["tiebreak"],
                            status=r["status"].split(":")[0])
        for r in rows if r["player"]
    ]
    return standings_mod.build(entries)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def standings_path(out: Path) -> Path:
    return out.with_name(out.stem + "-standings.csv")


