"""Rules for the debug family (see docs/internals.md)."""
