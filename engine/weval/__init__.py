"""Weval blueprints: checking, the normalized model, ids and model ids."""
