"""L0 ops and the program they form: what phase one of an op call or a graph op builds, and phase two launches.

A :class:`Program` is a list of L0 ops over tensors (:class:`Slot`).  A slot
is a user input, a user output, or a workspace tensor (an intermediate: the
output of ``Contiguous`` or ``Cast``, a result ``ViewCopy`` copies out, a
graph node's output another node reads, a kernel's own workspace).  Phase one
adds the ops in execution order (kernel ops are tiled then, through the
tiling cache) and :meth:`Program.plan` places the workspace tensors in one
buffer with :class:`~npuemu.ops.workspace.MaxAllocator`, from their lifetimes:
a tensor lives from the op that writes it to the last op that reads it.

Phase two (:meth:`Program.enqueue`) views each workspace tensor in the
caller's buffer and queues every L0 op on one stream, in order: kernel ops
through ``npuemu.ops.run.run_op(..., stream=stream, wait=False)``, host ops
with :meth:`Stream.enqueue <npuemu.runtime.stream.Stream.enqueue>`, so a host
copy runs after the kernel that wrote its source and before the kernel that
reads its result.  Nothing runs until the stream is synchronised.

Host ops run with NumPy on the host (the device would run a kernel):

* ``Contiguous``: a strided input copied into a dense workspace tensor;
* ``Cast``: a dtype conversion with NumPy's rules (floats round to nearest
  even, floats to integers truncate toward zero), unless the caller casts
  with a registered Cast op, which is then a kernel op like any other;
* ``ViewCopy``: a dense result copied into a strided user output.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..arrays import as_array
from ..errors import NpuemuError
from ..host.run import DEFAULT_CACHE, make_context, run_tiling
from ..host.tiling import TensorDesc, TilingResult
from ..language import dtype as dt
from ..platform import Platform, get_platform
from ..runtime.stream import Stream
from .inference import np_dtype
from .opdef import OpDef
from .tensor import ND, OpTensor
from .workspace import Allocator, MaxAllocator, WorkspacePlan, WorkspaceTensor

INPUT, OUTPUT, WORKSPACE = "input", "output", "workspace"
HOST_OPS = ("Contiguous", "Cast", "ViewCopy")


class WorkspaceError(NpuemuError, ValueError):
    """Phase two got no workspace, or one smaller than phase one asked for, or something that is not a buffer."""


class StreamTypeError(NpuemuError, TypeError):
    """Phase two got something other than an ``npuemu.Stream`` (or None) as its stream."""


Launcher = Callable[..., Any]          # npuemu.ops.run.run_op's signature
DeviceTimeModel = Callable[["L0Op"], float]

_device_time_model: DeviceTimeModel | None = None


def set_device_time_model(model: DeviceTimeModel | None) -> DeviceTimeModel | None:
    """Install the model that gives each kernel L0 op its modelled device time; returns the previous one.

    The hook for a cost model: until one is installed, :attr:`L0Op.device_time`
    is None.  The model sees the op (its OpDef, tensors and tiling result).
    """
    global _device_time_model
    previous, _device_time_model = _device_time_model, model
    return previous


def default_launcher() -> Launcher:
    """``npuemu.ops.run.run_op``, the single op-launch entry point (imported when first needed)."""
    try:
        from .run import run_op
    except ImportError as exc:      # pragma: no cover - the entry point ships with the package
        raise NpuemuError(f"npuemu.ops.run.run_op is not available ({exc}); pass launcher=") from None
    return run_op


@dataclass(eq=False)
class Slot:
    """A tensor of a program: a user input or output, or a workspace tensor placed by the plan."""

    index: int
    name: str
    shape: tuple[int, ...]          # of the storage
    dtype: str
    format: str = ND
    role: str = WORKSPACE
    origin: tuple[int, ...] | None = None   # the logical shape, when the storage format makes it another
    base: "Slot | None" = None              # a reshaped view of this slot (ATB's Reshape): same bytes

    @property
    def root(self) -> "Slot":
        """The slot whose bytes this one views (itself unless it is a reshape)."""
        return self if self.base is None else self.base.root

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np_dtype(self.dtype).itemsize

    def desc(self, taken_as: str | None = None, nd_fallback: bool = False) -> TensorDesc:
        """What a tiling function sees, as ``run_op`` describes it (a bool tensor is int8 to a kernel).

        ``taken_as``: the format selection takes the tensor in; another than
        its own means the storage is read as ND (a format-agnostic op) or
        converted to ND first.
        """
        kdt = dt.from_numpy(np_dtype(self.dtype)).name
        if taken_as is not None and taken_as != self.format:
            return TensorDesc(self.shape if nd_fallback else self.origin or self.shape, kdt, ND)
        return TensorDesc(self.origin or self.shape, kdt, self.format, self.shape if self.origin else None)

    def __repr__(self) -> str:
        return f"<{self.role} {self.name}: {self.dtype}{list(self.shape)}>"


Operand = Any      # None (an absent optional input), a Slot, or a list of Slots (a dynamic input)


def _flat(operands: Sequence[Operand]) -> list[Slot]:
    out: list[Slot] = []
    for o in operands:
        if isinstance(o, Slot):
            out.append(o)
        elif isinstance(o, list):
            out.extend(o)
    return out


@dataclass(eq=False)
class L0Op:
    """One step of a program: a kernel op (``op`` set, launched through ``run_op``) or a host op (``host`` set)."""

    index: int
    kind: str
    inputs: list[Operand]
    outputs: list[Slot]
    op: OpDef | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    host: Callable[[list[Any], list[Any]], None] | None = None
    tiling: TilingResult | None = None
    workspace: Slot | None = None
    host_time: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.index}:{self.kind}"

    @property
    def on_host(self) -> bool:
        return self.host is not None

    def reads(self) -> list[Slot]:
        return _flat(self.inputs)

    def writes(self) -> list[Slot]:
        return list(self.outputs) + ([self.workspace] if self.workspace is not None else [])

    @property
    def device_time(self) -> float | None:
        """The modelled device time in seconds (:func:`set_device_time_model`), None without a model or on the host."""
        if _device_time_model is None or self.on_host:
            return None
        return float(_device_time_model(self))

    def __repr__(self) -> str:
        where = "host" if self.on_host else "kernel"
        return f"<L0 {self.label} ({where}): {self.reads()} -> {self.outputs}>"


def host_contiguous(src: list[Any], dst: list[Any]) -> None:
    """``Contiguous`` on the host: copy the strided input into the dense workspace tensor."""
    np.copyto(dst[0], src[0])


def host_cast(src: list[Any], dst: list[Any]) -> None:
    """``Cast`` on the host, with NumPy's conversion (nearest even between floats, truncation to integers)."""
    dst[0][...] = src[0].astype(dst[0].dtype)


def host_view_copy(src: list[Any], dst: list[Any]) -> None:
    """``ViewCopy`` on the host: copy the dense result into the strided user output."""
    np.copyto(dst[0], src[0])


_HOST_FUNCTIONS = {"Contiguous": host_contiguous, "Cast": host_cast, "ViewCopy": host_view_copy}


def tiling_attrs(op: OpDef, inputs: Sequence[TensorDesc], attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The attributes an op's tiling function sees, as ``run_op`` gives them: the op's own, plus what
    ``op.tiling_attrs`` derives from the descriptions of the inputs that are there."""
    out = dict(attrs)
    if op.tiling_attrs is not None:
        out.update(op.tiling_attrs(tuple(inputs), dict(attrs)))
    return out


def _kernel_takes_workspace(op: OpDef) -> bool:
    params = getattr(getattr(op.kernel, "signature", None), "parameters", {})
    return "workspace" in params


def _taken_as(op: OpDef, outputs: bool, i: int, fmt: str) -> str:
    """The format selection takes tensor ``i`` in: its own if a column has it, else ND."""
    known = {(c.outputs if outputs else c.inputs)[i][1] for c in op.columns}
    return fmt if fmt in known else ND


def workspace_buffer(workspace: Any, what: str) -> np.ndarray:
    """The caller's workspace as flat bytes (a NumPy array, torch CPU tensor or gm_buffer, C-contiguous)."""
    got = as_array(workspace) if not isinstance(workspace, np.ndarray) else (workspace, None)
    if got is None:
        raise WorkspaceError(f"{what}: the workspace must be an array (e.g. np.empty(size, np.uint8)), "
                             f"got {type(workspace).__name__}")
    arr = got[0]
    if not arr.flags.c_contiguous:
        raise WorkspaceError(f"{what}: the workspace must be one contiguous buffer")
    return arr.reshape(-1).view(np.uint8)


class Program:
    """L0 ops over slots; see the module docstring.  ``launcher`` is ``run_op`` unless a caller injects another."""

    def __init__(self, name: str, *, platform: Platform | str | None = None, deterministic: bool = False,
                 impl_mode: str | None = None, cache: Any = DEFAULT_CACHE, launcher: Launcher | None = None,
                 launch_options: Mapping[str, Any] | None = None):
        self.name = name
        self.platform = get_platform(platform)
        self.deterministic = deterministic
        self.impl_mode = impl_mode
        self.cache = cache
        self.launcher = launcher
        self.launch_options = dict(launch_options or {})
        self.slots: list[Slot] = []
        self.ops: list[L0Op] = []
        # slot index -> (its storage as a NumPy array, what a launch gets), for user inputs and outputs
        self.bound: dict[int, tuple[np.ndarray, Any]] = {}
        self.plan: WorkspacePlan | None = None

    # ------------------------------------------------------------------ phase one

    def slot(self, name: str, shape: Sequence[int], dtype: str, fmt: str = ND, role: str = WORKSPACE,
             origin: Sequence[int] | None = None) -> Slot:
        """A new tensor (``shape`` is its storage's); bind user inputs and outputs with :meth:`bind`."""
        s = Slot(len(self.slots), name, tuple(int(d) for d in shape), dtype, fmt, role,
                 None if origin is None else tuple(int(d) for d in origin))
        self.slots.append(s)
        return s

    def alias(self, base: Slot, name: str, shape: Sequence[int]) -> Slot:
        """``base`` seen with another shape of as many elements (no copy): ATB's Reshape."""
        s = Slot(len(self.slots), name, tuple(int(d) for d in shape), base.dtype, ND, base.role, None, base)
        self.slots.append(s)
        return s

    def bind(self, slot: Slot, array: np.ndarray, arg: Any = None) -> None:
        """Give user slot ``slot`` its storage ``array``; a launch gets ``arg`` (default: the array)."""
        self.bound[slot.index] = (array, array if arg is None else arg)

    def host_op(self, kind: str, src: Slot, dst: Slot) -> L0Op:
        """Queue a host op (``Contiguous``, ``Cast`` or ``ViewCopy``) from ``src`` to ``dst``."""
        t0 = time.perf_counter()
        node = L0Op(len(self.ops), kind, [src], [dst], host=_HOST_FUNCTIONS[kind])
        self.ops.append(node)
        node.host_time = time.perf_counter() - t0
        return node

    def kernel_op(self, op: OpDef, inputs: list[Operand], outputs: list[Slot], attrs: Mapping[str, Any],
                  kind: str | None = None) -> L0Op:
        """Queue ``op`` on these slots and tile it now, through the tiling cache (phase one's tiling).

        The tiling context is the one ``run_op`` builds at launch (the same
        descriptions, attributes, platform, flags and core cap), so the launch
        finds phase one's result in the cache.
        """
        t0 = time.perf_counter()
        node = L0Op(len(self.ops), kind or op.name, list(inputs), list(outputs), op=op, attrs=dict(attrs))
        if op.tiling is not None:
            ins = [s.desc(_taken_as(op, False, i, s.format), op.nd_fallback)
                   for i, o in enumerate(inputs) for s in (o if isinstance(o, list) else [o] if o else [])]
            outs = [s.desc(_taken_as(op, True, j, s.format), op.nd_fallback) for j, s in enumerate(outputs)]
            ctx = make_context(ins, outs, attrs=tiling_attrs(op, ins, attrs), platform=self.platform,
                               deterministic=self.deterministic, core_num=self.launch_options.get("core_num"))
            node.tiling = run_tiling(op.tiling, ctx, self.cache)
            if _kernel_takes_workspace(op):
                size = node.tiling.workspace_size(self.platform)
                node.workspace = self.slot(f"{node.label}.workspace", (size,), "uint8")
        self.ops.append(node)
        node.host_time = time.perf_counter() - t0
        return node

    def lifetimes(self) -> tuple[list[WorkspaceTensor], dict[int, list[str]]]:
        """Each workspace tensor's ``[first writer, last reader]`` and the workspace tensors each op reads."""
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        reads: dict[int, list[str]] = {}
        for node in self.ops:
            for s in (w.root for w in node.writes()):          # a reshape's use is a use of its bytes
                if s.role == WORKSPACE:
                    start.setdefault(s.index, node.index)
                    end[s.index] = max(end.get(s.index, node.index), node.index)
            for s in (r.root for r in node.reads()):
                if s.role == WORKSPACE:
                    end[s.index] = max(end.get(s.index, node.index), node.index)
                    reads.setdefault(node.index, []).append(s.name)
        tensors = [WorkspaceTensor(s.name, s.nbytes, start[s.index], end[s.index])
                   for s in self.slots if s.role == WORKSPACE and s.base is None and s.index in start]
        return tensors, reads

    def make_plan(self, allocator: Allocator | None = None) -> WorkspacePlan:
        """Place the workspace tensors (MaxAllocator unless told otherwise); phase one keeps the result."""
        tensors, reads = self.lifetimes()
        plan = (allocator or MaxAllocator()).plan(tensors, reads)
        if allocator is None or isinstance(allocator, MaxAllocator):
            self.plan = plan
        return plan

    @property
    def workspace_size(self) -> int:
        return self.plan.size if self.plan is not None else 0

    # ------------------------------------------------------------------ phase two

    def views(self, workspace: np.ndarray | None) -> dict[int, tuple[np.ndarray, Any]]:
        """Every slot's ``(storage array, launch argument)``: user tensors as bound, workspace tensors as
        views of ``workspace`` (an OpTensor for a storage format other than ND)."""
        out = dict(self.bound)
        for s in self.slots:
            if s.role == WORKSPACE and self.plan is not None and s.name in self.plan.offsets:
                off = self.plan.offsets[s.name]
                view = workspace[off:off + s.nbytes].view(np_dtype(s.dtype)).reshape(s.shape)
                out[s.index] = (view, view if s.format == ND else OpTensor(view, s.format, s.origin))
        for s in self.slots:
            if s.base is not None and s.root.index in out:
                view = out[s.root.index][0].reshape(s.shape)
                out[s.index] = (view, view)
        return out

    def enqueue(self, workspace: np.ndarray | None, stream: Stream) -> None:
        """Queue every L0 op on ``stream`` in order (nothing runs until the stream is synchronised)."""
        arrays = self.views(workspace)
        launcher = self.launcher or default_launcher()

        def pick(o: Operand, k: int) -> Any:
            if o is None:
                return None
            return [arrays[s.index][k] for s in o] if isinstance(o, list) else arrays[o.index][k]

        live = [True]

        def host(f: Callable[[list[Any], list[Any]], None], src: list[Any], dst: list[Any]) -> None:
            if live[0]:
                f(src, dst)

        try:
            for node in self.ops:
                if node.on_host:
                    src, dst = [pick(o, 0) for o in node.inputs], [pick(s, 0) for s in node.outputs]
                    stream.enqueue(lambda f=node.host, i=src, o=dst: host(f, i, o),
                                   f"{node.kind} of {self.name} (host, L0 op {node.index})")
                    continue
                ws = arrays[node.workspace.index][0] if node.workspace is not None else None
                launcher(node.op, [pick(o, 1) for o in node.inputs], [pick(s, 1) for s in node.outputs],
                         node.attrs, platform=self.platform, stream=stream, wait=False, impl_mode=self.impl_mode,
                         deterministic=self.deterministic, workspace=ws, cache=self.cache, **self.launch_options)
        except BaseException:
            # a launch refused while queuing (no binary, a build error): this program's host ops already
            # queued do nothing; kernels queued before it run, as on a device stream after a failed launch
            live[0] = False
            raise

    def launch(self, workspace: Any, size: int | None, stream: Stream | None, what: str) -> None:
        """Phase two: check the workspace against the plan, queue the ops on ``stream``, or on a stream of
        their own that is synchronised before returning when ``stream`` is None."""
        need = self.workspace_size
        buf = None
        if need > 0:
            if workspace is None:
                raise WorkspaceError(f"{what}: phase one asked for {need} bytes of workspace, and the workspace is "
                                     f"null")
            if size is not None and size < need:
                raise WorkspaceError(f"{what}: workspace size {size} is less than the {need} bytes phase one asked "
                                     f"for")
            buf = workspace_buffer(workspace, what)
            if buf.nbytes < need:
                raise WorkspaceError(f"{what}: the workspace holds {buf.nbytes} bytes, phase one asked for {need}")
        target = Stream() if stream is None else stream
        self.enqueue(buf, target)
        if stream is None:
            target.synchronize()

    def host_times(self) -> dict[str, float]:
        """Phase-one host seconds of each L0 op (validation and planning are the caller's)."""
        return {node.label: node.host_time for node in self.ops}

    def device_times(self) -> dict[str, float | None]:
        """Modelled device seconds of each L0 op (None without a model, see :func:`set_device_time_model`)."""
        return {node.label: node.device_time for node in self.ops}


def check_stream(stream: Any, what: str) -> Stream | None:
    """``stream`` if it is an ``npuemu.Stream`` or None, else :class:`StreamTypeError`."""
    if stream is None or isinstance(stream, Stream):
        return stream
    raise StreamTypeError(f"{what}: the stream must be an npuemu.Stream (npuemu.Stream(), or pyasc's "
                          f"asc.lib.runtime.create_stream()) or None, got {type(stream).__name__}")


__all__ = ["Program", "Slot", "L0Op", "WorkspaceError", "StreamTypeError", "set_device_time_model",
           "default_launcher", "workspace_buffer", "check_stream", "tiling_attrs", "HOST_OPS",
           "host_contiguous", "host_cast", "host_view_copy"]
