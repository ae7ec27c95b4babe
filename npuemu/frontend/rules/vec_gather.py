"""Rules for the vec_gather family (see docs/internals.md)."""
