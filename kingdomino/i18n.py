"""The languages of the pages and the CLI: gettext catalogs, one ``.po`` file per language.

The catalogs are ``webapp/translations/<locale>.po`` (``en``, ``zh_Hant``, ``zh_Hans``, ``ko``);
a language is there when its file is. They are compiled in memory when first used (Babel reads
and compiles them), so nothing generated is kept in the repository. The web app reaches them
through Flask-Babel (``webapp/__init__.py``), the page scripts through a JSON catalog that the
server sends (``/i18n/<locale>.js``), the CLI through :func:`gettext_for_environment`.

Adding a language (README, "Languages"): ``pybabel init -i messages.pot -l <locale> -o
webapp/translations/<locale>.po`` after extracting (see ``babel.cfg``), then fill in the file.
"""
from __future__ import annotations

import functools
import io
import os
import re
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.core import get_global
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

from engine.messages import TEMPLATES, TERRAIN_ARGS, Message

CATALOGS = Path(__file__).resolve().parent.parent / "webapp" / "translations"
DEFAULT = "en"
COOKIE = "lang"  # the web pages remember the chosen language in this cookie


def N_(message: str) -> str:
    """Marks a message for the catalogs (``pybabel extract -k N_``) without translating it."""
    return message


# The game's words, by the engine's machine names (the JSON and CSV keep those): each English
# name is a message of the catalogs, so a language's .po file holds its rulebook's words.
TERRAINS = {
    "field": N_("field"), "forest": N_("forest"), "lake": N_("lake"),
    "grassland": N_("grassland"), "swamp": N_("swamp"), "mine": N_("mine"),
    "castle": N_("castle"), "empty": N_("empty"), "town": N_("town"),
    "desert": N_("desert"), "quarry": N_("quarry"), "volcano": N_("volcano"), "hut": N_("hut"),
    "village": N_("village"), "city": N_("city"), "gold": N_("gold"), "silver": N_("silver"),
    "copper": N_("copper"), "gems": N_("gems"), "wall": N_("wall"),
}

# the bonuses by their machine names (English pages show those, as they always did)
BONUSES = {name: name for name in (
    N_("middle-kingdom"), N_("harmony"), N_("empire-of-fire"), N_("homo-habilis"),
    N_("lost-corner"), N_("bleak-king"), N_("folie-des-grandeurs"), N_("four-corners-field"),
    N_("four-corners-forest"), N_("four-corners-lake"), N_("four-corners-grassland"),
    N_("four-corners-swamp"), N_("four-corners-mine"), N_("local-business-field"),
    N_("local-business-forest"), N_("local-business-lake"), N_("local-business-grassland"),
    N_("local-business-swamp"), N_("local-business-mine"),
)}


def available() -> list[str]:
    """The languages there is a catalog for, English first (it is the source language)."""
    found = sorted(p.stem for p in CATALOGS.glob("*.po"))
    return [DEFAULT] + [name for name in found if name != DEFAULT]


@functools.lru_cache(maxsize=None)
def _catalog(locale: str):
    path = CATALOGS / f"{locale}.po"
    if not path.is_file():
        return None
    with path.open("rb") as fh:
        return read_po(fh, locale=locale)


@functools.lru_cache(maxsize=None)
def translations(locale: str) -> NullTranslations:
    """The compiled catalog of ``locale`` (English, the messages themselves, when it has none)."""
    catalog = _catalog(locale)
    if catalog is None:
        return NullTranslations()
    buf = io.BytesIO()
    write_mo(buf, catalog)
    buf.seek(0)
    return Translations(buf)


@functools.lru_cache(maxsize=None)
def script_catalog(locale: str) -> dict:
    """Every translated message of ``locale`` as ``{message: translation}`` (for page scripts)."""
    catalog = _catalog(locale)
    if catalog is None:
        return {}
    out = {}
    for message in catalog:
        if message.id and isinstance(message.id, str) and message.string and not message.fuzzy:
            out[message.id] = message.string
    return out


def _script_of(locale: Locale) -> str | None:
    """The writing system a locale is written in (``zh_TW`` -> ``Hant``), from CLDR."""
    if locale.script:
        return locale.script
    likely = get_global("likely_subtags")
    for key in (f"{locale.language}_{locale.territory}" if locale.territory else None,
                locale.language):
        if key and key in likely:
            return Locale.parse(likely[key]).script
    return None


def match(tag: str) -> str | None:
    """The available language a tag (``zh-TW``, ``zh_CN.UTF-8``, ``ko-KR``, ``zh-Hant``) asks
    for, or None. Chinese is matched by its script: Taiwan, Hong Kong and Macau read ``zh_Hant``."""
    tag = (tag or "").split(".")[0].split("@")[0].strip()
    if not tag or tag in ("C", "POSIX", "*"):
        return None
    try:
        wanted = Locale.parse(tag.replace("-", "_"))
    except (ValueError, TypeError, UnknownLocaleError):
        return None
    candidates = []
    for name in available():
        have = Locale.parse(name)
        if have.language != wanted.language:
            continue
        if have.script and have.script != _script_of(wanted):
            continue
        candidates.append(name)
    return candidates[0] if candidates else None


def negotiate(tags) -> str:
    """The first of ``tags`` (most wanted first) there is a catalog for; English otherwise."""
    for tag in tags:
        found = match(tag)
        if found:
            return found
    return DEFAULT


def html_lang(locale: str) -> str:
    """The BCP 47 tag of a catalog's language for ``<html lang>`` (``zh_Hant`` -> ``zh-Hant``)."""
    return str(locale).replace("_", "-")


def display_name(locale: str) -> str:
    """A language's name in itself (what its speakers look for in the language menu)."""
    try:
        name = Locale.parse(locale).get_display_name(locale) or locale
    except (ValueError, UnknownLocaleError):
        return locale
    return name[:1].upper() + name[1:]


def locale_from_environment(env=None) -> str:
    """The CLI's language: ``LANGUAGE`` (a colon list), ``LC_ALL``, ``LC_MESSAGES``, ``LANG``,
    as gettext reads them; English when none names a language there is a catalog for."""
    env = os.environ if env is None else env
    for key in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(key)
        if not value:
            continue
        found = negotiate(value.split(":")) if key == "LANGUAGE" else (match(value) or DEFAULT)
        if key == "LANGUAGE" and found == DEFAULT and not any(match(v) for v in value.split(":")):
            continue  # LANGUAGE names nothing we have: the next variable decides
        return found
    return DEFAULT


def gettext_for_environment(env=None):
    """``gettext`` of the CLI's language (see :func:`locale_from_environment`)."""
    return translations(locale_from_environment(env)).gettext


# --- the engine's and the reader's sentences (engine.messages) ------------------------------
# values that are a word of the game (a courtier as a title, what a courtier counts, ...)
WORD_ARGS = frozenset({"courtier", "what", "pieces"})
# the value that decides a sentence's plural form when only its English text is at hand
_COUNTS = ("n", "crowns")


# what a value looks like in the English text, where it is more than "some text"
_SHAPES = {**{name: r"-?\d+" for name in ("n", "row", "col", "each", "points", "base", "squares",
                                           "crowns", "have", "most", "rows", "cols", "frame", "min")},
           "more": r"(?: \.\.\.)?", "confidence": r"\d+\.\d+"}


@functools.lru_cache(maxsize=1)
def _patterns() -> list:
    """Each template as a pattern that finds its values in the English text, longest first
    (the most specific template wins)."""
    from engine.rules import rule_names

    rule_names()  # every rule set's module is loaded, so its templates are registered
    out = []
    for template in sorted(TEMPLATES, key=len, reverse=True):
        parts, seen, pos = [], set(), 0
        for m in re.finditer(r"%\((\w+)\)s", template):
            parts.append(re.escape(template[pos:m.start()]))
            name = m.group(1)
            parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>{_SHAPES.get(name, '.+?')})")
            seen.add(name)
            pos = m.end()
        parts.append(re.escape(template[pos:]))
        out.append((template, re.compile("".join(parts), re.S)))
    return out


def parse(text: str):
    """``(template, values)`` of an English sentence made from a template, or None."""
    for template, pattern in _patterns():
        m = pattern.fullmatch(text)
        if m:
            return template, m.groupdict()
    return None


def _word(value: str, tr) -> str:
    for key in (value.lower(), value.lower().replace("-", " "), value):
        said = tr.gettext(key)
        if said != key:
            return said
    return value


def _value(name: str, value, tr):
    if isinstance(value, Message):
        return render(value, tr)
    if isinstance(value, (tuple, list)):
        return ", ".join(str(_value(name, v, tr)) for v in value)
    if not isinstance(value, str):
        return value
    if name in TERRAIN_ARGS:
        return tr.gettext(TERRAINS[value]) if value in TERRAINS else value
    if name in WORD_ARGS:
        return _word(value, tr)
    if parse(value):
        return render(value, tr)
    pieces = value.split(", ")
    if len(pieces) > 1 and all(parse(p) for p in pieces):  # a list of sentences
        return ", ".join(render(p, tr) for p in pieces)
    return value


def _lookup(tr, template: str, n) -> str:
    """A template's translation: its plural form for ``n`` where the catalog has plural forms
    for it (``msgid_plural``), else its one form (Chinese and Korean have one form; the English
    templates keep today's "square(s)" wording, which the contract's JSON shows)."""
    if n is not None and str(n).isdigit():
        plural = getattr(tr, "_catalog", {}).get((template, 0))
        if plural is not None:
            return tr.ngettext(template, template, int(n))
    return tr.gettext(template)


def render(text, tr) -> str:
    """An engine or reader sentence (a :class:`engine.messages.Message`, or the English text of
    one, as stored JSON keeps it) in the language of ``tr`` (a catalog from :func:`translations`
    or Flask-Babel's); text that is no template's comes back unchanged. English is the text."""
    if isinstance(text, Message):
        template, count, values = text.msgid, text.count, text.args
    elif isinstance(text, str):
        found = parse(text)
        if found is None:
            return text
        template, values = found
        count = next((k for k in _COUNTS if str(values.get(k, "")).isdigit()), None)
    else:
        return text
    if isinstance(tr, NullTranslations) and type(tr) is NullTranslations:
        return str(text)  # English: the text itself, exactly as before
    said = _lookup(tr, template, values.get(count) if count else None)
    try:
        return said % {k: _value(k, v, tr) for k, v in values.items()}
    except (KeyError, TypeError, ValueError):
        return str(text)  # a catalog with a broken placeholder: the English beats a crash


def render_for(locale: str):
    """:func:`render` in ``locale`` as a one-argument function."""
    tr = translations(locale)
    return lambda text: render(text, tr)
