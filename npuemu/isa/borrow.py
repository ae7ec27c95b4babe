"""Arrays a generated kernel uses without owning a reference to them.

Numba does not release the references a compiled function holds when an
exception passes through it (numba/numba#1549, #10783): every frame between
an instruction's ``raise Fault(...)`` and the launch keeps its incref on the
arrays it was using.  An array passed in from Python is refcounted through a
*meminfo* that references the NumPy array itself, so each faulting launch
would pin the caller's arrays, and npuemu's per-core arrays, for the rest of
the process (hundreds of MB over a test suite that checks many faults).

The prologue of every generated kernel therefore replaces its array
arguments by :func:`borrow`\\ed copies: the same data, shape and strides with
no meminfo.  Nothing refcounts them, so nothing can leak; the launch keeps the
arrays alive until every core has stopped.  In debug mode (CPython) ``borrow``
returns its argument.
"""
from __future__ import annotations

from typing import Any

from numba.core import cgutils, types
from numba.extending import intrinsic, overload


def borrow(array: Any) -> Any:
    """``array`` itself in CPython; in compiled code, a view of it that holds no reference."""
    return array


@intrinsic
def _unowned(typingctx, array):
    if not isinstance(array, types.Array):
        return None
    sig = array(array)

    def codegen(context, builder, signature, args):
        src = context.make_array(array)(context, builder, value=args[0])
        out = context.make_array(array)(context, builder)
        for name in ("data", "shape", "strides", "nitems", "itemsize"):
            setattr(out, name, getattr(src, name))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()

    return sig, codegen


# not inline="always": Numba's IR inliner assumes SSA form, which generated kernels are compiled without
# (codegen/pipeline.py KernelPipeline); inlined there it corrupts the kernel's reassigned locals.  LLVM
# inlines the call anyway.
@overload(borrow)
def _borrow(array):
    if isinstance(array, types.Array):
        return lambda array: _unowned(array)
    return None
