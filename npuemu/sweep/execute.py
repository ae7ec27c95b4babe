"""Run one case in the current process: a :class:`CaseResult`, never an exception.

A case runs exactly as ``npuemu.testing`` runs it in one process: a tiling
case through :func:`npuemu.testing.bundled.check_bundled_tiling`, a kernel
case through :func:`npuemu.testing.assert_kernel_matches` with the kernel's
own tolerance.  Whatever the case raises (a mismatch, a violated invariant, a
kernel fault, a refused tiling, a bug) becomes an :class:`ErrorInfo`: the
error class, the rule, the kernel, the core, the source line and the
message.  A case that faults therefore comes back as data and is never
retried; only infrastructure (a lost worker) is.
"""
from __future__ import annotations

import os
import re
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from .cases import Case, load_target

PASSED, FAILED, REFUSED = "passed", "failed", "refused"


@dataclass(frozen=True)
class ErrorInfo:
    """What went wrong in a case, as data: class, rule, kernel, core, source file and line, message."""

    error: str
    message: str
    rule: str = ""
    kernel: str = ""
    core: str = ""
    file: str = ""
    line: int = 0
    example: str = ""            # Hypothesis' minimal falsifying example, for a case drawn from a strategy

    @classmethod
    def of(cls, exc: BaseException) -> "ErrorInfo":
        rule = getattr(exc, "rule", "") or ""
        violations = getattr(exc, "violations", None)
        if violations:
            rule = ", ".join(dict.fromkeys(v.invariant for v in violations))
        elif not rule and type(exc).__name__ in ("KernelMismatchError", "UnwrittenOutputError"):
            rule = "mismatch" if type(exc).__name__ == "KernelMismatchError" else "unwritten output"
        loc = getattr(exc, "loc", None)
        file, line = (loc.filename, loc.lineno) if loc is not None else _innermost(exc)
        # Hypothesis adds the minimal example as a note ("Falsifying example: ..." / "Failing test case: ...")
        notes = [str(n) for n in getattr(exc, "__notes__", ()) if "example" in str(n) or "test case" in str(n)]
        return cls(error=f"{type(exc).__module__}.{type(exc).__qualname__}", message=str(exc),
                   rule=str(rule), kernel=str(getattr(exc, "kernel", "") or ""),
                   core=str(getattr(exc, "core", "") or ""), file=file, line=line,
                   example="\n".join(notes))

    def short(self) -> str:
        """One line: ``KernelFault [rule] kernel core file:line: first line of the message``."""
        name = self.error.rpartition(".")[2]
        parts = [name] + [f"[{self.rule}]"] * bool(self.rule) + [self.kernel] * bool(self.kernel)
        parts += [f"core {self.core}"] * bool(self.core)
        if self.file:
            parts.append(f"{os.path.basename(self.file)}:{self.line}")
        first = self.message.splitlines()[0] if self.message else ""
        return " ".join(parts) + f": {first}"


def _innermost(exc: BaseException) -> tuple[str, int]:
    frames = traceback.extract_tb(exc.__traceback__)
    return (frames[-1].filename, frames[-1].lineno or 0) if frames else ("", 0)


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one case.  ``outcome()`` is what two runs of a sweep must agree on."""

    case: Case
    status: str                          # passed | failed | refused
    error: ErrorInfo | None = None
    detail: str = ""                     # what passed: block dim, tiling key, examples run
    seconds: float = field(default=0.0, compare=False)
    worker: str = field(default="", compare=False)
    binaries_loaded: int = field(default=0, compare=False)   # of case.binaries, found in the store and verified

    @property
    def failed(self) -> bool:
        return self.status == FAILED

    def outcome(self) -> tuple[Any, ...]:
        """Case, status, error and detail: equal for equal runs whatever process or worker ran them."""
        err = None if self.error is None else (self.error.error, self.error.rule, self.error.kernel,
                                                self.error.core, os.path.basename(self.error.file),
                                                self.error.line, self.error.example)
        return (self.case.id, self.status, err, self.detail)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"case": self.case.to_json(), "status": self.status, "detail": self.detail,
                               "seconds": round(self.seconds, 6), "worker": self.worker}
        if self.error is not None:
            out["error"] = {k: v for k, v in asdict(self.error).items() if v not in ("", 0)}
        if self.case.binaries:
            out["binaries_loaded"] = self.binaries_loaded
        return out


def run_case(case: Case, worker: str = "") -> CaseResult:
    """Run ``case`` here and compare it with its reference; every exception becomes part of the result."""
    start = time.perf_counter()
    loaded = 0
    try:
        if case.kind == "kernel":
            loaded = _load_binaries(case.binaries)
        status, detail, error = _RUNNERS[case.kind](case)
    except Exception as exc:          # noqa: BLE001 - a case's failure is data, whatever it is
        status, detail, error = _classify(exc)
    return CaseResult(case, status, error, detail, time.perf_counter() - start, worker or str(os.getpid()),
                      loaded)


def _classify(exc: BaseException) -> tuple[str, str, ErrorInfo]:
    from ..errors import TilingError
    if isinstance(exc, TilingError) and getattr(exc, "refusal", False):
        return REFUSED, "", ErrorInfo.of(exc)
    return FAILED, "", ErrorInfo.of(exc)


def _load_binaries(sha256s: tuple[str, ...]) -> int:
    """How many of the case's binaries the store holds, each verified as it is read (a missing or damaged one
    is built by the launch that needs it)."""
    if not sha256s:
        return 0
    from ..binary import store
    return sum(store.get(s) is not None for s in sha256s)


# ------------------------------------------------------------------------------------------ tiling


def tiling_function(name: str) -> Callable[..., Any]:
    """The tiling function a case names: bundled by name, else ``module:attribute``."""
    if ":" in name:
        return load_target(name)
    from ..tiling import elementwise, matmul, rows
    table = {"elementwise_tiling": elementwise.elementwise_tiling, "add_example_tiling": elementwise.add_example_tiling,
             "row_tiling": rows.row_tiling, "matmul_tiling": matmul.matmul_tiling}
    if name not in table:
        from ..errors import UsageError
        raise UsageError(f"unknown tiling function {name!r}; the bundled ones are {', '.join(table)}")
    return table[name]


def tiling_context(case: Case, shape: tuple[int, ...] | None = None) -> Any:
    """The :class:`TilingContext` of a tiling case: the inputs and outputs its function's kernels pass."""
    from ..host.tiling import TensorDesc, TilingContext
    from ..platform import get_platform
    shape = case.shape if shape is None else shape
    d = case.dtype
    if case.target == "matmul_tiling":
        m, k, n = shape
        ins: tuple[Any, ...] = (TensorDesc((m, k), d), TensorDesc((k, n), d))
        outs = (TensorDesc((m, n), d),)
    elif case.target in ("row_tiling",):
        ins, outs = (TensorDesc(shape, d),), (TensorDesc(shape, d),)
    else:
        ins, outs = (TensorDesc(shape, d), TensorDesc(shape, d)), (TensorDesc(shape, d),)
    return TilingContext(ins, outs, get_platform(case.platform), tuple(sorted(case.attrs)))


def _tiling_once(case: Case, fn: Callable[..., Any], ctx: Any) -> str:
    """Run ``fn`` on ``ctx`` and check what it decided; a refusal is marked, violations raise."""
    from ..errors import TilingError
    from ..testing.bundled import check_bundled_tiling
    from ..testing.invariants import check_deterministic, describe_context
    from ..testing.violations import raise_if
    try:
        result = fn(ctx)
    except TilingError as exc:
        exc.refusal = True                         # the function declined these inputs: reported, not failed
        raise
    result.check(ctx)                              # the limits CANN enforces: a TilingError that is a failure
    if ":" not in case.target:                    # one of npuemu's: its kernels' plans are known
        violations = check_bundled_tiling(fn, ctx, result)
    else:
        violations = check_deterministic(fn, ctx)
    raise_if(violations, describe_context(fn, ctx))
    return f"block_dim={result.block_dim} key={result.tiling_key}"


def _run_tiling(case: Case) -> tuple[str, str, ErrorInfo | None]:
    fn = tiling_function(case.target)
    return PASSED, _tiling_once(case, fn, tiling_context(case)), None


_UB_NEED = re.compile(r"needs (\d+) bytes of UB(?:; \S+ has | \()(\d+)")


def _run_property(case: Case) -> tuple[str, str, ErrorInfo | None]:
    """A Hypothesis property over drawn shapes; a failure carries Hypothesis' minimal example."""
    from hypothesis import HealthCheck, Phase, assume, given, seed, settings
    from hypothesis import strategies as st

    from ..errors import TilingError
    from ..testing import strategies as nst
    fn = tiling_function(case.target)
    dims = len(next(iter(_shape_classes(case.target).values()), (1,)))
    if dims == 3:
        shapes = st.tuples(*(nst.sizes(1, 4096) for _ in range(3)))
    elif dims == 4:
        shapes = st.tuples(*(nst.sizes(1, 64) for _ in range(3)), nst.sizes(1, 1 << 16))
    elif dims == 2:
        shapes = nst.row_shapes(max_rows=1 << 16, max_cols=1 << 14, max_size=1 << 31)
    else:
        shapes = nst.shapes(max_dims=1, max_size=1 << 31)
    ran = [0]

    @seed(case.seed)
    @settings(max_examples=case.examples, database=None, deadline=None, derandomize=False,
              phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    @given(shape=shapes)
    def holds(shape: tuple[int, ...]) -> None:
        ran[0] += 1
        try:
            _tiling_once(case, fn, tiling_context(case, tuple(shape)))
        except TilingError as exc:
            if not getattr(exc, "refusal", False):
                raise
            m = _UB_NEED.search(str(exc))
            if m is None or int(m[1]) <= int(m[2]):
                raise                              # a refusal the platform does not justify
            assume(False)

    with warnings.catch_warnings():
        # in a Dask worker, the worker's own threads use the random module while Hypothesis draws; Hypothesis
        # takes that for the strategy using it and warns (a false alarm: the strategies never touch it)
        warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies")
        holds()
    return PASSED, f"{case.examples} examples", None


def _shape_classes(target: str) -> dict[str, tuple[int, ...]]:
    from .cases import TILING_SHAPES
    return TILING_SHAPES.get(target, {"one": (1,)})


# ------------------------------------------------------------------------------------------ kernels


def kernel_entry(name: str) -> Any:
    """The kernel a case names: a bundled one (``npuemu.kernels.catalog``) or ``module:attribute``."""
    if ":" in name:
        return load_target(name)
    from ..kernels.catalog import chosen
    return chosen([name])[0]


def kernel_inputs(case: Case) -> tuple[Any, ...]:
    """The inputs of a kernel case: the kernel's own generator, seeded with the case's seed."""
    return kernel_entry(case.target).make_inputs(np.random.default_rng(case.seed), case.dtype, case.shape)


def _run_kernel(case: Case) -> tuple[str, str, ErrorInfo | None]:
    from ..testing import assert_kernel_matches
    k = kernel_entry(case.target)
    out = assert_kernel_matches(k.run, k.reference, kernel_inputs(case), tolerance=k.tol(case.dtype),
                                platform=case.platform, check=case.check)
    shapes = ",".join("x".join(map(str, np.shape(o))) for o in (out if isinstance(out, tuple) else (out,)))
    return PASSED, f"output {shapes}", None


_RUNNERS: dict[str, Callable[[Case], tuple[str, str, ErrorInfo | None]]] = {
    "tiling": _run_tiling, "property": _run_property, "kernel": _run_kernel,
}
