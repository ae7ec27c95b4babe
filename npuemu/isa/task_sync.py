"""``set_next_task_start`` / ``wait_pre_task_end``: early start between the sub-kernels of a SuperKernel.

The SuperKernel runner (npuemu/superkernel) marks in ``st[SK_FLAGS]``
whether the calls take effect in the running sub-kernel; elsewhere they do
nothing.  Where they do, each counts its calls on the core (a second call
is a fault: its surplus flag would leak into the next barrier or overflow
the counter), and ``wait_pre_task_end`` waits until the runner has opened
``st[SK_WAIT_OPEN]``: every core of the previous sub-kernel has set.
"""
from __future__ import annotations


from .. import errors
from . import hb
from . import state as S
from .cross_core import acquire_all, done, release_pipe, waiting
from .fault import Fault, register
from .linkage import instruction

F_SET_TWICE = 2400
F_WAIT_TWICE = 2401
SK_BARRIER_OBJ = 255    # the race checker's sync object of the inter-kernel barriers (the last one)
W_PRE_TASK = 64         # WAIT_KIND of a core in wait_pre_task_end (read by the SuperKernel's deadlock report)


def _twice(what: str):
    def render(a: int, b: int, c: int, env) -> str:
        return (f"{what}() is called a second time on this core in this sub-kernel (first at {env.source(a - 1)}): "
                f"its surplus flag leaks into the next inter-kernel barrier or overflows the counter (a hang on "
                f"hardware); call it exactly once on every core")
    return render


register({
    F_SET_TWICE: (errors.SyncError, _twice("set_next_task_start")),
    F_WAIT_TWICE: (errors.SyncError, _twice("wait_pre_task_end")),
})


@instruction
def set_next_task_start(st, loc):
    """``SetNextTaskStart``: counts the call where it takes effect."""
    if not st[S.SK_FLAGS] & S.SK_EARLY_SET:
        return
    st[S.SK_SET_N] += 1
    if st[S.SK_SET_N] > 1:
        raise Fault(F_SET_TWICE, loc, st[S.SK_SET_LOC], 0, 0)
    st[S.SK_SET_LOC] = loc + 1


@instruction
def set_release(st, sh, gsh, aiv_pipe, aic_pipe, loc):
    """Level full: where ``set_next_task_start`` takes effect, its pipe releases the inter-kernel barrier's
    sync object: what the core issues later is not ordered before the next sub-kernel."""
    if st[S.SK_FLAGS] & S.SK_EARLY_SET:
        release_pipe(st, sh, gsh, aiv_pipe if st[S.CORE_TYPE] == 0 else aic_pipe, SK_BARRIER_OBJ, loc)


@instruction
def wait_acquire(st, sh, gsh, loc):
    """Level full: a ``wait_pre_task_end`` that took effect acquires the barrier's sync object."""
    if st[S.SK_FLAGS] & S.SK_EARLY_WAIT:
        acquire_all(st, sh, gsh, SK_BARRIER_OBJ, loc)


@instruction
def try_wait_pre_task_end(st, loc):
    """``WaitPreTaskEnd``: True once the previous sub-kernel has let this one start (at once where it
    takes no effect); counts the call the first time it is tried."""
    if not st[S.SK_FLAGS] & S.SK_EARLY_WAIT:
        return True
    if not st[S.SK_WAIT_ASKED]:
        st[S.SK_WAIT_N] += 1
        if st[S.SK_WAIT_N] > 1:
            raise Fault(F_WAIT_TWICE, loc, st[S.SK_WAIT_LOC], 0, 0)
        st[S.SK_WAIT_LOC] = loc + 1
        st[S.SK_WAIT_ASKED] = 1
    if st[S.SK_WAIT_OPEN]:
        st[S.SK_WAIT_ASKED] = 0
        return done(st)
    return waiting(st, W_PRE_TASK, 0, 0, 0, 0)


@instruction
def destroy_barrier(st, sh, loc):
    """``TPipe.destroy()``'s closing ``PipeBarrier<PIPE_ALL>`` for the race checker; a SuperKernel's
    sub-kernel is compiled without it (CANN removes it under ``__ASCENDC_ENABLE_SUPER_KERNEL__``)."""
    if not st[S.SK_FLAGS] & S.SK_SUB:
        hb.barrier_all(st, sh, loc)


@instruction
def sync_all_arrive(st, aiv_only, loc):
    """A hard sync_all begins: in a SuperKernel's sub-kernel, count it (block 0's count is the
    feed-sync-all config word's syncIdx, which the idle cores follow)."""
    if st[S.SK_FLAGS] & S.SK_SUB:
        st[S.SK_SYNC_IDX] += 1
        st[S.SK_SYNC_TYPE] = 1 if aiv_only else 0


__all__ = ["destroy_barrier", "sync_all_arrive", "set_next_task_start", "set_release", "try_wait_pre_task_end",
           "wait_acquire", "F_SET_TWICE", "F_WAIT_TWICE", "W_PRE_TASK", "SK_BARRIER_OBJ"]
