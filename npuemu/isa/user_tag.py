"""``LocalTensor.set_user_tag``/``get_user_tag``: a number kept with a buffer.

Ascend C keeps the tag in the buffer's handle, so every tensor over the same
buffer (the one ``alloc_tensor`` gave, the one ``deque`` returns) sees it.
npuemu keeps a table of (local address, tag) pairs in the core's state
words, one entry per buffer start address; an untagged buffer reads 0
(assumed: the handle is zero-initialised).  Fault codes 1910-1919.
"""
from __future__ import annotations

from numba import njit

from .. import errors
from . import state as S
from .fault import Fault, register

F_TAGS_FULL = 1910

register({
    F_TAGS_FULL: (errors.CapacityError,
                  lambda a, b, c, env: f"set_user_tag on more than {a} different buffers (npuemu keeps a tag for "
                                       f"at most {a}, as many as a TPipe can hand out)"),
})


@njit(cache=True)
def set_user_tag(st, addr, tag, loc):
    free = -1
    for i in range(S.N_USER_TAGS):
        k = S.USER_TAGS + 2 * i
        if st[k] == addr + 1:
            st[k + 1] = tag
            return
        if free < 0 and st[k] == 0:
            free = k
    if free < 0:
        raise Fault(F_TAGS_FULL, loc, S.N_USER_TAGS, 0, 0)
    st[free] = addr + 1
    st[free + 1] = tag


@njit(cache=True)
def get_user_tag(st, addr, loc):
    for i in range(S.N_USER_TAGS):
        k = S.USER_TAGS + 2 * i
        if st[k] == addr + 1:
            return st[k + 1]
    return 0
