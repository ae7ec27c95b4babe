"""User structs for kernel arguments and tiling data (pyasc ``asc.language.core.struct``).

A struct is declared with class attributes::

    class TileConfig(Struct):
        tile_length = Field(dtype=KT.int32, default=0)
        tile_num = Field(dtype=KT.uint32)              # required: must be assigned
        splits = ArrayField(KT.uint32, 4, default=0)   # uint32_t splits[4]

    class KernelConfig(Struct):
        tile = StructField(TileConfig)

Instances are passed to a kernel like any other argument; the kernel reads
fields as attributes (``cfg.tile.tile_length``, ``cfg.tile.splits[i]``).
Scalar fields become scalar kernel arguments and arrays small read-only
arrays, so a struct costs nothing at run time.

The same declaration is a C struct: :meth:`Struct.to_bytes` and
:meth:`Struct.from_bytes` serialise it with the layout a C compiler gives the
equivalent POD struct (the tiling data CANN copies to the device):

* every field is aligned to its natural alignment (its size; an array to its
  element size, a nested struct to its largest member alignment), with zero
  padding before it where needed;
* the struct's size is rounded up to its own alignment (trailing padding);
* multi-byte values are little-endian (the byte order of the A2/A3 cores).

Unassigned fields: a field declared without ``default=`` is *required*.
Reading it before it was assigned, serialising the struct or launching a
kernel with it raises :class:`UnassignedFieldError` naming the field.  CANN
does not zero tiling data (every field the kernel reads must be set), so an
explicit ``default=0`` is the way to say "zero unless set".
"""
from __future__ import annotations

import struct as _cstruct
from typing import Any, ClassVar, Iterable

import numpy as np

from ..errors import NpuemuError, StructFieldError
from .dtype import DataType


class _Required:
    """Marker default of a field that must be assigned before use."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


class UnassignedFieldError(NpuemuError, AttributeError):
    """A required struct field was read or serialised before it was assigned."""


class StructLayoutError(NpuemuError, TypeError):
    """A struct cannot be laid out or (de)serialised: unsupported dtype, wrong buffer size, ..."""


def _host_dtype(dtype: DataType, where: str) -> np.dtype:
    """Little-endian NumPy dtype a field of ``dtype`` is stored as."""
    if dtype.kind not in ("i", "u", "f", "b") or dtype.host is None:
        raise StructLayoutError(f"{where}: a struct field of type {dtype.name} has no C layout "
                                f"(use an integer type, float16, float32 or float64)")
    return dtype.host.newbyteorder("<")


def _check_dtype(dtype: Any, what: str) -> DataType:
    if not isinstance(dtype, DataType):
        raise StructLayoutError(f"{what} dtype must be an asc data type (asc.uint32, ...), got {dtype!r}")
    if dtype.kind == "v":
        raise StructLayoutError(f"{what} cannot be void")
    return dtype


def _coerce_scalar(dtype: DataType, value: Any, where: str) -> Any:
    """``value`` as the Python number a field of ``dtype`` holds; integers are range-checked."""
    if dtype.is_float:
        if isinstance(value, (np.ndarray, list, tuple, str)) or not hasattr(value, "__float__"):
            raise StructFieldError(f"{where} of dtype {dtype.name} needs a number, got {value!r}")
        try:
            number = float(value)
        except (OverflowError, ValueError) as exc:
            raise StructFieldError(f"{where} of dtype {dtype.name} needs a number, got {value!r} ({exc})") from None
        # rounded to the field's precision, so the host reads what the kernel and the bytes hold
        return float(np.asarray(number, dtype=dtype.host)) if dtype.host is not None else number
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    elif isinstance(value, np.integer):
        value = int(value)
    if not isinstance(value, int):
        raise StructFieldError(f"{where} of dtype {dtype.name} needs an int, got {value!r}")
    info = np.iinfo(dtype.host)
    if not int(info.min) <= value <= int(info.max):
        raise StructFieldError(f"{where} = {value} does not fit in {dtype.name} ([{info.min}, {info.max}])")
    return value


class Field:
    """A scalar field of a :class:`Struct`; without ``default`` it must be assigned."""

    def __init__(self, dtype: DataType, default: Any = REQUIRED):
        self.dtype = _check_dtype(dtype, "Field")
        self.name = ""
        self.owner = "Struct"
        self.default = default if default is REQUIRED else _coerce_scalar(self.dtype, default, "Field default")

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.owner = owner.__name__

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            if self.default is REQUIRED:
                raise UnassignedFieldError(f"field '{self.owner}.{self.name}' was never assigned (declare it "
                                           f"with default=0 to make it zero unless set)") from None
            return self.default

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = _coerce_scalar(self.dtype, value, f"field '{self.owner}.{self.name}'")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def c_size(self) -> int:
        return self.dtype.sizeof()

    def c_align(self) -> int:
        return self.dtype.sizeof()


class ArrayField:
    """A fixed-length array field (``T name[n]``) of a :class:`Struct`.

    The host value is a NumPy array of ``n`` elements that can be changed in
    place (``cfg.splits[2] = 7``) or replaced whole; ``default`` is a scalar
    that fills the array or a sequence of ``n`` values.  Kernels read elements
    with ``cfg.splits[i]`` (``i`` constant or run time, bounds-checked) and
    ``len(cfg.splits)``; they cannot write them.
    """

    def __init__(self, dtype: DataType, n: int, default: Any = REQUIRED):
        self.dtype = _check_dtype(dtype, "ArrayField")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise StructLayoutError(f"ArrayField length must be a positive int, got {n!r}")
        self.n = n
        self.name = ""
        self.owner = "Struct"
        self.default = default if default is REQUIRED else self._array(default, "ArrayField default")

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.owner = owner.__name__

    def _array(self, value: Any, where: str) -> np.ndarray:
        items = list(value) if isinstance(value, (list, tuple, np.ndarray, range)) else [value] * self.n
        if len(items) != self.n:
            raise StructFieldError(f"{where} needs {self.n} values, got {len(items)}")
        values = [_coerce_scalar(self.dtype, v, f"{where}[{i}]") for i, v in enumerate(items)]
        return np.array(values, dtype=self.dtype.host)

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            if self.default is REQUIRED:
                raise UnassignedFieldError(f"array field '{self.owner}.{self.name}' was never assigned "
                                           f"(declare it with default=0 to make it zero unless set)") from None
            arr = obj.__dict__[self.name] = self.default.copy()   # per instance, so in-place edits stay local
            return arr

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = self._array(value, f"field '{self.owner}.{self.name}'")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def c_size(self) -> int:
        return self.dtype.sizeof() * self.n

    def c_align(self) -> int:
        return self.dtype.sizeof()


class StructField:
    """A nested :class:`Struct` field."""

    def __init__(self, struct_type: type["Struct"], default: "Struct | None" = None):
        if not (isinstance(struct_type, type) and issubclass(struct_type, Struct)):
            raise StructLayoutError(f"StructField needs a Struct subclass, got {struct_type!r}")
        self.struct_type = struct_type
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        if self.name not in obj.__dict__:
            obj.__dict__[self.name] = self.default if self.default is not None else self.struct_type()
        return obj.__dict__[self.name]

    def __set__(self, obj: Any, value: Any) -> None:
        if not isinstance(value, self.struct_type):
            raise StructFieldError(f"field '{self.name}' needs a {self.struct_type.__name__}, got "
                                   f"{type(value).__name__}")
        obj.__dict__[self.name] = value

    @property
    def required(self) -> bool:
        return False

    def c_size(self) -> int:
        return self.struct_type.sizeof()

    def c_align(self) -> int:
        return self.struct_type.alignof()


class LayoutEntry(tuple):
    """One scalar or array of a struct's C layout: (path, offset, dtype, count); count 0 for a scalar."""

    __slots__ = ()

    def __new__(cls, path: tuple[str, ...], offset: int, dtype: DataType, count: int) -> "LayoutEntry":
        return super().__new__(cls, (path, offset, dtype, count))

    path = property(lambda self: self[0])
    offset = property(lambda self: self[1])
    dtype = property(lambda self: self[2])
    count = property(lambda self: self[3])


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


# format characters of the ``struct`` module per field type (bfloat16 has none: packed through NumPy)
_PACK_CODES = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I", "int64": "q",
               "uint64": "Q", "float16": "e", "float32": "f", "float64": "d"}


class Struct:
    """Base class of kernel-argument structs and tiling data."""

    _struct_fields_: ClassVar[tuple[tuple[str, Any], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: list[tuple[str, Any]] = []
        for base in reversed(cls.__mro__[1:]):
            fields.extend(getattr(base, "_struct_fields_", ()))
        fields.extend((k, v) for k, v in cls.__dict__.items() if isinstance(v, (Field, ArrayField, StructField)))
        cls._struct_fields_ = tuple(fields)
        cls._layout_cache = None
        cls._packer_cache = None

    def __init__(self, **kwargs: Any):
        known = dict(self._struct_fields_)
        for key, value in kwargs.items():
            if key not in known:
                raise StructFieldError(f"{type(self).__name__} has no field '{key}' (its fields: "
                                       f"{', '.join(known) or 'none'})")
            setattr(self, key, value)

    # ------------------------------------------------------------------ C layout

    @classmethod
    def layout(cls) -> tuple[LayoutEntry, ...]:
        """Every scalar and array of the struct, depth first, with its byte offset."""
        if cls.__dict__.get("_layout_cache") is None:
            entries: list[LayoutEntry] = []
            offset = 0
            for name, f in cls._struct_fields_:
                offset = _align(offset, f.c_align())
                if isinstance(f, StructField):
                    entries.extend(LayoutEntry((name, *e.path), offset + e.offset, e.dtype, e.count)
                                   for e in f.struct_type.layout())
                else:
                    _host_dtype(f.dtype, f"{cls.__name__}.{name}")
                    entries.append(LayoutEntry((name,), offset, f.dtype, f.n if isinstance(f, ArrayField) else 0))
                offset += f.c_size()
            cls._layout_cache = tuple(entries)
        return cls._layout_cache

    @classmethod
    def _packer(cls) -> "_cstruct.Struct | None":
        """A ``struct.Struct`` packing the flattened field values with the C layout (None: no format exists)."""
        if cls.__dict__.get("_packer_cache") is None:
            fmt, end = ["<"], 0
            for e in cls.layout():
                code = _PACK_CODES.get(e.dtype.name)
                if code is None:
                    cls._packer_cache = False
                    return None
                if e.offset > end:
                    fmt.append(f"{e.offset - end}x")
                fmt.append(f"{e.count}{code}" if e.count else code)
                end = e.offset + e.dtype.sizeof() * max(e.count, 1)
            if cls.sizeof() > end:
                fmt.append(f"{cls.sizeof() - end}x")
            cls._packer_cache = _cstruct.Struct("".join(fmt))
        return cls._packer_cache or None

    @classmethod
    def alignof(cls) -> int:
        """The struct's alignment: its largest member alignment (1 for an empty struct)."""
        return max((f.c_align() for _, f in cls._struct_fields_), default=1)

    @classmethod
    def sizeof(cls) -> int:
        """``sizeof`` of the equivalent C struct, trailing padding included."""
        size = cls.__dict__.get("_sizeof_cache")
        if size is None:
            end = 0
            for _, f in cls._struct_fields_:
                end = _align(end, f.c_align()) + f.c_size()
            size = cls._sizeof_cache = _align(end, cls.alignof())
        return size

    @classmethod
    def offsetof(cls, path: str) -> int:
        """Byte offset of field ``path`` (``"tile.tile_num"`` for nested fields)."""
        parts = tuple(path.split("."))
        offset, owner = 0, cls
        for i, part in enumerate(parts):
            end = 0
            for name, f in owner._struct_fields_:
                end = _align(end, f.c_align())
                if name == part:
                    offset += end
                    break
                end += f.c_size()
            else:
                raise KeyError(f"{owner.__name__} has no field '{part}'")
            if i < len(parts) - 1:
                if not isinstance(f, StructField):
                    raise KeyError(f"{owner.__name__}.{part} is not a struct")
                owner = f.struct_type
        return offset

    def unassigned(self) -> list[str]:
        """Dotted paths of the required fields that were never assigned."""
        missing = []
        for name, f in self._struct_fields_:
            if isinstance(f, StructField):
                missing.extend(f"{name}.{p}" for p in getattr(self, name).unassigned())
            elif f.required and name not in self.__dict__:
                missing.append(name)
        return missing

    def to_bytes(self) -> bytes:
        """The struct as the bytes of the equivalent C struct (padding is zero)."""
        missing = self.unassigned()
        if missing:
            raise UnassignedFieldError(f"{type(self).__name__}: field(s) {', '.join(missing)} were never assigned "
                                       f"(declare them with default=0 to make them zero unless set)")
        packer = self._packer()
        if packer is not None:
            values: list[Any] = []
            for e in self.layout():
                v = self.value_at(e.path)
                if e.count:
                    values.extend(v.tolist())
                else:
                    values.append(v)
            return packer.pack(*values)
        buf = bytearray(self.sizeof())
        for e in self.layout():
            value = self.value_at(e.path)
            host = _host_dtype(e.dtype, ".".join(e.path))
            data = np.asarray(value, dtype=host).tobytes()
            buf[e.offset:e.offset + len(data)] = data
        return bytes(buf)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview | np.ndarray) -> "Struct":
        """A struct whose fields are read from ``data`` (at least :meth:`sizeof` bytes; the rest is ignored)."""
        raw = bytes(data) if not isinstance(data, np.ndarray) else data.tobytes()
        size = cls.sizeof()
        if len(raw) < size:
            raise StructLayoutError(f"{cls.__name__} needs {size} bytes, got {len(raw)}")
        out = cls()
        for e in cls.layout():
            host = _host_dtype(e.dtype, ".".join(e.path))
            n = max(e.count, 1)
            values = np.frombuffer(raw, dtype=host, count=n, offset=e.offset)
            obj: Any = out
            for part in e.path[:-1]:
                obj = getattr(obj, part)
            setattr(obj, e.path[-1], values.tolist() if e.count else values[0].item())
        return out

    # ------------------------------------------------------------------ flattening (kernel arguments)

    def value_at(self, path: Iterable[str]) -> Any:
        """The value of the field at ``path`` (a tuple of names)."""
        obj: Any = self
        for part in path:
            obj = getattr(obj, part)
        return obj

    def __repr__(self) -> str:
        parts = []
        for n, f in self._struct_fields_:
            if not isinstance(f, StructField) and f.required and n not in self.__dict__:
                parts.append(f"{n}=<unassigned>")
                continue
            v = getattr(self, n)
            parts.append(f"{n}={v.tolist() if isinstance(v, np.ndarray) else v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"
