"""Pure-Python scoring engine for the Kingdomino family. Knows nothing of images.

Public API (kept small; the CLI, web app and batch use only this):

- ``Kingdom``: immutable kingdom (size 5 or 7, squares with terrain and crowns, per-square and
  per-kingdom extras); ``Kingdom.from_json(obj)``, ``Kingdom.to_json()``,
  ``Kingdom.from_text(text)``, ``Kingdom.to_text()``.
- ``load_kingdom(text)``: parse Kingdom JSON or the text grid format, whichever ``text`` is.
- ``score(kingdom, rules=None, bonuses=()) -> Score``; ``Score.to_json()`` gives the contract's
  ``"score"`` object (``total`` plus the breakdown).
- ``get_rules(name)``, ``rule_names()``, ``bonus_names(rules=None)``.
- ``rank(players)``: order several players' scores with the rule set's official tie-breaks.
- Errors: ``KingdomError`` and ``RulesError``, both ``ValueError`` subclasses.
"""
