"""Lowering rules, one module per instruction family; importing this package registers them all."""
from . import core, data_copy, vec_binary  # noqa: F401
