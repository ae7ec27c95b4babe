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
"""
from __future__ import annotations

from typing import Any

from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.typed_passes import NopythonTypeInference

from ..numba_compat import require

require("kernel code library", JITCodeLibrary, "_optimize_functions", "enable_object_caching")


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


class KernelPipeline(CompilerBase):
    """Numba's nopython pipeline without SSA reconstruction, lowering into a :class:`KernelCodeLibrary`."""

    def define_pipelines(self) -> list[Any]:
        self.state.flags.enable_ssa = False
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(UseKernelCodeLibrary, NopythonTypeInference)
        pm.finalize()
        return [pm]
