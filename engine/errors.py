"""Errors the engine raises for callers (both are ``ValueError`` so callers catch one type)."""
from __future__ import annotations


class KingdomError(ValueError):
    """The kingdom itself is wrong (shape, terrain, crowns, pieces); the message names the square."""


class RulesError(ValueError):
    """An unknown rule set or bonus, or a request the rule set cannot answer."""
