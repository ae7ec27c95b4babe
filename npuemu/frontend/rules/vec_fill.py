"""Rules for the vec_fill family (see docs/internals.md)."""
