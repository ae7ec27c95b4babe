"""The builder: from a kernel and its argument kinds to a :class:`~npuemu.binary.kernel_binary.KernelBinary`.

Building a specialisation parses the kernel, lowers it (:mod:`.lower` and
the rules), assembles the generated module (:mod:`npuemu.codegen.module`),
imports it from the kernel cache and, unless only debug mode needs it, has
Numba compile it.  :class:`KernelBuilder` keeps the binaries of one kernel:
each specialisation is built once per process, and found in the binary store
(:mod:`npuemu.binary.store`) by a process that did not build it, without
being lowered again.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..binary import store
from ..binary.facts import ScalarParam
from ..binary.kernel_binary import KernelBinary
from ..binary.key import ArgSpec, BinaryKey
from ..codegen.compiler import generated_module
from ..codegen.compile_report import note_binary
from ..codegen.module import module_source
from ..errors import LaunchError, RedundantSyncWarning
from ..language.enums import KernelType
from ..language.struct import ArrayField, Struct, StructField
from ..options import Options
from ..platform import Platform, get_platform
from .adv_matmul_kernel_type import with_default_kernel_type
from .fingerprint import compiler_fingerprint, describe_value
from .kernel import KernelFunction
from .lower import Lowerer
from .source import parse_function
from .specialize import ArgKind
from .types import ArrayT, GlobalAddressT, RecordT, Value, const, scalar


@dataclass
class BuildStats:
    """What the builders of this process have done (tests and ``npuemu cache`` read it)."""

    lowerings: int = 0          # specialisations lowered from source
    store_hits: int = 0         # binaries found in the binary store instead


STATS = BuildStats()


class KernelBuilder:
    """The binaries of one kernel, by specialisation."""

    def __init__(self, kernel: KernelFunction):
        self.kernel = kernel
        self._memo: dict[tuple[Any, ...], KernelBinary] = {}
        self._tested: dict[tuple[Any, ...], frozenset[int]] = {}   # tiling keys each specialisation tests
        self._lock = threading.Lock()

    def binaries(self) -> list[KernelBinary]:
        """The binaries built or loaded so far in this process."""
        return list(self._memo.values())

    def clear(self) -> None:
        """Forget the binaries of this process (the binary store keeps its own)."""
        with self._lock:
            self._memo.clear()
            self._tested.clear()

    def binary(self, kinds: tuple[ArgKind, ...], options: Options, native: bool = True) -> KernelBinary:
        """The binary for these argument kinds and options; with ``native`` its machine code is ready."""
        options = with_default_kernel_type(self.kernel, options)
        platform = get_platform(options.platform)
        base = (kinds, options.resolved_kernel_type, platform.key, options.check, sync_mode(options),
                options.profile)
        b = self._known(base, options.tiling_key)
        if b is None:
            with self._lock:
                b = self._known(base, options.tiling_key)
                if b is None:
                    b = self._stored(kinds, options, platform) or self._build(kinds, options, platform)
                    for message in b.facts.redundant_syncs:
                        warnings.warn(RedundantSyncWarning(message), stacklevel=3)
                    self._tested[base] = frozenset(b.facts.tiling_keys)
                    check_tiling_key(self.kernel.__name__, b.facts.tiling_keys, options.tiling_key)
                    self._memo[(base, b.key.tiling_key)] = b
        if native:
            b.native()
        return b

    def tiling_keys(self, kinds: tuple[ArgKind, ...], options: Options) -> tuple[int, ...]:
        """The tiling keys the kernel tests for these argument kinds (empty: it does not branch on one).

        Learned by lowering the kernel (once per specialisation), without building anything.
        """
        options = with_default_kernel_type(self.kernel, options)
        platform = get_platform(options.platform)
        base = (kinds, options.resolved_kernel_type, platform.key, options.check, sync_mode(options),
                options.profile)
        tested = self._tested.get(base)
        if tested is None:
            parsed = parse_function(self.kernel.fn)
            values = {name: _Params().value(name, k) for name, k in zip(self.kernel.signature.parameters, kinds)}
            lw = Lowerer(self.kernel.__name__, platform, options)
            lw.lower_kernel(parsed, values)
            tested = self._tested.setdefault(base, frozenset(lw.facts.tiling_keys))
        return tuple(sorted(tested))

    def _known(self, base: tuple[Any, ...], tiling_key: int | None) -> KernelBinary | None:
        tested = self._tested.get(base)
        if tested is None:
            return None
        check_tiling_key(self.kernel.__name__, tested, tiling_key)
        return self._memo.get((base, tiling_key if tested else None))

    def _stored(self, kinds: tuple[ArgKind, ...], options: Options, platform: Platform) -> KernelBinary | None:
        """The binary from the store, if a process built it before; tried first with the launch's tiling
        key, then without one (a kernel that does not branch on the key has one binary for all keys)."""
        if os.environ.get("NPUEMU_NO_STORE") or self.kernel.fingerprint is None:
            return None
        tried = (options.tiling_key, None) if options.tiling_key is not None else (None,)
        for tk in tried:
            key = binary_key(self.kernel, kinds, options, platform, tk)
            if not key.persistent:
                return None
            b = store.get(key.sha256)
            if b is not None and (tk is None) == (not b.facts.tiling_keys):
                STATS.store_hits += 1
                return _moved_here(b, self.kernel)
        return None

    def _build(self, kinds: tuple[ArgKind, ...], options: Options, platform: Platform) -> KernelBinary:
        b = lower_binary(self.kernel, kinds, options, platform)
        store.put(b)
        return b


def _moved_here(binary: KernelBinary, kernel: KernelFunction) -> KernelBinary:
    """``binary`` with its source locations in the folder the kernel's file is in now.

    The key has no paths, so a binary built in a checkout that has moved since
    is found again; its messages must name the files where they are now.  The
    folders are told apart by the part of the path both files end with.
    """
    try:
        now = Path(inspect.getsourcefile(kernel.fn) or "").resolve()
    except TypeError:
        return binary
    then = next((Path(loc.filename) for loc in binary.locs if loc.function == kernel.__name__), None)
    if then is None or then == now or then.name != now.name:
        return binary
    old, new = then.parts, now.parts
    common = 0
    while common < min(len(old), len(new)) and old[-1 - common] == new[-1 - common]:
        common += 1
    return binary.relocated(str(Path(*old[:len(old) - common])), str(Path(*new[:len(new) - common])))


def check_tiling_key(kernel: str, tested: Any, key: int | None) -> None:
    """A launch's tiling key must select a branch of a kernel that tests keys (``asc.tiling_key_is``)."""
    if not tested:
        return
    keys = ", ".join(map(str, sorted(tested)))
    if key is None:
        raise LaunchError(f"kernel '{kernel}' branches on the tiling key (asc.tiling_key_is: {keys}); "
                          f"launch it with tiling_key=<key>")
    if key not in tested:
        raise LaunchError(f"kernel '{kernel}': tiling key {key} has no branch in the kernel; "
                          f"supported tiling keys: {keys}")


# --------------------------------------------------------------------------- keys


def binary_key(kernel: KernelFunction, kinds: tuple[ArgKind, ...], options: Options, platform: Platform,
               tiling_key: int | None) -> BinaryKey:
    """The key of ``kernel`` specialised for ``kinds``; its source hash is empty if something the
    kernel depends on has no stable description."""
    specs = tuple(arg_spec(name, k) for name, k in zip(kernel.signature.parameters, kinds))
    source = kernel.fingerprint or ""
    if any(s.value is None and s.kind in ("const", "struct") for s in specs):
        source = ""
    return BinaryKey(kernel=kernel.key_name, source=source, args=specs,
                     kernel_type=options.resolved_kernel_type.name, platform=platform.name,
                     platform_profile=hashlib.sha256(platform.key.encode()).hexdigest(), check=options.check,
                     tiling_key=tiling_key, compiler=compiler_fingerprint(), sync=sync_mode(options),
                     profile=options.profile)


def sync_mode(options: Options) -> str:
    """The ``sync`` field of a key: which synchronisation passes the lowering runs."""
    return "+".join(m for m, on in (("auto", options.auto_sync), ("verify", options.verify_sync)) if on)


def arg_spec(name: str, k: ArgKind) -> ArgSpec:
    """One parameter's part of the key."""
    if k.kind == "gm":
        return ArgSpec(name, "gm", dtype=k.dtype.name, format="ND")
    if k.kind == "const":
        return ArgSpec(name, "const", type=type(k.const).__name__, value=describe_value(k.const))
    if k.kind == "struct":
        return ArgSpec(name, "struct", type=f"{k.dtype.__module__}.{k.dtype.__qualname__}",
                       value=describe_value(k.dtype))
    return ArgSpec(name, k.kind)


# --------------------------------------------------------------------------- lowering


def lower_binary(kernel: KernelFunction, kinds: tuple[ArgKind, ...], options: Options,
                 platform: Platform) -> KernelBinary:
    """Lower ``kernel`` for ``kinds`` and return its binary (machine code not compiled yet)."""
    STATS.lowerings += 1
    parsed = parse_function(kernel.fn)
    params = _Params()
    values = {name: params.value(name, k) for name, k in zip(kernel.signature.parameters, kinds)}
    lw = Lowerer(kernel.__name__, platform, options)
    lw.lower_kernel(parsed, values)
    lw.finish_sync()
    tested = frozenset(lw.facts.tiling_keys)
    check_tiling_key(kernel.__name__, tested, options.tiling_key)     # before anything is compiled
    key = binary_key(kernel, kinds, options, platform, options.tiling_key if tested else None)
    arrays = tuple(name for name, p in zip(params.arg_names, params.scalars) if p.kind.endswith("[]"))
    source = module_source(lw.em, lw.runtime_vars, params.arg_names, lw.epilogue,
                           generator=lw.facts.blocking, gm_params=len(params.gm), array_params=arrays)
    module = generated_module(kernel.__name__, source)
    note_binary(module.path.stem, f"{kernel.key_name} ({os.path.basename(parsed.filename)}:{parsed.first_line})",
                key.describe())
    facts = lw.facts.freeze(params.gm, params.scalars)
    return KernelBinary(key=key, name=kernel.__name__, module=module, facts=facts, locs=tuple(lw.em.locs),
                        kernel_type=KernelType(options.resolved_kernel_type), platform=platform)


class _Params:
    """The kernel parameters as lowering values, and the generated function's own parameters."""

    def __init__(self) -> None:
        self.gm: list[str] = []                     # GM parameters, in region order
        self.scalars: list[ScalarParam] = []        # run-time scalars, in parameter order
        self.arg_names: list[str] = []              # the generated function's parameter names

    def value(self, name: str, kind: ArgKind) -> Value:
        if kind.kind == "const":
            return const(kind.const)
        if kind.kind == "gm":
            self.gm.append(name)
            return Value(GlobalAddressT(kind.dtype), code=(str(len(self.gm) - 1), "0"))
        if kind.kind == "struct":
            return self._struct(kind.dtype, name, ())
        return scalar(kind.kind, self._param(name, (), kind.kind))

    def _param(self, pname: str, path: tuple[str, ...], kind: str) -> str:
        """A new parameter of the generated function for (a field of) kernel parameter ``pname``."""
        var = "a_" + "__".join((pname, *path))
        self.arg_names.append(var)
        self.scalars.append(ScalarParam(pname, path, kind))
        return var

    def _struct(self, cls: type[Struct], pname: str, path: tuple[str, ...]) -> Value:
        names, items = [], []
        for fname, f in cls._struct_fields_:
            names.append(fname)
            fpath = path + (fname,)
            if isinstance(f, StructField):
                items.append(self._struct(f.struct_type, pname, fpath))
            elif isinstance(f, ArrayField):
                # one read-only array parameter (int64 or float32 elements) per array field
                kind = _scalar_kind(f.dtype)
                var = self._param(pname, fpath, kind + "[]")
                items.append(Value(ArrayT(kind, f.n, var, ".".join((pname, *fpath)))))
            else:
                kind = _scalar_kind(f.dtype)
                items.append(scalar(kind, self._param(pname, fpath, kind)))
        return Value(RecordT(cls, tuple(names)), items=tuple(items))


def _scalar_kind(dtype: Any) -> str:
    return "float" if dtype.is_float else "int"
