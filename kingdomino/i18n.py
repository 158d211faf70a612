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


def NC_(context: str, message: str) -> str:
    """Marks a message with its context (gettext ``msgctxt``; ``pybabel extract -k NC_:1c,2``)
    without translating it."""
    return message


# The rulebook a rule set's words come from, where that rulebook names a thing otherwise than
# the base game's (a context of the catalogs): "field" is 麥田 in Kingdomino and 原野 in the
# Domain rulebook, "region" 資產 in Kingdomino and 區域 in Origins (../shared/i18n/GLOSSARY.md).
RULEBOOKS = {"domain": "domain", "origins-discovery": "origins", "origins-totem": "origins",
             "origins-tribe": "origins"}
# the words such a rulebook says its own way (each rulebook's catalogs may translate any message
# with its context; these are the ones the glossary names)
RULEBOOK_WORDS = (NC_("domain", "field"), NC_("origins", "region"),
                  NC_("origins", "largest region"), NC_("origins", "largest region %(n)s"),
                  NC_("origins", "%(n)s regions without crowns"),
                  NC_("origins", "1 region without crowns"))
# words said in a rulebook's words where it has its own (the CLI table's head, the row of a
# score's regions worth nothing), looked up with ``word``
TABLE_WORDS = (N_("region"), N_("1 region without crowns"), N_("%(n)s regions without crowns"))
# the comma between the items of a list inside a sentence (、 in Chinese), and the semicolon
# between items that hold commas themselves
LIST_COMMA = NC_("list", ", ")
LIST_SEMICOLON = NC_("list", "; ")


# a score's tie-break values (the rule sets' ``tiebreak``, by key) with their number, and what
# joins them: "largest region 4, then crowns 13"
TIEBREAKS = {"largest_region": N_("largest region %(n)s"), "crowns": N_("crowns %(n)s"),
             "fire": N_("fire %(n)s")}
THEN = N_(", then ")


def tiebreak_order(tr, tiebreak: dict, rules: str | None = None) -> str:
    """A score's ``tiebreak`` values in order, in the language of ``tr`` and the words of
    ``rules``' rulebook ("最大相連資產 4 格，其次是皇冠 13 頂"); ``tr`` None: English."""
    tr = tr if tr is not None else NullTranslations()
    said = []
    for key, value in (tiebreak or {}).items():
        template = TIEBREAKS.get(key)
        if template is not None:
            said.append(word(tr, template, rules) % {"n": value})
        else:  # a key no rule set has yet: its own name
            said.append(f"{word(tr, str(key).replace('_', ' '), rules)} {value}")
    return tr.gettext(THEN).join(said)


def rulebook(rules: str | None) -> str | None:
    """The context of a rule set's own words (``RULEBOOKS``), or None: the base game's words."""
    return RULEBOOKS.get(rules or "")


def word(tr, message: str, rules: str | None = None) -> str:
    """``message`` in the language of ``tr``, in the words of ``rules``' rulebook where the
    catalogs give it some (``msgctxt``), else the message's one translation."""
    context = rulebook(rules)
    if context:
        said = tr.pgettext(context, message)
        if said != message:
            return said
    return tr.gettext(message)


def list_comma(tr) -> str:
    """What joins the items of a list inside a sentence, in the language of ``tr``."""
    return tr.pgettext("list", LIST_COMMA)


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

# what a region is named by where it is no terrain (engine.domain: a walled domain)
REGION_NAMES = {"domain": N_("domain")}

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


# how the page scripts' catalog keys a message with a context (gettext's own separator)
CONTEXT_GLUE = "\x04"


@functools.lru_cache(maxsize=None)
def script_catalog(locale: str) -> dict:
    """Every translated message of ``locale`` as ``{message: translation}`` (for page scripts);
    a message with a context is keyed ``context + CONTEXT_GLUE + message``."""
    catalog = _catalog(locale)
    if catalog is None:
        return {}
    out = {}
    for message in catalog:
        if message.id and isinstance(message.id, str) and message.string and not message.fuzzy:
            key = message.id if not message.context else message.context + CONTEXT_GLUE + message.id
            out[key] = message.string
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
# sentences inside sentences: the engine writes two levels ("not met: <why>", a square in a
# warning); past this many (only a made-up text has them) the rest stays English, so a text of
# "not met: not met: ..." costs no deep recursion
MAX_NESTING = 4


# How a value looks in the English text, where it is more than "some text": a whole number
# (-?\d+, digits as many as fit), a decimal (\d+\.\d+), the optional " ..." of a cut list, a
# name of letters, digits and dashes ([A-Za-z0-9-]+, as many as fit: a file format such as JPEG,
# a run of squares such as r1c1-r1c3).
# Any other value is some text: at least one character, as few as let the rest of the sentence fit.
_NUMBER, _DECIMAL, _ELLIPSIS, _TEXT, _WORDS = "number", "decimal", "ellipsis", "text", "words"
_NAME = "name"
_SHAPES = {**dict.fromkeys(("n", "row", "col", "each", "points", "base", "squares", "crowns", "have",
                            "most", "rows", "cols", "frame", "min"), _NUMBER),
           "more": _ELLIPSIS, "confidence": _DECIMAL, "format": _NAME, "run": _NAME}
_DIGITS = re.compile(r"\d*")        # the digits from a position on (\d: any decimal digit)
_NUMBER_START = re.compile(r"-?\d")
_ANY_DIGIT = re.compile(r"\d")
_NAME_RUN = re.compile(r"[A-Za-z0-9-]*")
_NAME_CHAR = re.compile(r"[A-Za-z0-9-]")
ELLIPSIS = " ..."


class _Template:
    """One template as its own words and its values, matched against an English text.

    The match is the one the regular expression ``words (?P<n>-?\\d+) words (?P<what>.+?) ...``
    found (numbers take as many digits as fit, text values as few characters as let the rest
    fit, a value named twice is the same text both times), worked out without trying splits
    over and over: :class:`_Walk` says once per piece and position whether the rest of the
    template can match from there, and the walk only steps to such positions, so it never has
    to step back, except where a value named twice turns out to differ. Those steps back are
    few in an engine sentence; past :data:`MAX_RETRIES` of them the text is taken as no
    sentence of this template (it stays English). A sentence of n characters thus costs a few
    steps per piece and position, not n to the power of its number of text values (which made
    a 4,000-character text take seconds)."""

    def __init__(self, template: str):
        self.template = template
        self.pieces: list[tuple[str, str, bool]] = []  # (kind, words or value name, named before)
        seen, pos = set(), 0
        for m in re.finditer(r"%\((\w+)\)s", template):
            if m.start() > pos:
                self.pieces.append((_WORDS, template[pos:m.start()], False))
            name = m.group(1)
            self.pieces.append((_SHAPES.get(name, _TEXT), name, name in seen))
            seen.add(name)
            pos = m.end()
        if pos < len(template):
            self.pieces.append((_WORDS, template[pos:], False))
        self.words = [arg for kind, arg, _ in self.pieces if kind == _WORDS]

    def could_be(self, text: str) -> bool:
        """A quick test that rules most texts out: the template's words, in order, with its
        first and last words at the ends."""
        first, last = self.pieces[0], self.pieces[-1]
        if first[0] == _WORDS and not text.startswith(first[1]):
            return False
        if last[0] == _WORDS and not text.endswith(last[1]):
            return False
        pos = 0
        for words in self.words:
            pos = text.find(words, pos)
            if pos < 0:
                return False
            pos += len(words)
        return True

    def match(self, text: str) -> dict | None:
        """The values of ``text`` if it is this template's sentence, else None."""
        if not self.could_be(text):
            return None
        walk = _Walk(self.pieces, text)
        if not walk.fits(0, 0):
            return None
        values: dict = {}
        try:
            return values if self._follow(walk, 0, 0, values) else None
        except _TooManyRetries:
            return None

    def _follow(self, walk: "_Walk", i: int, pos: int, values: dict) -> bool:
        """Match pieces ``i`` onward from ``pos``, the first way in the regular expression's
        order (``values`` gets the values); False when a repeated value differs on every way."""
        if i == len(self.pieces):
            return True
        kind, arg, again = self.pieces[i]
        text = walk.text
        if again:  # the same text as before, or this way fails
            end = pos + len(values[arg])
            if text.startswith(values[arg], pos) and walk.fits(i + 1, end):
                return self._follow(walk, i + 1, end, values)
            walk.retry()
            return False
        if kind == _TEXT:  # the fewest characters that let the rest fit
            ends = (q for q in walk.starts(i + 1, pos + 1) if walk.fits(i + 1, q))
        else:  # the ways the old expression tried, in its order, that let the rest fit
            ends = (e for e in walk.ends(i, pos) if walk.fits(i + 1, e))
        for end in ends:
            if kind != _WORDS:
                values[arg] = text[pos:end]
            if self._follow(walk, i + 1, end, values):
                return True
            walk.retry()
        return False


class _TooManyRetries(Exception):
    pass


# how many times one match may step back (only a value named twice makes it step back at all)
MAX_RETRIES = 200


class _Walk:
    """The positions of one text that the rest of one template can match from (remembered)."""

    def __init__(self, pieces, text: str):
        self.pieces, self.text, self.n = pieces, text, len(text)
        self._fits: dict = {}
        self._latest: dict = {}
        self._longest: dict = {}
        self._retries = MAX_RETRIES

    def retry(self) -> None:
        """Count a step back of the match (see :class:`_Template`)."""
        self._retries -= 1
        if self._retries < 0:
            raise _TooManyRetries

    def fits(self, i: int, pos: int) -> bool:
        """Whether pieces ``i`` onward match the text from ``pos`` to its end."""
        if i == len(self.pieces):
            return pos == self.n
        key = (i, pos)
        found = self._fits.get(key)
        if found is None:
            if self.pieces[i][0] == _TEXT:  # one character or more, then the rest
                found = self.latest(i + 1) > pos
            else:
                found = any(self.fits(i + 1, e) for e in self.ends(i, pos))
            self._fits[key] = found
        return found

    def latest(self, i: int) -> int:
        """The last position pieces ``i`` onward match from (-1: none)."""
        if i == len(self.pieces):
            return self.n
        found = self._latest.get(i)
        if found is None:
            kind = self.pieces[i][0]
            after = self.latest(i + 1)
            if after < 0:
                found = -1
            elif kind == _TEXT:
                found = after - 1 if after >= 1 else -1
            elif kind == _ELLIPSIS:  # it may be empty, and is never longer than what follows
                found = after
            else:
                found = next((q for q in reversed(list(self.starts(i, 0, after)))
                              if self.fits(i, q)), -1)
            self._latest[i] = found
        return found

    def starts(self, i: int, lo: int, hi: int | None = None):
        """Positions from ``lo`` to ``hi`` (the end) where piece ``i`` could begin, in order."""
        text, n = self.text, self.n
        hi = n if hi is None else hi
        if i == len(self.pieces):
            if lo <= n <= hi:
                yield n
            return
        kind, arg, _ = self.pieces[i]
        if kind == _WORDS:
            pos = text.find(arg, lo, hi + len(arg))
            while pos >= 0:
                yield pos
                pos = text.find(arg, pos + 1, hi + len(arg))
        elif kind in (_NUMBER, _DECIMAL, _NAME):
            first = {_NUMBER: _NUMBER_START, _DECIMAL: _ANY_DIGIT, _NAME: _NAME_CHAR}[kind]
            m = first.search(text, lo, hi + 1)
            while m:
                yield m.start()
                m = first.search(text, m.start() + 1, hi + 1)
        elif kind == _ELLIPSIS:  # where it is, or where what follows it begins
            dots = text.find(ELLIPSIS, lo, hi + len(ELLIPSIS))
            for pos in self.starts(i + 1, lo, hi):
                while 0 <= dots < pos:
                    yield dots
                    dots = text.find(ELLIPSIS, dots + 1, hi + len(ELLIPSIS))
                if dots == pos:
                    dots = text.find(ELLIPSIS, dots + 1, hi + len(ELLIPSIS))
                yield pos
            while dots >= 0:
                yield dots
                dots = text.find(ELLIPSIS, dots + 1, hi + len(ELLIPSIS))
        else:  # a text value: any character
            yield from range(lo, min(hi, n - 1) + 1)

    def ends(self, i: int, pos: int):
        """Where piece ``i`` begun at ``pos`` could end, in the order the old regular expression
        tried them (numbers longest first, the ellipsis before none)."""
        kind, arg, _ = self.pieces[i]
        text = self.text
        if kind == _WORDS:
            if text.startswith(arg, pos):
                yield pos + len(arg)
        elif kind == _ELLIPSIS:
            if text.startswith(ELLIPSIS, pos):
                yield pos + len(ELLIPSIS)
            yield pos
        elif kind == _NAME:
            end = self._longest_fit(i, pos, _NAME_RUN, _NAME_CHAR)
            if end is not None:
                yield end  # then shorter (only a value named twice asks for them)
                yield from range(end - 1, pos, -1)
        elif kind in (_NUMBER, _DECIMAL):
            start = pos + 1 if kind == _NUMBER and text.startswith("-", pos) else pos
            if kind == _DECIMAL:  # the digits up to the point are all taken: then the point
                dot = _DIGITS.match(text, pos).end()
                if dot == pos or not text.startswith(".", dot):
                    return
                start = dot + 1
            end = self._longest_fit(i, start)
            if end is not None:
                yield end  # then fewer digits (only a value named twice asks for them)
                yield from range(end - 1, start, -1)

    def _longest_fit(self, i: int, start: int, run=_DIGITS, one=_ANY_DIGIT) -> int | None:
        """The end of the longest run of digits (or of ``run``'s characters) from ``start`` (one
        at least) after which pieces ``i + 1`` onward fit. Remembered per run: every start inside
        one run shares its ends, so a long run is looked through once, not once per start."""
        last = run.match(self.text, start).end()
        if last == start:
            return None
        key = (i, last)
        best = self._longest.get(key)
        if best is None:
            best, end = -1, last
            while end > 0 and one.match(self.text, end - 1):
                if self.fits(i + 1, end):
                    best = end
                    break
                end -= 1
            self._longest[key] = best
        return best if best > start else None


def _templates() -> list:
    """Every template, the most specific first (:func:`_specific`: it wins)."""
    from engine.rules import rule_names
    from kingdomino import cli_texts, photo_texts  # noqa: F401  (the refusals' templates)

    rule_names()  # every rule set's module is loaded, so its templates are registered
    return _templates_of(len(TEMPLATES))  # again when a module loaded since added some


@functools.lru_cache(maxsize=1)
def _templates_of(count: int) -> list:
    return [_Template(t) for t in sorted(TEMPLATES, key=_specific, reverse=True)]


def _specific(template: str) -> tuple[int, int]:
    """How specific a template is: its own words' length, then its length. The most specific
    template that matches a sentence is its template ("frame completely filled: 5" is Harmony's
    reason, not a courtier named "frame" on a square "completely filled")."""
    return len(re.sub(r"%\(\w+\)s", "", template)), len(template)


def parse(text: str):
    """``(template, values)`` of an English sentence made from a template, or None."""
    for template in _templates():
        values = template.match(text)
        if values is not None:
            return template.template, values
    return None


def _word(value: str, tr, rules=None) -> str:
    for key in (value.lower(), value.lower().replace("-", " "), value):
        said = word(tr, key, rules)
        if said != key:
            return said
    return value


def _value(name: str, value, tr, depth: int, rules=None):
    if isinstance(value, Message):
        return render(value, tr, depth, rules=rules)
    if isinstance(value, (tuple, list)):
        return list_comma(tr).join(str(_value(name, v, tr, depth, rules)) for v in value)
    if not isinstance(value, str):
        return value
    if name in TERRAIN_ARGS:
        return word(tr, TERRAINS[value], rules) if value in TERRAINS else value
    if name in WORD_ARGS:
        return _word(value, tr, rules)
    if depth > MAX_NESTING:
        return value
    found = parse(value)
    if found:
        return _say(value, *found, tr, depth, rules=rules)
    # a list of sentences, or text that is not one; in a list of items that hold commas
    # themselves ("a (also b, c); d"), the items that are no sentence stay as they are (names)
    for separator in ("; ", ", "):
        pieces = value.split(separator)
        if len(pieces) < 2:
            continue
        sentences = [(piece, parse(piece)) for piece in pieces]
        found_all = all(found is not None for _, found in sentences)
        if not found_all and (separator == ", " or not any(f for _, f in sentences)):
            continue
        joiner = list_comma(tr) if separator == ", " else tr.pgettext("list", LIST_SEMICOLON)
        return joiner.join(piece if found is None else _say(piece, *found, tr, depth, rules=rules)
                           for piece, found in sentences)
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


def render(text, tr, _depth: int = 0, rules: str | None = None) -> str:
    """An engine or reader sentence (a :class:`engine.messages.Message`, or the English text of
    one, as stored JSON keeps it) in the language of ``tr`` (a catalog from :func:`translations`
    or Flask-Babel's); text that is no template's comes back unchanged. English is the text.
    Sentences inside sentences are translated down to :data:`MAX_NESTING` levels. ``rules``:
    the rule set the sentence is about, whose rulebook's words it uses (:func:`word`)."""
    if _depth > MAX_NESTING:
        return str(text)
    if isinstance(text, Message):
        return _say(text, text.msgid, text.args, tr, _depth, text.count, rules=rules)
    if isinstance(text, str):
        found = parse(text)
        return text if found is None else _say(text, *found, tr, _depth, rules=rules)
    return text


def _say(text, template: str, values: dict, tr, depth: int, count="", rules=None):
    """``text`` (the sentence of ``template`` with ``values``) in the language of ``tr``;
    ``count`` names the value deciding its plural form ("": found from the values, None: none)."""
    if isinstance(tr, NullTranslations) and type(tr) is NullTranslations:
        return str(text)  # English: the text itself, exactly as before
    if count == "":
        count = next((k for k in _COUNTS if str(values.get(k, "")).isdigit()), None)
    context = rulebook(rules)
    said = tr.pgettext(context, template) if context else template
    if said == template:  # no words of that rulebook's own for this sentence
        said = _lookup(tr, template, values.get(count) if count else None)
    try:
        return said % {k: _value(k, v, tr, depth + 1, rules) for k, v in values.items()}
    except (KeyError, TypeError, ValueError):
        return str(text)  # a catalog with a broken placeholder: the English beats a crash


def render_for(locale: str, rules: str | None = None):
    """:func:`render` in ``locale`` (in the words of ``rules``' rulebook) as a one-argument
    function."""
    tr = translations(locale)
    return lambda text: render(text, tr, rules=rules)
