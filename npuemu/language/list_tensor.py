"""Lists of tensors of dynamic shape described in GM (``AscendC::ListTensorDesc`` / ``TensorDesc``).

See ``docs/language.md`` ("Tensor lists") for the buffer layout and for
``npuemu.host.list_tensor_desc``, which builds such a buffer on the host.
"""
from __future__ import annotations

from .builtin import builtin_class
from .core import GlobalAddress, GlobalTensor
from .dtype import DataType, float32

__all__ = ["ListTensorDesc", "TensorDesc"]

_ALL = 0xFFFFFFFF


@builtin_class
class TensorDesc:
    """One tensor of a ``ListTensorDesc``: its dimensions, shape, index and data (``TensorDesc<T>``).

    ``set_shape_addr(buf)`` gives it an ``asc.array(asc.uint64, n)`` to hold
    the shape; ``ListTensorDesc.get_desc(desc, i)`` fills it.
    """

    def __init__(self, dtype: DataType = float32) -> None: ...
    def set_shape_addr(self, shape_ptr: object) -> None: ...
    def get_dim(self) -> int: ...
    def get_index(self) -> int: ...
    def get_shape(self, offset: int) -> int: ...
    def get_data_ptr(self) -> GlobalAddress: ...
    def get_data_obj(self) -> GlobalTensor: ...


@builtin_class
class ListTensorDesc:
    """A GM buffer describing a list of tensors (``AscendC::ListTensorDesc``).

    ``length`` (bytes of the buffer) and ``shape_size`` (number of tensors)
    are checked against the buffer when both are given.
    """

    def __init__(self, data: GlobalAddress | None = None, length: int = _ALL, shape_size: int = _ALL) -> None: ...
    def init(self, data: GlobalAddress, length: int = _ALL, shape_size: int = _ALL) -> None: ...
    def get_desc(self, desc: TensorDesc, index: int) -> None: ...
    def get_data_ptr(self, index: int, dtype: DataType) -> GlobalAddress: ...
    def get_size(self) -> int: ...
