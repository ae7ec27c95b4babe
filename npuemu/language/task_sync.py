"""Inter-task synchronisation inside a SuperKernel (Ascend C's ``SetNextTaskStart`` / ``WaitPreTaskEnd``).

pyasc has neither; the names follow its snake_case style.  Both take effect
only in a sub-kernel of a SuperKernel with early start on (docs/superkernel.md):
everywhere else they do nothing, as on the products and builds where Ascend
C compiles them to nothing.
"""
from __future__ import annotations

from .builtin import builtin
from .enums import PipeID

__all__ = ["set_next_task_start", "wait_pre_task_end"]


@builtin
def set_next_task_start(aiv_pipe: PipeID = PipeID.PIPE_MTE3, aic_pipe: PipeID = PipeID.PIPE_FIX,
                        force: bool = False) -> None:
    """Let the next sub-kernel of the SuperKernel start (``SetNextTaskStart<AIV_PIPE, AIC_PIPE, FORCE>``).

    Once ``aiv_pipe`` (AIV: MTE2, MTE3, S or V) or ``aic_pipe`` (AIC: MTE1,
    MTE2, MTE3, FIX or M) has drained, the next sub-kernel may start: what
    this core issues after the call overlaps it.  Call it exactly once on
    every core and in every tiling-key branch of a sub-kernel that calls it
    at all, after the last data move; the overlapping instructions must not
    touch the next sub-kernel's data.  ``force`` (Ascend C: enable outside a
    SuperKernel in offline builds) changes nothing here.  A no-op outside a
    SuperKernel, in its last sub-kernel and with ``early-start`` 0 or 2.
    """


@builtin
def wait_pre_task_end(force: bool = False) -> None:
    """Wait until the previous sub-kernel has let this one start (``WaitPreTaskEnd<FORCE>``).

    What this core issues before the call overlaps the previous sub-kernel.
    Call it exactly once on every core and in every tiling-key branch, before
    the first data move.  A no-op outside a SuperKernel, in its first
    sub-kernel and with ``early-start`` 0 or 2.
    """
