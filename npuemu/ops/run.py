"""Run an operator: select its binary, tile, launch (the host half of an aclnn call).

``run_op(op, inputs, outputs, attrs)`` does for an :class:`~npuemu.ops.opdef.OpDef`
what opapi does around a kernel (superkernel-binaries-tiling.md §2.5, PART 4):

1. checks the attributes (``op.attr_values``: defaults filled in);
2. selects the binary for the tensors' data types and storage formats, the
   implementation mode and the deterministic flag (:mod:`.select`); a static
   binary built for exactly these shapes comes first and brings its tiling;
3. otherwise tiles: ``op.tiling`` on a context with the op's attributes plus
   ``op.tiling_attrs(input descs, attrs)``, through the tiling cache;
4. takes the kernel of the binary for the result's tiling key and launches it
   on ``block_dim`` cores with ``(*inputs, *outputs, [workspace,] tiling_data,
   *op.kernel_args(attrs))``.

A tensor the op takes as ND while it is stored in another format is passed
as is when the op is format-agnostic (``nd_fallback``), else converted to ND
for the kernel and, for an output, converted back after the launch (what the
TransData GE inserts would do).  It returns the :class:`TilingResult` that
ran.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..arrays import as_array, gm_buffer
from ..errors import LaunchError
from ..host.run import DEFAULT_CACHE, call_before_launch_hooks, make_context, run_tiling
from ..host.tiling import TensorDesc, TilingResult
from ..language import dtype as dt
from ..language.enums import KernelType
from ..options import from_environment
from ..platform import Platform, get_platform
from ..runtime.binding import bind_arguments
from ..runtime.launch import launch
from ..runtime.stream import Stream
from .codes import OpDefError
from .opdef import OpDef
from .select import Selection, select_args
from .tensor import ND, NZ, Arg, OpTensor, TensorArg, describe_tensors, format_cast
from .variants import build_attrs, kernel_args, kernel_layout, workspace_dtype

LAUNCH_OPTIONS = frozenset({"debug", "check", "timeout", "max_steps", "core_num"})
_AIV_TYPES = (KernelType.AIV_ONLY, KernelType.MIX_AIV_1_0, KernelType.MIX_AIV_HARD_SYNC)

def run_op(op: OpDef, inputs: Sequence[Any], outputs: Sequence[Any], attrs: Mapping[str, Any] | None = None, *,
           platform: Platform | str | None = None, stream: Stream | None = None, wait: bool = True,
           impl_mode: str | None = None, deterministic: bool = False, workspace: np.ndarray | None = None,
           cache: Any = DEFAULT_CACHE, **launch_options: Any) -> TilingResult:
    """Run ``op`` on ``inputs`` into ``outputs``; returns the tiling result that ran.

    inputs, outputs: one entry per parameter: a NumPy array, torch CPU tensor, ``npuemu.gm_buffer`` or
        :class:`~npuemu.ops.tensor.OpTensor` (a storage format), a list of them for a dynamic parameter,
        None for an absent optional input.
    attrs: the op's attributes by name (defaults filled in, checked).
    impl_mode: ``high_precision`` / ``high_performance`` (used if the op is built for it).
    deterministic: the deterministic-computation flag (selection and tiling see it).
    workspace: a uint8 (or any) array to use as the kernel's workspace; it must hold at least
        ``result.workspace_size(platform)`` bytes.  None: a fresh one per launch.
    stream, wait: queue the launch on ``stream``; ``wait=False`` returns before it runs.
    cache: the tiling cache (None: tile afresh).
    launch_options: ``debug``, ``check``, ``timeout``, ``max_steps``, and ``core_num`` (a cap on the
        cores the tiling may use).
    """
    unknown = sorted(set(launch_options) - LAUNCH_OPTIONS)
    if unknown:
        raise LaunchError(f"op {op.name}: unknown option(s) {', '.join(unknown)}; run_op takes "
                          f"{', '.join(sorted(LAUNCH_OPTIONS))}")
    core_num = launch_options.pop("core_num", None)
    plat = get_platform(platform)
    attr_values = op.attr_values(dict(attrs or {}))
    ins = describe_tensors(op, op.inputs, inputs, "input")
    outs = describe_tensors(op, op.outputs, outputs, "output")
    sel = select_args(op, ins, outs, attr_values, platform=plat, impl_mode=impl_mode, deterministic=deterministic,
                      static=core_num is None)
    options = from_environment(**{**op.kernel.options, **launch_options})
    col = op.columns[sel.variant.column]
    kin, din, _ = _kernel_tensors(op, ins, sel.input_formats, [d for d, _ in col.inputs])
    kout, dout, writeback = _kernel_tensors(op, outs, sel.output_formats, [d for d, _ in col.outputs])
    result = sel.static_result()
    if result is None:
        if op.tiling is None:
            raise OpDefError(f"op {op.name} has no tiling function")
        tattrs = dict(attr_values)
        if op.tiling_attrs is not None:
            tattrs.update(op.tiling_attrs(tuple(din), dict(attr_values)))
        ctx = make_context(din, dout, attrs=tattrs, platform=plat, deterministic=deterministic, core_num=core_num)
        result = run_tiling(op.tiling, ctx, cache)
    binary = sel.kernel(result.tiling_key, options.check)
    layout = kernel_layout(op, len(kin) + len(kout))
    extra = kernel_args(op, attr_values)
    _check_consts(op, sel, layout.params[len(layout.params) - len(extra):] if extra else (), extra)
    args: list[Any] = [*kin, *kout]
    if layout.workspace:
        args.append(_workspace(op, result, plat, workspace))
    elif result.user_workspace_size:
        raise LaunchError(f"op {op.name}: its tiling asks for {result.user_workspace_size} bytes of workspace but "
                          f"kernel '{op.kernel.__name__}' has no 'workspace' parameter")
    args.append(result.tiling_data)
    args += extra
    if result.schedule_mode == 1:
        aiv = binary.kernel_type in _AIV_TYPES
        cores = plat.aiv_count if aiv else plat.aic_count
        if result.block_dim > cores:
            raise LaunchError(f"op {op.name}: schedule mode 1 (batch) needs all {result.block_dim} blocks resident, "
                              f"but {plat.name} has {cores} {'vector' if aiv else 'cube'} cores")
    call_before_launch_hooks(kin, kout)
    values = bind_arguments(binary, result.block_dim, tuple(args), {})
    launch(binary, result.block_dim, values, debug=options.debug, stream=stream, wait=wait,
           timeout=options.timeout, max_steps=options.max_steps)
    if writeback:
        done = _run_all(writeback)
        if stream is not None and not wait:
            stream.enqueue(done, f"op {op.name}: outputs back to their storage format")
        else:
            done()
    return result


def _kernel_tensors(op: OpDef, args: Sequence[Arg], chosen: Sequence[str | None], dtypes: Sequence[str]
                    ) -> tuple[list[Any], list[TensorDesc], list[Callable[[], None]]]:
    """What the kernel gets for each tensor, what the tiling sees, and the copies back for converted outputs."""
    values: list[Any] = []
    descs: list[TensorDesc] = []
    back: list[Callable[[], None]] = []
    for arg, fmt, dtype in zip(args, chosen, dtypes):
        if arg is None:         # an absent optional input: its parameter gets an empty tensor
            values.append(gm_buffer(np.zeros(0, np.uint8), dt.by_name(dtype)))
            continue
        for a in (arg if isinstance(arg, list) else [arg]):
            if a.format == fmt or op.nd_fallback:
                values.append(a.value)
                descs.append(a.desc(as_nd=a.format != fmt))
                continue
            nd = format_cast(OpTensor(a.value, a.format, a.shape), ND)
            values.append(nd.data)
            descs.append(TensorDesc(a.shape, a.dtype, ND))
            back.append(_copy_back(a, nd))
    return values, descs, back


def _copy_back(a: TensorArg, nd: OpTensor) -> Callable[[], None]:
    """Write a converted output back into its storage (in its own format)."""
    def copy() -> None:
        stored = format_cast(nd, a.format) if a.format == NZ else nd
        dst = as_array(a.value)[0]
        np.copyto(dst, as_array(stored.data)[0].reshape(dst.shape), casting="no")
    return copy


def _run_all(fns: list[Callable[[], None]]) -> Callable[[], None]:
    def run() -> None:
        for fn in fns:
            fn()
    return run


def _workspace(op: OpDef, result: TilingResult, plat: Platform, given: np.ndarray | None) -> Any:
    """The workspace argument: the caller's array if large enough, else a fresh one (never initialised:
    the framework hands workspace memory out as is)."""
    need = result.workspace_size(plat)
    wdt = workspace_dtype(op)
    if given is None:
        size = wdt.sizeof()
        return gm_buffer(np.zeros(-(-need // size) * size, np.uint8), wdt, initialized=False)
    if not isinstance(given, np.ndarray):
        raise LaunchError(f"op {op.name}: workspace must be a NumPy array, got {type(given).__name__}")
    if given.nbytes < need:
        raise LaunchError(f"op {op.name}: the workspace holds {given.nbytes} bytes, this launch needs {need} "
                          f"({plat.system_workspace_size} system + {result.user_workspace_size} user bytes on "
                          f"{plat.name}); ask for the size first (result.workspace_size(platform))")
    return gm_buffer(given, wdt, initialized=False)


def _check_consts(op: OpDef, sel: Selection, names: Sequence[str], extra: Sequence[Any]) -> None:
    """Attributes that decide a ConstExpr of the kernel must have been given a binary per value."""
    if not extra:
        return
    built = kernel_args(op, build_attrs(op, sel.variant))
    for name, now, then in zip(names, extra, built):
        if name in op.kernel.constexpr and not _same(now, then):
            raise LaunchError(f"op {op.name}: kernel_args gives ConstExpr parameter '{name}' of kernel "
                              f"'{op.kernel.__name__}' the value {now!r}, but its binary is built for {then!r}; "
                              f"an attribute that decides a ConstExpr needs binary_values (one binary per value)")


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:       # values without a plain equality (arrays): compare as objects
        return a is b
