"""How Numba compiles a generated kernel: its pass pipeline and its LLVM code library.

A generated kernel is one large function (hundreds of int64 locals, a block
per loop and per blocking wait, hundreds of calls to small helpers and to
instructions called by symbol).  Numba's defaults are tuned for many small
functions; two of them cost a generated kernel much and buy it nothing:

* SSA reconstruction, in pure Python, at a cost growing with the variables
  times the basic blocks (about a third of a kernel's compile time).  The
  generated code gives every local a single type from its first assignment
  on, which is what SSA form buys typing, so the kernel is lowered with plain
  mutable locals (Numba's path before it adopted SSA, still its object-mode
  path).
* LLVM function passes on the kernel's module before linking: Numba runs
  the O3 function pipeline on each function alone, then the O3 module
  pipeline on the linked module, which runs the same function passes again
  after inlining the helpers.  On a kernel the first round was most of the
  LLVM time (linear at ``check="full"``: 9 of 12 s) and the bundled kernels
  ran as fast without it, so a kernel's library skips it.

A third is skipped when it has nothing to do: Numba's closure inliner
(``inline_closure_likes``) inlines inner functions, ``functools.reduce``,
stencils and array comprehensions, none of which generated code contains,
and then re-runs its variable-lifetime analysis and a scope fix-up whose cost
grows with the variables times the basic blocks (for a kernel that can block,
a generator, the analysis also recomputes the generator's state each time):
about a tenth of such a kernel's compile time, spent leaving the IR as it was.
"""
from __future__ import annotations

import functools
from typing import Any

from numba.core import ir
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import InlineClosureLikes

from ..numba_compat import require

require("kernel code library", JITCodeLibrary, "_optimize_functions", "enable_object_caching")
require("kernel pipeline", PassManager("npuemu probe"), "passes")   # an instance attribute


class KernelCodeLibrary(JITCodeLibrary):
    """A generated kernel's code library: its module is optimised once, after linking."""

    def _optimize_functions(self, ll_module: Any) -> None:
        ll_module.data_layout = self._codegen._data_layout       # what Numba's own version also sets


@register_pass(mutates_CFG=False, analysis_only=False)
class UseKernelCodeLibrary(FunctionPass):
    """Give the kernel a :class:`KernelCodeLibrary` before lowering (Numba creates a plain one otherwise)."""

    _name = "npuemu_kernel_code_library"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state: Any) -> bool:
        if state.library is None:
            library = KernelCodeLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
            library.enable_object_caching()          # as Numba's NativeLowering does for its own
            state.library = library
        return False


def _inlines_anything(func_ir: Any) -> bool:
    """Whether the IR has what Numba's closure inliner inlines: an inner function or lambda, a list built
    (an array comprehension), ``functools.reduce`` or a stencil."""
    for block in func_ir.blocks.values():
        for inst in block.body:
            value = getattr(inst, "value", None)
            if isinstance(value, ir.Expr) and value.op in ("make_function", "build_list"):
                return True
            if isinstance(value, (ir.Global, ir.FreeVar)) and (
                    value.value is functools.reduce or type(value.value).__name__ == "StencilFunc"):
                return True
    return False


@register_pass(mutates_CFG=True, analysis_only=False)
class InlineClosureLikesIfAny(InlineClosureLikes):
    """Numba's closure inliner, run only on IR that has something for it to inline."""

    _name = "npuemu_inline_closure_likes"

    def run_pass(self, state: Any) -> bool:
        if not _inlines_anything(state.func_ir):
            return False
        return super().run_pass(state)


class KernelPipeline(CompilerBase):
    """Numba's nopython pipeline without SSA reconstruction, lowering into a :class:`KernelCodeLibrary`."""

    def define_pipelines(self) -> list[Any]:
        self.state.flags.enable_ssa = False
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(UseKernelCodeLibrary, NopythonTypeInference)
        pm.passes = [(InlineClosureLikesIfAny, desc) if cls is InlineClosureLikes else (cls, desc)
                     for cls, desc in pm.passes]
        pm.finalize()
        return [pm]
