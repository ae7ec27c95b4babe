"""Rules for the mask family (see docs/internals.md)."""
