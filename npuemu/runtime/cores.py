"""Which cores a launch runs, and the state each core starts with."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..errors import LaunchError
from ..isa import state as S
from ..language.enums import Hardware, KernelType
from ..platform import Platform
from .pool import POOL
from .sgemm import sgemm_address

AIV, AIC = 0, 1

# memories each core type owns, in the order they are laid out in its lm array
CORE_MEMORIES = {
    AIV: (Hardware.UB,),
    AIC: (Hardware.L1, Hardware.L0A, Hardware.L0B, Hardware.L0C, Hardware.BIAS),
}

UNINITIALISED_BYTE = 0xFF   # fresh on-chip memory reads as NaN (floats) / -1 (ints)


@dataclass(frozen=True)
class CoreSpec:
    """One emulated core of a launch."""

    core_type: int        # AIV or AIC
    block_idx: int        # what get_block_idx() returns on it
    block_num: int        # what get_block_num() returns on it
    sub_block_idx: int = 0
    sub_block_num: int = 1

    @property
    def label(self) -> str:
        name = "AIV" if self.core_type == AIV else "AIC"
        return f"{name} {self.block_idx}"


def core_ranges(cores: list[CoreSpec] | tuple[CoreSpec, ...], slots: Iterable[int]) -> str:
    """``AIV 0-6, AIC 2``: the labels of launch slots ``slots``, runs of consecutive blocks of a type collapsed."""
    parts: list[str] = []
    run: list[CoreSpec] = []
    for spec in (cores[s] for s in sorted(slots)):
        if run and spec.core_type == run[-1].core_type and spec.block_idx == run[-1].block_idx + 1:
            run.append(spec)
            continue
        if run:
            parts.append(_run_label(run))
        run = [spec]
    if run:
        parts.append(_run_label(run))
    return ", ".join(parts)


def _run_label(run: list[CoreSpec]) -> str:
    return run[0].label if len(run) == 1 else f"{run[0].label}-{run[-1].block_idx}"


def core_plan(kernel_type: KernelType, block_dim: int) -> list[CoreSpec]:
    """The cores a launch of ``block_dim`` blocks runs, per kernel type (ascend-c.md §2.7)."""
    n = block_dim
    if kernel_type in (KernelType.AIV_ONLY, KernelType.MIX_AIV_1_0, KernelType.MIX_AIV_HARD_SYNC):
        return [CoreSpec(AIV, i, n) for i in range(n)]
    if kernel_type in (KernelType.AIC_ONLY, KernelType.MIX_AIC_1_0, KernelType.MIX_AIC_HARD_SYNC):
        return [CoreSpec(AIC, i, n) for i in range(n)]
    if kernel_type == KernelType.MIX_AIC_1_1:
        return [CoreSpec(AIC, i, n) for i in range(n)] + [CoreSpec(AIV, i, n) for i in range(n)]
    if kernel_type == KernelType.MIX_AIC_1_2:
        return [CoreSpec(AIC, i, n) for i in range(n)] + \
               [CoreSpec(AIV, i, n, sub_block_idx=i % 2, sub_block_num=2) for i in range(2 * n)]
    raise ValueError(f"unsupported kernel type {kernel_type!r}")


@dataclass(frozen=True)
class Residency:
    """How a launch's blocks occupy physical cores.

    A launch of more blocks than the platform has cores runs in waves: a
    block starts when a physical core (an AI Core, for the mix types) frees
    up.  ``units`` lists the launch slots of each block in start order (a mix
    block is its AIC with its AIVs); at most ``capacity`` blocks are resident.
    """

    units: tuple[tuple[int, ...], ...]
    capacity: int
    unit_name: str        # what one block occupies: "AIV core", "AIC core" or "AI Core"


def residency(kernel_type: KernelType, block_dim: int, platform: Platform) -> Residency:
    """The blocks of a launch of ``block_dim`` blocks and how many of them fit on ``platform`` at once.

    An AI Core is one AIC with its AIVs (``aiv_count // aic_count`` of them): a
    mix block needs a whole AI Core with enough AIVs, so a part with one AIV
    per AI Core hosts no MIX_AIC_1_2 block at all, however many AIVs it has.
    """
    n = block_dim
    per_core = platform.aiv_count // platform.aic_count if platform.aic_count else 0
    if kernel_type == KernelType.MIX_AIC_1_1:
        return Residency(tuple((i, n + i) for i in range(n)), platform.aic_count if per_core >= 1 else 0,
                         "AI Core")
    if kernel_type == KernelType.MIX_AIC_1_2:
        return Residency(tuple((i, n + 2 * i, n + 2 * i + 1) for i in range(n)),
                         platform.aic_count if per_core >= 2 else 0, "AI Core")
    on_aic = core_plan(kernel_type, 1)[0].core_type == AIC
    return Residency(tuple((i,) for i in range(n)), platform.aic_count if on_aic else platform.aiv_count,
                     "AIC core" if on_aic else "AIV core")


MAX_BLOCK_DIM = 65535      # blocks one launch may have (CANN's launch limit; UNCONFIRMED, see docs/checks.md)


def check_placement(kernel: str, kernel_type: KernelType, block_dim: int, platform: Platform) -> None:
    """Refuse a launch that could not run every block on ``platform``: never a silent no-op.

    A block needs a physical core of its kind (an AI Core with its AIV(s) for
    the mix types); with none, not one block would start and the launch would
    return having done nothing.
    """
    mix = f"{platform.aic_count} AIC and {platform.aiv_count} AIV cores"
    if block_dim > MAX_BLOCK_DIM:
        raise LaunchError(f"kernel '{kernel}': block_dim {block_dim} is above the hardware's limit of "
                          f"{MAX_BLOCK_DIM} blocks per launch")
    plan = residency(kernel_type, 1, platform)
    if plan.capacity < 1:
        need = {KernelType.MIX_AIC_1_2: "an AI Core with two AIV cores",
                KernelType.MIX_AIC_1_1: "an AI Core with an AIV core"}.get(kernel_type, f"an {plan.unit_name}")
        raise LaunchError(f"kernel '{kernel}': a {kernel_type.name} launch of {block_dim} block(s) cannot run on "
                          f"{platform.name} ({mix}): each block needs {need}")


def type_layout(kernel_type: KernelType, cores: list[CoreSpec]) -> tuple[int, int, int, int, int]:
    """``(first AIC slot, AICs, first AIV slot, AIVs, AIVs per AI Core)`` of a launch's core list."""
    aic = [i for i, c in enumerate(cores) if c.core_type == AIC]
    aiv = [i for i, c in enumerate(cores) if c.core_type == AIV]
    ratio = 2 if kernel_type == KernelType.MIX_AIC_1_2 else 1
    return (aic[0] if aic else 0, len(aic), aiv[0] if aiv else 0, len(aiv), ratio)


def cube_scratch_bytes(platform: Platform) -> int:
    """Bytes of cube scratch an AIC that runs ``mmad`` gets past its memories (isa/mmad.py).

    The A^T and B panels, 16 L0A/L0B fills each (a float mmad uses its own
    operands' worth; an int8 accumulation collects a tile's whole K, usually,
    for one product); then a product buffer of L0C's size, which holds a
    float C; last the sparse index table of L0B's fractals (isa/sparse.py).
    """
    return 32 * max(platform.l0a_size, platform.l0b_size) + platform.l0c_size + S.SPARSE_TABLE_BYTES


def new_core_state(spec: CoreSpec, platform: Platform, scratch: int = 0,
                   memory: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``st`` and ``lm`` arrays a core starts with; an AIC gets ``scratch`` bytes of cube scratch.

    With ``memory=False`` there is no ``lm`` yet: :func:`local_memory_of` takes it when the core starts.
    """
    st = np.zeros(S.STATE_SIZE, np.int64)
    st[S.BLOCK_IDX] = spec.block_idx
    st[S.BLOCK_NUM] = spec.block_num
    st[S.CORE_TYPE] = spec.core_type
    st[S.SUB_BLOCK_IDX] = spec.sub_block_idx
    st[S.SUB_BLOCK_NUM] = spec.sub_block_num
    # the kernel prologue leaves the mask register in normal mode with every lane enabled
    st[S.MASK_LO] = -1
    st[S.MASK_HI] = -1
    base = 0
    for hw in CORE_MEMORIES[spec.core_type]:
        size = platform.memory_size(hw)
        st[S.SEG_BASE + hw] = base
        st[S.SEG_SIZE + hw] = size
        base += size
    scratch = scratch if spec.core_type == AIC else 0
    st[S.SCRATCH_BASE] = base
    st[S.SCRATCH_SIZE] = scratch
    st[S.SGEMM], st[S.SGEMM_WIDE] = sgemm_address() if spec.core_type == AIC else (0, False)
    return st, (_local_memory(base, scratch) if memory else None)


def new_core_states(cores: list[CoreSpec], platform: Platform, scratch: int = 0,
                    memory: bool = True) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """:func:`new_core_state` for every core of a launch: each core's state words are a copy of one
    state made per core type (a 48-core launch spent half its fixed cost making them one by one), in
    recycled arrays."""
    templates = {t: new_core_state(CoreSpec(t, 0, 1), platform, scratch, memory=False)[0]
                 for t in {c.core_type for c in cores}}
    out = []
    for spec in cores:
        # recycled (recycle_core_states): a launch allocating and freeing 48 x 35 KB of state made the
        # allocator hand pages back and fault them in again every launch
        st = POOL.take(("st", S.STATE_SIZE))
        if st is None:
            st = np.empty(S.STATE_SIZE, np.int64)
        np.copyto(st, templates[spec.core_type])
        st[S.BLOCK_IDX] = spec.block_idx
        st[S.BLOCK_NUM] = spec.block_num
        st[S.SUB_BLOCK_IDX] = spec.sub_block_idx
        st[S.SUB_BLOCK_NUM] = spec.sub_block_num
        lm = _local_memory(int(st[S.SCRATCH_BASE]), int(st[S.SCRATCH_SIZE])) if memory else None
        out.append((st, lm))
    return out


def recycle_core_states(states: list[np.ndarray]) -> None:
    """Give the state words of a launch whose cores have stopped, and that nothing reads any more, back
    for later launches (:func:`new_core_states` takes them)."""
    for st in states:
        POOL.give(("st", st.size), st)


def local_memory_of(st: np.ndarray) -> np.ndarray:
    """The local memories of a core that starts now (filled), for a core made with ``memory=False``.

    Cores that never wait for each other take their memories when they start
    and give them back when they end, so a launch holds memories for the
    cores running at once, not for every block: a launch of 65535 blocks of
    a vector kernel needs the state words of each block and the UB of a
    thread's worth of cores.
    """
    return _local_memory(int(st[S.SCRATCH_BASE]), int(st[S.SCRATCH_SIZE]))


def _local_memory(nbytes: int, scratch: int) -> np.ndarray:
    """``nbytes`` of on-chip memory (every byte ``UNINITIALISED_BYTE``), then ``scratch`` bytes of
    emulator scratch (contents undefined: its pages are only touched when used).

    A recycled array was given back with the number of leading bytes its
    core may have written (:func:`recycle_local_memory`); the bytes past them
    still hold the fill, so only those are filled again: a small kernel's
    core refills the few KiB it used, not the whole UB.
    """
    total = nbytes + scratch
    got = POOL.take_with_note(("lm", total))
    if got is None:
        lm, stale = np.empty(total, np.uint8), nbytes
    else:
        lm, stale = got[0], min(nbytes, got[1])
    lm[:stale].fill(UNINITIALISED_BYTE)
    if scratch:
        lm[total - S.SPARSE_TABLE_BYTES:].fill(0)     # the sparse index table starts cleared
    return lm


def written_bytes(st: np.ndarray, check: str) -> int:
    """The leading bytes of a core's ``lm`` its kernel may have written: what TPipe and static tensors
    handed out, all of it at check level ``off`` (nothing stops a write outside its tensor there)."""
    if check == "off":
        return int(st[S.SCRATCH_BASE])
    return int(st[S.LM_DIRTY])


def recycle_local_memory(lm: np.ndarray | None, written: int) -> None:
    """Give a core's local memories back for later launches once the core has stopped (they are
    recycled: refilled, never allocated afresh; see :mod:`.pool`); ``written``: :func:`written_bytes`."""
    if lm is not None:
        POOL.give(("lm", lm.size), lm, written)
