"""Static types of kernel values, and the values the lowering passes around.

The frontend knows, for every expression in a kernel, what kind of thing it is
(a compile-time constant, a runtime int, a LocalTensor of float16 in VECIN, a
queue, ...).  Objects are *scalarised*: a LocalTensor is two runtime integers
(byte address, element count) plus its static dtype and position, so the
generated code handles nothing but integers, floats and arrays, which Numba
compiles well.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from ..language.dtype import DataType
from ..language.enums import TPosition


class KType:
    """Base of static kernel types.  ``fields`` names the runtime components."""

    fields: tuple[str, ...] = ()

    def describe(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class ConstT(KType):
    """A compile-time constant (number, string, dtype, enum member, module, function, ...)."""

    def describe(self) -> str:
        return "constant"


@dataclass(frozen=True)
class ScalarT(KType):
    """A runtime scalar: ``kind`` is 'int', 'float' (float32) or 'bool'."""

    kind: str
    fields = ("v",)

    def describe(self) -> str:
        return {"int": "int", "float": "float", "bool": "bool"}[self.kind]


INT = ScalarT("int")
FLOAT = ScalarT("float")
BOOL = ScalarT("bool")


@dataclass(frozen=True)
class GlobalAddressT(KType):
    """A GM pointer: region id and byte offset."""

    dtype: DataType
    fields = ("rid", "off")

    def describe(self) -> str:
        return f"GlobalAddress[{self.dtype.name}]"


@dataclass(frozen=True)
class GlobalTensorT(KType):
    """A GlobalTensor: region id, byte offset, size in elements (-1: unbounded).

    ``dtype`` is None until ``set_global_buffer`` binds it.
    """

    dtype: DataType | None
    # the kernel parameter's GM region id when known at compile time, for automatic synchronisation;
    # not part of the type's identity
    origin: int | None = field(default=None, compare=False)
    # which GlobalTensor object this is (1, 2, ... in the order the kernel creates them; 0: one the library
    # made), for set_value's deferred DCache clean in a SuperKernel; not part of the type's identity
    ident: int = field(default=0, compare=False)
    fields = ("rid", "off", "size")

    def describe(self) -> str:
        return f"GlobalTensor[{self.dtype.name if self.dtype else 'unbound'}]"


@dataclass(frozen=True)
class LocalTensorT(KType):
    """A LocalTensor: absolute byte address in the core's local memory, element count."""

    dtype: DataType
    pos: TPosition
    # UB byte offsets [lo, hi) the tensor stays within when known at compile time (LocalTensorAuto and its
    # sub-tensors), for automatic synchronisation; not part of the type's identity
    region: tuple[int, int] | None = field(default=None, compare=False)
    fields = ("addr", "len")

    def describe(self) -> str:
        return f"LocalTensor[{self.dtype.name}, {self.pos.name}]"


@dataclass(frozen=True)
class TPipeT(KType):
    def describe(self) -> str:
        return "TPipe"


@dataclass(frozen=True)
class TQueT(KType):
    """A queue; its state lives in the core's ``st`` vector at slot ``qid``."""

    qid: int
    pos: TPosition
    dst_pos: TPosition
    depth: int

    def describe(self) -> str:
        return f"TQue[{self.pos.name}, depth {self.depth}]"


@dataclass(frozen=True)
class TBufT(KType):
    bid: int
    pos: TPosition

    def describe(self) -> str:
        return f"TBuf[{self.pos.name}]"


@dataclass(frozen=True)
class TBufPoolT(KType):
    """A TBufPool; its record lives in the core's ``st`` vector at slot ``pid`` (``isa/buf_pool.py``)."""

    pid: int
    pos: TPosition
    id_size: int

    def describe(self) -> str:
        return f"TBufPool[{self.pos.name}]"


@dataclass(frozen=True)
class ListTensorDescT(KType):
    """A ListTensorDesc: the buffer's region id and byte offset, and what ``init`` decoded of it
    (dimension count, tensor count (-1: not initialised), byte offset of the data pointers)."""

    fields = ("rid", "off", "dim", "count", "ptroff")

    def describe(self) -> str:
        return "ListTensorDesc"


@dataclass(frozen=True)
class TensorDescT(KType):
    """A TensorDesc: dimension count, index, data region id (-1: not filled) and byte offset.  ``shape``
    names the ``asc.array`` its shape is written to (``set_shape_addr``), of ``shape_n`` elements."""

    dtype: DataType
    shape: str | None = None
    shape_n: int = 0
    fields = ("dim", "index", "rid", "off")

    def describe(self) -> str:
        return f"TensorDesc[{self.dtype.name}]"


@dataclass(frozen=True)
class AllocatorT(KType):
    """LocalMemAllocator: the current byte offset inside its memory."""

    hardware: int
    fields = ("cur",)

    def describe(self) -> str:
        return "LocalMemAllocator"


@dataclass(frozen=True)
class RecordT(KType):
    """A parameter struct or user Struct; its fields are sub-values (``Value.items``)."""

    cls: type
    names: tuple[str, ...]

    def describe(self) -> str:
        return self.cls.__name__


@dataclass(frozen=True)
class TupleT(KType):
    """A tuple or list of values (helper return values, bit masks ``[hi, lo]``)."""

    n: int

    def describe(self) -> str:
        return f"tuple of {self.n}"


@dataclass(frozen=True)
class LocalArrayT(KType):
    """An ``asc.array``: a kernel-local array of scalars, the generated variable ``var``.

    As for :class:`ArrayT` the type names its storage, so values need no
    runtime parts and every name bound to the array shares it.
    """

    dtype: DataType
    n: int
    var: str

    def describe(self) -> str:
        return f"asc.array of {self.n} {self.dtype.name}"


@dataclass(frozen=True)
class ArrayT(KType):
    """A read-only array field of a struct argument (``ArrayField``).

    The array is the kernel parameter ``var`` (int64 or float32 elements), so
    the type itself names it and values of this type need no runtime parts:
    a variable bound to ``cfg.splits`` simply refers to the same parameter.
    """

    kind: str          # element kind: 'int' or 'float'
    n: int             # element count (``len()`` of the array)
    var: str           # the generated kernel's parameter holding the elements
    label: str = ""    # source spelling for messages (``cfg.splits``)

    def describe(self) -> str:
        return f"array {self.label or self.var} of {self.n} {self.kind}s"


@dataclass(frozen=True)
class Value:
    """A lowered kernel value.

    ``const`` holds the value of a ConstT; ``code`` holds one Python expression
    per runtime field of the type; ``items`` holds the sub-values of records
    and tuples.  Expressions in ``code`` are pure: evaluating them twice gives
    the same result (anything with effects was already emitted as a statement).
    """

    type: KType
    const: Any = None
    code: tuple[str, ...] = ()
    items: tuple["Value", ...] = field(default=())

    @property
    def is_const(self) -> bool:
        return isinstance(self.type, ConstT)

    def part(self, name: str) -> str:
        return self.code[self.type.fields.index(name)]

    def item(self, name: str) -> "Value":
        assert isinstance(self.type, RecordT)
        return self.items[self.type.names.index(name)]


def const(value: Any) -> Value:
    return Value(ConstT(), const=value)


def scalar(kind: str, expr: str) -> Value:
    return Value(ScalarT(kind), code=(expr,))


def is_number(v: Value) -> bool:
    """A runtime scalar or a numeric constant."""
    if isinstance(v.type, ScalarT):
        return True
    # an enum member (IntEnum is an int) is a compile-time choice, never a number to compute with
    return v.is_const and isinstance(v.const, (int, float, bool)) and not isinstance(v.const, enum.Enum)
