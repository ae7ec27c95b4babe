"""Lowering rules, one module per instruction family; importing this package registers them all."""
from . import (core, data_copy, debug, mask, sync, vec_binary, vec_cast, vec_cmpsel,  # noqa: F401
               vec_fill, vec_gather, vec_reduce, vec_scalar, vec_unary)
