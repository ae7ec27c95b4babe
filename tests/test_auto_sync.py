"""Automatic synchronisation (``auto_sync``/``insert_sync``, ``LocalTensorAuto``) and ``verify_sync``.

The bundled kernels written with explicit flags are stripped of every
``set_flag``/``wait_flag``/``pipe_barrier`` line (tests write them into a
package of their own): without auto sync the race checker must report the
first unordered access, with it they must compute the NumPy result and run
clean at check level ``full``.
"""
from __future__ import annotations

import importlib
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
import npuemu.kernels

FULL = {"check": "full"}
SYNC_LINE = re.compile(r"^(\s*)asc\.(set_flag|wait_flag|pipe_barrier)\(.*\)\s*$")


@pytest.fixture(scope="module")
def stripped(tmp_path_factory):
    """The bundled kernels with their explicit synchronisation removed, as package ``syncfree_kernels``."""
    root = tmp_path_factory.mktemp("syncfree")
    pkg = root / "syncfree_kernels"
    pkg.mkdir()
    removed = 0
    for src in Path(npuemu.kernels.__path__[0]).glob("*.py"):
        lines = []
        for line in src.read_text().splitlines():
            m = SYNC_LINE.match(line)
            if m:
                removed += 1
                line = f"{m.group(1)}pass"
            lines.append(line.replace("npuemu.kernels", "syncfree_kernels"))
        (pkg / src.name).write_text("\n".join(lines) + "\n")
    assert removed > 20
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("syncfree_kernels.catalog")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.startswith("syncfree_kernels")]:
            del sys.modules[name]


def _bundled(catalog, name, shape, **launch):
    k = next(k for k in catalog.KERNELS if k.name == name)
    args = k.make_inputs(np.random.default_rng(7), "float32", shape)
    out = k.run(*args, **launch)
    return out, k.reference(*args), k.tol("float32")


@pytest.mark.parametrize("name, shape", [
    ("add_static", (4096,)), ("layernorm", (5, 200)), ("softmax", (33, 200)), ("matmul", (17, 40, 33)),
])
def test_bundled_kernel_without_its_flags_runs_clean_with_auto_sync(stripped, name, shape):
    out, ref, tol = _bundled(stripped, name, shape, auto_sync=True, **FULL)
    ok, worst = stripped.compare(out, ref, tol)
    assert ok, worst


@pytest.mark.parametrize("name, shape", [("add_static", (4096,)), ("matmul", (17, 40, 33))])
def test_bundled_kernel_without_its_flags_is_racy_as_written(stripped, name, shape):
    with pytest.raises(errors.RaceError) as info:
        _bundled(stripped, name, shape, **FULL)
    assert info.value.rule == "race"
    assert "syncfree_kernels" in info.value.loc.filename


# ---------------------------------------------------------------------------- a sync-free kernel with branches

N = 256


@asc.jit
def branchy(x: asc.GlobalAddress, z: asc.GlobalAddress, tiles: int, skip: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, N)
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, N * 4, N)
    for i in range(tiles):
        if i == skip:
            continue
        asc.data_copy(t, xg[i * N:], N)
        if i % 2 == 0:
            asc.adds(u, t, 1.0, N)
        else:
            asc.muls(u, t, 2.0, N)
        asc.data_copy(zg[i * N:], u, N)


def _branchy_reference(x: np.ndarray, skip: int) -> np.ndarray:
    z = np.zeros_like(x)
    for i in range(len(x) // N):
        if i != skip:
            tile = x[i * N:(i + 1) * N]
            z[i * N:(i + 1) * N] = tile + np.float32(1) if i % 2 == 0 else tile * np.float32(2)
    return z


def test_sync_free_kernel_with_branches_and_continue():
    x = np.random.default_rng(1).standard_normal(5 * N).astype(np.float32)
    z = np.zeros_like(x)
    with pytest.raises(errors.RaceError, match=r"RAW: V read .* races with the MTE2 write") as info:
        branchy[1](x, z, 5, 2, **FULL)
    assert "asc.adds(u, t, 1.0, N)" in info.value.loc.line_text
    z = np.zeros_like(x)
    branchy[1](x, z, 5, 2, auto_sync=True, **FULL)
    np.testing.assert_array_equal(z, _branchy_reference(x, 2))
    source = branchy.compile([asc.float32, asc.float32, int, int], auto_sync=True, **FULL).source
    assert "sync__set_flag" in source and "sync__wait_flag" in source


# ---------------------------------------------------------------------------- LocalTensorAuto


@asc.jit
def vadd_auto(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block: asc.ConstExpr[int],
              tile: asc.ConstExpr[int]):
    off = asc.get_block_idx() * block
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + off)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + off)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z + off)
    for i in range(block // tile):
        xl = asc.LocalTensorAuto(x.dtype, tile)
        yl = asc.LocalTensorAuto(y.dtype, (tile // 8, 8))
        zl = asc.LocalTensorAuto(z.dtype, tile)
        asc.data_copy(xl, xg[i * tile:], count=tile)
        asc.data_copy(yl, yg[i * tile:], count=tile)
        asc.add(zl, xl, yl, tile)
        asc.data_copy(zg[i * tile:], zl, count=tile)


def test_local_tensor_auto_kernel_gets_auto_sync_and_runs_clean():
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(4096).astype(np.float32) for _ in range(2))
    z = np.zeros_like(x)
    vadd_auto[4](x, y, z, 1024, 256, **FULL)
    np.testing.assert_array_equal(z, x + y)


@asc.jit
def too_big(x: asc.GlobalAddress):
    a = asc.LocalTensorAuto(asc.float32, 32 * 1024)
    b = asc.LocalTensorAuto(asc.float32, 32 * 1024)
    asc.duplicate(a, 0.0, 8)
    asc.duplicate(b, 0.0, 8)


def test_local_tensor_auto_beyond_ub_is_a_capacity_error_naming_the_line():
    with pytest.raises(errors.CapacityError) as info:
        too_big[1](np.zeros(8, np.float32))
    assert "b = asc.LocalTensorAuto(asc.float32, 32 * 1024)" in info.value.loc.line_text


def test_local_tensor_auto_needs_a_constant_shape():
    @asc.jit
    def runtime_shape(x: asc.GlobalAddress, n: int):
        asc.LocalTensorAuto(asc.float32, n)

    with pytest.raises(errors.KernelTypeError, match="shape must be a compile-time"):
        runtime_shape[1](np.zeros(8, np.float32), 8)


# ---------------------------------------------------------------------------- verify_sync


@asc.jit
def over_synced(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, N)
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, N * 4, N)
    asc.data_copy(t, xg, N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.set_flag(asc.HardEvent.MTE3_V, 0)
    asc.wait_flag(asc.HardEvent.MTE3_V, 0)
    asc.adds(u, t, 1.0, N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, u, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def test_verify_sync_warns_about_redundant_waits_and_barriers_only():
    x = np.arange(N, dtype=np.float32)
    z = np.zeros_like(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        over_synced[1](x, z, verify_sync=True)
    np.testing.assert_array_equal(z, x + 1)
    lines = [str(w.message) for w in caught if issubclass(w.category, errors.RedundantSyncWarning)]
    # MTE3 has done nothing before the first MTE3_V wait; nothing follows the barrier
    assert any("asc.wait_flag(asc.HardEvent.MTE3_V, 0)" in t for t in lines), lines
    assert any("asc.pipe_barrier(asc.PipeID.PIPE_ALL)" in t for t in lines), lines
    assert not any("MTE2_V" in t or "V_MTE3" in t for t in lines), lines
    assert len(lines) == 2
