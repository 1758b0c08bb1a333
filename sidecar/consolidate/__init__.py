"""Consolidation: keeping memory small, current and true over months (summaries, dedup, the
operator model)."""
