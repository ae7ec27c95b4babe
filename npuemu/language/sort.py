"""Sorting (Ascend C 排序组合): Sort32, MrgSort, Sort and the sorted-structure helpers.

On Atlas A2/A3 sorted data is a list of 8-byte *(score, index)* entries,
descending by score: a float32 score fills the low 4 bytes, a float16 score
the low 2 bytes (the next 2 are reserved); the uint32 index is the high 4
bytes.  Equal scores keep their input order.

* ``sort32(dst, src0, src1, repeat_time)``: each repeat sorts 32 scores of
  ``src0`` with their uint32 indices from ``src1`` into 32 entries (256 bytes)
  of ``dst``.
* ``mrg_sort(dst, sort_list, ...)``: merges 2 to 4 sorted entry lists
  (:class:`MrgSortSrcList`) into ``dst``; the lengths, the valid lists, the
  repeat count and the exhausted-suspension switch come as arguments or as a
  :class:`MrgSort4Info`.  ``get_mrg_sort_result()`` returns how many entries
  of each list the last merge took.
* ``sort(dst, concat, index, tmp, repeat_time, is_full_sort)``: ``sort32``,
  and with ``is_full_sort`` the merges that sort all ``32 * repeat_time``
  entries (``tmp`` is the library's scratch, as large as ``dst``).
* ``get_sort_len(n)`` / ``get_sort_offset(i)``: the length of ``n`` entries /
  the offset of entry ``i``, in elements of the score type (4 per entry for
  float16, 2 for float32).
* ``mrg_sort4``, ``rp_sort16``, ``proposal_concat``, ``proposal_extract``: the
  Region Proposal instructions of the Atlas inference and training series.
  Atlas A2/A3 does not have them (its library reports each as unsupported), so
  on every npuemu platform they are compile-time errors.

Numerics, NaN ordering and every assumption: :mod:`npuemu.isa.sort`.
"""
from __future__ import annotations

from typing import Any, Optional, overload

from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import DataType, float16, float32
from .params import ParamStruct

__all__ = ["sort32", "mrg_sort", "mrg_sort4", "get_mrg_sort_result", "sort", "get_sort_len", "get_sort_offset",
           "rp_sort16", "proposal_concat", "proposal_extract", "MrgSort4Info", "MrgSortSrcList"]

MRG_SORT_ELEMENT_LEN = 4            # lists one merge takes
ENTRY_BYTES = 8                     # one (score, index) entry
SORT32_ELEMENTS = 32                # scores one sort32 repeat sorts


class MrgSort4Info(ParamStruct):
    """Parameters of ``mrg_sort`` (``AscendC::MrgSort4Info``).

    ``element_lengths``: the entries of each of the four lists (0..4095);
    ``if_exhausted_suspension``: stop as soon as one list runs out;
    ``valid_bit``: which lists take part (3: lists 1-2, 7: lists 1-3, 15: all);
    ``repeat_times``: merges in a row (1..255; more than 1 needs four lists of
    one length stored one after the other, ``valid_bit`` 15 and no suspension).
    """

    _fields_ = (("element_lengths", (0, 0, 0, 0), "list"), ("if_exhausted_suspension", False, "bool"),
                ("valid_bit", 15, "u16"), ("repeat_times", 1, "u16"))


class MrgSortSrcList(ParamStruct):
    """The 2 to 4 sorted lists ``mrg_sort`` merges (``AscendC::MrgSortSrcList``).

    pyasc's form is ``MrgSortSrcList(dtype, src1, src2, src3=None, src4=None)``;
    npuemu also accepts the tensors alone (``MrgSortSrcList(src1, src2, ...)``),
    as pyasc's examples write it.  Lists left out are not read.
    """

    _fields_ = (("dtype", None, "dtype"), ("src1", None, "tensor"), ("src2", None, "tensor"),
                ("src3", None, "tensor"), ("src4", None, "tensor"))

    def __init__(self, dtype: Any, src1: Any = None, src2: Any = None, src3: Any = None, src4: Any = None):
        if not isinstance(dtype, DataType):          # the tensors alone
            dtype, src1, src2, src3, src4 = None, dtype, src1, src2, src3
        super().__init__(dtype, src1, src2, src3, src4)


@builtin
def sort32(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, repeat_time: int) -> None:
    """Sort each group of 32 scores of ``src0`` (indices: uint32 ``src1``) into 256 bytes of ``dst``
    (``AscendC::Sort32``); ``repeat_time`` groups, 0..255."""


@overload
def mrg_sort(dst: LocalTensor, sort_list: MrgSortSrcList, element_count_list: list[int], sorted_num: list[int],
             valid_bit: int, repeat_time: int, is_exhausted_suspension: bool = False) -> None: ...
@overload
def mrg_sort(dst: LocalTensor, sort_list: MrgSortSrcList, params: MrgSort4Info) -> None: ...
@builtin
def mrg_sort(dst: LocalTensor, sort_list: MrgSortSrcList, *args: Any, **kwargs: Any) -> None:
    """Merge 2 to 4 sorted (score, index) lists into one, descending (``AscendC::MrgSort``).

    ``sorted_num`` is accepted for pyasc's signature and left unchanged (a
    kernel list cannot be written through); ``get_mrg_sort_result()`` returns
    the counts.
    """


@builtin
def mrg_sort4(dst: LocalTensor, src: MrgSortSrcList, params: MrgSort4Info) -> None:
    """Merge Region Proposal lists (``AscendC::MrgSort4``); not available on Atlas A2/A3: use ``mrg_sort``."""


@builtin
def get_mrg_sort_result() -> tuple[int, int, int, int]:
    """The entries of each list the last ``mrg_sort`` took (``AscendC::GetMrgSortResult``, register VMS4_SR)."""


@builtin
def sort(dst: LocalTensor, concat: LocalTensor, index: LocalTensor, tmp: LocalTensor, repeat_time: int,
         is_full_sort: bool = False) -> None:
    """Sort the scores of ``concat`` with the uint32 indices ``index`` (``AscendC::Sort``): per group of 32,
    or, with the compile-time ``is_full_sort``, all ``32 * repeat_time`` of them; ``tmp`` holds as many
    elements as ``dst`` when ``is_full_sort``."""


@builtin
def get_sort_len(elem_count: int, dtype: Optional[DataType] = None) -> int:
    """Elements of ``dtype`` (default float32) that ``elem_count`` sorted entries take
    (``AscendC::GetSortLen<T>``): ``4 * elem_count`` for float16, ``2 * elem_count`` for float32."""


@builtin
def get_sort_offset(elem_offset: int, dtype: Optional[DataType] = None) -> int:
    """Offset in elements of ``dtype`` (default float32) of sorted entry ``elem_offset``
    (``AscendC::GetSortOffset<T>``)."""


@builtin
def rp_sort16(dst: LocalTensor, src: LocalTensor, repeat_time: int) -> None:
    """Sort Region Proposals by score, 16 per repeat (``AscendC::RpSort16``); not available on Atlas A2/A3."""


@builtin
def proposal_concat(dst: LocalTensor, src: LocalTensor, repeat_time: int, mode_number: int) -> None:
    """Write values into one field of Region Proposals (``AscendC::ProposalConcat``); not available on
    Atlas A2/A3."""


@builtin
def proposal_extract(dst: LocalTensor, src: LocalTensor, repeat_time: int, mode_number: int) -> None:
    """Read one field of Region Proposals (``AscendC::ProposalExtract``); not available on Atlas A2/A3."""


# the score types each instruction takes on Atlas A2/A3 (indices are uint32); the rules check them, the
# docstrings list them
DTYPES = {sort32: (float16, float32), mrg_sort: (float16, float32), sort: (float16, float32),
          get_sort_len: (float16, float32), get_sort_offset: (float16, float32)}
document_dtypes(DTYPES)

# what npuemu's platforms (all Atlas A2/A3) refuse, with what to use instead
UNSUPPORTED = {mrg_sort4: "use mrg_sort, which takes the same MrgSortSrcList and MrgSort4Info",
               rp_sort16: "use sort32 or sort on (score, index) entries",
               proposal_concat: "sort32 and sort take the scores as they are (concat is the score tensor)",
               proposal_extract: "read scores and indices out of the (score, index) entries, e.g. with gather "
                                 "or get_value"}

document_temp_buffer(sort, "tmp", "as many entries as ``dst`` (8 bytes per (score, index) entry: "
                     "``32 * repeat_time`` entries); the sort's result is also left in it.")
