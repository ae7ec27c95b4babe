"""Choosing an op's binary for a call (superkernel-binaries-tiling.md §2.5).

The implementation mode is the caller's if the op is built for it, else
``high_precision`` if it is, else ``high_performance``.  Each tensor is taken
in its storage format if the op supports that format for it, else as ND if
ND is supported (or the op is format-agnostic: ``nd_fallback``), else the call
is refused naming the tensor.  A call no binary fits is a
:class:`SelectionError` listing every combination the op supports.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..binary.kernel_binary import KernelBinary
from ..errors import NpuemuError
from ..host.tiling import TilingResult
from ..platform import Platform, get_platform
from .opdef import DYNAMIC, OpDef
from .tensor import ND, TensorArg
from .variants import Variant, declared_variants, kernel_signature


class SelectionError(NpuemuError, LookupError):
    """No binary of the op fits the call; the message lists what the op supports."""


@dataclass(frozen=True)
class Selection:
    """The binary chosen for a call and how the call's tensors are taken.

    input_formats / output_formats: the format each tensor is passed as (None: an absent optional input).
    """

    op: OpDef
    platform: Platform
    variant: Variant
    impl_mode: str
    deterministic: bool
    input_formats: tuple[str | None, ...]
    output_formats: tuple[str, ...]
    key: bytes = b""
    static: bool = False

    def kernel(self, tiling_key: int, check: str) -> KernelBinary:
        """The kernel binary of this selection for ``tiling_key`` at check level ``check``."""
        sig = kernel_signature(self.op, self.variant)
        keys = self.op.kernel.tiling_keys(sig, platform=self.platform, check=check)
        return self.op.kernel.compile(sig, platform=self.platform, check=check, debug=True,
                                      tiling_key=tiling_key if keys else None)

    def static_result(self) -> TilingResult | None:
        """The tiling a static binary was built with (None: a dynamic binary, tile at launch)."""
        return None


def impl_mode_for(op: OpDef, wanted: str | None) -> str:
    """The user's mode if the op is built for it, else high_precision if it is, else high_performance."""
    if wanted is not None and wanted in op.impl_modes:
        return wanted
    return "high_precision" if "high_precision" in op.impl_modes else "high_performance"


def _supported(op: OpDef) -> tuple[list[set[str]], list[set[str]]]:
    ins = [{c.inputs[i][1] for c in op.columns} for i in range(len(op.inputs))]
    outs = [{c.outputs[i][1] for c in op.columns} for i in range(len(op.outputs))]
    return ins, outs


def _format(op: OpDef, kind: str, name: str, fmt: str, supported: set[str]) -> str:
    if fmt in supported:
        return fmt
    if ND in supported or op.nd_fallback:
        return ND
    raise SelectionError(f"op {op.name}: cannot find any binary for {kind} {name!r} in storage format {fmt}; "
                         f"the op takes it as {', '.join(sorted(supported))}")


def select_args(op: OpDef, inputs: Sequence[TensorArg | list[TensorArg] | None], outputs: Sequence[Any],
                attrs: Mapping[str, Any], *, platform: Platform | str | None = None, impl_mode: str | None = None,
                deterministic: bool = False, static: bool = True) -> Selection:
    """Select for described tensors (:func:`npuemu.ops.tensor.tensor_arg`) and checked attribute values."""
    if op.kernel is None:
        raise SelectionError(f"op {op.name} does not have any binary: its definition has no kernel")
    plat = get_platform(platform)
    mode = impl_mode_for(op, impl_mode)
    sup_in, sup_out = _supported(op)
    fin: list[str | None] = []
    want_in: list[tuple[str, str] | None] = []
    counts = []
    for p, arg, sup in zip(op.inputs, inputs, sup_in):
        if arg is None:
            fin.append(None)
            want_in.append(None)
            counts.append(0)
            continue
        first = arg[0] if isinstance(arg, list) else arg
        f = _format(op, "input", p.name, first.format, sup)
        fin.append(f)
        want_in.append((first.dtype, f))
        counts.append(len(arg) if p.param_type == DYNAMIC else 1)
    fout = [_format(op, "output", p.name, a.format, sup) for p, a, sup in zip(op.outputs, outputs, sup_out)]
    want_out = tuple((a.dtype, f) for a, f in zip(outputs, fout))
    valued = {a.name for a in op.attrs if a.binary_values is not None}
    chosen = tuple((k, v) for k, v in attrs.items() if k in valued)
    dyn = [n for p, n in zip(op.inputs, counts) if p.param_type == DYNAMIC]
    for v in declared_variants(op, dyn if dyn else None):
        col = op.columns[v.column]
        if (v.impl_mode == mode and v.counts == tuple(counts) and v.attrs == chosen and col.outputs == want_out
                and all(w is None or w == c for w, c in zip(want_in, col.inputs))):
            return Selection(op, plat, v, mode, deterministic, tuple(fin), tuple(fout))
    wanted = ", ".join([f"{p.name}={w[0]}/{w[1]}" if w else f"{p.name}=absent" for p, w in zip(op.inputs, want_in)]
                       + [f"{p.name}={d}/{f}" for p, (d, f) in zip(op.outputs, want_out)])
    listed = "\n".join(f"  {c.describe(op)}" for c in op.columns)
    raise SelectionError(f"op {op.name}: no binary for {wanted} ({mode}); supported combinations:\n{listed}")
