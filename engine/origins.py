"""Kingdomino Origins (placeholder, filled in next)."""
