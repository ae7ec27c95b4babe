"""The two-phase op API of aclnn, and its Pythonic form.

aclnn splits every op call in two (superkernel-binaries-tiling.md PART 4)::

    size, ex = get_workspace_size(ADD, [x, y], [z], {"alpha": 1.0})   # aclnnAddGetWorkspaceSize
    ws = np.empty(size, np.uint8)                                     # aclrtMalloc
    run(ws, size, ex, stream)                                         # aclnnAdd
    stream.synchronize()                                              # aclrtSynchronizeStream

or, in Python::

    ex = prepare(ADD, x, y, alpha=1.0)         # phase one; the output is allocated (ex.outputs)
    z = ex.run()                               # phase two, synchronised

**Phase one** checks the call (input count, dtypes and formats against the
op's columns, output shapes and dtypes against ``op.infer_shape`` /
``op.infer_dtype``) and builds the executor's graph of L0 ops:

* ``Contiguous`` for each input that is not C-contiguous;
* ``Cast`` for each input whose dtype no column takes, when a column does
  after NumPy promotion restricted to the op's columns
  (:func:`~npuemu.ops.inference.choose_column`);
* the op itself;
* ``Cast`` when the user's output has another dtype than the op's result,
  and ``ViewCopy`` into a user output that is not C-contiguous.

Contiguous, Cast and ViewCopy run on the host with NumPy (``cast_op=`` makes
Cast a kernel op: an OpDef that converts, used for the dtype pairs it has a
column for; a ``dtype`` or ``dst_type`` str attribute of it gets the
destination dtype).  Every kernel op is tiled in phase one, through the tiling cache,
and every intermediate tensor is placed in the workspace with
:class:`~npuemu.ops.workspace.MaxAllocator`; the returned size is what phase
two needs.  Empty inputs short-circuit: no L0 ops, workspace 0.
:attr:`Executor.host_time` is phase one's host time, :meth:`Executor.host_times`
splits it per L0 op; :meth:`Executor.device_times` is the hook for a modelled
device time (:func:`~npuemu.ops.l0.set_device_time_model`).

**Phase two** launches the L0 ops in order on the stream: kernel ops through
``npuemu.ops.run.run_op(..., stream=stream, wait=False)``, host ops queued on
the same stream, so the caller synchronises the stream.  Without a stream
(``stream=None``) both forms synchronise before returning.

An executor is single-use, as aclnn's: a second run is an
:class:`ExecutorStateError` unless :meth:`Executor.repeatable` (aclnn's
``aclSetAclOpExecutorRepeatable``, here also :func:`set_repeatable`) was
called before.  A single-use executor is used up by any phase-two call, one
that fails on its arguments included (aclnn deletes the executor when its
workspace is null).  Phase two refuses a null workspace, or one shorter than
phase one's size, when that size is above 0 (:class:`WorkspaceError`), and a
stream that is not an ``npuemu.Stream`` (:class:`StreamTypeError`).
"""
from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import NpuemuError
from ..host.run import DEFAULT_CACHE
from ..runtime.stream import Stream
from .inference import (HostTensor, OpInputError, bind_inputs, bind_outputs, check_output, choose_column, first,
                        host_tensor, infer_outputs, np_dtype)
from .l0 import INPUT, OUTPUT, L0Op, Launcher, Program, Slot, StreamTypeError, WorkspaceError, check_stream
from .opdef import Column, OpDef


class ExecutorStateError(NpuemuError, RuntimeError):
    """An executor was run again after a single-use run, run after it was destroyed, or is missing (None)."""


class Executor:
    """What phase one built for one op call: its L0 ops, the workspace plan, the outputs.

    ``outputs`` are the arrays the op writes (the user's, or those phase one
    allocated); ``workspace_size`` is the size phase two needs.
    """

    def __init__(self, op: OpDef, program: Program, outputs: list[Any], host_time: float):
        self.op = op
        self.program = program
        self.outputs = outputs
        self.host_time = host_time
        self.runs = 0
        self._repeatable = False
        self._released: str | None = None       # why the executor can no longer run

    def __repr__(self) -> str:
        ops = ", ".join(f"{n.kind}{'(host)' if n.on_host else ''}" for n in self.program.ops) or "nothing"
        return f"<Executor {self.op.name}: {ops}; workspace {self.workspace_size} bytes>"

    @property
    def workspace_size(self) -> int:
        return self.program.workspace_size

    @property
    def l0_ops(self) -> list[L0Op]:
        return list(self.program.ops)

    @property
    def plan(self) -> Any:
        """The workspace plan (:class:`~npuemu.ops.workspace.WorkspacePlan`), None when there is no L0 op."""
        return self.program.plan

    def host_times(self) -> dict[str, float]:
        """Phase-one host seconds per L0 op (``"<index>:<kind>"``); :attr:`host_time` is the whole of phase one."""
        return self.program.host_times()

    def device_times(self) -> dict[str, float | None]:
        """Modelled device seconds per L0 op; None until a model is installed (``set_device_time_model``)."""
        return self.program.device_times()

    @property
    def is_repeatable(self) -> bool:
        return self._repeatable

    def repeatable(self, flag: bool = True) -> "Executor":
        """Let the executor run more than once (aclnn's ``aclSetAclOpExecutorRepeatable``); returns it."""
        if self._released is not None:
            raise ExecutorStateError(f"executor of op {self.op.name} {self._released}: it cannot be made repeatable")
        self._repeatable = bool(flag)
        return self

    def destroy(self) -> None:
        """Release the executor (``aclDestroyAclOpExecutor``); running it afterwards is an error."""
        self._released = "was destroyed"

    def run(self, workspace: Any = None, stream: Stream | None = None) -> Any:
        """Phase two in Python: allocate the workspace if none is given, launch, synchronise unless on ``stream``.

        Returns the output (a tuple of them for several outputs); with a
        stream, they hold the results once the stream is synchronised.
        """
        what = f"op {self.op.name}"
        self._claim(what)
        stream = check_stream(stream, what)
        if workspace is None and self.workspace_size:
            workspace = np.empty(self.workspace_size, np.uint8)
        self._launch(workspace, None, stream, what)
        return self.outputs[0] if len(self.outputs) == 1 else tuple(self.outputs)

    # ------------------------------------------------------------------ phase two

    def _claim(self, what: str) -> None:
        if self._released is not None:
            raise ExecutorStateError(f"{what}: this executor {self._released}; executors are single-use unless "
                                     f"made repeatable (executor.repeatable(), before their first run): run "
                                     f"phase one again")
        if not self._repeatable:
            self._released = "has already run"

    def _launch(self, workspace: Any, size: int | None, stream: Stream | None, what: str) -> None:
        self.program.launch(workspace, size, stream, what)
        self.runs += 1


# ---------------------------------------------------------------------- phase one


def _input_slot(prog: Program, t: HostTensor, dtype: str, name: str, cast_op: OpDef | None) -> Slot:
    """The slot the op reads for user input ``t``: made contiguous, then cast to the column's dtype."""
    s = _user_slot(prog, name, t, INPUT)
    if not t.contiguous:
        dense = _like(prog, f"{name}.contiguous", t, t.dtype)
        prog.host_op("Contiguous", s, dense)
        s = dense
    if t.dtype != dtype:
        wide = _like(prog, f"{name}.cast", t, dtype)
        _cast(prog, s, wide, cast_op)
        s = wide
    return s


def _user_slot(prog: Program, name: str, t: HostTensor, role: str) -> Slot:
    s = prog.slot(name, t.storage_shape, t.dtype, t.format, role, t.origin)
    prog.bind(s, t.array, t.arg)
    return s


def _like(prog: Program, name: str, t: HostTensor, dtype: str) -> Slot:
    """A workspace tensor laid out as ``t`` (storage shape, format, logical shape) in ``dtype``: the host
    ops between the two work element by element on the storage."""
    return prog.slot(name, t.storage_shape, dtype, t.format, origin=t.origin)


def _cast(prog: Program, src: Slot, dst: Slot, cast_op: OpDef | None) -> None:
    """A Cast L0 op: ``cast_op`` (a kernel op) when it has a column for this pair of dtypes, else the host."""
    if cast_op is not None and any(c.inputs[0][0] == src.dtype and c.outputs[0][0] == dst.dtype
                                   for c in cast_op.columns):
        # the destination dtype goes in a str attribute named dtype or dst_type (aclnn's Cast: dst_type)
        named = {a.name: dst.dtype for a in cast_op.attrs if a.type == "str" and a.name in ("dtype", "dst_type")}
        prog.kernel_op(cast_op, [src], [dst], cast_op.attr_values(named), kind="Cast")
    else:
        prog.host_op("Cast", src, dst)


def _outputs(op: OpDef, ins: list[Any], given: list[Any] | None, attrs: dict[str, Any]
             ) -> tuple[Column, list[HostTensor], list[Any]]:
    """The column, the outputs as host tensors, and as the user sees them (allocated when not given)."""
    hint = [first(b).dtype for b in given] if given is not None else None
    column = choose_column(op, ins, hint)
    inferred = infer_outputs(op, ins, column, attrs)
    if any(d != c for (_, d), (c, _) in zip(inferred, column.outputs)):
        column = choose_column(op, ins, [d for _, d in inferred], require_outputs=True)
    tensors: list[HostTensor] = []
    user: list[Any] = []
    for j, (p, (shape, dtype)) in enumerate(zip(op.outputs, inferred)):
        if given is not None:
            t = given[j]
            if isinstance(t, list):
                raise OpInputError(f"op {op.name}: dynamic output {p.name!r} is not supported by the executor")
            check_output(op, j, t, shape, dtype)
            tensors.append(t)
        else:
            if shape is None:
                raise OpInputError(f"op {op.name}: the shape of output {p.name!r} cannot be inferred (the op has "
                                   f"no infer_shape): pass the output")
            arr = np.empty(shape, np_dtype(dtype))
            tensors.append(HostTensor(arr))
            user.append(arr)
    return column, tensors, user


def _empty(bound: list[Any]) -> bool:
    for b in bound:
        for t in (b if isinstance(b, list) else [b]):
            if t is not None and t.array.size == 0:
                return True
    return False


def get_workspace_size(op: OpDef, inputs: Sequence[Any], outputs: Sequence[Any] | Any | None = None,
                       attrs: Mapping[str, Any] | None = None, *, platform: Any = None, deterministic: bool = False,
                       impl_mode: str | None = None, cache: Any = DEFAULT_CACHE, cast_op: OpDef | None = None,
                       launcher: Launcher | None = None, **launch_options: Any) -> tuple[int, Executor]:
    """Phase one (``aclnnXxxGetWorkspaceSize``): check the call, build and tile the L0 ops, plan the workspace.

    ``inputs`` and ``outputs`` follow the op's declaration (None for an absent
    optional input, a list for a dynamic one); ``outputs=None`` allocates
    them from the inferred shapes and dtypes (``executor.outputs``).
    ``launcher`` replaces ``npuemu.ops.run.run_op``; other keywords are
    launch options passed to it.  Returns ``(workspace size, executor)``.
    """
    t0 = time.perf_counter()
    attrs = op.attr_values(dict(attrs or {}))
    ins = bind_inputs(op, inputs)
    given = bind_outputs(op, outputs)
    column, out_tensors, allocated = _outputs(op, ins, given, attrs)
    user_outputs = list(outputs if isinstance(outputs, (list, tuple)) else [outputs]) if given is not None \
        else allocated
    prog = Program(op.name, platform=platform, deterministic=deterministic, impl_mode=impl_mode, cache=cache,
                   launcher=launcher, launch_options=launch_options)
    if not _empty(ins) and not _empty([*out_tensors]):
        _build(prog, op, ins, out_tensors, column, attrs, cast_op)
        prog.make_plan()
    ex = Executor(op, prog, user_outputs, time.perf_counter() - t0)
    return ex.workspace_size, ex


def _build(prog: Program, op: OpDef, ins: list[Any], outs: list[HostTensor], column: Column,
           attrs: dict[str, Any], cast_op: OpDef | None) -> None:
    operands: list[Any] = []
    for i, (p, b) in enumerate(zip(op.inputs, ins)):
        dtype = column.inputs[i][0]
        if b is None:
            operands.append(None)
        elif isinstance(b, list):
            operands.append([_input_slot(prog, t, dtype, f"{p.name}[{k}]", cast_op) for k, t in enumerate(b)])
        else:
            operands.append(_input_slot(prog, b, dtype, p.name, cast_op))
    results: list[Slot] = []
    after: list[tuple[Slot, Slot, HostTensor]] = []
    for j, (p, t) in enumerate(zip(op.outputs, outs)):
        user = _user_slot(prog, p.name, t, OUTPUT)
        dtype = column.outputs[j][0]
        if t.contiguous and t.dtype == dtype:
            results.append(user)         # the kernel writes the user's array in place
        else:
            r = _like(prog, f"{p.name}.result", t, dtype)
            results.append(r)
            after.append((r, user, t))
    prog.kernel_op(op, operands, results, attrs)
    for r, user, t in after:
        s = r
        if t.dtype != r.dtype:
            if t.contiguous:
                _cast(prog, s, user, cast_op)
                continue
            s = _like(prog, f"{user.name}.cast", t, t.dtype)
            _cast(prog, r, s, cast_op)
        prog.host_op("ViewCopy", s, user)


def prepare(op: OpDef, *inputs: Any, out: Any = None, platform: Any = None, deterministic: bool = False,
            impl_mode: str | None = None, cache: Any = DEFAULT_CACHE, cast_op: OpDef | None = None,
            launcher: Launcher | None = None, launch_options: Mapping[str, Any] | None = None,
            **attrs: Any) -> Executor:
    """Phase one in Python: ``prepare(ADD, x, y, alpha=2.0).run()``; keyword arguments other than the options are attributes.

    ``out`` is the output (or a list of them); None allocates them.
    """
    outputs = None if out is None else (list(out) if isinstance(out, (list, tuple)) else [out])
    _, ex = get_workspace_size(op, inputs, outputs, attrs, platform=platform, deterministic=deterministic,
                               impl_mode=impl_mode, cache=cache, cast_op=cast_op, launcher=launcher,
                               **dict(launch_options or {}))
    return ex


def run(workspace: Any, size: int, executor: Executor | None, stream: Stream | None) -> None:
    """Phase two (``aclnnXxx(workspace, size, executor, stream)``): queue the L0 ops on ``stream``.

    The caller synchronises the stream; with ``stream=None`` the call
    synchronises before it returns.
    """
    if executor is None:
        raise ExecutorStateError("run: the executor is null (call get_workspace_size first)")
    if not isinstance(executor, Executor):
        raise ExecutorStateError(f"run: expected an Executor from get_workspace_size, got {type(executor).__name__}")
    what = f"op {executor.op.name}"
    executor._claim(what)
    stream = check_stream(stream, what)
    if not isinstance(size, (int, np.integer)) or size < 0:
        raise WorkspaceError(f"{what}: the workspace size must be a non-negative integer, got {size!r}")
    executor._launch(workspace, int(size), stream, what)


def set_repeatable(executor: Executor) -> Executor:
    """aclnn's ``aclSetAclOpExecutorRepeatable``: the executor may run any number of times."""
    return executor.repeatable()


def destroy_executor(executor: Executor) -> None:
    """aclnn's ``aclDestroyAclOpExecutor``."""
    executor.destroy()


__all__ = ["Executor", "get_workspace_size", "prepare", "run", "set_repeatable", "destroy_executor",
           "ExecutorStateError", "WorkspaceError", "StreamTypeError", "OpInputError", "host_tensor"]
