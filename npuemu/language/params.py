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

from .enums import BlockMode, DeqScale, QuantModes, pad_t

_REQUIRED = object()

FIELD_MAX = {"u8": 0xFF, "u16": 0xFFFF, "u32": 0xFFFFFFFF, "u64": 0xFFFFFFFFFFFFFFFF, "bool": 1}


class ParamStruct:
    """Base class: subclasses list ``_fields_ = ((name, default, ctype), ...)``."""

    _fields_: ClassVar[tuple[tuple[str, Any, str], ...]] = ()
    _units_: ClassVar[dict[str, str]] = {}      # field -> its unit or meaning (docs/reference.md)

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
    _units_ = {
        'dst_blk_stride': '32-byte blocks between the 8 blocks of a repeat (dst)',
        'src0_blk_stride': '32-byte blocks between the blocks of a repeat (src0)',
        'src1_blk_stride': '32-byte blocks between the blocks of a repeat (src1)',
        'dst_rep_stride': '32-byte blocks between the starts of consecutive repeats (dst)',
        'src0_rep_stride': '32-byte blocks between repeat starts (src0)',
        'src1_rep_stride': '32-byte blocks between repeat starts (src1)',
    }


class UnaryRepeatParams(ParamStruct):
    """Block strides (u16) and repeat strides (u8) of a level-0 unary vector instruction."""

    _fields_ = (("dst_blk_stride", 1, "u16"), ("src_blk_stride", 1, "u16"),
                ("dst_rep_stride", 8, "u8"), ("src_rep_stride", 8, "u8"))
    _units_ = {
        'dst_blk_stride': '32-byte blocks between the 8 blocks of a repeat (dst)',
        'src_blk_stride': '32-byte blocks between the blocks of a repeat (src)',
        'dst_rep_stride': '32-byte blocks between repeat starts (dst)',
        'src_rep_stride': '32-byte blocks between repeat starts (src)',
    }


class BrcbRepeatParams(ParamStruct):
    _fields_ = (("dst_blk_stride", 1, "u16"), ("dst_rep_stride", 8, "u16"))
    _units_ = {
        'dst_blk_stride': '32-byte blocks between the output blocks of a repeat',
        'dst_rep_stride': '32-byte blocks between repeat starts',
    }


class CopyRepeatParams(ParamStruct):
    _fields_ = (("dst_stride", 0, "u16"), ("src_stride", 0, "u16"),
                ("dst_repeat_size", 0, "u16"), ("src_repeat_size", 0, "u16"))
    _units_ = {
        'dst_stride': '32-byte blocks between the blocks of a repeat (dst)',
        'src_stride': '32-byte blocks between the blocks of a repeat (src)',
        'dst_repeat_size': '32-byte blocks between repeat starts (dst)',
        'src_repeat_size': '32-byte blocks between repeat starts (src)',
    }


class GatherRepeatParams(ParamStruct):
    _fields_ = (("dst_blk_stride", 1, "u8"), ("dst_rep_stride", 8, "u8"))
    _units_ = {
        'dst_blk_stride': '32-byte blocks between the blocks of a repeat (dst)',
        'dst_rep_stride': '32-byte blocks between repeat starts (dst)',
    }


class GatherMaskParams(ParamStruct):
    _fields_ = (("src0_block_stride", 1, "u8"), ("repeat_times", 1, "u16"),
                ("src0_repeat_stride", 0, "u16"), ("src1_repeat_stride", 0, "u8"))
    _units_ = {
        'src0_block_stride': '32-byte blocks between the blocks of a repeat (src0)',
        'repeat_times': 'repeats (normal mode; counter mode computes its own)',
        'src0_repeat_stride': '32-byte blocks between repeat starts (src0)',
        'src1_repeat_stride': '32-byte blocks between repeat starts (pattern tensor)',
    }


class DataCopyParams(ParamStruct):
    """Strided copy: ``block_count`` blocks of ``block_len`` 32-byte units, gaps in 32-byte units."""

    _fields_ = (("block_count", 1, "u16"), ("block_len", 0, "u16"),
                ("src_stride", 0, "u16"), ("dst_stride", 0, "u16"))
    _units_ = {
        'block_count': 'bursts (contiguous runs)',
        'block_len': '32-byte blocks per burst',
        'src_stride': '32-byte blocks from the end of one source burst to the start of the next',
        'dst_stride': '32-byte blocks from the end of one destination burst to the start of the next',
    }


class DataCopyExtParams(ParamStruct):
    """``DataCopyPad`` geometry: ``block_len`` in bytes, strides per direction (see ``data_copy_pad``)."""

    _fields_ = (("block_count", 1, "u16"), ("block_len", 0, "u32"),
                ("src_stride", 0, "u32"), ("dst_stride", 0, "u32"), ("rsv", 0, "u32"))
    _units_ = {
        'block_count': 'bursts (contiguous runs)',
        'block_len': 'bytes per burst',
        'src_stride': 'gap between source bursts: bytes when the source is GM, 32-byte blocks when it is UB',
        'dst_stride': 'gap between destination bursts: bytes when the destination is GM, 32-byte blocks '
            'when it is UB',
        'rsv': 'reserved',
    }


class DataCopyPadExtParams(ParamStruct):
    """Padding of a GM→UB ``data_copy_pad``: paddings in elements, ``padding_value`` of ``dtype``."""

    _fields_ = (("dtype", _REQUIRED, "dtype"), ("is_pad", False, "bool"), ("left_padding", 0, "u8"),
                ("right_padding", 0, "u8"), ("padding_value", 0, "scalar"))
    _units_ = {
        'dtype': 'element type of padding_value',
        'is_pad': "pad with padding_value (else the right end of each burst's last block is filled "
            'as the hardware leaves it)',
        'left_padding': 'elements (at most 32 bytes)',
        'right_padding': 'elements (at most 32 bytes)',
        'padding_value': 'a value of dtype',
    }


class DataCopyPadParams(ParamStruct):
    """Legacy padding parameters (``padding_value`` must be 0)."""

    _fields_ = (("is_pad", False, "bool"), ("left_padding", 0, "u8"),
                ("right_padding", 0, "u8"), ("padding_value", 0, "u64"))
    _units_ = {
        'is_pad': 'pad (legacy)',
        'left_padding': 'elements',
        'right_padding': 'elements',
        'padding_value': 'must be 0 (legacy form)',
    }


class Nd2NzParams(ParamStruct):
    _fields_ = (("nd_num", _REQUIRED, "u16"), ("n_value", _REQUIRED, "u16"), ("d_value", _REQUIRED, "u16"),
                ("src_nd_matrix_stride", _REQUIRED, "u16"), ("src_d_value", _REQUIRED, "u16"),
                ("dst_nz_c0_stride", _REQUIRED, "u16"), ("dst_nz_n_stride", _REQUIRED, "u16"),
                ("dst_nz_matrix_stride", _REQUIRED, "u16"))
    _units_ = {
        'nd_num': 'matrices',
        'n_value': 'rows per matrix',
        'd_value': 'elements per row copied',
        'src_nd_matrix_stride': 'elements between source matrix starts',
        'src_d_value': 'elements between source row starts',
        'dst_nz_c0_stride': 'C0 blocks (32 bytes) between the fractal columns of a row in the destination',
        'dst_nz_n_stride': 'C0 blocks between consecutive rows in the destination',
        'dst_nz_matrix_stride': 'elements between destination matrix starts',
    }


class Nz2NdParamsFull(ParamStruct):
    """NZ -> ND ``data_copy`` (UB -> GM): ``nd_num`` NZ matrices of ``n_value`` rows and ``d_value`` columns.

    The NZ source is cut into 16-element-wide columns ``src_n_stride`` x 16
    elements apart, matrices ``src_nd_matrix_stride`` x 256 elements apart;
    destination rows are ``dst_d_stride`` elements apart, matrices
    ``dst_nd_matrix_stride`` elements apart.
    """

    _fields_ = (("nd_num", _REQUIRED, "u16"), ("n_value", _REQUIRED, "u16"), ("d_value", _REQUIRED, "u16"),
                ("src_nd_matrix_stride", _REQUIRED, "u16"), ("src_n_stride", _REQUIRED, "u16"),
                ("dst_d_stride", _REQUIRED, "u16"), ("dst_nd_matrix_stride", _REQUIRED, "u16"))


class DataCopyCO12DstParams(ParamStruct):
    """L0C -> GM / L1 ``data_copy`` (the fixpipe path): size, strides and on-the-fly conversion.

    pyasc's eight fields come first (``n_size, m_size, dst_stride, src_stride,
    quant_pre, relu_pre, channel_split, nz2nd_en``); Ascend C's ``sid``,
    ``unit_flag``, ``clip_relu_pre`` and ``eltwise_op`` follow as keywords.
    """

    _fields_ = (("n_size", _REQUIRED, "u16"), ("m_size", _REQUIRED, "u16"), ("dst_stride", _REQUIRED, "u32"),
                ("src_stride", _REQUIRED, "u16"), ("quant_pre", QuantModes.NoQuant, "enum"), ("relu_pre", 0, "u8"),
                ("channel_split", False, "bool"), ("nz2nd_en", False, "bool"), ("sid", 0, "u8"),
                ("unit_flag", 0, "u8"), ("clip_relu_pre", 0, "u8"), ("eltwise_op", 0, "u8"))


class DataCopyEnhancedParams(ParamStruct):
    """The extra controls of a ``data_copy`` with ``DataCopyParams`` (``AscendC::DataCopyEnhancedParams``).

    npuemu emulates the default modes only (``BLOCK_MODE_NORMAL``, ``DEQ_NONE``,
    ``is_relu_in=False``, ``PAD_NONE``), under which the copy is the plain
    ``DataCopyParams`` copy; other modes are refused at compile time.
    """

    _fields_ = (("block_mode", BlockMode.BLOCK_MODE_NORMAL, "enum"), ("deq_scale", DeqScale.DEQ_NONE, "enum"),
                ("deq_value_in", 0, "u64"), ("sid_store_mode_in", 0, "u8"), ("is_relu_in", False, "bool"),
                ("pad_mode_in", pad_t.PAD_NONE, "enum"), ("pad_value_in", 0, "u64"))


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
    _units_ = {
        'shape': 'tuple of dimension sizes',
        'original_shape': 'tuple (informational)',
        'data_format': 'DataFormat (informational)',
    }
