"""The bundled kernels as data: how to build inputs, run, and check each one.

The demo, the test suite and the benchmarks all iterate over :data:`KERNELS`,
so a kernel added here is demonstrated, tested in every dtype it supports and
benchmarked without further wiring.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from npuemu.kernels import (add, add_static, axpy, cast, gelu, layernorm, leaky_relu, linear, matmul, matmul_int8,
                            matmul_queue, mul, reduce_sum, relu, rmsnorm, softmax)
from npuemu.errors import UsageError
from npuemu.kernels._host import to_dtype

Inputs = Callable[[np.random.Generator, str, tuple[int, ...]], tuple[Any, ...]]


@dataclass(frozen=True)
class Tolerance:
    """``exact``: bit-for-bit equal; otherwise ``|out - ref| <= atol + rtol * |ref|``."""

    exact: bool = False
    rtol: float = 0.0
    atol: float = 0.0


EXACT = Tolerance(exact=True)


@dataclass(frozen=True)
class BundledKernel:
    name: str
    dtypes: tuple[str, ...]
    make_inputs: Inputs
    run: Callable[..., np.ndarray]
    reference: Callable[..., np.ndarray]
    demo_shape: tuple[int, ...]
    test_shapes: tuple[tuple[int, ...], ...]
    tolerance: dict[str, Tolerance] = field(default_factory=dict)
    description: str = ""

    def tol(self, dtype: str) -> Tolerance:
        return self.tolerance.get(dtype, EXACT)


def _normal(n: int) -> Callable[[np.random.Generator, str, tuple[int, ...]], tuple[Any, ...]]:
    def make(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> tuple[Any, ...]:
        return tuple(to_dtype(rng.standard_normal(shape), dtype) for _ in range(n))
    return make


def _norm_inputs(beta: bool) -> Inputs:
    def make(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> tuple[Any, ...]:
        x = to_dtype(rng.standard_normal(shape) * 3 + 1, dtype)
        g = to_dtype(rng.uniform(0.5, 1.5, shape[1]), dtype)
        if not beta:
            return x, g
        return x, g, to_dtype(rng.standard_normal(shape[1]), dtype)
    return make


_CAST_TARGET = {"float32": "float16", "float16": "float32", "bfloat16": "float32"}


def _cast_run(x: np.ndarray, **launch: Any) -> np.ndarray:
    target = _CAST_TARGET[_kernel_name(x)]
    # widening is exact (the instruction only accepts CAST_NONE); narrowing rounds to nearest even
    mode = cast.asc.RoundMode.CAST_NONE if target == "float32" else cast.asc.RoundMode.CAST_RINT
    return cast.cast(x, _np_dtype(target), mode, **launch)


def _cast_ref(x: np.ndarray) -> np.ndarray:
    return cast.reference(x, _np_dtype(_CAST_TARGET[_kernel_name(x)]))


def _kernel_name(x: np.ndarray) -> str:
    from npuemu.kernels._host import kernel_dtype
    return kernel_dtype(x).name


def _np_dtype(name: str) -> Any:
    return to_dtype(np.zeros(1), name).dtype


def matmul_dims(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(M, K, N) of a matmul entry's shape.

    Three dimensions are taken as they are.  The shapes the generic property
    tests draw (one or two dimensions, up to 2**20 elements) are folded into
    M <= 130, K <= 129, N <= 97, keeping ones and odd sizes, so a matmul is
    launched at every drawn shape without growing cubically.
    """
    if len(shape) == 3:
        return shape[0], shape[1], shape[2]
    first, last = shape[0], shape[-1]
    size = int(np.prod(shape))
    return 1 + (first - 1) % 130, 1 + (7 * last - 1) % 129, 1 + (13 * size - 1) % 97


def _matmul_inputs(bias: bool = False) -> Inputs:
    def make(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> tuple[Any, ...]:
        m, k, n = matmul_dims(shape)
        if dtype == "int8":
            return rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (k, n), dtype=np.int8)
        x = to_dtype(rng.standard_normal((m, k)), dtype)
        w = to_dtype(rng.standard_normal((k, n)) / np.sqrt(k), dtype)
        return (x, w, to_dtype(rng.standard_normal(n), dtype)) if bias else (x, w)
    return make


_ELEMENTWISE_SHAPES = ((1,), (7,), (4096,), (12345,), (3, 1000))
_MATMUL_SHAPES = ((1, 7, 15), (17, 40, 33), (130, 129, 15), (33, 16, 64))
_MATMUL = {"float32": Tolerance(rtol=1e-5, atol=1e-5), "float16": Tolerance(rtol=1e-3, atol=1e-4),
           "bfloat16": Tolerance(rtol=8e-3, atol=1e-3)}
_REQ8_SCALE = 1 / 512           # int8 sums of K = 40..130 products reach a few 10**4
_ROW_SHAPES = ((1, 1), (5, 7), (33, 200), (64, 1024))
_SOFT = {"float32": Tolerance(rtol=2e-6, atol=1e-7), "float16": Tolerance(rtol=1e-3, atol=1e-6),
         "bfloat16": Tolerance(rtol=8e-3, atol=1e-6)}
_NORM = {"float32": Tolerance(rtol=2e-5, atol=2e-5), "float16": Tolerance(rtol=2e-3, atol=2e-3),
         "bfloat16": Tolerance(rtol=1.6e-2, atol=1.6e-2)}

KERNELS: tuple[BundledKernel, ...] = (
    BundledKernel("add", add.DTYPES, _normal(2), add.add, add.reference, (1 << 20,), _ELEMENTWISE_SHAPES,
                  description="z = x + y, TPipe/TQue double buffered"),
    BundledKernel("add_static", add_static.DTYPES, _normal(2), add_static.add_static, add_static.reference,
                  (1 << 20,), _ELEMENTWISE_SHAPES, description="z = x + y, static tensors, manual set/wait flags"),
    BundledKernel("mul", mul.DTYPES, _normal(2), mul.mul, mul.reference, (1 << 20,), _ELEMENTWISE_SHAPES),
    BundledKernel("axpy", axpy.DTYPES, _normal(2), lambda x, y, **kw: axpy.axpy(0.75, x, y, **kw),
                  lambda x, y: axpy.reference(0.75, x, y), (1 << 20,), _ELEMENTWISE_SHAPES),
    BundledKernel("relu", relu.DTYPES, _normal(1), relu.relu, relu.reference, (1 << 20,), _ELEMENTWISE_SHAPES),
    BundledKernel("leaky_relu", leaky_relu.DTYPES, _normal(1), lambda x, **kw: leaky_relu.leaky_relu(x, 0.1, **kw),
                  lambda x: leaky_relu.reference(x, 0.1), (1 << 20,), _ELEMENTWISE_SHAPES),
    BundledKernel("gelu", gelu.DTYPES, _normal(1), gelu.gelu, gelu.reference, (1 << 20,), _ELEMENTWISE_SHAPES,
                  tolerance=_SOFT),
    BundledKernel("cast", cast.DTYPES, _normal(1), _cast_run, _cast_ref, (1 << 20,), _ELEMENTWISE_SHAPES,
                  description="float32->float16, float16->float32, bfloat16->float32"),
    BundledKernel("reduce_sum", reduce_sum.DTYPES, _normal(1), reduce_sum.reduce_sum, reduce_sum.reference,
                  (1024, 1024), _ROW_SHAPES,
                  tolerance={"float32": Tolerance(rtol=1e-5, atol=1e-4), "float16": Tolerance(rtol=1e-2, atol=0.1),
                             "bfloat16": Tolerance(rtol=1e-2, atol=0.1)}),
    BundledKernel("softmax", softmax.DTYPES, _normal(1), softmax.softmax, softmax.reference, (1024, 1024),
                  _ROW_SHAPES, tolerance=_SOFT),
    BundledKernel("layernorm", layernorm.DTYPES, _norm_inputs(True), layernorm.layernorm, layernorm.reference,
                  (1024, 1024), _ROW_SHAPES, tolerance=_NORM),
    BundledKernel("rmsnorm", rmsnorm.DTYPES, _norm_inputs(False), rmsnorm.rmsnorm, rmsnorm.reference,
                  (1024, 1024), _ROW_SHAPES, tolerance=_NORM),
    BundledKernel("matmul", matmul.DTYPES, _matmul_inputs(), matmul.matmul, matmul.reference, (256, 256, 256),
                  _MATMUL_SHAPES, tolerance=_MATMUL,
                  description="C = A @ B (M x K x N), cube basic API, static tensors, manual flags"),
    BundledKernel("matmul_queue", matmul_queue.DTYPES, _matmul_inputs(), matmul_queue.matmul_queue,
                  matmul_queue.reference, (256, 256, 256), _MATMUL_SHAPES, tolerance=_MATMUL,
                  description="C = A @ B, TQue on A1/B1/A2/B2/CO1, double buffered"),
    BundledKernel("linear", linear.DTYPES, _matmul_inputs(bias=True), linear.linear, linear.reference,
                  (128, 256, 256), _MATMUL_SHAPES, tolerance=_MATMUL,
                  description="gelu(x @ w + bias), fused MIX_AIC_1_2 (cube -> GM -> vector)"),
    BundledKernel("linear_leaky", linear.DTYPES, _matmul_inputs(bias=True),
                  lambda x, w, bias, **kw: linear.linear(x, w, bias, "leaky_relu", 0.1, **kw),
                  lambda x, w, bias: linear.reference(x, w, bias, "leaky_relu", 0.1), (128, 256, 256),
                  _MATMUL_SHAPES, tolerance=_MATMUL, description="leaky_relu(x @ w + bias), fused MIX_AIC_1_2"),
    BundledKernel("matmul_int8", matmul_int8.DTYPES, _matmul_inputs(), matmul_int8.matmul_int8,
                  matmul_int8.reference, (256, 256, 256), _MATMUL_SHAPES, description="int8 -> int32, exact"),
    BundledKernel("matmul_req8", matmul_int8.DTYPES, _matmul_inputs(),
                  lambda a, b, **kw: matmul_int8.matmul_int8(a, b, "int8", _REQ8_SCALE, **kw),
                  lambda a, b: matmul_int8.reference(a, b, "int8", _REQ8_SCALE), (256, 256, 256), _MATMUL_SHAPES,
                  description="int8 -> int8, fixpipe REQ8"),
    BundledKernel("matmul_deq16", matmul_int8.DTYPES, _matmul_inputs(),
                  lambda a, b, **kw: matmul_int8.matmul_int8(a, b, "float16", 1 / 1024, **kw),
                  lambda a, b: matmul_int8.reference(a, b, "float16", 1 / 1024), (256, 256, 256), _MATMUL_SHAPES,
                  description="int8 -> float16, fixpipe DEQF16"),
)

BY_NAME = {k.name: k for k in KERNELS}


def chosen(names: list[str] | None) -> list[BundledKernel]:
    """The bundled kernels named (all of them for None); an unknown name is a UsageError listing the known."""
    known = [k.name for k in KERNELS]
    unknown = [n for n in names or () if n not in known]
    if unknown:
        raise UsageError(f"unknown kernel {', '.join(unknown)}; the bundled kernels are {', '.join(known)}")
    return [k for k in KERNELS if not names or k.name in names]


def compare(out: np.ndarray, ref: np.ndarray, tol: Tolerance) -> tuple[bool, float]:
    """(passed, largest error) of a kernel result against its reference."""
    if tol.exact:
        a = np.ascontiguousarray(out).view(np.uint8)
        b = np.ascontiguousarray(ref).view(np.uint8)
        if out.dtype == ref.dtype and np.array_equal(a, b):
            return True, 0.0
    o = out.astype(np.float64)
    r = ref.astype(np.float64)
    err = np.abs(o - r)
    worst = float(np.nanmax(err)) if err.size else 0.0
    if tol.exact:
        same_nan = np.array_equal(np.isnan(o), np.isnan(r))
        return bool(same_nan and np.all((err == 0) | np.isnan(r))), worst
    ok = bool(np.all(err <= tol.atol + tol.rtol * np.abs(r)))
    return ok, worst
