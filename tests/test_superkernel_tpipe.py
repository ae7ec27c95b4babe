"""TPipe.destroy() in and out of a SuperKernel (spec §1.9), and TPipe objects in sequence."""
from __future__ import annotations

import numpy as np
import pytest

from npuemu import superkernel as sk
from npuemu.errors import RaceError

from superkernel_kernels import two_pipes_kernel


def _arrays():
    return np.arange(16, dtype=np.int32) + 1, np.zeros(16, np.int32)


def test_two_tpipes_in_sequence_run_and_destroy_keeps_its_barrier_outside_a_superkernel():
    x, y = _arrays()
    two_pipes_kernel[1](x, y, 0, check="full")
    np.testing.assert_array_equal(y, [*range(1, 9), *[7] * 8])


def test_destroy_without_its_barrier_in_a_superkernel_is_a_ub_race():
    x, y = _arrays()
    s = sk.combine([sk.Launch(two_pipes_kernel, 1, (x, y, 0), {"check": "full"}, name="pipes")])
    with pytest.raises(RaceError) as e:
        s.run()
    assert e.value.sub_kernel == "pipes" and e.value.buffer == "UB" and "duplicate" in e.value.loc.line_text
    x, y = _arrays()
    sk.combine([sk.Launch(two_pipes_kernel, 1, (x, y, 1), {"check": "full"}, name="pipes")]).run()
    np.testing.assert_array_equal(y, [*range(1, 9), *[7] * 8])
