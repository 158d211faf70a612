"""Domain (placeholder, filled in next)."""
