"""Rules for the sync family (see docs/internals.md)."""
