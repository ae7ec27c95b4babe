"""The cube's float result is one result (docs/cube.md, precision model), bit for bit.

``matmul`` and ``linear`` (kernels/) run at shapes where threaded BLAS
engages, at every check level and in debug mode in this process, and in
child processes with 1, 2 and 4 BLAS threads (``OPENBLAS_NUM_THREADS``) and
with the CPU affinity of 1 and 2 cores, each at the default level and in
debug mode.  Every output must have the same bits
as every other and as a NumPy reference of the documented order: for each
mmad's K slice, in ``K_BLOCK``-row blocks, ``C = C + (float32 product of the
block)``, the first block's product being C.  The reference takes each
block's product from NumPy's float32 ``@`` at one BLAS thread on operands
padded to whole 16 x 16 fractals, as the cube multiplies them; where NumPy's
BLAS is OpenBLAS's SkylakeX kernel, that product is also checked against a
reference without BLAS (a float32 fused multiply-add chain in K order).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from npuemu.isa.mmad import K_BLOCK
from npuemu.kernels.linear import linear
from npuemu.kernels.matmul import matmul
from npuemu.testing.bundled import capture_tilings

# M, K, N: a square-ish case (tiles of 96 x 128 over K = 1024) and a deep one (K = 4096)
SHAPES = {"512x1024x512": (512, 1024, 512), "128x4096x64": (128, 4096, 64)}
MODES = {"off": {"check": "off"}, "default": {"check": "default"}, "full": {"check": "full"},
         "debug": {"debug": True}}
# child processes vary BLAS threads and CPUs, which only the product path sees: one check level (the
# parent compares every level) and debug mode, whose cores run one at a time on one thread
CHILD_MODES = ("default", "debug")
ALPHA = 0.01
FMA_CHAIN_KERNELS = ("SkylakeX",)      # OpenBLAS sgemm kernels measured to compute the fused multiply-add chain


def operands(m: int, k: int, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    return {"a": rng.standard_normal((m, k)).astype(np.float32),
            "b": (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32),
            "bias": rng.standard_normal(n).astype(np.float32)}


def run_all(x: dict[str, np.ndarray], modes: dict[str, dict]) -> dict[str, np.ndarray]:
    """Every kernel in every mode: ``{"<kernel>/<mode>": output}``."""
    out = {}
    for name, launch in modes.items():
        out[f"matmul/{name}"] = matmul(x["a"], x["b"], **launch)
        out[f"linear_leaky/{name}"] = linear(x["a"], x["b"], x["bias"], "leaky_relu", ALPHA, **launch)
        out[f"linear_gelu/{name}"] = linear(x["a"], x["b"], x["bias"], "gelu", **launch)
    return out


def k_slices(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """The K rows of each mmad of a matmul tile, in issue order (kernels/_cube.py ``matmul_block``)."""
    with capture_tilings() as got:
        matmul(a, b)
    t = got[0].result.tiling_data
    chunk = t.baseK * t.stepKa
    out = []
    for kc in range(0, t.Ka, chunk):
        kl = min(chunk, t.Ka - kc)
        out += [(kc + s, kc + min(s + t.baseK, kl)) for s in range(0, kl, t.baseK)]
    return out


def padded(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    p = np.zeros((rows, cols), np.float32)
    p[:x.shape[0], :x.shape[1]] = x
    return p


def cube_reference(a: np.ndarray, b: np.ndarray, slices: list[tuple[int, int]], product=None) -> np.ndarray:
    """``a @ b`` accumulated as the cube does: per mmad slice, per K_BLOCK rows, C = C + product."""
    m, n = a.shape[0], b.shape[1]
    ap, bp = padded(a, -(-m // 16) * 16, a.shape[1]), padded(b, b.shape[0], -(-n // 16) * 16)
    product = product or (lambda x, y: x @ y)
    c = None
    with threadpool_limits(1, user_api="blas"):
        for s0, s1 in slices:
            for r in range(s0, s1, K_BLOCK):
                e = min(s1, r + K_BLOCK)
                q = product(np.ascontiguousarray(ap[:, r:e]), np.ascontiguousarray(bp[r:e]))
                c = q if c is None else c + q
    return c[:m, :n]


def leaky(pre: np.ndarray) -> np.ndarray:
    return np.where(pre >= 0, pre, pre * np.float32(ALPHA))


def fma_chain(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """float32 ``x @ y`` as one fused multiply-add per K row from 0, each rounded to float32 exactly once."""
    acc = np.zeros((x.shape[0], y.shape[1]), np.float32)
    for k in range(x.shape[1]):
        p = x[:, k:k + 1].astype(np.float64) * y[k:k + 1, :].astype(np.float64)     # exact
        c = acc.astype(np.float64)
        s = p + c
        t = s - c
        err = (p - t) + (c - (s - t))                   # p + c == s + err exactly
        # round to odd before rounding to float32, so the two roundings make one
        inexact_even = (err != 0) & ((s.view(np.int64) & 1) == 0)
        s = np.where(inexact_even, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        acc = s.astype(np.float32)
    return acc


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint32)


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    diff = int((bits(got) != bits(want)).sum())
    assert diff == 0, f"{what}: {diff} of {want.size} elements differ in their bits"


def make_case(name: str, folder: Path) -> dict:
    """Inputs (saved for the child processes), the reference and this process's outputs in every mode."""
    m, k, n = SHAPES[name]
    x = operands(m, k, n)
    path = folder / f"{name}.npz"
    np.savez(path, **x)
    slices = k_slices(x["a"], x["b"])
    c = cube_reference(x["a"], x["b"], slices)
    want = {"matmul": c, "linear_leaky": leaky(c + x["bias"])}
    return {"name": name, "inputs": x, "path": path, "slices": slices, "want": want, "here": run_all(x, MODES)}


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("cube-bits")
    return {name: make_case(name, folder) for name in SHAPES}


@pytest.fixture(params=list(SHAPES))
def case(request, cases) -> dict:
    return cases[request.param]


def check_outputs(outputs: dict[str, np.ndarray], case: dict, where: str) -> None:
    gelu = case["here"]["linear_gelu/default"]
    for key, got in outputs.items():
        kernel = key.split("/")[0]
        want = gelu if kernel == "linear_gelu" else case["want"][kernel]
        assert_same_bits(got, want, f"{case['name']} {key} ({where})")


def test_every_mode_in_this_process_gives_the_reference(case):
    check_outputs(case["here"], case, "this process")


CHILD = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import test_cube_bits as t
    out = {}
    for name, path in json.loads(sys.argv[2]).items():
        x = dict(np.load(path))
        modes = {m: t.MODES[m] for m in t.CHILD_MODES}
        out.update({f"{name}.{k.replace('/', '.')}": v for k, v in t.run_all(x, modes).items()})
    from threadpoolctl import threadpool_info
    blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    np.savez(sys.argv[3], **out)
    print(json.dumps({"blas_threads": blas}))
''')

ENVIRONMENTS = {"1 BLAS thread": ({"OPENBLAS_NUM_THREADS": "1"}, None),
                "2 BLAS threads": ({"OPENBLAS_NUM_THREADS": "2"}, None),
                "4 BLAS threads": ({"OPENBLAS_NUM_THREADS": "4"}, None),
                "1 CPU": ({}, 1),
                "2 CPUs": ({}, 2)}


def run_child(cases: dict[str, dict], tmp_path: Path, env_extra: dict[str, str],
              cpus: int | None) -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    """Every case in every mode in a new process: ``({case: {"<kernel>/<mode>": output}}, facts)``."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    out = tmp_path / "out.npz"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                            "MKL_NUM_THREADS", "NPUEMU_THREADS")}
    env.update(env_extra)
    allowed = sorted(os.sched_getaffinity(0))
    if cpus is not None and len(allowed) < cpus:
        pytest.skip(f"needs {cpus} CPUs, this process may use {len(allowed)}")
    pin = (lambda: os.sched_setaffinity(0, allowed[:cpus])) if cpus is not None else None
    inputs = json.dumps({name: str(c["path"]) for name, c in cases.items()})
    run = subprocess.run([sys.executable, str(script), str(Path(__file__).parent), inputs, str(out)],
                         env=env, preexec_fn=pin, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-4000:]
    info = json.loads(run.stdout.strip().splitlines()[-1])
    got: dict[str, dict[str, np.ndarray]] = {name: {} for name in cases}
    with np.load(out) as saved:
        for key in saved.files:
            name, kernel, mode = key.split(".")
            got[name][f"{kernel}/{mode}"] = saved[key]
    return got, info


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="sets the CPU affinity of child processes")
@pytest.mark.parametrize("environment", list(ENVIRONMENTS))
def test_bits_do_not_depend_on_blas_threads_or_cpus(cases, environment, tmp_path):
    env_extra, cpus = ENVIRONMENTS[environment]
    outputs, info = run_child(cases, tmp_path, env_extra, cpus)
    threads = int(env_extra.get("OPENBLAS_NUM_THREADS", 0))
    if 0 < threads <= len(os.sched_getaffinity(0)):      # OpenBLAS takes at most one thread per CPU
        assert info["blas_threads"] and set(info["blas_threads"]) == {threads}
    for name, case in cases.items():
        assert set(outputs[name]) == {k for k in case["here"] if k.split("/")[1] in CHILD_MODES}
        check_outputs(outputs[name], case, environment)


def test_a_launch_from_another_thread_gives_the_reference(case):
    """Launches from other threads cannot set BLAS's thread count (runtime/blas_threads.py): the bits
    must not depend on it anyway."""
    x, got = case["inputs"], {}

    def launch() -> None:
        got.update(run_all(x, {"default": {}, "debug": {"debug": True}}))

    with threadpool_limits(2, user_api="blas"):
        t = threading.Thread(target=launch)
        t.start()
        t.join(timeout=1800)
    assert set(got) == {f"{k}/{m}" for k in ("matmul", "linear_leaky", "linear_gelu") for m in ("default", "debug")}
    check_outputs(got, case, "launched from another thread")


def test_each_blocks_product_is_a_fused_multiply_add_chain(case):
    """The documented order without BLAS: where OpenBLAS's kernel is one whose float32 product is a
    chain of fused multiply-adds in K order, the emulator's C is that chain per K block, bit for bit
    (on a sample of rows and columns: the elements are independent)."""
    blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
    if not blas or blas[0].get("internal_api") != "openblas" or blas[0].get("architecture") not in FMA_CHAIN_KERNELS:
        pytest.skip(f"the fused multiply-add chain is measured for OpenBLAS's {', '.join(FMA_CHAIN_KERNELS)} "
                    f"sgemm kernel; NumPy's BLAS here: {[(i.get('internal_api'), i.get('architecture')) for i in blas]}")
    x = case["inputs"]
    rows = np.arange(3, x["a"].shape[0], 37)
    cols = np.arange(5, x["b"].shape[1], 11)
    want = cube_reference(x["a"][rows], x["b"][:, cols], case["slices"], product=fma_chain)
    assert_same_bits(case["here"]["matmul/default"][np.ix_(rows, cols)], want, f"{case['name']} matmul sample")
    assert_same_bits(case["want"]["matmul"][np.ix_(rows, cols)], want, f"{case['name']} NumPy reference sample")
