"""Instruction parameter structs (``BinaryRepeatParams``, ``DataCopyParams``, ...).

Each struct is declared once as a tuple of fields ``(name, default, ctype)``;
the ctype names the hardware field width (``u8``, ``u16``, ``u32``, ``u64``,
``bool``, ``scalar``, ``dtype``, ``enum``).  Inside a kernel a struct lowers to
its field values (runtime or constant); outside a kernel it is an ordinary
Python object, handy for tests and host code.  Field widths are enforced by the
instructions that consume them (a ``repeat_times`` of 300 is an error, not a
silent truncation).
"""
from __future__ import annotations

from typing import Any, ClassVar

_REQUIRED = object()

FIELD_MAX = {"u8": 0xFF, "u16": 0xFFFF, "u32": 0xFFFFFFFF, "u64": 0xFFFFFFFFFFFFFFFF, "bool": 1}


class ParamStruct:
    """Base class: subclasses list ``_fields_ = ((name, default, ctype), ...)``."""

    _fields_: ClassVar[tuple[tuple[str, Any, str], ...]] = ()

    def __init__(self, *args: Any, **kwargs: Any):
        names = [f[0] for f in self._fields_]
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} arguments ({len(args)} given)")
        values = dict(zip(names, args))
        for key, val in kwargs.items():
            if key not in names:
                raise TypeError(f"{type(self).__name__} has no field '{key}' (fields: {', '.join(names)})")
            if key in values:
                raise TypeError(f"{type(self).__name__} got field '{key}' twice")
            values[key] = val
        for name, default, _ in self._fields_:
            if name not in values:
                if default is _REQUIRED:
                    raise TypeError(f"{type(self).__name__} needs field '{name}'")
                values[name] = default
            setattr(self, name, values[name])

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f[0] for f in cls._fields_)

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.field_names())
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self.field_names())

    def __hash__(self) -> int:
        return hash((type(self), tuple(getattr(self, n) for n in self.field_names())))


REQUIRED = _REQUIRED


class BinaryRepeatParams(ParamStruct):
    """Block and repeat strides (32-byte units) of a level-0 binary vector instruction."""

    _fields_ = (("dst_blk_stride", 1, "u8"), ("src0_blk_stride", 1, "u8"), ("src1_blk_stride", 1, "u8"),
                ("dst_rep_stride", 8, "u8"), ("src0_rep_stride", 8, "u8"), ("src1_rep_stride", 8, "u8"))


class UnaryRepeatParams(ParamStruct):
    """Block strides (u16) and repeat strides (u8) of a level-0 unary vector instruction."""

    _fields_ = (("dst_blk_stride", 1, "u16"), ("src_blk_stride", 1, "u16"),
                ("dst_rep_stride", 8, "u8"), ("src_rep_stride", 8, "u8"))


class BrcbRepeatParams(ParamStruct):
    _fields_ = (("dst_blk_stride", 1, "u16"), ("dst_rep_stride", 8, "u16"))


class CopyRepeatParams(ParamStruct):
    _fields_ = (("dst_stride", 0, "u16"), ("src_stride", 0, "u16"),
                ("dst_repeat_size", 0, "u16"), ("src_repeat_size", 0, "u16"))


class GatherRepeatParams(ParamStruct):
    _fields_ = (("dst_blk_stride", 1, "u8"), ("dst_rep_stride", 8, "u8"))


class GatherMaskParams(ParamStruct):
    _fields_ = (("src0_block_stride", 1, "u8"), ("repeat_times", 1, "u16"),
                ("src0_repeat_stride", 0, "u16"), ("src1_repeat_stride", 0, "u8"))


class DataCopyParams(ParamStruct):
    """Strided copy: ``block_count`` blocks of ``block_len`` 32-byte units, gaps in 32-byte units."""

    _fields_ = (("block_count", 1, "u16"), ("block_len", 0, "u16"),
                ("src_stride", 0, "u16"), ("dst_stride", 0, "u16"))


class DataCopyExtParams(ParamStruct):
    """``DataCopyPad`` geometry: ``block_len`` in bytes, strides per direction (see ``data_copy_pad``)."""

    _fields_ = (("block_count", 1, "u16"), ("block_len", 0, "u32"),
                ("src_stride", 0, "u32"), ("dst_stride", 0, "u32"), ("rsv", 0, "u32"))


class DataCopyPadExtParams(ParamStruct):
    """Padding of a GM→UB ``data_copy_pad``: paddings in elements, ``padding_value`` of ``dtype``."""

    _fields_ = (("dtype", _REQUIRED, "dtype"), ("is_pad", False, "bool"), ("left_padding", 0, "u8"),
                ("right_padding", 0, "u8"), ("padding_value", 0, "scalar"))


class DataCopyPadParams(ParamStruct):
    """Legacy padding parameters (``padding_value`` must be 0)."""

    _fields_ = (("is_pad", False, "bool"), ("left_padding", 0, "u8"),
                ("right_padding", 0, "u8"), ("padding_value", 0, "u64"))


class Nd2NzParams(ParamStruct):
    _fields_ = (("nd_num", _REQUIRED, "u16"), ("n_value", _REQUIRED, "u16"), ("d_value", _REQUIRED, "u16"),
                ("src_nd_matrix_stride", _REQUIRED, "u16"), ("src_d_value", _REQUIRED, "u16"),
                ("dst_nz_c0_stride", _REQUIRED, "u16"), ("dst_nz_n_stride", _REQUIRED, "u16"),
                ("dst_nz_matrix_stride", _REQUIRED, "u16"))


class SliceInfo(ParamStruct):
    """One dimension of a slice copy (``data_copy(dst, src, dst_slices, src_slices, dim_value)``).

    ``start_index``..``end_index`` (inclusive, elements) with ``stride`` elements
    left out between pieces; ``burst_len`` (32-byte blocks) is the piece length
    of dimension 0 and must be 1 in the others; ``shape_value`` is the
    dimension's full length in elements.  Defaults as pyasc's: ``end_index``
    31, ``burst_len`` 32.
    """

    _fields_ = (("start_index", 0, "u32"), ("end_index", 31, "u32"), ("stride", 0, "u32"),
                ("burst_len", 32, "u32"), ("shape_value", 0, "u32"))


class ShapeInfo(ParamStruct):
    """Shape metadata printed by ``dump_tensor`` (shape as a tuple of ints)."""

    _fields_ = (("shape", (), "const"), ("original_shape", None, "const"), ("data_format", 0, "enum"))
