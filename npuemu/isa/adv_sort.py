"""``asc.adv.concat`` and ``asc.adv.extract``: the sort helpers around ``asc.sort`` on Atlas A2/A3.

* ``concat``: ``dst[:16 r] = src[:16 r]`` (``r = repeat_time``; A2's sort takes
  the scores as they are, so the preparation is a copy; ``tmp`` is unused).
* ``extract``: for each of the ``32 r`` 8-byte entries of ``src`` (the layout
  of :mod:`npuemu.isa.sort`), its score (bytes 0-3 float32 / 0-1 float16) to
  ``dst_value`` and its uint32 index (bytes 4-7) to ``dst_index``.

``repeat_time`` is 0..255.  Fault codes 2330-2331.
"""
from __future__ import annotations


from .. import errors
from .fault import Fault, register
from .linkage import instruction

F_SORT_REPEAT = 2330
F_SORT_OVER = 2331
OPERANDS = ("dst", "src", "dst_value", "dst_index")

register({
    F_SORT_REPEAT: (errors.ParamRangeError,
                    lambda a, b, c, env: f"repeat_time {a} out of range [0, 255]"),
    F_SORT_OVER: (errors.BoundsError,
                  lambda a, b, c, env: f"{OPERANDS[c]}: repeat_time needs {a} elements but the tensor holds {b}"),
})


@instruction
def concat(lm, dst, dst_len, src, src_len, esize, repeat, loc):
    if repeat < 0 or repeat > 255:
        raise Fault(F_SORT_REPEAT, loc, repeat, 0, 0)
    n = 16 * repeat
    if n > dst_len:
        raise Fault(F_SORT_OVER, loc, n, dst_len, 0)
    if n > src_len:
        raise Fault(F_SORT_OVER, loc, n, src_len, 1)
    lm[dst:dst + n * esize] = lm[src:src + n * esize].copy()


@instruction
def extract(lm, val, val_len, idx, idx_len, src, src_len, esize, repeat, loc):
    if repeat < 0 or repeat > 255:
        raise Fault(F_SORT_REPEAT, loc, repeat, 0, 0)
    n = 32 * repeat
    if n * 8 > src_len * esize:
        raise Fault(F_SORT_OVER, loc, n * 8 // esize, src_len, 1)
    if n > val_len:
        raise Fault(F_SORT_OVER, loc, n, val_len, 2)
    if n > idx_len:
        raise Fault(F_SORT_OVER, loc, n, idx_len, 3)
    entries = lm[src:src + 8 * n].copy()
    for i in range(n):
        lm[val + i * esize:val + (i + 1) * esize] = entries[8 * i:8 * i + esize]
        lm[idx + 4 * i:idx + 4 * i + 4] = entries[8 * i + 4:8 * i + 8]
