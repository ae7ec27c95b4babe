"""Rules for the vec_reduce family (see docs/internals.md)."""
