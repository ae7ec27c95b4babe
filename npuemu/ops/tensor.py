"""Op tensors: an array with the storage format it is laid out in.

A framework hands an op its tensors with a *storage format* (CANN's
``GetStorageFormat``): most are ND, row-major as NumPy has them, but a matrix
kept for the cube may be stored FRACTAL_NZ, cut into fractals
(:mod:`npuemu.formats`).  Binary selection reads that format
(superkernel-binaries-tiling.md §2.5), so an op call needs it alongside the
data.  A plain array (NumPy, torch CPU tensor, ``npuemu.gm_buffer``) is an ND
tensor; :class:`OpTensor` carries any other format::

    a = np.ones((64, 128), np.float16)
    nz = format_cast(a, "FRACTAL_NZ")     # OpTensor: data (8, 4, 16, 16), origin_shape (64, 128)
    back = format_cast(nz, "ND")          # OpTensor: data (64, 128)

:func:`tensor_arg` describes any of them the way selection and tiling need
(:class:`TensorArg`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import formats
from ..arrays import GMBuffer, as_array, gm_buffer
from ..errors import LaunchError
from ..host.tiling import TensorDesc
from ..language import dtype as dt
from .codes import OpDefError, format_name
from .opdef import DYNAMIC, OPTIONAL, OpDef, TensorParam

ND, NZ = "ND", "FRACTAL_NZ"


@dataclass(frozen=True)
class OpTensor:
    """``data`` (an array-like, used in place) stored in ``format``; ``origin_shape`` is the logical shape.

    For ND the origin shape is the data's shape.  For FRACTAL_NZ the data is
    the blocked array ``(..., C1, R1, R0, C0)`` and ``origin_shape`` the
    ``(..., R, C)`` matrix it holds (None: the padded matrix).
    """

    data: Any
    format: str = ND
    origin_shape: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        try:
            fmt = format_name(self.format)
        except OpDefError as exc:
            raise LaunchError(str(exc)) from None
        object.__setattr__(self, "format", fmt)
        if as_array(self.data) is None:
            raise LaunchError(f"OpTensor data must be an array (NumPy, torch CPU tensor or npuemu.gm_buffer), "
                              f"got {type(self.data).__name__}")
        if self.origin_shape is not None:
            object.__setattr__(self, "origin_shape", tuple(int(d) for d in self.origin_shape))

    def __repr__(self) -> str:
        arr, kdt = as_array(self.data)
        origin = "" if self.origin_shape is None else f", origin {list(self.origin_shape)}"
        return f"OpTensor({kdt.name}{list(arr.shape)} {self.format}{origin})"

    @property
    def dtype(self) -> str:
        """The kernel dtype name of the elements."""
        return as_array(self.data)[1].name

    @property
    def storage_shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in as_array(self.data)[0].shape)

    @property
    def shape(self) -> tuple[int, ...]:
        """The origin (logical) shape."""
        if self.origin_shape is not None:
            return self.origin_shape
        if self.format == NZ:           # the padded matrix the fractals hold
            *batch, c1, r1, r0, c0 = self.storage_shape
            return (*batch, r1 * r0, c1 * c0)
        return self.storage_shape

    def numpy(self) -> np.ndarray:
        """The data as an ND NumPy array of the origin shape (a copy unless already ND)."""
        nd = self if self.format == ND else format_cast(self, ND)
        return as_array(nd.data)[0]


def format_cast(t: Any, fmt: str) -> OpTensor:
    """``t`` (an :class:`OpTensor` or plain array, ND) in format ``fmt`` (``ND`` or ``FRACTAL_NZ``/``NZ``).

    The result holds new memory unless ``t`` is already in ``fmt``.  NZ uses
    the L1 fractal of the element size (16 rows of 32 bytes), zero padding.
    """
    src = t if isinstance(t, OpTensor) else OpTensor(t)
    try:
        fmt = format_name(fmt)
    except OpDefError as exc:
        raise LaunchError(str(exc)) from None
    if src.format == fmt:
        return src
    arr, kdt = _elements(src.data)
    fractal = (formats.FRACTAL_ROWS, formats.BLOCK_BYTES // kdt.sizeof())
    if (src.format, fmt) == (ND, NZ):
        return OpTensor(_wrap(formats.nd_to_nz(arr, fractal), kdt), NZ, tuple(arr.shape))
    if (src.format, fmt) == (NZ, ND):
        shape = None if src.origin_shape is None else src.origin_shape[-2:]
        return OpTensor(_wrap(formats.nz_to_nd(arr, shape, fractal), kdt), ND)
    raise LaunchError(f"format_cast converts between ND and FRACTAL_NZ, not {src.format} to {fmt}")


def _elements(data: Any) -> tuple[np.ndarray, dt.DataType]:
    """The array of ``data`` with one array element per kernel element (bfloat16 as its uint16 bits)."""
    arr, kdt = as_array(data)
    if arr.dtype.itemsize != kdt.sizeof():
        raise LaunchError(f"format_cast needs one array element per {kdt.name} element; got a "
                          f"{arr.dtype} array reinterpreted as {kdt.name}")
    return arr, kdt


def _wrap(arr: np.ndarray, kdt: dt.DataType) -> Any:
    """``arr`` as an argument that still says ``kdt`` (bfloat16 bits keep their meaning)."""
    try:
        if dt.from_numpy(arr.dtype) is kdt:
            return arr
    except TypeError:
        pass
    return gm_buffer(arr, kdt)


@dataclass(frozen=True)
class TensorArg:
    """One tensor of an op call as selection and tiling see it.

    value: what the kernel gets (used in place); dtype: kernel dtype name; format: the storage format;
    shape: the origin shape; storage_shape: the shape of the data.
    """

    value: Any
    dtype: str
    format: str
    shape: tuple[int, ...]
    storage_shape: tuple[int, ...]

    def desc(self, as_nd: bool = False) -> TensorDesc:
        """The tiling's view; ``as_nd``: the storage taken as an ND tensor (a format-agnostic op)."""
        if as_nd and self.format != ND:
            return TensorDesc(self.storage_shape, self.dtype, ND)
        storage = None if self.storage_shape == self.shape else self.storage_shape
        return TensorDesc(self.shape, self.dtype, self.format, storage)


def tensor_arg(value: Any) -> TensorArg:
    """Describe an op argument: an :class:`OpTensor`, or an array-like (an ND tensor)."""
    if type(value) is np.ndarray:       # the common case, kept short: selection is on every call
        try:
            name = dt.from_numpy(value.dtype).name
        except TypeError:
            raise LaunchError(f"arrays of dtype {value.dtype} cannot be passed to kernels") from None
        return TensorArg(value, name, ND, value.shape, value.shape)
    if isinstance(value, OpTensor):
        return TensorArg(value.data, value.dtype, value.format, value.shape, value.storage_shape)
    found = as_array(value)
    if found is None:
        raise LaunchError(f"op inputs and outputs must be arrays (NumPy, torch CPU tensors, npuemu.gm_buffer) "
                          f"or npuemu.ops.OpTensor, got {type(value).__name__}")
    arr, kdt = found
    shape = tuple(int(d) for d in arr.shape)
    if isinstance(value, GMBuffer) and arr.dtype.itemsize != kdt.sizeof():    # reinterpreted bytes: count them
        shape = (arr.nbytes // kdt.sizeof(),)
    return TensorArg(value, kdt.name, ND, shape, shape)


Arg = TensorArg | list[TensorArg] | None


def describe_tensors(op: OpDef, params: Sequence[TensorParam], values: Sequence[Any], kind: str) -> list[Arg]:
    """The call's tensors per parameter: a :class:`TensorArg`, a list of them (dynamic) or None (absent)."""
    if isinstance(values, (np.ndarray, OpTensor)) or not isinstance(values, (list, tuple)):
        raise LaunchError(f"op {op.name}: pass the {kind}s as a list or tuple (one entry per {kind})")
    if len(values) > len(params):
        raise LaunchError(f"op {op.name} takes {len(params)} {kind}(s) ({', '.join(p.name for p in params)}), "
                          f"{len(values)} given")
    out: list[Arg] = []
    for i, p in enumerate(params):
        v = values[i] if i < len(values) else None
        if v is None:
            if p.param_type != OPTIONAL:
                raise LaunchError(f"op {op.name}: {kind} {p.name!r} is required")
            out.append(None)
        elif p.param_type == DYNAMIC:
            if not isinstance(v, (list, tuple)) or not v:
                raise LaunchError(f"op {op.name}: dynamic {kind} {p.name!r} takes a non-empty list of tensors")
            out.append([tensor_arg(x) for x in v])
        else:
            out.append(tensor_arg(v))
    return out
