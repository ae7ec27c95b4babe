"""Synchronisation between cores: cross-core flags, ``sync_all``, ``ib_set``/``ib_wait`` and block order.

Signatures follow pyasc (``asc.language.basic.block_sync`` and
``determine_compute_sync``); ``init_determine_compute_workspace`` is Ascend
C's ``InitDetermineComputeWorkspace`` in the same style.  Cores really block
on each other: a core that waits yields to npuemu's scheduler, and a launch in
which every live core waits fails with a :class:`~npuemu.errors.DeadlockError`
that lists each core, what it waits for and where.  Semantics and the checks
made are described in ``docs/cross-core.md`` and ``npuemu/isa/cross_core.py``.
"""
from __future__ import annotations

from typing import Optional

from .builtin import builtin
from .core import GlobalTensor, LocalTensor
from .enums import PipeID

__all__ = ["cross_core_set_flag", "cross_core_wait_flag", "sync_all", "ib_set", "ib_wait",
           "init_determine_compute_workspace", "notify_next_block", "wait_pre_block"]


@builtin
def cross_core_set_flag(flag_id: int, mode_id: int, pipe: PipeID) -> None:
    """Report flag ``flag_id`` (0..15) to the task scheduler once ``pipe`` is done (``CrossCoreSetFlag``).

    ``mode_id`` (a constant): 0 raises the flag's counter on every core of
    this core's type once all of them have set it; 1 on both AIVs of the AI
    Core once both have set it; 2 between the AIC and the AIVs of an AI Core
    (one AIC set raises each AIV's counter; the AIC's counter rises once all
    its AIVs have set).  Mode 0 needs a MIX kernel type, modes 1 and 2
    MIX_AIC_1_1 or MIX_AIC_1_2.  ``pipe`` is V, M, MTE1, MTE2, MTE3 or FIX and
    must exist on the core.  A counter holds at most 15 sets.
    """


@builtin
def cross_core_wait_flag(flag_id: int, mode_id: int = 0, pipe: PipeID = PipeID.PIPE_S) -> None:
    """Stall until this core's counter ``flag_id`` is non-zero, then decrement it (``CrossCoreWaitFlag``).

    On Atlas A2/A3 the mode and pipe have no effect: the wait stalls every pipe.
    """


@builtin
def sync_all(gm_workspace: Optional[GlobalTensor] = None, ub_workspace: Optional[LocalTensor] = None,
             used_cores: int = 0, is_aiv_only: bool = True) -> None:
    """Barrier across cores (``SyncAll``).

    Without workspaces it is the hardware barrier: with ``is_aiv_only`` all
    cores of the caller's type (pure vector kernels: kernel type MIX_AIV_1_0),
    otherwise every AIC and AIV of a MIX_AIC_1_1/MIX_AIC_1_2 kernel.  It uses
    cross-core flags 11-14.

    With ``gm_workspace`` (int32, >= 32 bytes per core, zeroed before the
    launch) and ``ub_workspace`` (int32 in UB, as large) it is the software
    barrier of the AIVs; ``used_cores`` (0: all) limits it to the AIVs with a
    block index below it.  AICs return at once.
    """


@builtin
def ib_set(gm_workspace: GlobalTensor, ub_workspace: LocalTensor, block_idx: int, event_id: int,
           is_aiv_only: bool = True) -> None:
    """Signal (``block_idx``, ``event_id``) to an ``ib_wait`` on another AIV through GM (``IBSet``).

    Waits until the slot is 0, then writes 1.  The workspace (zeroed) needs
    ``cores * 32 * event_id + block_idx * 32 + 32`` bytes, ``cores`` being
    ``get_block_num()`` (``2 * get_block_num()`` when not ``is_aiv_only``).
    """


@builtin
def ib_wait(gm_workspace: GlobalTensor, ub_workspace: LocalTensor, block_idx: int, event_id: int,
            is_aiv_only: bool = True) -> None:
    """Wait for the ``ib_set`` with the same arguments (``IBWait``): until the slot is 1, then write 0."""


@builtin
def init_determine_compute_workspace(gm_workspace: GlobalTensor, ub_workspace: LocalTensor) -> None:
    """Prepare ``wait_pre_block``/``notify_next_block`` (``InitDetermineComputeWorkspace``).

    Block 0 zeroes the GM workspace (``get_block_num() * 32`` bytes); every
    AIV sets its round counter, kept in the UB workspace (``get_block_num() *
    32 + 32`` bytes) after the slots, to 1.
    """


@builtin
def wait_pre_block(gm_workspace: GlobalTensor, ub_workspace: LocalTensor) -> None:
    """Wait until every lower-numbered AIV has called ``notify_next_block`` in this round (``WaitPreBlock``)."""


@builtin
def notify_next_block(gm_workspace: GlobalTensor, ub_workspace: LocalTensor) -> None:
    """Let the next AIV pass ``wait_pre_block``; the last block clears the workspace (``NotifyNextBlock``)."""
