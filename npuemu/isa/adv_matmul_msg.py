"""The messages through which the vector cores of a MIX kernel drive the cube's Matmul (docs/matmul-api.md).

In a MIX kernel the AIV owns the Matmul object and the AIC serves it, as Ascend C's
matmul client/server does: each AIV has a mailbox in the GM workspace given to
``register_matmul`` (or the system workspace), laid out as

* ``SLOT`` bytes per AIV (global AIV index ``i`` at ``i * SLOT``): int64 words,
  word 0 the state (0 idle, 1 request posted, 2 done), word 1 the kind, then the
  request's fields (``F_*`` below);
* after all slots, ``STAGE`` bytes per AIV where the AIC leaves a tile of C the
  AIV reads into UB (Atlas A2/A3 have no L0C -> UB path).

The AIV posts a request and waits for "done"; the AIC waits for a posted request
of one of its AIVs, carries it out and marks it done.  Every change bumps the
launch's progress word (``cross_core.PROGRESS``), so a request nobody serves is a
deadlock report, not a hang.  The race checker sees the hand-over through sync
objects ``OBJ_REQUEST``/``OBJ_DONE`` (released by the sender, acquired by the
receiver).
"""
from __future__ import annotations

import numpy as np

from .. import errors
from .cross_core import PROGRESS, words
from .fault import Fault, register
from .linkage import instruction
from . import state as S

SLOT = 512
STAGE = 128 * 1024
N_WORDS = SLOT // 8
OBJ_REQUEST = 224       # race-checker sync objects (cross_core: objects below 224 are taken)
OBJ_DONE = 225

IDLE, POSTED, DONE = 0, 1, 2
KIND_TILES, KIND_END = 1, 2
FIELDS = ("kind", "a_rid", "a_off", "a_size", "b_rid", "b_off", "b_size", "bias_rid", "bias_off", "bias_size",
          "use_bias", "om", "on", "oka", "okb", "okc", "sm", "sn", "sk", "order", "deq", "t0", "t1", "seq",
          "dst_rid", "dst_off", "dst_size", "c_shift", "atomic", "qv_rid", "qv_off", "qv_size", "qvec")

F_WORKSPACE = 2213
F_UNSERVED = 2216

register({
    F_WORKSPACE: (errors.BoundsError,
                  lambda a, b, c, env: f"Matmul in a MIX kernel: the workspace needs {a} bytes for the mailboxes "
                                       f"and C staging of {c} vector cores, it has {b} (pass a larger workspace "
                                       f"to set_sys_workspace / register_matmul)"),
    F_UNSERVED: (errors.DeadlockError,
                 lambda a, b, c, env: f"Matmul API called from AIV{a} of an AI Core whose kernel was built for {b} "
                                      f"AIV per AIC but runs with {c} (a MIX_AIC_1_1 sub-kernel in a MIX_AIC_1_2 "
                                      f"SuperKernel): the AIC's Matmul server, built for 1:1, receives only AIV0's "
                                      f"messages, so this request is never answered and the kernel hangs on "
                                      f"hardware; call the Matmul API from AIV0 only (if asc.get_sub_block_idx() == 0:)"),
})


@instruction
def check_workspace(st, g, off, n_aiv, loc):
    """The workspace holds every AIV's mailbox and C staging area."""
    need = n_aiv * (SLOT + STAGE)
    if off < 0 or off + need > len(g):
        raise Fault(F_WORKSPACE, loc, need, len(g) - off, n_aiv)
    return 0


@instruction
def mailbox(st, ratio):
    """This AIV's mailbox slot: AIV ``sub`` of AI Core ``aic`` has ``aic * ratio + sub``, ``ratio`` being the
    AIVs per AIC the kernel was built for; ``-1 - sub`` when the core runs more AIVs per AIC than that (a 1:1
    kernel's body run by both AIVs in a 1:2 SuperKernel): no AIC serves that AIV."""
    hw = max(st[S.SUB_BLOCK_NUM], 1)
    sub = st[S.BLOCK_IDX] % hw
    if sub >= ratio:
        return -1 - sub
    return st[S.BLOCK_IDX] // hw * ratio + sub


@instruction
def check_served(st, slot, ratio, loc):
    """A request from an AIV no AIC serves (:func:`mailbox` gave -1 - sub) would wait forever."""
    if slot < 0:
        raise Fault(F_UNSERVED, loc, -1 - slot, ratio, st[S.SUB_BLOCK_NUM])
    return 0


@instruction
def stage_offset(off, n_aiv, slot):
    """Byte offset of AIV ``slot``'s C staging area."""
    return off + n_aiv * SLOT + slot * STAGE


@instruction
def post(g, off, slot, sysmem, kind, a_rid, a_off, a_size, b_rid, b_off, b_size, bias_rid, bias_off, bias_size,
         use_bias, om, on, oka, okb, okc, sm, sn, sk, order, deq, t0, t1, seq, dst_rid, dst_off, dst_size,
         c_shift, atomic, qv_rid, qv_off, qv_size, qvec):
    """The AIV posts a request in its mailbox."""
    w = g[off + slot * SLOT:off + (slot + 1) * SLOT].view(np.int64)
    vals = (kind, a_rid, a_off, a_size, b_rid, b_off, b_size, bias_rid, bias_off, bias_size, use_bias, om, on,
            oka, okb, okc, sm, sn, sk, order, deq, t0, t1, seq, dst_rid, dst_off, dst_size, c_shift, atomic, qv_rid,
            qv_off, qv_size, qvec)
    for i in range(len(vals)):
        w[1 + i] = vals[i]
    w[0] = POSTED
    words(sysmem)[PROGRESS] += 1
    return 0


@instruction
def is_done(g, off, slot):
    """Whether the AIC has carried out this AIV's request."""
    return g[off + slot * SLOT:off + slot * SLOT + 8].view(np.int64)[0] == DONE


@instruction
def ack(g, off, slot, sysmem):
    """The AIV takes the answer: the mailbox is idle again."""
    g[off + slot * SLOT:off + slot * SLOT + 8].view(np.int64)[0] = IDLE
    words(sysmem)[PROGRESS] += 1
    return 0


@instruction
def pending(g, off, first, count):
    """The first of AIV slots ``first .. first + count - 1`` with a posted request, or -1."""
    for s in range(first, first + count):
        if g[off + s * SLOT:off + s * SLOT + 8].view(np.int64)[0] == POSTED:
            return s
    return -1


@instruction
def field(g, off, slot, i):
    """Word ``i`` of FIELDS in AIV ``slot``'s request."""
    return g[off + slot * SLOT + 8 * (1 + i):off + slot * SLOT + 8 * (2 + i)].view(np.int64)[0]


@instruction
def done(g, off, slot, sysmem):
    """The AIC marks the request done."""
    g[off + slot * SLOT:off + slot * SLOT + 8].view(np.int64)[0] = DONE
    words(sysmem)[PROGRESS] += 1
    return 0
