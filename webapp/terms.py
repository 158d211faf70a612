"""The game's words as the pages show them, in the page's language (``webapp/translations``).

The JSON and CSV keep the machine names (``field``, ``middle-kingdom``: the contract); only what
a person reads is translated. Each English name below is a message of the catalogs (``N_``
marks it for ``pybabel extract``), so a language's ``.po`` file holds its rulebook's words.
"""
from __future__ import annotations

from flask_babel import get_locale, get_translations, gettext

from kingdomino import i18n
from kingdomino.i18n import BONUSES, DEFAULT, TERRAINS, N_

# the engine's rule-set titles (engine/rules.py and friends), as the forms show them
RULE_TITLES = (
    N_("Kingdomino (base game; 7x7 = Mighty Duel)"),
    N_("Domain (per walled domain; income per kind of mine)"),
    N_("Kingdomino Origins, Discovery mode (7x7 = Neolithic)"),
    N_("Kingdomino Origins, Totem mode"),
    N_("Kingdomino Origins, Tribe mode"),
    N_("Kingdomino: The Court (resources, buildings, courtiers)"),
    N_("Kingdomino: Age of Giants (giants, quest tiles)"),
    N_("Queendomino"),
)

# the error pages' headings (werkzeug's names of the HTTP codes the app answers with)
HTTP_NAMES = (N_("Bad Request"), N_("Server error"), N_("Forbidden"), N_("Not Found"), N_("Method Not Allowed"),
              N_("Request Entity Too Large"), N_("Unprocessable Entity"),
              N_("Too Many Requests"), N_("Service Unavailable"), N_("Internal Server Error"))


def terrain_name(terrain: str, rules: str | None = None) -> str:
    """A terrain's (or a Domain region's) name in the page's language, in the words of
    ``rules``' rulebook."""
    name = TERRAINS.get(terrain) or i18n.REGION_NAMES.get(terrain)
    return i18n.word(get_translations(), name, rules) if name else terrain


def bonus_title(name: str) -> str:
    return gettext(BONUSES[name]) if name in BONUSES else name


def pieces_note(rules) -> str:
    """What a photo reading under ``rules`` leaves for a person to add (giants, Court tiles,
    ...: ``kingdomino.service.pieces_not_read``) in the page's language; "" when nothing."""
    from kingdomino.service import pieces_not_read

    said = pieces_not_read(rules)
    if said is None:
        return ""
    if str(get_locale() or DEFAULT) == DEFAULT:
        return str(said)
    return str(i18n.render(said, get_translations()))


def rules_title(title: str) -> str:
    """A rule set's title (the engine's English one) in the page's language."""
    return gettext(title) if title else title


def page_names(meta: list[dict]) -> dict:
    """The names the result page's script shows, in the page's language (machine name -> name);
    ``rulebooks``: each rule set whose rulebook has words of its own -> the context its words
    are looked up with (``KDI18N.p_``), ``terrains_of``: its terrains' names where they differ."""
    terrains = {t: terrain_name(t) for t in (*TERRAINS, *i18n.REGION_NAMES)}
    own = {}
    for m in meta:
        if i18n.rulebook(m["name"]):
            differ = {t: terrain_name(t, m["name"]) for t in terrains}
            own[m["name"]] = {t: name for t, name in differ.items() if name != terrains[t]}
    return {
        "terrains": terrains,
        "terrains_of": {name: names for name, names in own.items() if names},
        "rulebooks": {m["name"]: i18n.rulebook(m["name"]) for m in meta if i18n.rulebook(m["name"])},
        "bonuses": {b: bonus_title(b) for m in meta for b in m["bonuses"]},
        "rules": {m["name"]: rules_title(m["title"] or m["name"]) for m in meta},
    }


def say(text, rules: str | None = None) -> str:
    """An engine, reader or photo sentence (English, as stored) in the page's language; text
    that is no template's comes back as it is."""
    if not text or str(get_locale() or DEFAULT) == DEFAULT:
        return text
    return i18n.render(text, get_translations(), rules=rules)


def status_text(status: str) -> str:
    """A batch row's status (ok, review, or "error: <why>") in the page's language."""
    status = str(status or "")
    if status.startswith("error: "):
        return gettext("error: %(message)s", message=say(status[len("error: "):]))
    return gettext(status) if status else status


def tiebreak_text(tiebreak: dict, rules: str | None = None) -> str:
    """"Tie-break: largest region 4, then crowns 13" in the page's language."""
    order = i18n.tiebreak_order(get_translations(), tiebreak, rules)
    return gettext("Tie-break: %(order)s", order=order) if order else ""


# the most engine sentences one request may ask to have translated (POST /i18n/texts), the
# longest one (the engine's longest, a 9x9 kingdom's list of squares, is well under it) and the
# most characters in all (a score's sentences are a few thousand)
MAX_TEXTS = 500
MAX_TEXT_CHARS = 1000
MAX_TEXTS_CHARS = 100_000


def score_texts(score: dict | None) -> list[str]:
    """The engine's sentences a score shows a person: warnings, bonus reasons, the extras'
    reasons and their lists' (courtiers, buildings, cavemen)."""
    out = []
    if not isinstance(score, dict):
        return out
    out += [w for w in score.get("warnings") or [] if isinstance(w, str)]
    out += [b.get("reason") for b in score.get("bonuses") or [] if isinstance(b, dict)]
    for value in score.values():
        if isinstance(value, dict):
            out.append(value.get("reason"))
            out += [x.get("reason") for x in value.get("list") or [] if isinstance(x, dict)]
    return [t for t in dict.fromkeys(out) if isinstance(t, str) and t]


def engine_texts(texts, rules: str | None = None) -> dict:
    """English sentence -> the page's language, for the sentences of ``texts`` that the
    catalogs translate (none on English pages: the page shows the English text itself), in the
    words of ``rules``' rulebook."""
    if str(get_locale() or DEFAULT) == DEFAULT:
        return {}
    tr = get_translations()
    out = {}
    for text in texts:
        said = i18n.render(text, tr, rules=rules)
        if said != text:
            out[text] = said
    return out


# Names the result page's script looks up by the engine's own word (KDI18N._(name)): the score's
# extra lines and tie-break keys (underscores as spaces), the expansions' pieces, batch states.
SCRIPT_WORDS = (
    N_("largest region"), N_("crowns"), N_("fire"),
    N_("coins"), N_("buildings"), N_("queen"), N_("courtiers"), N_("court buildings"),
    N_("tokens"), N_("domains"), N_("income"), N_("giants"), N_("resources"), N_("totems"),
    N_("cavemen"), N_("warriors"),
    N_("mammoth"), N_("fish"), N_("mushroom"), N_("flint"),
    N_("hunter"), N_("fishing-child"), N_("gatherer"), N_("sculptor"), N_("painter"),
    N_("fire-lady"), N_("shaman"),
    N_("small (1)"), N_("amazon (2)"), N_("oafish (3)"),
    N_("wheat"), N_("wood"), N_("sheep"), N_("resource"),
    N_("farmer"), N_("lumberjack"), N_("fisherman"), N_("shepherdess"), N_("banker"),
    N_("king"), N_("captain"), N_("axe warrior"), N_("sword warrior"), N_("light archer"),
    N_("heavy archer"),
    N_("Resource token"), N_("Court tile"), N_("Giants"),
    N_("wheat on a field, wood on a forest, fish on a lake, sheep on a grassland; only on a "
       "square without a crown"),
    N_("a courtier or a building, on a square without a crown or token"),
    N_("with a building only"), N_("each giant hides one crown of this square"),
    N_("ok"), N_("review"), N_("error"),
    N_("Tie-break: %(order)s"),
)

# what an error page says when the error's own message is not in the page's language (it is
# then shown below, in English, as the detail)
ERROR_TEXTS = {
    400: N_("The request could not be used: check what was sent and try again."),
    403: N_("The request was refused: reload the page and try again."),
    404: N_("There is nothing at this address: check the link."),
    405: N_("This address does not take that kind of request."),
    413: N_("The upload is too large: send a smaller photo."),
    422: N_("What was sent could not be read: check it and try again."),
    500: N_("Something went wrong on the server; the error was logged."),
}


def error_text(code: int, message: str) -> tuple[str, str | None]:
    """An error page's message in the page's language, and the English detail when the message
    itself has no translation (``None`` when it has one, or the page is in English)."""
    translated = gettext(message) if message else message
    if translated == message and message:  # one of the reader's or the engine's sentences
        translated = say(message)
    if translated != message or str(get_locale()) == DEFAULT or not message:
        return translated, None
    general = ERROR_TEXTS.get(code, ERROR_TEXTS[400 if code < 500 else 500])
    return gettext(general), message
