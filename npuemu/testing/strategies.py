"""Hypothesis strategies for property-testing kernels and tiling functions.

Tiling bugs live at the edges: one element, a size one past a 32-byte block,
a prime that divides nothing, more cores than blocks of work, a UB so small
that one tile barely fits.  These strategies draw such values on purpose,
next to ordinary ones::

    from hypothesis import given
    from npuemu.testing import strategies as nst

    @given(n=nst.sizes(max_size=1 << 24), platform=nst.platforms())
    def test_my_tiling(n, platform): ...

Requires Hypothesis (``pip install 'npuemu[test]'``).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - exercised only without the test extra
    raise ImportError("npuemu.testing.strategies needs Hypothesis: pip install 'npuemu[test]'") from exc

from ..errors import UsageError
from ..host.tiling import TensorDesc, TilingContext
from . import profiles
from ..platform import KIB, Platform, get_platform
from ._platforms import builtin_names

__all__ = [
    "PRIMES", "KERNEL_DTYPES", "FLOAT_DTYPES", "sizes", "shapes", "row_shapes", "dtypes", "dtypes_for",
    "builtin_platforms", "platforms", "custom_platforms", "make_platform", "tensor_descs", "tiling_contexts", "seeds",
]

# primes near the sizes tilings divide by (cores, 32-byte blocks, tiles), and a few large ones
PRIMES = (2, 3, 5, 7, 11, 13, 17, 23, 31, 47, 53, 61, 97, 127, 193, 251, 509, 1021, 2039, 4093, 8191,
          16381, 65521, 131071, 1048573, 16777213, 2147483647)

KERNEL_DTYPES = ("float16", "bfloat16", "float32", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                 "int64", "uint64")
FLOAT_DTYPES = ("float16", "bfloat16", "float32")

profiles.register()         # settings.load_profile("npuemu-ci") works once strategies are imported


def _edge_sizes(lo: int, hi: int, block_elems: Sequence[int]) -> list[int]:
    """1, the primes, powers of two and their neighbours, whole 32-byte blocks and one either side."""
    found = {lo, hi}
    found.update(p for p in PRIMES)
    k = 1
    while k <= hi * 2:
        found.update((k - 1, k, k + 1))
        k *= 2
    for unit in block_elems:
        for blocks in (1, 2, 3, 7, 8, 47, 48, 49, 97, 1000):
            found.update((unit * blocks - 1, unit * blocks, unit * blocks + 1))
    return sorted(n for n in found if lo <= n <= hi)


def sizes(min_size: int = 1, max_size: int = 1 << 20, *, elem_bytes: int | None = None) -> st.SearchStrategy[int]:
    """Element counts in ``[min_size, max_size]``, biased to the values that break tilings.

    Half the draws are edge values: 1, primes, ``2**k - 1 .. 2**k + 1``, and
    whole 32-byte blocks of ``elem_bytes``-byte elements plus or minus one
    (for 1, 2 and 4-byte elements when ``elem_bytes`` is None, e.g. 47, 48 and
    49 blocks for 48 cores); the other half are uniform in the range.  A
    large ``max_size`` (say ``2**31``) is fine for tiling-only tests, which
    never allocate the data.
    """
    if not 0 <= min_size <= max_size:
        raise UsageError(f"need 0 <= min_size <= max_size, got {min_size}, {max_size}")
    units = [32 // elem_bytes] if elem_bytes else [32, 16, 8]
    edges = _edge_sizes(min_size, max_size, [u for u in units if u > 0])
    return st.one_of(st.sampled_from(edges), st.integers(min_size, max_size))


@st.composite
def shapes(draw: Any, *, min_dims: int = 1, max_dims: int = 3, max_size: int = 1 << 16,
           max_side: int | None = None, elem_bytes: int | None = None) -> tuple[int, ...]:
    """Array shapes of ``min_dims..max_dims`` non-zero dimensions with at most ``max_size`` elements.

    Each side is drawn from :func:`sizes` (so 1, primes and sizes one past a
    32-byte block are common) within what the earlier sides leave of
    ``max_size``.
    """
    ndim = draw(st.integers(min_dims, max_dims))
    shape: list[int] = []
    room = max_size
    for _ in range(ndim):
        hi = max(1, min(room, max_side or room))
        side = draw(sizes(1, hi, elem_bytes=elem_bytes))
        shape.append(side)
        room = max(1, room // side)
    return tuple(shape)


def row_shapes(max_rows: int = 512, max_cols: int = 4096, *, max_size: int = 1 << 18,
               elem_bytes: int | None = None) -> st.SearchStrategy[tuple[int, int]]:
    """(rows, cols) for row-wise kernels: single rows and columns, rows narrower than 32 bytes, primes."""
    return st.tuples(sizes(1, max_rows), sizes(1, max_cols, elem_bytes=elem_bytes)).filter(
        lambda rc: rc[0] * rc[1] <= max_size)


def dtypes(names: Iterable[str] | None = None) -> st.SearchStrategy[str]:
    """Kernel dtype names (``"float16"``, ...): ``names``, or every dtype kernels can take."""
    return st.sampled_from(tuple(names) if names is not None else KERNEL_DTYPES)


def dtypes_for(op: Any) -> st.SearchStrategy[str]:
    """The dtypes an op supports: ``op.dtypes`` (a bundled kernel's catalog entry) or ``op.DTYPES`` (its module)."""
    names = getattr(op, "dtypes", None) or getattr(op, "DTYPES", None)
    if not names:
        raise UsageError(f"{op!r} lists no dtypes (expected a .dtypes or .DTYPES attribute)")
    return st.sampled_from(tuple(names))


def builtin_platforms() -> tuple[Platform, ...]:
    """The SoC profiles npuemu ships (not the custom ones registered since), in a stable order."""
    return tuple(get_platform(name) for name in builtin_names())


_UB_CHOICES = tuple(k * KIB for k in (1, 2, 4, 8, 16, 31, 64, 96, 128, 192, 248, 256))


@st.composite
def custom_platforms(draw: Any, *, min_aiv: int = 1, max_aiv: int = 64, min_ub: int = 1 * KIB,
                     max_ub: int = 256 * KIB, base: Platform | str = "Ascend910B1") -> Platform:
    """Random SoC profiles: any number of vector cores (primes and 1 included), any UB in 32-byte units.

    AIC counts follow the 1:2 ratio of A2/A3 most of the time; L1 and L0
    sizes are drawn from realistic halvings and doublings.  The profiles are
    not registered, so pass the object (not its name) to launches and
    tiling contexts; every profile with the same fields has the same name,
    and so the same kernel cache key.
    """
    aiv = draw(st.one_of(st.sampled_from([1, 2, 3, 7, 8, 13, 24, 40, 48]), st.integers(min_aiv, max_aiv))
               .filter(lambda n: min_aiv <= n <= max_aiv))
    aic = draw(st.one_of(st.just(max(1, aiv // 2)), st.integers(1, max(1, aiv))))
    ub_units = st.integers(-(-min_ub // 32), max_ub // 32).map(lambda k: k * 32)
    ub = draw(st.one_of(st.sampled_from([u for u in _UB_CHOICES if min_ub <= u <= max_ub] or [min_ub]), ub_units)
              .filter(lambda u: u >= max(min_ub, KIB)))
    l1 = draw(st.sampled_from((256 * KIB, 512 * KIB, 1024 * KIB)))
    l0ab = draw(st.sampled_from((32 * KIB, 64 * KIB)))
    l0c = draw(st.sampled_from((64 * KIB, 128 * KIB, 256 * KIB)))
    return make_platform(base, aiv_count=aiv, aic_count=aic, ub_size=ub, l1_size=l1, l0a_size=l0ab,
                         l0b_size=l0ab, l0c_size=l0c)


def make_platform(base: Platform | str = "Ascend910B1", **fields: Any) -> Platform:
    """An unregistered profile: ``base`` with ``fields`` replaced, named after what changed."""
    parent = get_platform(base)
    tag = "-".join(f"{k.replace('_count', '').replace('_size', '')}{_short(v)}" for k, v in sorted(fields.items()))
    given = set(fields)
    extra: dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(Platform)}
    if "unconfirmed" in names:
        extra["unconfirmed"] = tuple(f for f in parent.unconfirmed if f not in given)
    if "sources" in names:
        extra["sources"] = tuple((f, s) for f, s in parent.sources if f not in given) + \
            tuple((f, "custom") for f in sorted(given))
    return dataclasses.replace(parent, name=f"custom-{tag}", **fields, **extra)


def _short(v: int) -> str:
    return f"{v // KIB}k" if v >= KIB and v % KIB == 0 else str(v)


def platforms(*, builtin: bool = True, custom: bool = True, names: Iterable[str] | None = None,
              **custom_kwargs: Any) -> st.SearchStrategy[Platform]:
    """SoC profiles: the built-in ones, random custom ones (:func:`custom_platforms`), or both.

    ``names`` restricts the built-in choice (e.g. to keep the number of
    compiled kernel specialisations small in kernel tests).
    """
    choices = []
    if builtin:
        pool = builtin_platforms() if names is None else tuple(get_platform(n) for n in names)
        choices.append(st.sampled_from(pool))
    if custom:
        choices.append(custom_platforms(**custom_kwargs))
    if not choices:
        raise UsageError("platforms() needs builtin=True or custom=True")
    return st.one_of(*choices)


def tensor_descs(shapes_: st.SearchStrategy[tuple[int, ...]] | None = None,
                 dtypes_: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[TensorDesc]:
    """:class:`TensorDesc` of the given shapes and dtypes (ND format)."""
    return st.builds(TensorDesc, shape=shapes_ if shapes_ is not None else shapes(),
                     dtype=dtypes_ if dtypes_ is not None else dtypes(FLOAT_DTYPES))


_shapes, _dtypes, _platforms = shapes, dtypes, platforms     # tiling_contexts' parameters shadow them


@st.composite
def tiling_contexts(draw: Any, *, shapes: st.SearchStrategy[tuple[int, ...]] | None = None,
                    dtypes: st.SearchStrategy[str] | None = None,
                    platforms: st.SearchStrategy[Platform] | None = None, n_inputs: int = 1, n_outputs: int = 1,
                    output_shape: Any = None, output_dtype: Any = None,
                    attrs: st.SearchStrategy[dict[str, Any]] | None = None,
                    deterministic: st.SearchStrategy[bool] | None = None) -> TilingContext:
    """:class:`TilingContext` for an op whose ``n_inputs`` inputs share one drawn shape and dtype.

    Outputs have the input shape and dtype unless ``output_shape(shape)`` /
    ``output_dtype(dtype)`` say otherwise (e.g. ``lambda s: s[:1]`` for row
    sums).  ``attrs`` draws the op's attributes as a dict.
    """
    shape = draw(shapes if shapes is not None else _shapes())
    dtype = draw(dtypes if dtypes is not None else _dtypes(FLOAT_DTYPES))
    platform = draw(platforms if platforms is not None else _platforms())
    out_shape = tuple(output_shape(shape)) if output_shape else shape
    out_dtype = output_dtype(dtype) if output_dtype else dtype
    inputs = tuple(TensorDesc(tuple(shape), dtype) for _ in range(n_inputs))
    outputs = tuple(TensorDesc(out_shape, out_dtype) for _ in range(n_outputs))
    drawn_attrs = draw(attrs) if attrs is not None else {}
    det = draw(deterministic) if deterministic is not None else False
    return TilingContext(inputs=inputs, outputs=outputs, platform=platform,
                         attrs=tuple(sorted(drawn_attrs.items())), deterministic=det)


def seeds() -> st.SearchStrategy[int]:
    """Seeds for ``numpy.random.default_rng``: kernel data comes from NumPy, its seed from Hypothesis.

    Drawing whole arrays element by element through Hypothesis is slow for
    the sizes kernels need; a drawn seed keeps examples reproducible and
    shrinkable in the dimensions that matter (shape, dtype, platform).
    """
    return st.integers(0, 2**32 - 1)

