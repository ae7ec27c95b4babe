"""Choosing an op's binary for a call (superkernel-binaries-tiling.md §2.5, opapi's ``SelectBin``).

* The implementation mode is the caller's if the op is built for it, else
  ``high_precision`` if it is, else ``high_performance``.
* Each tensor is taken in its storage format if the op supports that format
  for it, else as ND if ND is supported (or the op is format-agnostic:
  ``nd_fallback``), else the call is refused naming the tensor and format.
* A static binary built for exactly these shapes and attributes is taken
  first; otherwise the selection key is formed from the context, the data
  type and format bytes and the attributes (:mod:`.selection_key`), hashed,
  and looked up in the op's index (:mod:`.index`).
* A call no binary fits is a :class:`SelectionError` listing every
  combination the op supports.

Selection is one key and one dictionary lookup per call (a few
microseconds, ``benchmarks/bench_ops.py``); building happens later, when the
selected binary's kernel is first needed (:mod:`.binaries`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..binary.kernel_binary import KernelBinary
from ..errors import NpuemuError
from ..host.tiling import TilingResult
from ..platform import Platform, get_platform
from .binaries import kernel_for, static_result
from .codes import DTYPES, FORMAT_END, FORMATS
from .index import OpBinary, OpIndex, index_for
from .opdef import IMPL_MODES, OpDef
from .selection_key import key_hash, readable
from .selection_key import attr_key as _attr_key
from .tensor import ND, Arg, TensorArg, describe_tensors
from .variants import Variant


class SelectionError(NpuemuError, LookupError):
    """No binary of the op fits the call; the message lists what the op supports."""


@dataclass(frozen=True)
class Selection:
    """The binary chosen for a call and how the call's tensors are taken.

    input_formats / output_formats: the format each tensor is passed as (None: an absent optional input).
    key: the selection key (a static binary: its text key).
    """

    binary: OpBinary
    impl_mode: str
    deterministic: bool
    input_formats: tuple[str | None, ...]
    output_formats: tuple[str, ...]
    key: bytes

    @property
    def op(self) -> OpDef:
        return self.binary.op

    @property
    def platform(self) -> Platform:
        return self.binary.platform

    @property
    def variant(self) -> Variant:
        return self.binary.variant

    @property
    def static(self) -> bool:
        return self.binary.static

    def kernel(self, tiling_key: int, check: str) -> KernelBinary:
        """The kernel of the selected binary for ``tiling_key`` at check level ``check`` (built if need be)."""
        return kernel_for(self.binary, tiling_key, check)

    def static_result(self) -> TilingResult | None:
        """The tiling a static binary was built with (None: a dynamic binary, tiled at launch)."""
        return static_result(self.binary) if self.binary.static else None


def impl_mode_for(op: OpDef, wanted: str | None) -> str:
    """The user's mode if the op is built for it, else high_precision if it is, else high_performance."""
    if wanted is not None and wanted not in IMPL_MODES:
        raise SelectionError(f"unknown implementation mode {wanted!r}; known: {', '.join(IMPL_MODES)}")
    if wanted is not None and wanted in op.impl_modes:
        return wanted
    return "high_precision" if "high_precision" in op.impl_modes else "high_performance"


def select(op: OpDef, inputs: Sequence[Any], outputs: Sequence[Any], attrs: Mapping[str, Any] | None = None, *,
           platform: Platform | str | None = None, impl_mode: str | None = None,
           deterministic: bool = False) -> Selection:
    """The binary ``op`` runs for these tensors (arrays or :class:`~npuemu.ops.tensor.OpTensor`) and attributes."""
    values = op.attr_values(dict(attrs or {}))
    return select_args(op, describe_tensors(op, op.inputs, inputs, "input"),
                       describe_tensors(op, op.outputs, outputs, "output"), values, platform=platform,
                       impl_mode=impl_mode, deterministic=deterministic)


def select_args(op: OpDef, inputs: Sequence[Arg], outputs: Sequence[TensorArg], attrs: Mapping[str, Any], *,
                platform: Platform | str | None = None, impl_mode: str | None = None, deterministic: bool = False,
                static: bool = True) -> Selection:
    """:func:`select` for described tensors (``npuemu.ops.tensor.describe_tensors``) and checked attribute
    values (``op.attr_values``); ``static=False`` skips static binaries (a tiling with a core cap)."""
    if op.kernel is None:
        raise SelectionError(f"op {op.name} does not have any binary: its definition has no kernel")
    index = index_for(op, get_platform(platform))
    mode = impl_mode_for(op, impl_mode)
    parts = [index.contexts[(bool(deterministic), mode)]]
    fin: list[str | None] = []
    counts: list[int] = []
    for i, arg in enumerate(inputs):
        if arg is None:
            fin.append(None)
            counts.append(0)
            continue
        first = arg[0] if type(arg) is list else arg
        fmt = first.format if first.format in index.in_formats[i] else _fallback(index, "input", i, first)
        fin.append(fmt)
        part = bytes((DTYPES[first.dtype], FORMATS[fmt]))
        if index.need_rank[i]:
            part += bytes(((FORMAT_END + len(first.shape)) & 0xFF,))
        if type(arg) is list:
            part += bytes(((FORMAT_END + len(arg)) & 0xFF,))
            counts.append(len(arg))
        else:
            counts.append(1)
        parts.append(part)
    fout: list[str] = []
    for i, arg in enumerate(outputs):
        fmt = arg.format if arg.format in index.out_formats[i] else _fallback(index, "output", i, arg)
        fout.append(fmt)
        parts.append(bytes((DTYPES[arg.dtype], FORMATS[fmt])))
    if index.static_bins and static:
        found = _static(index, inputs, outputs, attrs, mode, deterministic, fin, fout)
        if found is not None:
            return Selection(found, mode, bool(deterministic), tuple(fin), tuple(fout), found.keys[0])
    for name, kind in index.key_attrs:
        parts.append(_attr_key(kind, attrs[name]))
    key = b"".join(parts)
    b = index.bins.get(key_hash(key))
    if b is None and index.dynamic:         # the first call with these list lengths declares their binaries
        index.declare_counts(tuple(counts[i] for i in index.dynamic))
        b = index.bins.get(key_hash(key))
    if b is None or key not in b.keys:
        _fail(index, inputs, outputs, attrs, mode, deterministic, key)
    return Selection(b, mode, bool(deterministic), tuple(fin), tuple(fout), key)


def _fallback(index: OpIndex, kind: str, i: int, arg: TensorArg) -> str:
    """The format a tensor stored in a format the op does not take for it is passed as: ND, or an error."""
    op = index.op
    supported = (index.in_formats if kind == "input" else index.out_formats)[i]
    if ND in supported or op.nd_fallback:
        return ND
    name = (op.inputs if kind == "input" else op.outputs)[i].name
    raise SelectionError(f"op {op.name}: cannot find any binary for {kind} {name!r} with storage format "
                         f"{arg.format}; the op takes it as {', '.join(sorted(supported))} and has no ND binary "
                         f"for it")


def _static(index: OpIndex, inputs: Sequence[Arg], outputs: Sequence[TensorArg], attrs: Mapping[str, Any],
            mode: str, deterministic: bool, fin: list[str | None], fout: list[str]) -> OpBinary | None:
    """The static binary built for exactly this call, if any (``SelectStaticBin``)."""
    tensors: list[tuple[str, str, Any]] = []
    for arg, fmt in zip(inputs, fin):
        for a in ([] if arg is None else arg if type(arg) is list else [arg]):
            tensors.append((a.dtype, fmt, a.shape))
    tensors += [(a.dtype, fmt, a.shape) for a, fmt in zip(outputs, fout)]
    key = index.static_key(bool(deterministic), mode, tensors, dict(attrs))
    b = index.static_bins.get(key_hash(key))
    return b if b is not None and key in b.keys else None


def _fail(index: OpIndex, inputs: Sequence[Arg], outputs: Sequence[TensorArg], attrs: Mapping[str, Any],
          mode: str, deterministic: bool, key: bytes | None) -> None:
    """Raise the :class:`SelectionError` of a call no binary fits, listing what the op supports."""
    op = index.op
    parts = []
    for p, arg in zip(op.inputs, inputs):
        first = arg[0] if type(arg) is list else arg
        parts.append(f"{p.name}=absent" if first is None else f"{p.name}={first.dtype}/{first.format}"
                     + (f" x{len(arg)}" if type(arg) is list else ""))
    parts += [f"{p.name}={a.dtype}/{a.format}" for p, a in zip(op.outputs, outputs)]
    valued = [a for a in op.attrs if a.binary_values is not None]
    call = ", ".join(parts) + f" ({mode}, deterministic {'on' if deterministic else 'off'}"
    call += "".join(f", {a.name}={attrs[a.name]!r}" for a in valued) + ")"
    lines = [f"op {op.name} on {index.platform.name}: no binary for {call}"
             + (f"; key [{readable(key)}]" if key is not None else "") + ".",
             "supported combinations (one binary each):"]
    lines += [f"  {c.describe(op)}" for c in op.columns]
    notes = [f"implementation modes {', '.join(op.impl_modes)}", f"deterministic {op.deterministic}"]
    notes += [f"{a.name} in {', '.join(map(repr, a.binary_values or ()))}" for a in valued]
    lines.append("built for: " + "; ".join(notes))
    raise SelectionError("\n".join(lines))
