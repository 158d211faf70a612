"""Pure-Python scoring engine for the Kingdomino family. Knows nothing of images.

Public API (kept small; the CLI, web app and batch use only this):

- ``Kingdom``: immutable kingdom (size 5 or 7, squares with terrain and crowns, per-square and
  per-kingdom extras); ``Kingdom.from_json(obj)``, ``Kingdom.to_json()``,
  ``Kingdom.from_text(text)``, ``Kingdom.to_text()``.
- ``load_kingdom(text)``: parse Kingdom JSON or the text grid format, whichever ``text`` is.
- ``score(kingdom, rules=None, bonuses=()) -> Score``; ``Score.to_json()`` gives the contract's
  ``"score"`` object (``total`` plus the breakdown).
- ``get_rules(name)``, ``rule_names()``, ``bonus_names(rules=None)``.
- ``rank(players)``: order several players' scores with the rule set's official tie-breaks;
  ``dynasty(three_scores)``: a Dynasty total that ``rank`` accepts.
- ``award_totems(kingdoms)`` (Origins Totem majorities across players), ``domain_points(contents)``,
  ``domain_income(domains)`` (Domain without a grid).
- Errors: ``KingdomError`` and ``RulesError``, both ``ValueError`` subclasses.

Formats and extra fields: ``docs/engine.md``.
"""
from engine.domain import domain_income, domain_points
from engine.errors import KingdomError, RulesError
from engine.kingdom import Building, Cell, Kingdom, load_kingdom
from engine.origins import award_totems
from engine.ranking import dynasty, rank
from engine.regions import find_regions
from engine.rules import Bonus, RegionScore, Rules, Score, bonus_names, get_rules, rule_names, score

__all__ = [
    "Bonus", "Building", "award_totems", "domain_income", "domain_points", "Cell", "Kingdom", "KingdomError", "RegionScore", "Rules", "RulesError",
    "Score", "bonus_names", "dynasty", "find_regions", "get_rules", "load_kingdom", "rank",
    "rule_names", "score",
]
