"""torch CPU tensors as kernel arguments (skipped when torch is not installed)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from npuemu.kernels.add import add  # noqa: E402


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_tensors_are_used_in_place(dtype):
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(10007, dtype=dt, generator=gen)
    y = torch.randn(10007, dtype=dt, generator=gen)
    z = torch.zeros_like(x)
    add(x, y, out=z)
    assert torch.equal(z, x + y)        # one rounding per add, as torch does


def test_non_contiguous_tensors_are_copied_in_and_out():
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(64, 33, generator=gen).t()          # a transposed view: not C-contiguous
    y = torch.randn(33, 64, generator=gen)
    z = torch.zeros(64, 33).t()
    add(x, y, out=z)
    assert torch.equal(z, x + y)
