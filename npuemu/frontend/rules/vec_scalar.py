"""Rules for the vec_scalar family (see docs/internals.md)."""
