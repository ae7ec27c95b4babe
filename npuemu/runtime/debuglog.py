"""Host side of ``printf`` and ``dump_tensor``: decode each core's log buffer and print it.

After a launch every core that logged something prints, in core order, a
``DumpHead`` line followed by its records, as the CANN dump tool does::

    opType=my_kernel, DumpHead: AIV-0, CoreType=AIV, block dim=8, total_block_num=8, block_remain_len=1048456, \
block_initial_space=1048576, rsv=0, magic=5aa5bccd
    x = 3
    DumpTensor: desc=5, addr=0, data_type=float32, position=UB, dump_size=4
    [1.000000, 2.000000, 3.000000, 4.000000]

``opType`` is the kernel's name, ``total_block_num`` the number of cores that
logged and ``block_remain_len`` the bytes left in the core's 1 MiB buffer
(npuemu's record layout, so not byte-for-byte the hardware's).  The tool's
"CANN Version" line is omitted.  Dump addresses are offsets inside the
tensor's on-chip memory, or npuemu's virtual GM addresses (argument k starts
at ``(k + 1) << 32``), in hexadecimal.  Floats print as ``%f``; with a
``ShapeInfo`` the values are nested rows of that shape and missing elements
print as ``-``.
"""
from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from ..binary.facts import KernelFacts
from ..isa import debug as D
from ..isa import state as S
from ..language import dtype as dt

MAGIC = "5aa5bccd"
MASK64 = (1 << 64) - 1
CORE_TYPE_NAMES = ("AIV", "AIC")


def print_launch_logs(binary: Any, cores: list[Any], states: list[tuple[np.ndarray, ...]], block_dim: int) -> None:
    """Print the log of every core of a launch that wrote one (``states`` holds ``(st, lm, log)``)."""
    active = [(spec, st, log) for spec, (st, _, log, *_) in zip(cores, states)
              if st[S.LOG_CUR] or st[S.LOG_LOST]]
    for spec, st, log in active:
        print_core_log(spec, st, log, block_dim, binary.facts, kernel=binary.name,
                       total_block_num=len(active))


def print_core_log(spec: Any, st: np.ndarray, log: np.ndarray, block_dim: int, facts: KernelFacts | None = None,
                   *, kernel: str = "", total_block_num: int | None = None) -> None:
    """Print what one core wrote with printf/dump_tensor (nothing if it wrote nothing)."""
    if st[S.LOG_CUR] == 0 and st[S.LOG_LOST] == 0:
        return
    text = format_core_log(spec, st, log, block_dim, facts or KernelFacts(), kernel=kernel,
                           total_block_num=block_dim if total_block_num is None else total_block_num)
    sys.stdout.write(text)
    sys.stdout.flush()


def format_core_log(spec: Any, st: np.ndarray, log: np.ndarray, block_dim: int, facts: KernelFacts, *,
                    kernel: str, total_block_num: int) -> str:
    """The text :func:`print_core_log` prints."""
    core = CORE_TYPE_NAMES[spec.core_type]
    capacity = log.size * 8
    used = int(st[S.LOG_CUR])
    out = [f"opType={kernel}, DumpHead: {core}-{spec.block_idx}, CoreType={core}, block dim={block_dim}, "
           f"total_block_num={total_block_num}, block_remain_len={capacity - used * 8}, "
           f"block_initial_space={capacity}, rsv=0, magic={MAGIC}\n"]
    formats = facts.printf_formats
    sites = facts.dump_sites
    cur = 0
    while cur < used:
        kind, site, n = (int(w) for w in log[cur:cur + D.HEADER_WORDS])
        payload = log[cur + D.HEADER_WORDS:cur + D.HEADER_WORDS + n]
        cur += D.HEADER_WORDS + n
        if kind == D.REC_PRINTF:
            out.append(format_printf(formats[site], payload))
        else:
            text = "".join(out)
            out = [text if not text or text.endswith("\n") else text + "\n"]
            out.append(format_dump(sites[site], payload))
    text = "".join(out)
    if not text.endswith("\n"):
        text += "\n"
    lost = int(st[S.LOG_LOST])
    if lost:
        text += (f"[npuemu] {core}-{spec.block_idx}: the {capacity}-byte dump buffer is full; {lost} later "
                 f"printf/dump_tensor record(s) were dropped\n")
    return text


def format_printf(fmt: Any, args: np.ndarray) -> str:
    parts = []
    i = 0
    for piece in fmt.pieces:
        if isinstance(piece, str):
            parts.append(piece)
            continue
        word = int(args[i])
        i += 1
        if piece.conv == "f":
            parts.append(piece.spec % float(np.int64(word).view(np.float64)))
        elif piece.conv == "p":
            parts.append(f"0x{word & MASK64:x}")
        elif piece.conv in "ux":
            parts.append(piece.spec % (word & MASK64))
        else:
            parts.append(piece.spec % word)
    return "".join(parts)


def format_dump(site: Any, payload: np.ndarray) -> str:
    desc, n, addr = (int(w) for w in payload[:D.DUMP_FIELDS])
    d = dt.by_name(site.dtype)
    raw = np.ascontiguousarray(payload[D.DUMP_FIELDS:]).view(np.uint8)[:n * d.sizeof()]
    values = [_element_text(v, d) for v in _decode(raw, d)]
    head = (f"DumpTensor: desc={desc}, addr={addr:x}, data_type={site.dtype}, position={site.position}, "
            f"dump_size={n}\n")
    if site.shape is None:
        return head + "[" + ", ".join(values) + "]\n"
    total = math.prod(site.shape)
    cells = values[:total] + ["-"] * max(0, total - len(values))
    return head + _nest(cells, site.shape) + "\n"


def _decode(raw: np.ndarray, d: dt.DataType) -> np.ndarray:
    if d is dt.float16:
        return raw.view(np.float16).astype(np.float64)
    if d is dt.bfloat16:
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return raw.view(d.storage)


def _element_text(v: Any, d: dt.DataType) -> str:
    return "%f" % float(v) if d.is_float else str(int(v))


def _nest(cells: list[str], shape: tuple[int, ...]) -> str:
    """Rows of ``shape``: ``[[a, b],\\n[c, d]]``; after a ``-`` the separator has no space."""
    if len(shape) == 1:
        row = "".join(c + ("" if i == len(cells) - 1 else "," if c == "-" else ", ") for i, c in enumerate(cells))
        return f"[{row}]"
    step = len(cells) // shape[0]
    inner = [_nest(cells[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ",\n".join(inner) + "]"
