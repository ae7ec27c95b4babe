"""Rules for the vec_unary family (see docs/internals.md)."""
