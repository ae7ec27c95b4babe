"""A launch runs every block or raises: never a silent no-op, whatever the platform's core mix."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npuemu
import npuemu.asc as asc
from npuemu.platform import Platform

K = asc.KernelType
FIELDS = 8            # int64 words per record: one 64-byte DCache line per core
AIV_RECORDS = 64


@asc.jit
def mark(rec: asc.GlobalAddress):
    """Record that this core ran: one word per core, AIC records first."""
    g = asc.GlobalTensor()
    g.set_global_buffer(rec)
    at = asc.get_block_idx()
    if asc.ascend_is_aiv():
        at += AIV_RECORDS
    g.set_value(at * FIELDS, 1)


@asc.jit
def mark_cores(rec: asc.GlobalAddress):
    mark(rec)


@asc.jit
def mark_then_wait(rec: asc.GlobalAddress):
    """Cores that wait for each other (cooperative scheduling, placed by residency)."""
    mark(rec)
    asc.sync_all(is_aiv_only=False)


def _needs(kernel_type: K) -> tuple[int, int]:
    """(AIC, AIV) one block occupies."""
    return {K.AIV_ONLY: (0, 1), K.MIX_AIV_1_0: (0, 1), K.MIX_AIV_HARD_SYNC: (0, 1), K.AIC_ONLY: (1, 0),
            K.MIX_AIC_1_0: (1, 0), K.MIX_AIC_HARD_SYNC: (1, 0), K.MIX_AIC_1_1: (1, 1),
            K.MIX_AIC_1_2: (1, 2)}[kernel_type]


def _ran(rec: np.ndarray, kernel_type: K, n: int) -> bool:
    aic, aiv = _needs(kernel_type)
    got = rec.reshape(-1, FIELDS)[:, 0]
    return all(got[:n] == (aic > 0)) and all(got[AIV_RECORDS:AIV_RECORDS + aiv * n] == 1)


_platforms: dict[tuple[int, int], Platform] = {}


def _platform(aic: int, aiv_per_aic: int) -> Platform:
    key = (aic, aiv_per_aic)
    if key not in _platforms:
        _platforms[key] = Platform.custom(f"test-placement-{aic}-{aiv_per_aic}", aic_count=aic,
                                          aiv_count=aic * aiv_per_aic)
    return _platforms[key]


@settings(max_examples=60, deadline=None)
@given(aic=st.integers(1, 64), aiv_per_aic=st.integers(0, 2), kernel_type=st.sampled_from(list(K)),
       n=st.integers(1, 20), blocking=st.booleans())
def test_a_launch_runs_every_block_or_raises(aic, aiv_per_aic, kernel_type, n, blocking):
    if blocking and kernel_type not in (K.MIX_AIC_1_1, K.MIX_AIC_1_2):
        blocking = False                      # sync_all(is_aiv_only=False) needs a mixed kernel
    platform = _platform(aic, aiv_per_aic)
    need_aic, need_aiv = _needs(kernel_type)
    if need_aic and need_aiv:        # a whole AI Core: its AIC and enough AIVs of its own
        capacity = aic if aiv_per_aic >= need_aiv else 0
    else:
        capacity = platform.aic_count if need_aic else platform.aiv_count
    fits = capacity >= 1
    rec = np.zeros(2 * AIV_RECORDS * FIELDS, np.int64)
    kernel = mark_then_wait if blocking else mark_cores
    if not fits:
        with pytest.raises(npuemu.LaunchError, match=rf"a {kernel_type.name} launch of {n} block\(s\) cannot run on "
                                                     rf"{platform.name} \({aic} AIC and {aic * aiv_per_aic} AIV"):
            kernel[n](rec, kernel_type=kernel_type, platform=platform, debug=True)
        return
    if blocking and n > capacity:
        # more blocks than AI Cores, all waiting for each other: a hang on hardware, a report here
        with pytest.raises(npuemu.DeadlockError, match="have not started"):
            kernel[n](rec, kernel_type=kernel_type, platform=platform, debug=True)
        return
    kernel[n](rec, kernel_type=kernel_type, platform=platform, debug=True)
    assert _ran(rec, kernel_type, n)


def test_linear_on_a_platform_with_one_aiv_per_ai_core_is_refused():
    """The case that returned silently: a MIX_AIC_1_2 launch where no AI Core has two AIVs."""
    platform = _platform(8, 1)
    rec = np.zeros(2 * AIV_RECORDS * FIELDS, np.int64)
    with pytest.raises(npuemu.LaunchError, match=r"each block needs an AI Core with two AIV cores"):
        mark_then_wait[2](rec, kernel_type=K.MIX_AIC_1_2, platform=platform)
    assert not rec.any()


def test_block_dim_above_the_hardware_limit_is_refused():
    with pytest.raises(npuemu.LaunchError, match=r"block_dim 65536 is above the hardware's limit of 65535"):
        mark_cores[65536](np.zeros(2 * AIV_RECORDS * FIELDS, np.int64))
