"""aclnn-style names for the op library: ``<op>_get_workspace_size`` and ``<op>``, two phases per op.

For every op of :data:`npuemu.ops.library.LIBRARY` (``add``, ``softmax``,
...), as ``aclnnAddGetWorkspaceSize`` / ``aclnnAdd`` are for CANN's Add::

    from npuemu.ops import aclnn

    size, executor = aclnn.add_get_workspace_size(x1, x2, out=z, alpha=2.0)
    workspace = np.empty(size, np.uint8)
    aclnn.add(workspace, size, executor, stream)
    stream.synchronize()

Phase one takes the op's inputs in order, ``out=`` (an output, a list of
them, or None to allocate them: ``executor.outputs``), the op's attributes
and the options of :func:`npuemu.ops.executor.get_workspace_size`.  Phase
two is :func:`npuemu.ops.executor.run` of that executor.
"""
from __future__ import annotations

from typing import Any, Callable

from ..runtime.stream import Stream
from . import executor as _executor
from .library import LIBRARY
from .opdef import OpDef

_OPTIONS = frozenset({"platform", "deterministic", "impl_mode", "cache", "cast_op", "launcher"})


def get_workspace_size_function(name: str, op: OpDef) -> Callable[..., tuple[int, _executor.Executor]]:
    """``<name>_get_workspace_size(*inputs, out=None, **attrs)`` for ``op``."""
    def get_workspace_size(*inputs: Any, out: Any = None, **kwargs: Any) -> tuple[int, _executor.Executor]:
        options = {k: v for k, v in kwargs.items() if k in _OPTIONS}
        attrs = {k: v for k, v in kwargs.items() if k not in _OPTIONS}
        outputs = None if out is None else (list(out) if isinstance(out, (list, tuple)) else [out])
        return _executor.get_workspace_size(op, list(inputs), outputs, attrs, **options)
    get_workspace_size.__name__ = get_workspace_size.__qualname__ = f"{name}_get_workspace_size"
    get_workspace_size.__doc__ = (f"Phase one of op {op.name} (``aclnn{op.name}GetWorkspaceSize``): returns "
                                  f"``(workspace size, executor)``; inputs {', '.join(p.name for p in op.inputs)}.")
    return get_workspace_size


def run_function(name: str, op: OpDef) -> Callable[..., None]:
    """``<name>(workspace, size, executor, stream)`` for ``op``: phase two."""
    def run(workspace: Any, size: int, executor: _executor.Executor | None, stream: Stream | None) -> None:
        if isinstance(executor, _executor.Executor) and executor.op is not op:
            raise _executor.ExecutorStateError(f"aclnn.{name}: the executor was prepared for op "
                                               f"{executor.op.name}, not {op.name}")
        _executor.run(workspace, size, executor, stream)
    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"Phase two of op {op.name} (``aclnn{op.name}``): queue its L0 ops on ``stream``."
    return run


FUNCTIONS: dict[str, Callable[..., Any]] = {}
for _name, _op in LIBRARY.items():
    FUNCTIONS[f"{_name}_get_workspace_size"] = get_workspace_size_function(_name, _op)
    FUNCTIONS[_name] = run_function(_name, _op)
globals().update(FUNCTIONS)

__all__ = ["FUNCTIONS", *FUNCTIONS]
