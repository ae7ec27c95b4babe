"""Building an op's binaries and finding the kernel of one for a tiling key.

An op's binary (an :class:`~npuemu.ops.index.OpBinary`: a column x impl mode x
attribute binary values) is one :class:`~npuemu.binary.kernel_binary.KernelBinary`
per tiling key its kernel branches on (``kernel.tiling_keys``), as a CANN
binary holds one kernel per tiling key (its ``kernelList``).  Building it
lowers the kernel for each key (``kernel.compile``), records each binary in
the binary store and writes a descriptor in CANN's manner::

    {"binFileName": "Add_3f2a...", "opType": "Add", "coreType": "AiCore", "kernelType": "AIV_ONLY",
     "blockDim": -1, "implMode": ..., "deterministic": ..., "inputs": [...], "outputs": [...], "attrs": [...],
     "kernelList": [{"kernelName": "Add_3f2a..._0", "tilingKey": 0, "check": "default",
                     "binarySha256": "<KernelBinary sha256>"}, ...],
     "selectionKeys": [{"key": "<hex>", "hash": ...}], "supportInfo": {...}, "sha256": "..."}

then adds the binary to the op's index file.  Binaries are built on their
first selection (the machine code of a kernel on its first launch) or ahead of
time with :func:`build` / ``npuemu build``.  A process that finds the
descriptor takes each kernel from the binary store without lowering it; a
kernel whose key no longer matches (the kernel or npuemu changed) is rebuilt.

A static binary is built for concrete shapes and attribute values: the
tiling runs when it is built, the descriptor keeps its result (``blockDim``,
tiling key and data), and a call with exactly those shapes launches it
without tiling.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from typing import Any, Callable, Sequence

from ..binary.kernel_binary import KernelBinary
from ..errors import KernelCompileError, LaunchError
from ..host.run import make_context, run_tiling
from ..host.tiling import TensorDesc, TilingResult
from ..options import from_environment
from ..platform import Platform, get_platform
from .codes import OpDefError
from .index import IndexWarning, OpBinary, OpIndex, index_for, ops_dir, write_json
from .opdef import DYNAMIC, OPTIONAL, OpDef
from .selection_key import key_hash
from .variants import Variant, describe, entry, kernel_layout, kernel_signature, tensor_count

Progress = Callable[[str], None]


def default_check(op: OpDef) -> str:
    """The check level launches of ``op`` build for unless told otherwise (decorator, then environment)."""
    return from_environment(**op.kernel.options).check


# --------------------------------------------------------------------------- the kernel for a tiling key


def kernel_for(b: OpBinary, tiling_key: int, check: str) -> KernelBinary:
    """The kernel of binary ``b`` for ``tiling_key`` at check level ``check``, built if need be.

    A tiling key the binary has no kernel for is a :class:`LaunchError` naming the key and the kernels
    that exist (CANN: the runtime finds no function for the key).
    """
    found = b.kernels.get((check, tiling_key))
    if found is None:
        found = b.kernels.get((check, None))
    if found is not None:
        return found
    with b.lock:
        entries = _entries(b, check)
        if entries is None:
            entries = _build(b, check)
        key = _entry_key(b, entries, tiling_key)
        kernel = _compile(b, check, key)
        if kernel.sha256 != entries[key]:     # the kernel or npuemu changed since the descriptor was written
            entries = _build(b, check)
            key = _entry_key(b, entries, tiling_key)
            kernel = b.kernels[(check, key)]
        b.kernels[(check, key)] = kernel
        return kernel


def _entry_key(b: OpBinary, entries: dict[int | None, str], tiling_key: int) -> int | None:
    if tiling_key in entries:
        return tiling_key
    if None in entries:             # a kernel that does not branch on the key serves every key
        return None
    listed = ", ".join(f"{b.name}_{k}" for k in sorted(entries))
    why = [e["error"] for e in (b.descriptor or {}).get("failedKernels", []) if e.get("tilingKey") == tiling_key]
    raise LaunchError(f"op {b.op.name}: binary {b.name} ({b.describe()}) has no kernel for tiling key {tiling_key}"
                      + (f" (it did not compile for these data types: {why[0]})" if why else "")
                      + f"; its kernels are for tiling key(s) {', '.join(map(str, sorted(entries)))} ({listed})")


def _compile(b: OpBinary, check: str, tiling_key: int | None, native: bool = False) -> KernelBinary:
    """``kernel.compile`` for the binary's signature: found in this process or the binary store when it
    was built before, lowered otherwise."""
    sig = kernel_signature(b.op, b.variant)
    return b.op.kernel.compile(sig, platform=b.platform, check=check, tiling_key=tiling_key, debug=not native)


def _entries(b: OpBinary, check: str) -> dict[int | None, str] | None:
    """The kernels the descriptor lists for ``check`` (tiling key -> KernelBinary sha256), None if none."""
    if b.descriptor is None and b.json_path is not None:
        b.descriptor = read_descriptor(b)
    if b.descriptor is None:
        return None
    found = {k["tilingKey"]: k["binarySha256"] for k in b.descriptor.get("kernelList", []) if k.get("check") == check}
    return found or None


def read_descriptor(b: OpBinary) -> dict[str, Any] | None:
    """The descriptor of ``b`` if it is intact (its sha256 matches its contents), else None."""
    path = ops_dir() / (b.json_path or "")
    try:
        desc = json.loads(path.read_text())
        body = {k: v for k, v in desc.items() if k != "sha256"}
        if desc.get("sha256") != _sha256(body):
            raise ValueError("its sha256 does not match its contents")
        return desc
    except FileNotFoundError:
        return None
    except (OSError, ValueError, AttributeError) as exc:
        warnings.warn(f"npuemu: binary descriptor {path} is damaged ({exc}); building the binary again",
                      IndexWarning, stacklevel=3)
        return None


def _sha256(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# --------------------------------------------------------------------------- building


def _build(b: OpBinary, check: str, native: bool = False) -> dict[int | None, str]:
    """Build every kernel of ``b`` for ``check``, write its descriptor and index entry; tiling key -> sha256."""
    op = b.op
    tested = op.kernel.tiling_keys(kernel_signature(op, b.variant), platform=b.platform, check=check)
    if b.static:        # only the tiling key its tiling chose when it was built
        keys: Sequence[int | None] = ((b.descriptor or {})["staticTiling"]["tilingKey"] if tested else None,)
    else:
        keys = tested or (None,)
    built: dict[int | None, KernelBinary] = {}
    failed: dict[int | None, KernelCompileError] = {}
    for k in keys:
        try:
            built[k] = _compile(b, check, k, native)
        except KernelCompileError as exc:       # a branch meant for other data types: no kernel for the key
            failed[k] = exc
    if not built:
        raise next(iter(failed.values()))
    for k, kernel in built.items():
        b.kernels[(check, k)] = kernel
    _write_descriptor(b, check, built, failed=failed)
    return {k: kernel.sha256 for k, kernel in built.items()}


def _write_descriptor(b: OpBinary, check: str, built: dict[int | None, KernelBinary],
                      static_tiling: dict[str, Any] | None = None,
                      failed: dict[int | None, KernelCompileError] | None = None) -> None:
    old = b.descriptor or {}
    kernels = [k for k in old.get("kernelList", []) if k.get("check") != check]
    kernels += [{"kernelName": f"{b.name}_{'all' if k is None else k}", "tilingKey": k, "check": check,
                 "binarySha256": kernel.sha256} for k, kernel in built.items()]
    errors = [e for e in old.get("failedKernels", []) if e.get("check") != check]
    errors += [{"tilingKey": k, "check": check, "error": str(exc).splitlines()[0]} for k, exc in (failed or {}).items()]
    first = next(iter(built.values()))
    static_tiling = static_tiling or old.get("staticTiling")
    body: dict[str, Any] = {
        "binFileName": b.name, "opType": b.op.name, "platform": b.platform.name, "coreType": "AiCore",
        "kernelType": first.kernel_type.name, "kernelName": first.name,
        "blockDim": static_tiling["blockDim"] if static_tiling else -1,
        "implMode": b.entry["implMode"], "deterministic": b.entry["deterministic"],
        "inputs": b.entry["inputs"], "outputs": b.entry["outputs"], "attrs": b.entry["attrs"],
        "kernelList": sorted(kernels, key=lambda k: (k["check"], -1 if k["tilingKey"] is None else k["tilingKey"])),
        "failedKernels": errors, "supportInfo": b.entry,
    }
    if b.static:
        body["simplifiedKey"] = b.keys[0].decode()
        body["staticTiling"] = static_tiling
    else:
        body["selectionKeys"] = [{"key": k.hex(), "hash": key_hash(k)} for k in b.keys]
    desc = {**body, "sha256": _sha256(body)}
    b.json_path = f"{b.platform.name}/{b.op.name}/{b.name}.json"
    write_json(ops_dir() / b.json_path, desc)
    b.descriptor = desc
    index_for(b.op, b.platform).record(b)


# --------------------------------------------------------------------------- static binaries


def static_result(b: OpBinary) -> TilingResult:
    """The tiling result a static binary was built with; a binary whose descriptor is lost or damaged is
    tiled and built again from its shapes and attribute values (with a warning if it was damaged)."""
    if b.descriptor is None:
        b.descriptor = read_descriptor(b)
    st = (b.descriptor or {}).get("staticTiling")
    if st is None:
        with b.lock:
            st = (b.descriptor or {}).get("staticTiling")
            if st is None:
                check = default_check(b.op)
                tiling = _static_tiling(b.op, b.variant, b.platform)
                tested = b.op.kernel.tiling_keys(kernel_signature(b.op, b.variant), platform=b.platform, check=check)
                key = tiling["tilingKey"] if tested else None
                built = {key: _compile(b, check, key)}
                b.kernels[(check, key)] = built[key]
                _write_descriptor(b, check, built, tiling)
                st = tiling
    layout = kernel_layout(b.op, tensor_count(b.variant, b.op))
    result = TilingResult(st["blockDim"], layout.tiling_struct.from_bytes(bytes.fromhex(st["tilingData"])),
                          st["tilingKey"], tuple(st["workspaceSizes"]), st["scheduleMode"], {"static": b.name})
    result.check()
    return result


def _static_descs(op: OpDef, v: Variant) -> tuple[list[TensorDesc], list[TensorDesc]]:
    col = op.columns[v.column]
    shapes = iter(v.shapes or ())
    ins = [TensorDesc(next(shapes), d, f) for n, (d, f) in zip(v.counts, col.inputs) for _ in range(n)]
    outs = [TensorDesc(next(shapes), d, f) for d, f in col.outputs]
    return ins, outs


def _static_tiling(op: OpDef, v: Variant, platform: Platform, values: dict[str, Any] | None = None
                   ) -> dict[str, Any]:
    """Tile static variant ``v`` (its shapes, its attribute values): the descriptor's ``staticTiling``."""
    values = dict(v.static_attrs) if values is None else values
    din, dout = _static_descs(op, v)
    tattrs = dict(values)
    if op.tiling_attrs is not None:
        tattrs.update(op.tiling_attrs(tuple(din), dict(values)))
    if op.tiling is None:
        raise OpDefError(f"op {op.name} has no tiling function")
    result = run_tiling(op.tiling, make_context(din, dout, attrs=tattrs, platform=platform), None)
    return {"blockDim": result.block_dim, "tilingKey": result.tiling_key, "tilingData": result.tiling_bytes().hex(),
            "workspaceSizes": list(result.workspace_sizes), "scheduleMode": result.schedule_mode}


def build_static(index: OpIndex, base: OpBinary, input_shapes: Sequence[Sequence[int]],
                 attrs: dict[str, Any] | None, check: str, native: bool = True) -> OpBinary:
    """The static binary of ``base``'s column, impl mode and attribute values for ``input_shapes``: tile
    now, build the kernel of the chosen tiling key, record it."""
    op = base.op
    if any(p.param_type in (DYNAMIC, OPTIONAL) for p in op.inputs):
        raise OpDefError(f"op {op.name}: static binaries are built for ops whose inputs are all required")
    if len(input_shapes) != len(op.inputs):
        raise OpDefError(f"op {op.name}: a static shape lists one shape per input ({len(op.inputs)}), "
                         f"got {len(input_shapes)}")
    values = op.attr_values({**dict(base.variant.attrs), **(attrs or {})})
    ins = [tuple(int(d) for d in s) for s in input_shapes]
    outs = ([tuple(int(d) for d in s) for s in op.infer_shape(ins, values)] if op.infer_shape is not None
            else [ins[0]] * len(op.outputs))
    v = Variant(base.variant.column, base.variant.impl_mode, base.variant.attrs, base.variant.counts,
                tuple(ins + outs), tuple(sorted((k, _frozen(x)) for k, x in values.items())), False)
    b = OpBinary(op, index.platform, v, entry(op, v), (index.static_key_of(v),))
    tiling = _static_tiling(op, v, index.platform, values)
    tested = op.kernel.tiling_keys(kernel_signature(op, v), platform=index.platform, check=check)
    key = tiling["tilingKey"] if tested else None
    built = {key: _compile(b, check, key, native)}
    b.kernels[(check, key)] = built[key]
    b = index.add_static(b)
    _write_descriptor(b, check, built, tiling)
    return b


def _frozen(x: Any) -> Any:
    return tuple(_frozen(v) for v in x) if isinstance(x, (list, tuple)) else x


# --------------------------------------------------------------------------- ahead of time


def build(op: OpDef, platform: Platform | str | None = None, *, static: Sequence[Sequence[Sequence[int]]] = (),
          attrs: dict[str, Any] | None = None, columns: Sequence[int] | None = None, check: str | None = None,
          native: bool = True, progress: Progress | None = None) -> list[OpBinary]:
    """Build ``op``'s binaries on ``platform`` ahead of time; returns them.

    Every declared binary (column x impl mode x attribute binary value x
    optional input present or not), or those of ``columns`` (indices into
    ``op.columns``); with ``static``, a list of input-shape lists, also a
    static binary per shape list and binary (output shapes from
    ``op.infer_shape``, else the first input's), with ``attrs`` for the
    attribute values.  ``native`` compiles the machine code too.
    ``progress`` is called with one line per binary.
    """
    plat = get_platform(platform)
    if op.kernel is None:
        raise OpDefError(f"op {op.name} has no kernel to build")
    index = index_for(op, plat)
    if index.dynamic:
        raise OpDefError(f"op {op.name} has dynamic inputs: its binaries are built per list length, on first use")
    level = check or default_check(op)
    chosen = [b for b in index.declared() if columns is None or b.variant.column in columns]
    done = []
    for b in chosen:
        with b.lock:
            entries = _build(b, level, native)
        done.append(b)
        if progress is not None:
            progress(f"{op.name} {plat.name}: {b.name}  {b.describe()}  tiling keys "
                     f"{', '.join('any' if k is None else str(k) for k in entries)}")
    for shapes in static:
        for b in chosen:
            if 0 in b.variant.counts:
                continue                # static binaries are for calls with every input
            s = build_static(index, b, shapes, attrs, level, native)
            done.append(s)
            if progress is not None:
                progress(f"{op.name} {plat.name}: {s.name}  {describe(op, s.variant)}  tiling key "
                         f"{s.descriptor['staticTiling']['tilingKey']}, block dim "
                         f"{s.descriptor['staticTiling']['blockDim']}")
    return done
