"""The unit of a sweep: one :class:`Case`, and the generators of the usual sweeps.

A case names everything its outcome depends on: what runs (a tiling
function, a Hypothesis property of a tiling function, or a kernel with its
NumPy reference), the platform profile, the dtype, the shape, the tiling
attributes, the seed and the check level.  Cases are plain frozen values:
they pickle, compare and hash, so a sweep can ship them to other processes
and a result can be matched with its case whatever ran it.

Targets are names: a bundled tiling function (``elementwise_tiling``,
``row_tiling``, ``add_example_tiling``, ``matmul_tiling``), a bundled kernel
of ``npuemu.kernels.catalog`` (``add``, ``softmax``, ...), or
``"module:attribute"`` for your own (a tiling function, or a
``BundledKernel``-shaped object with ``make_inputs``, ``run``,
``reference`` and ``tolerance``), importable wherever the case runs.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from ..errors import UsageError

KINDS = ("tiling", "property", "kernel")
CHECK_LEVELS = ("off", "default", "full")

# shape classes per bundled tiling function: the edges tilings get wrong
#   one: a single element; prime: no split divides it; edge: one past whole 32-byte blocks per core;
#   aligned: a round size; huge: more than fits any UB many times over
TILING_SHAPES: dict[str, dict[str, tuple[int, ...]]] = {
    "elementwise_tiling": {"one": (1,), "prime": (1999,), "edge": (48 * 16 + 1,), "aligned": (1 << 16,),
                           "huge": ((1 << 31) - 1,)},
    "add_example_tiling": {"one": (1, 1, 1, 1), "prime": (1, 1, 1, 1999), "aligned": (2, 4, 32, 32),
                           "huge": (8, 64, 1024, 1024)},
    "row_tiling": {"one": (1, 1), "prime": (7, 1999), "aligned": (64, 1024), "wide": (3, 1 << 17),
                   "huge": (1 << 20, 1024)},
    "matmul_tiling": {"one": (1, 1, 1), "prime": (17, 41, 33), "aligned": (256, 256, 256),
                      "huge": (4096, 8192, 4096)},
}
TILING_DTYPES: dict[str, tuple[str, ...]] = {
    "elementwise_tiling": ("float16", "float32"),
    "add_example_tiling": ("float32", "int32"),
    "row_tiling": ("float16", "float32"),
    "matmul_tiling": ("float16", "float32"),
}
BUNDLED_TILING = tuple(TILING_SHAPES)


@dataclass(frozen=True)
class Case:
    """One unit of work: run ``target`` on ``platform`` with these inputs and compare with the reference.

    ``kind`` is ``tiling`` (run a tiling function on one context and check its
    invariants), ``property`` (a Hypothesis property of a tiling function over
    drawn shapes, ``examples`` of them, seeded with ``seed``) or ``kernel``
    (run a kernel's host function on generated inputs and compare with its
    NumPy reference).  ``label`` names the shape class; ``binaries`` are the
    sha256 keys a kernel case's launches use, filled in when they are built
    ahead of the run (:func:`npuemu.sweep.engine.prepare`).
    """

    kind: str
    target: str
    platform: str = "Ascend910B1"
    dtype: str = "float32"
    shape: tuple[int, ...] = ()
    attrs: tuple[tuple[str, Any], ...] = ()
    seed: int = 0
    check: str = "default"
    label: str = ""
    examples: int = 0
    binaries: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UsageError(f"unknown case kind {self.kind!r}; the kinds are {', '.join(KINDS)}")
        if self.check not in CHECK_LEVELS:
            raise UsageError(f"case {self.target}: unknown check level {self.check!r}; the levels are "
                             f"{', '.join(CHECK_LEVELS)}")

    @property
    def id(self) -> str:
        """A readable, unique name: ``tiling:row_tiling/Ascend910B1/float16/prime(7x1999)``."""
        shape = "x".join(map(str, self.shape)) or ("drawn" if self.kind == "property" else "scalar")
        text = f"{self.kind}:{self.target}/{self.platform}/{self.dtype}/{self.label or 'shape'}({shape})"
        if self.attrs:
            text += "/" + ",".join(f"{k}={v}" for k, v in self.attrs)
        if self.kind != "tiling":
            text += f"/seed={self.seed}"
        if self.kind == "kernel":
            text += f"/check={self.check}"
        if self.kind == "property":
            text += f"/n={self.examples}"
        return text

    @property
    def token(self) -> str:
        """A short hash of :attr:`id` (Dask task keys)."""
        return hashlib.sha256(self.id.encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        """The case as JSON data (the result file)."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "target": self.target, "platform": self.platform,
                               "dtype": self.dtype, "shape": list(self.shape), "label": self.label,
                               "seed": self.seed, "check": self.check}
        if self.attrs:
            out["attrs"] = {k: v for k, v in self.attrs}
        if self.examples:
            out["examples"] = self.examples
        if self.binaries:
            out["binaries"] = list(self.binaries)
        return out

    def with_binaries(self, sha256s: Sequence[str]) -> "Case":
        return replace(self, binaries=tuple(sha256s))


def _platforms(platforms: Iterable[str] | None) -> list[str]:
    from ..platform import get_platform
    from ..profiles import PROFILES
    if platforms is None:
        # the bundled profiles: a custom one (Platform.custom) exists only in the process that made it
        return list(PROFILES)
    return [get_platform(p).name for p in platforms]      # an unknown name is a PlatformError listing the known


def _known(names: Iterable[str] | None, known: Sequence[str], what: str) -> list[str]:
    if names is None:
        return list(known)
    names = list(names)
    unknown = [n for n in names if n not in known and ":" not in n]
    if unknown:
        raise UsageError(f"unknown {what} {', '.join(unknown)}; the bundled ones are {', '.join(known)} "
                         f"(or name your own as module:attribute)")
    return names


def _dtypes(fn: str, wanted: Iterable[str] | None) -> list[str]:
    """The dtypes of ``fn`` asked for (a bundled function's own only: add_example takes float32 and int32)."""
    own = TILING_DTYPES.get(fn)
    if wanted is None:
        return list(own or ("float32",))
    return [d for d in wanted if own is None or d in own]


def tiling_cases(functions: Iterable[str] | None = None, platforms: Iterable[str] | None = None,
                 dtypes: Iterable[str] | None = None, shape_classes: Iterable[str] | None = None) -> list[Case]:
    """Bundled tiling functions x platform profiles (all built-in ones by default) x dtypes x shape classes.

    Dtypes default to :data:`TILING_DTYPES`; a dtype a function does not take is left out for it.
    """
    cases = []
    wanted = None if shape_classes is None else set(shape_classes)
    for fn in _known(functions, BUNDLED_TILING, "tiling function"):
        shapes = TILING_SHAPES.get(fn, {})
        for plat in _platforms(platforms):
            for dtype in _dtypes(fn, dtypes):
                for label, shape in shapes.items():
                    if wanted is None or label in wanted:
                        cases.append(Case("tiling", fn, plat, dtype, shape, label=label))
    return cases


def property_cases(functions: Iterable[str] | None = None, platforms: Iterable[str] | None = None,
                   dtypes: Iterable[str] | None = None, examples: int = 50, seed: int = 0) -> list[Case]:
    """A Hypothesis property per tiling function x platform x dtype: ``examples`` drawn shapes each."""
    if examples < 1:
        raise UsageError(f"a property case needs at least one example, got examples={examples}")
    return [Case("property", fn, plat, dtype, seed=seed, examples=examples, label="drawn")
            for fn in _known(functions, BUNDLED_TILING, "tiling function")
            for plat in _platforms(platforms)
            for dtype in _dtypes(fn, dtypes)]


def kernel_cases(kernels: Iterable[str] | None = None, platforms: Iterable[str] | None = ("Ascend910B1",),
                 dtypes: Iterable[str] | None = None, shapes: Iterable[tuple[int, ...]] | None = None,
                 check: str = "default", seeds: Iterable[int] = (0,)) -> list[Case]:
    """Bundled kernels (or ``module:attribute`` ones) x platforms x their dtypes x shapes x seeds.

    Shapes default to each kernel's ``test_shapes``; dtypes to the kernel's
    own (a dtype the kernel does not take is left out for it).
    """
    from ..kernels.catalog import BY_NAME, KERNELS
    cases = []
    for name in _known(kernels, [k.name for k in KERNELS], "kernel"):
        k = BY_NAME.get(name) or load_target(name)
        for plat in _platforms(platforms):
            for dtype in [d for d in (dtypes or k.dtypes) if d in k.dtypes]:
                for shape in shapes or k.test_shapes:
                    for seed in seeds:
                        cases.append(Case("kernel", name, plat, dtype, tuple(shape), seed=seed, check=check))
    return cases


def load_target(name: str) -> Any:
    """The object ``module:attribute`` names (a case's own tiling function or kernel)."""
    import importlib
    module, _, attr = name.partition(":")
    if not module or not attr:
        raise UsageError(f"{name!r} is not module:attribute")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(f"cannot import {module!r} for case target {name!r} ({exc}); it must be importable "
                         f"where the case runs (installed, or on PYTHONPATH of every worker)") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"module {module!r} has no attribute {attr!r} (case target {name!r})")
        obj = getattr(obj, part)
    return obj
