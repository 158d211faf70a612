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
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.core import get_global
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

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
