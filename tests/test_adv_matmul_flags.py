"""The Matmul API of a MIX kernel takes cross-core flags 0 .. 2N-1 for its N objects (spec §1.7): a kernel's own
set or wait on one of them is refused at compile time, naming the call."""
from __future__ import annotations

import pytest

from npuemu import asc
from npuemu.errors import KernelTypeError

SIGNATURE = dict(a=asc.float16, b=asc.float16, c=asc.float32, t=asc.adv.TCubeTiling, ws=asc.uint8)


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def flagged(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, t: asc.adv.TCubeTiling,
            ws: asc.GlobalAddress, flag: asc.ConstExpr[int], before: asc.ConstExpr[bool]):
    """A Matmul object and a mode-1 flag between the two AIVs of a core, used before or after
    register_matmul."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    if before:
        asc.cross_core_set_flag(flag, 1, asc.PipeID.PIPE_MTE3)
        asc.cross_core_wait_flag(flag, 1)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
    asc.adv.register_matmul(pipe, ws, mm, t)
    mm.set_tensor_a(ag)
    mm.set_tensor_b(bg)
    mm.iterate_all(cg)
    if not before:
        asc.cross_core_set_flag(flag, 1, asc.PipeID.PIPE_MTE3)
        asc.cross_core_wait_flag(flag, 1)


@pytest.mark.parametrize("before", [True, False])
def test_a_flag_the_matmul_api_uses_is_refused_naming_the_call(before):
    with pytest.raises(KernelTypeError, match="flag 1 collides with the Matmul API") as e:
        flagged.compile(**SIGNATURE, flag=1, before=before, debug=True)
    assert "cross_core_set_flag(flag, 1" in e.value.loc.line_text
    assert "flags 0-1 for this kernel's 1 Matmul object" in str(e.value)


def test_a_flag_above_the_matmul_apis_is_accepted():
    binary = flagged.compile(**SIGNATURE, flag=2, before=False, debug=True)
    assert binary.facts.cross_core
