"""Rules for the vec_cast family (see docs/internals.md)."""
