"""Rules for the vec_cmpsel family (see docs/internals.md)."""
