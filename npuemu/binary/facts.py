"""What a kernel's lowering learned that its launch needs: typed, immutable, serialisable.

The frontend fills a :class:`npuemu.frontend.facts.LoweringFacts` while it
lowers a kernel and freezes it into :class:`KernelFacts`; the runtime reads
only these fields.  Every field is plain data (bools, ints, strings, tuples)
so a binary saved to disk carries its facts as JSON.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, Union


class Conversion(NamedTuple):
    """One ``%`` conversion of a printf format: ``spec`` is the Python ``%`` spec that prints it."""

    conv: str          # d i u x f p (s is resolved at compile time)
    spec: str


class PrintfFormat(NamedTuple):
    """A printf site: literal text and conversions, in order."""

    pieces: tuple[Union[str, Conversion], ...]
    source: str                  # the format as written, for messages


class DumpSite(NamedTuple):
    """A ``dump_tensor`` site: what the logged bytes are."""

    dtype: str                   # npuemu dtype name
    position: str                # UB, L1, L0C or GM
    shape: tuple[int, ...] | None


@dataclass(frozen=True)
class ScalarParam:
    """One run-time scalar parameter of the generated kernel, in parameter order.

    ``param`` is the kernel parameter it comes from and ``path`` the struct
    fields leading to it (empty for a plain scalar); ``kind`` is ``int``,
    ``float``, ``bool``, or ``int[]``/``float[]`` for a struct's array field.
    """

    param: str
    path: tuple[str, ...]
    kind: str


@dataclass(frozen=True)
class KernelFacts:
    """Facts of one binary that decide how it is launched.

    blocking: some core can wait for another (the kernel is a generator; cores run cooperatively).
    cross_core: the kernel uses the cross-core state in npuemu's system GM region.
    dcache: scalar GM accesses go through the DCache model.
    blas: the kernel calls ``mmad`` (AICs get cube scratch; BLAS is held at one thread per core thread).
    uses_log: the kernel writes ``printf``/``dump_tensor`` records.
    printf_formats / dump_sites: what each log record's id refers to.
    tiling_keys: the keys the kernel tests with ``asc.tiling_key_is`` (empty: it does not branch on one).
    gm_params: the parameters that are GM regions, in region order.
    scalar_params: the run-time scalar parameters, in parameter order.
    redundant_syncs: ``verify_sync``'s reports of redundant waits and barriers (warned when the binary
        is first used in a process, whether it was built or loaded).
    """

    blocking: bool = False
    cross_core: bool = False
    dcache: bool = False
    blas: bool = False
    uses_log: bool = False
    printf_formats: tuple[PrintfFormat, ...] = ()
    dump_sites: tuple[DumpSite, ...] = ()
    tiling_keys: tuple[int, ...] = ()
    gm_params: tuple[str, ...] = ()
    scalar_params: tuple[ScalarParam, ...] = field(default=())
    redundant_syncs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-compatible dict; :meth:`from_json` reverses it."""
        d = asdict(self)
        d["printf_formats"] = [[[_piece_json(p) for p in f.pieces], f.source] for f in self.printf_formats]
        d["dump_sites"] = [[s.dtype, s.position, None if s.shape is None else list(s.shape)]
                           for s in self.dump_sites]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "KernelFacts":
        formats = tuple(PrintfFormat(tuple(_piece(p) for p in pieces), source)
                        for pieces, source in d.get("printf_formats", ()))
        sites = tuple(DumpSite(dtype, pos, None if shape is None else tuple(shape))
                      for dtype, pos, shape in d.get("dump_sites", ()))
        scalars = tuple(ScalarParam(s["param"], tuple(s["path"]), s["kind"]) for s in d.get("scalar_params", ()))
        return cls(blocking=bool(d.get("blocking")), cross_core=bool(d.get("cross_core")),
                   dcache=bool(d.get("dcache")), blas=bool(d.get("blas")), uses_log=bool(d.get("uses_log")),
                   printf_formats=formats, dump_sites=sites, tiling_keys=tuple(d.get("tiling_keys", ())),
                   gm_params=tuple(d.get("gm_params", ())), scalar_params=scalars,
                   redundant_syncs=tuple(d.get("redundant_syncs", ())))


def _piece_json(p: Union[str, Conversion]) -> Any:
    return p if isinstance(p, str) else {"conv": p.conv, "spec": p.spec}


def _piece(p: Any) -> Union[str, Conversion]:
    return p if isinstance(p, str) else Conversion(p["conv"], p["spec"])
