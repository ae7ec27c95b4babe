"""The sort helpers of the high-level API (``asc.adv.concat``, ``asc.adv.extract``; Ascend C Concat, Extract).

On Atlas A2/A3, sorting (``asc.sort``, ``asc.sort32``) takes the scores as a
plain tensor and produces 8-byte (score, index) entries (see
``npuemu/isa/sort.py``): ``concat`` prepares the scores -- ``16 * repeat_time``
elements copied from ``src`` -- and ``extract`` splits ``32 * repeat_time``
sorted entries into their scores and uint32 indices.
"""
from __future__ import annotations

from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import float16, float32

__all__ = ["concat", "extract"]


@builtin
def concat(dst: LocalTensor, src: LocalTensor, tmp: LocalTensor, repeat_time: int) -> None:
    """Prepare ``16 * repeat_time`` scores of ``src`` for sorting into ``dst`` (``AscendC::Concat``)."""


@builtin
def extract(dst_value: LocalTensor, dst_index: LocalTensor, src: LocalTensor, repeat_time: int) -> None:
    """Split ``32 * repeat_time`` sorted (score, index) entries of ``src`` into ``dst_value`` and the uint32
    ``dst_index`` (``AscendC::Extract``)."""


DTYPES = {concat: (float16, float32), extract: (float16, float32)}
document_dtypes(DTYPES)
document_temp_buffer(concat, "tmp", "not used on Atlas A2/A3 (CANN ``GetConcatTmpSize`` is 0 there, *assumed*); "
                                    "any LocalTensor of the data type.")
