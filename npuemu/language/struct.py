"""User structs for kernel arguments (pyasc ``asc.language.core.struct``).

A struct is declared with class attributes::

    class TileConfig(Struct):
        tile_length = Field(dtype=KT.int32, default=0)
        tile_num = Field(dtype=KT.int32, default=0)

    class KernelConfig(Struct):
        tile = StructField(TileConfig)

Instances are passed to a kernel like any other argument; the kernel reads
fields as attributes (``cfg.tile.tile_length``).  Field values are flattened into
scalar kernel arguments, so a struct costs nothing at run time.
"""
from __future__ import annotations

from typing import Any, ClassVar

from .dtype import DataType


class Field:
    """A scalar field of a :class:`Struct`."""

    def __init__(self, dtype: DataType, default: Any = 0):
        if not isinstance(dtype, DataType):
            raise TypeError(f"Field dtype must be an asc data type, got {dtype!r}")
        self.dtype = dtype
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.__dict__.get(self.name, self.default)

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = self._coerce(value)

    def _coerce(self, value: Any) -> Any:
        if self.dtype.is_float:
            return float(value)
        if isinstance(value, bool) or not isinstance(value, (int,)) and hasattr(value, "__int__"):
            value = int(value)
        if not isinstance(value, int):
            raise TypeError(f"field '{self.name}' of dtype {self.dtype.name} needs an int, got {value!r}")
        return value


class StructField:
    """A nested :class:`Struct` field."""

    def __init__(self, struct_type: type["Struct"], default: "Struct | None" = None):
        if not (isinstance(struct_type, type) and issubclass(struct_type, Struct)):
            raise TypeError(f"StructField needs a Struct subclass, got {struct_type!r}")
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
            raise TypeError(f"field '{self.name}' needs a {self.struct_type.__name__}, got {type(value).__name__}")
        obj.__dict__[self.name] = value


class Struct:
    """Base class of kernel-argument structs."""

    _struct_fields_: ClassVar[tuple[tuple[str, "Field | StructField"], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: list[tuple[str, Field | StructField]] = []
        for base in reversed(cls.__mro__[1:]):
            fields.extend(getattr(base, "_struct_fields_", ()))
        fields.extend((k, v) for k, v in cls.__dict__.items() if isinstance(v, (Field, StructField)))
        cls._struct_fields_ = tuple(fields)

    def __init__(self, **kwargs: Any):
        known = dict(self._struct_fields_)
        for key, value in kwargs.items():
            if key not in known:
                raise TypeError(f"{type(self).__name__} has no field '{key}'")
            setattr(self, key, value)

    @classmethod
    def flat_fields(cls, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], DataType]]:
        """Every scalar field as (path, dtype), depth first, in declaration order."""
        out: list[tuple[tuple[str, ...], DataType]] = []
        for name, f in cls._struct_fields_:
            if isinstance(f, StructField):
                out.extend(f.struct_type.flat_fields(prefix + (name,)))
            else:
                out.append((prefix + (name,), f.dtype))
        return out

    def flat_values(self) -> list[Any]:
        """Field values in the order of :meth:`flat_fields`."""
        values = []
        for path, _ in self.flat_fields():
            obj: Any = self
            for part in path:
                obj = getattr(obj, part)
            values.append(obj)
        return values

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._struct_fields_)
        return f"{type(self).__name__}({inner})"
