"""The selection key of a kernel binary, byte for byte as CANN's opapi forms it, and its hash.

superkernel-binaries-tiling.md §2.4-2.5 (opbase ``op_kernel.cpp``: ``ParseContext``,
``AssembleKeyForSingleTensor``, ``ParseAttributes``, ``HashBinary``).  A key is
a byte string:

* context ``<d>/<p>/``: ``d`` is ``'1'`` (deterministic) or ``'0'``; ``p`` is
  ``'0'`` plus the bit index of the implementation mode (``high_performance``
  0x2 gives ``'1'``, ``high_precision`` 0x4 gives ``'2'``: ``ToIndexChar``);
* per input, then per output: the GE data-type byte and format byte; an
  absent optional tensor adds nothing; a dynamic list adds its first
  tensor's bytes and ``FORMAT_END + count``; an input whose rank differs
  between binaries adds ``FORMAT_END + rank`` (never for shape ``[-2]``);
* per attribute that is not *supportAll*: ``'/'`` and its value (bool: one
  byte; int: 8 bytes little-endian; float: the float32's 4 bytes; list:
  ``'[' len ']'``; string: its UTF-8 bytes).

Bytes past 255 wrap, as C++'s ``char`` does.  The binaries' side builds keys
from index entries (:func:`entry_keys`), the call's side from its tensors
(``npuemu.ops.select``); both go through the functions here, so they agree.

Static (shape-specialised) binaries are found by a text key that carries
concrete shapes (:func:`static_key`), hashed the same way.
"""
from __future__ import annotations

import json
import struct
from typing import Any, Iterable, Mapping, Sequence

from .codes import DTYPES, FORMAT_END, FORMATS, OpDefError

DETERMINISTIC, NON_DETERMINISTIC, SLASH = b"1", b"0", b"/"
# OpImplMode bits (opbase opdev/op_def.h); the key holds '0' + the bit's index
IMPL_MODE_BITS: dict[str, int] = {
    "default": 0x1, "high_performance": 0x2, "high_precision": 0x4, "super_performance": 0x8,
    "support_out_of_bound_index": 0x10, "enable_float_32_execution": 0x20,
    "enable_hi_float_32_execution": 0x40, "keep_fp16": 0x80,
}
HASH_SEED = 0x9E3779B9              # OP_API_HASH_SEED
_MASK = (1 << 64) - 1
_WORDS = struct.Struct("<Q")


# --------------------------------------------------------------------------- pieces


def impl_mode_char(mode: str) -> bytes:
    """``ToIndexChar``: ``'0'`` + the index of the mode's bit."""
    try:
        bit = IMPL_MODE_BITS[mode]
    except KeyError:
        raise OpDefError(f"unknown implementation mode {mode!r}; known: {', '.join(IMPL_MODE_BITS)}") from None
    return bytes((ord("0") + bit.bit_length() - 1,))


def context_key(deterministic: bool, impl_mode: str) -> bytes:
    """``<d>/<p>/``."""
    return (DETERMINISTIC if deterministic else NON_DETERMINISTIC) + SLASH + impl_mode_char(impl_mode) + SLASH


def tensor_key(dtype: str, format: str, *, rank: int | None = None, count: int | None = None) -> bytes:  # noqa: A002
    """One tensor's bytes: data type, format, then the rank marker and the dynamic-list count if given."""
    out = bytes((DTYPES[dtype], FORMATS[format]))
    if rank is not None:
        out += bytes(((FORMAT_END + rank) & 0xFF,))
    if count is not None:
        out += bytes(((FORMAT_END + count) & 0xFF,))
    return out


def attr_key(attr_type: str, value: Any) -> bytes:
    """``'/'`` and an attribute value's bytes, by its declared type (what a call's value contributes)."""
    if attr_type == "bool":
        body = bytes((int(bool(value)),))
    elif attr_type == "int":
        body = (int(value) & _MASK).to_bytes(8, "little")
    elif attr_type == "float":
        body = struct.pack("<f", float(value))
    elif attr_type in ("list_int", "list_float"):
        body = b"[" + bytes((len(value) & 0xFF,)) + b"]"
    elif attr_type == "str":
        body = str(value).encode()
    else:
        raise OpDefError(f"unknown attribute type {attr_type!r}")
    return SLASH + body


def json_attr_key(value: Any) -> bytes:
    """``'/'`` and the bytes of an attribute value as an index entry holds it (by its JSON type, as
    ``ParseAttributes`` does): ints and floats differ, so entries write a float attribute's values as floats."""
    if isinstance(value, bool):
        return attr_key("bool", value)
    if isinstance(value, float):
        return attr_key("float", value)
    if isinstance(value, int):
        return attr_key("int", value)
    if isinstance(value, (list, tuple)):
        return attr_key("list_int", value)
    return attr_key("str", value)


# --------------------------------------------------------------------------- hash


def key_hash(key: bytes) -> int:
    """``HashBinary``: 8-byte little-endian words folded boost-style into a 64-bit seed (start 0).

    ``seed ^= hash(w) + 0x9e3779b9 + (seed << 6) + (seed >> 2)`` per word, with
    libstdc++'s ``std::hash<uint64_t>`` (the identity) and size_t arithmetic;
    a tail shorter than 8 bytes is zero-padded into one more word.
    """
    seed = 0
    whole = len(key) & ~7
    for (w,) in _WORDS.iter_unpack(key[:whole]):
        seed ^= (w + HASH_SEED + (seed << 6) + (seed >> 2)) & _MASK
    if whole != len(key):
        w = int.from_bytes(key[whole:], "little")
        seed ^= (w + HASH_SEED + (seed << 6) + (seed >> 2)) & _MASK
    return seed


def readable(key: bytes) -> str:
    """A key for messages: the context as text, then the byte values (``GetReadableKey``'s spirit)."""
    head, sep, rest = key.partition(SLASH)
    mode, sep2, tail = rest.partition(SLASH)
    if not (sep and sep2):
        return key.hex()
    return f"{head.decode(errors='replace')}/{mode.decode(errors='replace')}/|{','.join(str(b) for b in tail)}"


# --------------------------------------------------------------------------- the index side


def attrs_support_all(entries: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Per attribute position, whether keys leave it out (``JudgeAttrSupportAll``/``HandleAttrValue``).

    An attribute is supportAll unless some entry gives it a bool or string
    value, or entries give it numbers (or lists) that differ; null, ``"ALL"``
    and ``[]`` mean "every value".
    """
    flags: list[bool] = []
    seen: list[Any] = []
    for entry in entries:
        for i, attr in enumerate(entry.get("attrs") or ()):
            if i >= len(flags):
                flags.append(True)
                seen.append(None)
            if not flags[i]:
                continue
            v = attr.get("value")
            if v is None or v == "ALL" or (isinstance(v, list) and not v):
                continue
            if isinstance(v, (bool, str)):
                flags[i] = False
                continue
            norm = ("list", len(v)) if isinstance(v, list) else (
                ("float", struct.pack("<f", v)) if isinstance(v, float) else ("int", int(v)))
            if seen[i] is None:
                seen[i] = norm
            elif seen[i] != norm:
                flags[i] = False
    return flags


def inputs_need_rank(entries: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Per input position, whether keys carry its rank (``JudgeInputSupportAll``): the first entry with
    shape ``[-2]`` makes it "any rank"; otherwise ranks that differ between entries make it matter."""
    state: list[str | None] = []        # None: undecided; "all"; "ranks"
    rank: list[int | None] = []
    for entry in entries:
        for i, t in enumerate(entry.get("inputs") or ()):
            if i >= len(state):
                state.append(None)
                rank.append(None)
            if state[i] is not None or t is None:
                continue
            first = t[0] if isinstance(t, list) and t else t
            shape = first.get("shape") if isinstance(first, dict) else None
            if not isinstance(shape, list):
                continue
            if shape == [-2]:
                state[i] = "all"
            elif rank[i] is None:
                rank[i] = len(shape)
            elif rank[i] != len(shape):
                state[i] = "ranks"
    return [s == "ranks" for s in state]


def _tensors_key(tensors: Iterable[Any], need_rank: Sequence[bool]) -> bytes:
    out = b""
    for i, t in enumerate(tensors):
        if t is None or (isinstance(t, dict) and t.get("type") == "null"):
            continue
        first = t[0] if isinstance(t, list) else t
        rank = len(first["shape"]) if i < len(need_rank) and need_rank[i] else None
        out += tensor_key(first["dtype"], first["format"], rank=rank,
                          count=len(t) if isinstance(t, list) else None)
    return out


def entry_keys(entry: Mapping[str, Any], support_all: Sequence[bool], need_rank: Sequence[bool] = ()
               ) -> list[tuple[bytes, bool]]:
    """The keys of one index entry, with their deterministic flag: two (``'1'`` then ``'0'``) when the
    entry says ``"deterministic": "ignore"`` or nothing."""
    det = entry.get("deterministic", "ignore")
    flags = [True] if det == "true" else [False] if det == "false" else [True, False]
    body = _tensors_key(entry.get("inputs") or (), need_rank) + _tensors_key(entry.get("outputs") or (), ())
    for attr, every in zip(entry.get("attrs") or (), support_all):
        if not every:
            body += json_attr_key(attr.get("value"))
    return [(context_key(d, entry["implMode"]) + body, d) for d in flags]


def static_key(op: str, deterministic: bool, impl_mode: str, tensors: Iterable[tuple[str, str, Sequence[int]]],
               attrs: Mapping[str, Any]) -> str:
    """The key of a static binary: ``<Op>/d=<d>,p=<p>/<dtype>,<format>,(<dims>)/.../<attr>=<value>...``.

    Concrete storage shapes and every attribute value, so a static binary is
    only taken for exactly the call it was built for.
    """
    parts = [op, f"d={int(deterministic)},p={impl_mode_char(impl_mode).decode()}"]
    parts += [f"{DTYPES[d]},{FORMATS[f]},({','.join(str(int(n)) for n in shape)})" for d, f, shape in tensors]
    parts += [f"{k}={json.dumps(v, sort_keys=True)}" for k, v in sorted(attrs.items())]
    return "/".join(parts)
