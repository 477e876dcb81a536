"""Generators driven by the endpoint table (reference docs; more to come)."""
