"""Operators: what a framework calls, built on kernel binaries.

An operator is declared as CANN's ``OpDef`` does (:mod:`.opdef`): its inputs,
outputs and attributes, the data types and formats it supports in columns
(one column, one kernel binary), its kernel, tiling and shape-inference
functions.  Its binaries are built and indexed per platform, selected at
call time by a key of data-type and format bytes, and run through the
two-phase API of aclnn.  Nothing here is imported by the runtime.

The names below are loaded on first use, so ``import npuemu.ops`` stays
cheap and importing a submodule never pulls in the op library::

    import npuemu.ops as ops
    y = ops.add(x1, x2, alpha=2.0)                  # one call, both phases
    ex = ops.prepare(ops.library.SOFTMAX, x)        # phase one; ex.run() is phase two

(``npuemu.ops.select``, ``npuemu.ops.run`` and ``npuemu.ops.functions`` are
modules; their functions of those names are ``ops.select.select``,
``ops.executor.run`` and ``ops.call``.)
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "OpDef": "opdef", "Input": "opdef", "Output": "opdef", "Attr": "opdef", "OpDefError": "codes",
    "OpTensor": "tensor", "format_cast": "tensor",
    "SelectionError": "select", "build": "binaries", "KeyConflictError": "index",
    "run_op": "run",
    "get_workspace_size": "executor", "prepare": "executor", "Executor": "executor",
    "ExecutorStateError": "executor", "set_repeatable": "executor", "destroy_executor": "executor",
    "OpInputError": "inference", "WorkspaceError": "l0", "StreamTypeError": "l0",
    "Graph": "graph", "GraphOp": "graph", "GraphError": "graph",
    "call": "functions", "set_fallback": "functions", "OpFallbackWarning": "functions",
    "register": "registry", "names": "registry",
}
_LIBRARY_FUNCTIONS = ("add", "mul", "cast", "relu", "gelu", "leaky_relu", "softmax", "layernorm", "rmsnorm",
                      "reduce_sum", "matmul", "linear")


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    elif name in _LIBRARY_FUNCTIONS:
        value = importlib.import_module(f"{__name__}.functions").FUNCTIONS[name]
    else:
        try:
            return importlib.import_module(f"{__name__}.{name}")      # submodules: npuemu.ops.library, .aclnn
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS, *_LIBRARY_FUNCTIONS])


__all__ = [*_EXPORTS, *_LIBRARY_FUNCTIONS]
