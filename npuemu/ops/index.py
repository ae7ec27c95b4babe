"""The binaries of an op on one platform, keyed for selection, and the index file that lists the built ones.

Like opapi's ``OpKernel`` (superkernel-binaries-tiling.md §2.3-2.4), an
:class:`OpIndex` holds every binary the op definition declares, in a map
from the hash of its selection key (:mod:`.selection_key`) to an
:class:`OpBinary`, and the static binaries in a second map keyed by the hash
of their shape-carrying key.  Keys are formed from index entries as CANN
forms them from its ``binList``; two entries with one hash but different
keys are a :class:`KeyConflictError`, two with the same key keep the first
(with a warning).

On disk, under the kernel cache (``NPUEMU_CACHE_DIR``)::

    ops/<platform>/<Op>.json                {"binList": [...], "staticList": [...]}: the built binaries
    ops/<platform>/<Op>/<Op>_<hash>.json    one descriptor per binary (:mod:`.binaries`)

The index file is read once per process, when the op is first selected on the
platform; a binary built later (by this process, ahead of time by ``npuemu
build``, or lazily on its first selection) is added to it under a file lock,
so processes building at once lose nothing.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..binary.store import store_dir
from ..errors import NpuemuError
from ..platform import Platform
from .codes import OpDefError
from .opdef import DYNAMIC, OpDef
from .selection_key import (attrs_support_all, context_key, entry_keys, inputs_need_rank, key_hash, readable,
                            static_key)
from .variants import Variant, declared_variants, describe, entry

FORMAT_VERSION = 1


class KeyConflictError(NpuemuError):
    """Two binaries of an op have selection keys with the same hash (``ACLNN_ERR_INNER_KEY_CONFLICT``)."""


class IndexWarning(UserWarning):
    """An index file or entry could not be used; the binaries it named are built again."""


@dataclass(eq=False)
class OpBinary:
    """One binary of an op: its variant, index entry and selection keys, and what is built of it.

    keys: the selection keys (two for deterministic "ignore"); a static binary has one, its text key.
    json_path: the descriptor's path relative to ``<cache>/ops`` once built (``binInfo.jsonFilePath``).
    kernels: the kernel binaries this process has for it, by (check level, tiling key or None).
    """

    op: OpDef
    platform: Platform
    variant: Variant
    entry: dict[str, Any]
    keys: tuple[bytes, ...]
    json_path: str | None = None
    descriptor: dict[str, Any] | None = None
    kernels: dict[tuple[str, int | None], Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def static(self) -> bool:
        return self.variant.static

    @property
    def name(self) -> str:
        """``<Op>_<hash of its first key>`` (static: ``<Op>_static_<hash>``), the descriptor's file name."""
        return f"{self.op.name}_{'static_' if self.static else ''}{key_hash(self.keys[0]):016x}"

    def describe(self) -> str:
        return describe(self.op, self.variant)


def ops_dir() -> Path:
    """``<cache>/ops``: index files and descriptors, beside the binary store."""
    return store_dir().parent / "ops"


class OpIndex:
    """The binaries of ``op`` on ``platform`` (see the module docstring)."""

    def __init__(self, op: OpDef, platform: Platform):
        self.op = op
        self.platform = platform
        self.folder = ops_dir() / platform.name
        self.path = self.folder / f"{op.name}.json"
        self.lock = threading.RLock()
        self.bins: dict[int, OpBinary] = {}
        self.static_bins: dict[int, OpBinary] = {}
        self.dynamic = [i for i, p in enumerate(op.inputs) if p.param_type == DYNAMIC]
        if any(p.param_type == DYNAMIC for p in op.outputs):
            raise OpDefError(f"op {op.name}: binaries of ops with dynamic outputs are not supported yet")
        # flags as CANN derives them from the whole binList; lists of length 1 stand in for dynamic inputs
        template = [entry(op, v) for v in declared_variants(op, [1] * len(self.dynamic))]
        self.support_all = attrs_support_all(template)
        self.need_rank = inputs_need_rank(template)
        self.in_formats = [frozenset(c.inputs[i][1] for c in op.columns) for i in range(len(op.inputs))]
        self.out_formats = [frozenset(c.outputs[i][1] for c in op.columns) for i in range(len(op.outputs))]
        self.key_attrs = [(a.name, a.type) for a, every in zip(op.attrs, self.support_all) if not every]
        self.contexts = {(d, m): context_key(d, m) for d in (False, True) for m in op.impl_modes}
        self._counts: set[tuple[int, ...]] = set()
        if not self.dynamic:
            self._declare(declared_variants(op))
        self._load()

    # ------------------------------------------------------------------ keys

    def _declare(self, variants: list[Variant]) -> None:
        for v in variants:
            e = entry(self.op, v)
            keys = tuple(k for k, _ in entry_keys(e, self.support_all, self.need_rank))
            self._insert(self.bins, OpBinary(self.op, self.platform, v, e, keys))

    def declare_counts(self, counts: tuple[int, ...]) -> None:
        """Declare the binaries for these list lengths of the dynamic inputs (on their first call)."""
        with self.lock:
            if counts not in self._counts:
                self._counts.add(counts)
                self._declare(declared_variants(self.op, list(counts)))

    def _insert(self, table: dict[int, OpBinary], b: OpBinary) -> OpBinary:
        """Add ``b`` under each of its keys' hashes (``HashAndInsert``); returns the binary kept."""
        kept = b
        for key in b.keys:
            h = key_hash(key)
            other = table.get(h)
            if other is None:
                table[h] = b
            elif key not in other.keys:
                raise KeyConflictError(
                    f"op {self.op.name} on {self.platform.name}: binaries {b.describe()!r} and {other.describe()!r} "
                    f"have the same key hash {h:#018x} but different keys [{readable(key)}] and "
                    f"[{readable(other.keys[0])}]")
            elif other is not b:
                warnings.warn(f"op {self.op.name}: binaries {other.describe()!r} and {b.describe()!r} have the same "
                              f"selection key; the first is kept", IndexWarning, stacklevel=3)
                kept = other
        return kept

    def declared(self) -> list[OpBinary]:
        """Every dynamic binary declared so far, once each, in declaration order."""
        return list(dict.fromkeys(self.bins.values()))

    def add_static(self, b: OpBinary) -> OpBinary:
        with self.lock:
            return self._insert(self.static_bins, b)

    def static_key(self, deterministic: bool, mode: str, tensors: list[tuple[str, str, Any]],
                   attrs: dict[str, Any]) -> bytes:
        return static_key(self.op.name, deterministic, mode, tensors, attrs).encode()

    # ------------------------------------------------------------------ the file

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
            if data.get("formatVersion") != FORMAT_VERSION:
                return
            bin_list, static_list = list(data.get("binList", [])), list(data.get("staticList", []))
        except FileNotFoundError:
            return
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            warnings.warn(f"npuemu: op index {self.path} is unreadable ({exc}); its binaries are built again",
                          IndexWarning, stacklevel=3)
            return
        for e in bin_list:
            try:
                self._load_entry(e)
            except (KeyError, TypeError, ValueError, IndexError):
                continue        # an entry of another definition of the op: built again when selected
        for e in static_list:
            try:
                self._load_static(e)
            except (KeyError, TypeError, ValueError, IndexError):
                continue

    def _load_entry(self, e: dict[str, Any]) -> None:
        if self.dynamic:
            lists = [len(e["inputs"][i]) for i in self.dynamic]
            self.declare_counts(tuple(lists))
        for key, _ in entry_keys(e, self.support_all, self.need_rank):
            b = self.bins.get(key_hash(key))
            if b is not None and key in b.keys:
                b.json_path = e["binInfo"]["jsonFilePath"]

    def _load_static(self, e: dict[str, Any]) -> None:
        v = e["variant"]
        variant = Variant(int(v["column"]), v["implMode"], tuple((k, _tuple(x)) for k, x in v["attrs"]),
                          tuple(v["counts"]), tuple(tuple(s) for s in v["shapes"]),
                          tuple((k, _tuple(x)) for k, x in v["staticAttrs"]), bool(v["deterministic"]))
        b = OpBinary(self.op, self.platform, variant, entry(self.op, variant), (e["simplifiedKey"].encode(),),
                     e["binInfo"]["jsonFilePath"])
        if self.static_key_of(variant) == b.keys[0]:        # else the op's definition changed since
            self.add_static(b)

    def static_key_of(self, v: Variant) -> bytes:
        """The key a call must produce to take static variant ``v``."""
        col = self.op.columns[v.column]
        dtypes = [d for n, (d, f) in zip(v.counts, col.inputs) for _ in range(n)] + [d for d, _ in col.outputs]
        fmts = [f for n, (d, f) in zip(v.counts, col.inputs) for _ in range(n)] + [f for _, f in col.outputs]
        return self.static_key(v.deterministic, v.impl_mode, list(zip(dtypes, fmts, v.shapes or ())),
                               dict(v.static_attrs))

    def record(self, b: OpBinary) -> None:
        """Write ``b`` (just built: its ``json_path`` is set) into the index file, keeping what other
        processes wrote meanwhile."""
        with self.lock, _file_lock(self.folder / f".{self.op.name}.lock"):
            try:
                data = json.loads(self.path.read_text())
                if data.get("formatVersion") != FORMAT_VERSION:
                    raise ValueError("another format")
            except (OSError, ValueError):
                data = {}
            name = "staticList" if b.static else "binList"
            mine = _listed(b)
            ident = mine.get("simplifiedKey") or mine["selectionKeys"][0]["key"]
            kept = [e for e in data.get(name, []) if (e.get("simplifiedKey") or
                                                      (e.get("selectionKeys") or [{}])[0].get("key")) != ident]
            data = {"formatVersion": FORMAT_VERSION, "opType": self.op.name, "platform": self.platform.name,
                    "binList": data.get("binList", []), "staticList": data.get("staticList", [])}
            data[name] = kept + [mine]
            write_json(self.path, data)


def _tuple(x: Any) -> Any:
    return tuple(_tuple(v) for v in x) if isinstance(x, list) else x


def _listed(b: OpBinary) -> dict[str, Any]:
    """``b``'s index entry as written: the support info, ``binInfo`` and its keys."""
    out = dict(b.entry)
    out["binInfo"] = {"jsonFilePath": b.json_path}
    if b.static:
        v = b.variant
        out["simplifiedKey"] = b.keys[0].decode()
        out["variant"] = {"column": v.column, "implMode": v.impl_mode, "attrs": [list(a) for a in v.attrs],
                          "counts": list(v.counts), "shapes": [list(s) for s in v.shapes or ()],
                          "staticAttrs": [list(a) for a in v.static_attrs], "deterministic": v.deterministic}
    else:
        out["selectionKeys"] = [{"key": k.hex(), "hash": key_hash(k)} for k in b.keys]
    return out


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it), readable by everyone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o644 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- one index per op and platform

_INDEXES: dict[tuple[int, str], tuple[OpDef, OpIndex]] = {}
_LOCK = threading.Lock()


def index_for(op: OpDef, platform: Platform) -> OpIndex:
    """The process's index of ``op`` on ``platform`` (its file is read the first time)."""
    found = _INDEXES.get((id(op), platform.key))
    if found is not None:
        return found[1]
    with _LOCK:
        found = _INDEXES.get((id(op), platform.key))
        if found is None:
            found = (op, OpIndex(op, platform))     # the op is held, so its id is not reused
            _INDEXES[(id(op), platform.key)] = found
    return found[1]


def forget_indexes() -> None:
    """Drop every index of this process (the next selection reads the files again)."""
    with _LOCK:
        _INDEXES.clear()
