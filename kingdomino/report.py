"""Readable text for a scored result (the CLI's table without ``--json``).

Works from the contract's JSON only (``obj["score"]`` as ``engine.Score.to_json`` gives it), so
it can print any result: from a photo, a grid, or a stored one. The words a person reads (column
heads, the legend, terrain and bonus names) follow LANG / LC_MESSAGES through the web app's
catalogs (``kingdomino.i18n``); the columns line up by display width (a CJK character takes two).
"""
from __future__ import annotations

import re
import unicodedata

from kingdomino import i18n
from kingdomino.i18n import N_


def _identity(message: str) -> str:
    return message


_ = _identity  # the language of the table being made (format_result sets it)
_say = _identity  # ... and of the engine's sentences (warnings, reasons: i18n.render)
_tr = None  # ... its catalog (None: English)
_rules = None  # ... and its rule set, whose rulebook's words it uses (i18n.word)


def _word(message: str) -> str:
    """A word of the game in the table's language, as its rule set's rulebook says it."""
    return message if _tr is None else i18n.word(_tr, message, _rules)


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _ljust(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _rjust(text, width: int) -> str:
    text = str(text)
    return " " * max(0, width - _width(text)) + text


def _terrain(name: str) -> str:
    """A terrain's (or a Domain region's, "domain") name in the table's words."""
    return _word(i18n.TERRAINS.get(name, name))


_WIDTH = 56  # the points column ends here: regions, extras, bonuses and the total line up
_LABEL = _WIDTH - 24  # the region column, before squares, crowns and points (8 each)


def _row(label: str, points) -> str:
    return _ljust(label, _WIDTH - 8) + _rjust(points, 8)


def _pack(items: list[str], first: str, then: str) -> list[str]:
    """``items`` joined by the language's comma into lines of at most the table's width (an
    item stays whole)."""
    comma = _comma()
    space = " " if comma.endswith(" ") else ""  # "F field, W forest"; "F 麥田、W 森林"
    lines, line = [], first
    for i, item in enumerate(items):
        piece = item + (comma.rstrip() if i < len(items) - 1 else "")
        if line.strip() and _width(line) + len(space) + _width(piece) > _WIDTH:
            lines.append(line)
            line = then
        line += (space if line.strip() else "") + piece
    return lines + [line]


def square(rc) -> str:
    """A square as a person names it: ``r1c1`` is the top-left one (JSON counts from 0)."""
    try:
        return f"r{int(rc[0]) + 1}c{int(rc[1]) + 1}"
    except (TypeError, ValueError, IndexError):
        return "r?c?"


def _legend(grid: list[str]) -> list[str]:
    """What the letters and marks of the printed grid stand for (only those it uses)."""
    import engine.kingdom as ek

    tokens = " ".join(grid).split()
    used = {t[0].upper() for t in tokens if t}
    letters = [f"{letter} {_terrain(terrain)}" for letter, terrain in ek.LETTERS.items()
               if letter in used]
    lines = _pack(letters + [_("a digit after the letter: its crowns")], "  ", "  ") if letters else []
    marks = [(mark, what) for mark, what in (("+", N_("fire token")), ("@", N_("resource or courtier")),
                                              ("!", N_("caveman")), ("^", N_("warrior power")))
             if any(mark in t for t in tokens)]
    # The expansions' marks right after the crowns (F1g, F0r, F0b2)
    marks += [(mark, what) for mark, what, pattern in (
        ("g", N_("giant"), r"\dg"), ("r", N_("resource token"), r"\d[g]*r"),
        ("bN", N_("building of N crowns"), r"\db\d"))
        if any(re.search(pattern, t) for t in tokens)]
    if marks:
        lines.append("  " + _comma().join(f"{m} {_word(what)}" for m, what in marks))
    return lines


def _grid(obj: dict) -> list[str]:
    """The kingdom as the text grid (one token per square), when it is there and readable."""
    try:
        import engine

        kingdom = engine.Kingdom.from_json({k: obj[k] for k in ("rules", "size", "cells") if k in obj})
    except (ValueError, KeyError, TypeError):
        return []
    return [line for line in kingdom.to_text().splitlines()
            if line and not line.startswith(("rules:", "building ", "coins:", "knights:", "queen:",
                                              "totems:", "frame:"))]


def _extras(score: dict) -> list[str]:
    lines = []
    coins = score.get("coins")
    if isinstance(coins, dict):
        lines.append(_row(_("coins (%(n)s // 3)") % {"n": coins.get("coins", 0)},
                          coins.get("points", 0)))
    buildings = score.get("buildings")
    if isinstance(buildings, dict):
        for b in buildings.get("list", []):
            cell = b.get("cell", ["?", "?"])
            label = _("building %(name)s %(square)s (%(why)s)") % {
                "name": b.get("name", "?"), "square": square(cell), "why": _say(b.get("reason", ""))}
            lines.append(_row(label[:_WIDTH - 9], b.get("points", 0)))
    queen = score.get("queen")
    if isinstance(queen, dict) and queen.get("hosted"):
        lines.append("  " + _("(queen on the %(terrain)s of %(squares)s squares: +%(adds)s "
                              "included above)") % {"terrain": _terrain(str(queen.get("terrain"))),
                                                    "squares": queen.get("squares"),
                                                    "adds": queen.get("adds")})
    resources = score.get("resources")
    if isinstance(resources, dict):
        count = _comma().join(f"{n} {_word(k)}" for k, n in resources.get("count", {}).items() if n)
        lines.append(_row((_("resources (%(count)s)") % {"count": count or _("none")})[:_WIDTH - 9],
                          resources.get("points", 0)))
    totems = score.get("totems")
    if isinstance(totems, dict):
        held = _comma().join(_word(k) for k in totems.get("held", [])) or _("none")
        lines.append(_row(_("totems (%(held)s)") % {"held": held}, totems.get("points", 0)))
    cavemen = score.get("cavemen")
    if isinstance(cavemen, dict):
        for m in cavemen.get("list", []):
            cell = m.get("cell", ["?", "?"])
            said = _("%(who)s %(square)s (%(why)s)") % {
                "who": _word(str(m.get("caveman"))), "square": square(cell),
                "why": _say(m.get("reason", ""))}
            lines.append(_row(said[:_WIDTH - 9], m.get("points", 0)))
    courtiers = score.get("courtiers")
    if isinstance(courtiers, dict):
        for m in courtiers.get("list", []):
            lines.append(_row(str(_say(m.get("reason", "")))[:_WIDTH - 9], m.get("points", 0)))
    warriors = score.get("warriors")
    if isinstance(warriors, dict):
        for g in warriors.get("groups", []):
            lines.append(_row(_("warriors %(size)s x power %(power)s") % {
                "size": g.get("size"), "power": g.get("power")}, g.get("points", 0)))
    income = score.get("income")
    if isinstance(income, dict):
        kinds = _comma().join(_terrain(k) for k in income.get("mine_kinds", [])) or _("no mines")
        lines.append(_("income: %(n)s coin(s) a turn (%(kinds)s)") % {
            "n": income.get("coins", 0), "kinds": kinds})
    return lines


def _nothing_worth(regions: list[dict]) -> list[str]:
    """The regions worth 0 points as one row, their terrains and sizes folded under it."""
    zero = [r for r in regions if not r.get("points", 0)]
    if not zero:
        return []
    if _ is _identity:
        label = f"{len(zero)} region{'s' if len(zero) != 1 else ''} without crowns"
    else:
        label = _word("%(n)s regions without crowns") % {"n": len(zero)}
    squares = sum(r.get("squares", 0) for r in zero)
    lines = [_ljust(label, _LABEL) + _rjust(squares, 8) + _rjust(0, 8) + _rjust(0, 8)]
    details = [f"{_terrain(r.get('terrain', '?'))} {r.get('squares', 0)}" for r in zero]
    opening, closing = _("(%(items)s)").split("%(items)s")  # （…） in Chinese
    details[0], details[-1] = opening + details[0], details[-1] + closing
    lines.extend(_pack(details, "  ", "   "))
    return lines


def format_result(obj: dict, locale: str | None = None) -> str:
    """A table of regions, extras, bonuses and the total, for one scored kingdom, in ``locale``
    (default: the language LANG / LC_MESSAGES name, see ``kingdomino.i18n``)."""
    global _, _say, _tr, _rules
    locale = locale or i18n.locale_from_environment()
    _rules = (obj.get("score") or {}).get("rules") or obj.get("rules")
    _tr = None if locale == i18n.DEFAULT else i18n.translations(locale)
    _ = _identity if _tr is None else _tr.gettext
    _say = _identity if _tr is None else i18n.render_for(locale, _rules)
    try:
        return _format_result(obj)
    finally:
        _ = _say = _identity
        _tr = _rules = None


def _comma() -> str:
    """What joins a list's items in the table's language (、 in Chinese)."""
    return ", " if _tr is None else i18n.list_comma(_tr)


def _format_result(obj: dict) -> str:
    lines = []
    score = obj.get("score", {}) or {}
    title = str(obj["source"]) if obj.get("source") else _("kingdom")
    rules = score.get("rules") or obj.get("rules")
    lines.append(f"{title}" + (f"  [{rules}, {obj.get('size')}x{obj.get('size')}]"
                                if rules and obj.get("size") else ""))
    grid = _grid(obj)
    lines.extend("  " + line for line in grid)
    lines.extend(_legend(grid))
    lines.append(_ljust(_word("region"), _LABEL) + _rjust(_("squares"), 8) + _rjust(_("crowns"), 8)
                 + _rjust(_("points"), 8))
    regions = score.get("regions", [])
    for region in regions:
        if region.get("points", 0):
            terrain = _terrain(region.get("terrain", "?")) + (" +" + _("queen") if region.get("queen") else "")
            lines.append(_ljust(terrain, _LABEL) + _rjust(region.get("squares", 0), 8)
                         + _rjust(region.get("crowns", 0), 8) + _rjust(region.get("points", 0), 8))
    lines.extend(_nothing_worth(regions))
    lines.extend(_extras(score))
    for bonus in score.get("bonuses", []):
        name = bonus.get("name", "?")
        name = _(i18n.BONUSES[name]) if name in i18n.BONUSES else name
        lines.append(_row(_("bonus") + " " + name, bonus.get("points", 0)))
        if not bonus.get("points") or " = " in str(bonus.get("reason", "")):
            lines.append(f"  ({_say(bonus.get('reason', ''))})")  # not met: why; quests: the arithmetic
    lines.append(" " * (_WIDTH - 8) + "-" * 8)
    lines.append(_row(_("total"), score.get("total", 0)))
    tiebreak = score.get("tiebreak") or {}
    if tiebreak:
        # "平手判定：最大相連資產 4 格，其次是皇冠 13 頂": the language's punctuation and words
        lines.append(_("tie-break: %(order)s") % {
            "order": i18n.tiebreak_order(_tr, tiebreak, _rules)})
    # a reading's warnings (the reader's, e.g. the size it read, then the score's: see
    # kingdomino.service.score_reading), or a scored grid's (the score's alone)
    warnings = list(obj.get("warnings") or [])
    warnings += [w for w in score.get("warnings", []) if w not in warnings]
    for warning in warnings:
        lines.append(_("warning:") + " " + str(_say(warning)))
    learned = obj.get("learned")  # read with examples a store's corrections taught
    if isinstance(learned, int) and not isinstance(learned, bool) and learned > 0:
        lines.append(_("Read with what 1 corrected square taught") if learned == 1 else
                     _("Read with what %(n)s corrected squares taught") % {"n": learned})
    if obj.get("review"):
        squares = ", ".join(square(rc) for rc in obj["review"])
        lines.append(_("check by eye (r1c1 is the top-left square):") + " " + squares)
    return "\n".join(lines)
