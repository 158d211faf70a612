"""The translated names are held against the engine: every terrain, rule set and bonus the
engine knows has its name in the lists (``kingdomino.i18n``, ``webapp.terms``) and in every
catalog (``webapp/translations``), and no list names one the engine lacks. The catalogs hold
exactly the messages the code marks (``babel.cfg``), so a name taken out of the code leaves
none behind."""
from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

import engine
from engine.kingdom import CAVEMEN, COURTIERS, RESOURCES, TERRAINS, TOKEN_OF, WARRIORS
from kingdomino import i18n
from webapp import terms

ROOT = Path(__file__).resolve().parents[2]
RULE_SETS = [engine.get_rules(name) for name in engine.rule_names()]
BONUSES = {bonus for rules in RULE_SETS for bonus in rules.bonuses}


def _catalog(locale: str) -> dict:
    with (i18n.CATALOGS / f"{locale}.po").open("rb") as fh:
        return {m.id: m.string for m in read_po(fh, locale=locale) if m.id}


def test_every_terrain_has_its_name_and_no_other():
    assert set(i18n.TERRAINS) == set(TERRAINS)
    assert all(i18n.TERRAINS[t] == t for t in TERRAINS)
    known = {t for rules in RULE_SETS for t in (*rules.terrains, rules.start_terrain)}
    assert known | {"empty"} <= set(i18n.TERRAINS)


def test_every_bonus_has_its_name_and_no_other():
    assert set(i18n.BONUSES) == BONUSES


def test_every_rule_set_has_its_title_and_no_other():
    titles = [rules.title for rules in RULE_SETS]
    assert all(titles) and len(set(titles)) == len(titles)
    assert set(terms.RULE_TITLES) == set(titles)


def test_the_pieces_names_the_page_shows_are_the_engines():
    words = set(terms.SCRIPT_WORDS)
    assert set(RESOURCES) | set(CAVEMEN) | set(TOKEN_OF.values()) <= words
    assert {f"{name} ({power})" for name, power in WARRIORS.items()} <= words
    assert {c.replace("-", " ") for c in COURTIERS} <= words


@pytest.mark.parametrize("locale", i18n.available())
def test_every_catalog_names_what_the_engine_knows(locale):
    catalog = _catalog(locale)
    names = set(TERRAINS) | BONUSES | {rules.title for rules in RULE_SETS}
    missing = sorted(n for n in names if n not in catalog)
    assert not missing, f"{locale}.po lacks {missing}: update it from the template (README)"
    if locale != i18n.DEFAULT:
        assert not [n for n in names if not catalog[n]], f"{locale}.po leaves names untranslated"


def test_the_catalogs_hold_exactly_the_messages_the_code_marks():
    with (ROOT / "babel.cfg").open() as fh:
        method_map, options_map = parse_mapping_cfg(fh)
    keywords = dict(DEFAULT_KEYWORDS, N_=None, NC_=((1, "c"), 2))  # NC_(context, message)
    marked = set()
    for _, _, message, _, context in extract_from_dir(str(ROOT), method_map, options_map,
                                                      keywords):
        # a plural: its singular; a message with a context is another message than without
        marked.add((message[0] if isinstance(message, tuple) else message, context))
    marked.discard(("", None))
    for locale in i18n.available():
        with (i18n.CATALOGS / f"{locale}.po").open("rb") as fh:
            held = {(m.id if isinstance(m.id, str) else m.id[0], m.context)
                    for m in read_po(fh, locale=locale) if m.id}
        assert not sorted(held - marked), f"{locale}.po holds messages no code marks any more"
        assert not sorted(marked - held), f"{locale}.po lacks messages the code marks"
