"""Tile and launch in one call: the host half of an op.

``run_op(kernel, tiling_fn, inputs, outputs)`` does what a CANN op's host
code and the runtime do around a kernel launch:

1. describes the inputs and outputs (:class:`TensorDesc`: shape, dtype,
   format) and builds the :class:`TilingContext` with the attributes and the
   platform of the launch;
2. runs the tiling function, through a :class:`TilingCache` (the process-wide
   one unless told otherwise) and checks its result (:meth:`TilingResult.check`);
3. allocates the workspace, system part first then the user's, if the kernel
   has a parameter named ``workspace``;
4. launches ``kernel[block_dim](*inputs, *outputs, [workspace,] tiling_data,
   *args, tiling_key=key, platform=..., **launch)``.

It returns the :class:`TilingResult`, so tests can look at the tiling that ran.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from ..errors import LaunchError
from ..frontend.adv_matmul_kernel_type import with_default_kernel_type
from ..frontend.kernel import KernelFunction
from ..language.enums import KernelType
from ..options import from_environment
from ..arrays import as_array, gm_buffer
from ..platform import Platform, get_platform
from .platform_api import check_core_num
from .tiling import TensorDesc, TilingContext, TilingFunction, TilingResult
from .tiling_cache import TilingCache, default_cache

DEFAULT_CACHE: Any = "default"          # run_op(cache=...): the process-wide cache

LaunchHook = Callable[[Sequence[Any], Sequence[Any]], None]
_BEFORE_LAUNCH: ContextVar[tuple[LaunchHook, ...]] = ContextVar("npuemu_run_op_before_launch", default=())

_AIV_TYPES = (KernelType.AIV_ONLY, KernelType.MIX_AIV_1_0, KernelType.MIX_AIV_HARD_SYNC)


def tensor_desc(value: Any, format: str = "ND") -> TensorDesc:
    """The :class:`TensorDesc` of an array argument (NumPy array, torch tensor or ``gm_buffer``)."""
    if isinstance(value, TensorDesc):
        return value
    arr = as_array(value)
    if arr is None:
        raise LaunchError(f"op inputs and outputs must be arrays, got {type(value).__name__}")
    a, kdt = arr
    shape = tuple(int(d) for d in a.shape)
    if a.dtype.itemsize != kdt.sizeof():            # a reinterpreting gm_buffer: count its elements
        shape = (a.nbytes // kdt.sizeof(),)
    return TensorDesc(shape, kdt.name, format)


def _freeze(value: Any) -> Any:
    """An attribute value that compares and hashes by value (cache keys)."""
    if isinstance(value, np.ndarray):
        return tuple(_freeze(v) for v in value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


def make_context(inputs: Sequence[Any], outputs: Sequence[Any], *, attrs: Mapping[str, Any] | None = None,
                 platform: Platform | str | None = None, deterministic: bool = False,
                 core_num: int | None = None, **fields: Any) -> TilingContext:
    """A :class:`TilingContext` for these arrays (or ``TensorDesc``s) on ``platform``."""
    check_core_num(core_num, LaunchError)
    return TilingContext(tuple(tensor_desc(x) for x in inputs), tuple(tensor_desc(x) for x in outputs),
                         get_platform(platform), tuple(sorted((k, _freeze(v)) for k, v in (attrs or {}).items())),
                         deterministic, core_num, **fields)


@contextlib.contextmanager
def before_launch(hook: LaunchHook) -> Iterator[None]:
    """Within the block, :func:`run_op` calls ``hook(inputs, outputs)`` just before each launch.

    ``npuemu.testing`` fills the outputs this way, so that elements a kernel
    never writes are found.  The hook belongs to the current context (thread
    or task) only.
    """
    token = _BEFORE_LAUNCH.set(_BEFORE_LAUNCH.get() + (hook,))
    try:
        yield
    finally:
        _BEFORE_LAUNCH.reset(token)


def call_before_launch_hooks(inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
    """Call the :func:`before_launch` hooks of the current context (every host launcher does, just before
    launching, with the arrays the kernel gets)."""
    for hook in _BEFORE_LAUNCH.get():
        hook(inputs, outputs)


def run_tiling(tiling_fn: TilingFunction, ctx: TilingContext, cache: TilingCache | None = DEFAULT_CACHE
               ) -> TilingResult:
    """``tiling_fn(ctx)`` through ``cache`` (None: no cache), checked."""
    if cache is DEFAULT_CACHE:
        cache = default_cache()
    result = cache.get(tiling_fn, ctx) if cache is not None else tiling_fn(ctx)
    if not isinstance(result, TilingResult):
        raise LaunchError(f"tiling function {getattr(tiling_fn, '__name__', tiling_fn)!r} returned "
                          f"{type(result).__name__}, not a TilingResult")
    result.check(ctx)
    return result


def run_op(kernel: Any, tiling_fn: TilingFunction, inputs: Sequence[Any], outputs: Sequence[Any], *,
           args: Sequence[Any] = (), attrs: Mapping[str, Any] | None = None,
           platform: Platform | str | None = None, cache: TilingCache | None = DEFAULT_CACHE,
           core_num: int | None = None, deterministic: bool = False, workspace_dtype: Any = None,
           **launch: Any) -> TilingResult:
    """Tile with ``tiling_fn`` and launch ``kernel`` on the result; returns the tiling result.

    ``args`` follow the tiling data in the kernel's parameters (scalars,
    ConstExpr values); ``attrs`` are what the tiling function sees
    (``ctx.attr(name)``); ``core_num`` caps the cores the tiling may use;
    ``cache=None`` tiles afresh.  ``workspace_dtype`` is the kernel dtype the
    workspace buffer is passed as (uint8 by default).  Other keywords are
    launch options (``debug=``, ``check=``, ...).
    """
    plat = get_platform(platform)
    ctx = make_context(inputs, outputs, attrs=attrs, platform=plat, deterministic=deterministic,
                       core_num=core_num)
    result = run_tiling(tiling_fn, ctx, cache)
    name = getattr(kernel, "__name__", "kernel")
    params = getattr(getattr(kernel, "signature", None), "parameters", {})
    workspace: tuple[Any, ...] = ()
    if "workspace" in params:
        nbytes = result.workspace_size(plat)
        # the framework hands out workspace memory as is: a kernel must write it before reading it
        workspace = (gm_buffer(np.zeros(nbytes, np.uint8), workspace_dtype, initialized=False),)
    elif result.user_workspace_size:
        raise LaunchError(f"tiling for kernel '{name}' asks for {result.user_workspace_size} bytes of workspace "
                          f"but the kernel has no 'workspace' parameter")
    if result.schedule_mode == 1:
        _check_batch_mode(kernel, result, plat, launch)
    call_before_launch_hooks(inputs, outputs)
    kernel[result.block_dim](*inputs, *outputs, *workspace, result.tiling_data, *args,
                             tiling_key=result.tiling_key, platform=plat, **launch)
    return result


def _check_batch_mode(kernel: Any, result: TilingResult, plat: Platform, launch: dict[str, Any]) -> None:
    """Batch mode (schedule mode 1) needs every block resident at once."""
    options = from_environment(**{**getattr(kernel, "options", {}),
                                  **{k: v for k, v in launch.items() if k == "kernel_type"}})
    if isinstance(kernel, KernelFunction):    # a kernel using the Matmul API is MIX unless told otherwise
        options = with_default_kernel_type(kernel, options)
    aiv = options.resolved_kernel_type in _AIV_TYPES
    cores = plat.aiv_count if aiv else plat.aic_count
    if result.block_dim > cores:
        raise LaunchError(f"kernel '{getattr(kernel, '__name__', 'kernel')}': schedule mode 1 (batch) needs all "
                          f"{result.block_dim} blocks resident, but {plat.name} has {cores} "
                          f"{'vector' if aiv else 'cube'} cores")
