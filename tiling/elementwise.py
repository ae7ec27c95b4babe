"""Tiling for elementwise kernels: a tail-core split over the vector cores, then UB tiles with a tail tile.

The split follows the Ascend C tail-core and tail-tile recipes
(superkernel-binaries-tiling.md §3.5 (b) and (c)).  With ``A`` elements per
32-byte block, the length is rounded up to ``T' = ceil(total / A) * A`` and
split in whole blocks over ``n`` cores::

    x = T' / A                      # 32-byte blocks
    former_num = x % n              # the first cores take one block more
    tail_num = n - former_num
    former_length = ceil(x / n) * A
    tail_length = floor(x / n) * A

so every core starts 32-byte aligned and the two lengths differ by at most one
block.  ``n`` is at most ``x``, so no core is empty.  The last core's slice
reaches up to ``A - 1`` elements past the tensor; kernels clip it.

Inside a core the slice streams through UB in tiles of ``ub_block_num``
blocks, where ``ub_block_num`` is what the UB budget allows for the kernel's
queues (each double buffered) and scratch::

    tile_num = length / A / ub_block_num
    tile_num == 0:                     tile_length = 0; last_tile_length = ceil(length / A) * A
    (length / A) % ub_block_num == 0:  tile_length = ub_block_num * A; last_tile_length = 0
    otherwise:                         tile_length = ub_block_num * A; last_tile_length = length - tile_num * tile_length

A kernel runs ``tile_num`` full tiles and, if ``last_tile_length > 0``, one
last tile; its UB buffers hold ``max(tile_length, last_tile_length)``
elements.  ``add_example_tiling`` is ops-math's add_example tiling (§3.5 (e)).
"""
from __future__ import annotations

from npuemu.asc import Field, KnownTypes, Struct
from npuemu.host.platform_api import CoreMemType
from npuemu.host.tiling import TilingContext, TilingError, TilingResult

BLOCK = 32                 # bytes of one data block: the alignment of GM slices and UB tiles
BUFFER_NUM = 2             # double buffering: every queue holds two tiles
MAX_TILE_BYTES = 16 * 1024  # tiles of at most 16 KiB per tensor (DMA transfers this size run at full rate)

KEY_NATIVE = 0             # tiling keys of kernels with a widened variant: compute in the tensor dtype
KEY_WIDEN = 1              # ... or widen 16-bit floats to float32 for the compute step


class ElementwiseTiling(Struct):
    """Tiling data of the elementwise kernels (counts in elements)."""

    total_length = Field(KnownTypes.uint64)            # elements in the tensor
    former_num = Field(KnownTypes.uint32)              # cores 0 .. former_num - 1 take former_length
    tail_num = Field(KnownTypes.uint32)                # the other cores take tail_length
    former_length = Field(KnownTypes.uint64)
    tail_length = Field(KnownTypes.uint64)
    former_tile_num = Field(KnownTypes.uint32)         # full tiles of a former core
    former_tile_length = Field(KnownTypes.uint32)
    former_last_tile_length = Field(KnownTypes.uint32)  # 0: no partial last tile
    tail_tile_num = Field(KnownTypes.uint32)
    tail_tile_length = Field(KnownTypes.uint32)
    tail_last_tile_length = Field(KnownTypes.uint32)


def tail_core_split(total: int, align: int, cores: int) -> tuple[int, int, int, int]:
    """(former_num, tail_num, former_length, tail_length) of §3.5 (b) for ``total`` elements on ``cores``.

    ``align`` is the number of elements per 32-byte block; at most
    ``ceil(total / align)`` cores are used, so every one gets at least a block.
    """
    if total < 1 or align < 1 or cores < 1:
        raise TilingError(f"tail-core split needs positive sizes, got total={total}, align={align}, cores={cores}")
    blocks = -(-total // align)
    n = min(cores, blocks)
    former_num = blocks % n
    return former_num, n - former_num, -(-blocks // n) * align, blocks // n * align


def tail_tile_split(length: int, align: int, ub_block_num: int) -> tuple[int, int, int]:
    """(tile_num, tile_length, last_tile_length) of §3.5 (c) for a core slice of ``length`` elements."""
    blocks = length // align
    tile_num = blocks // ub_block_num
    if tile_num == 0:
        return 0, 0, -(-length // align) * align
    if blocks % ub_block_num == 0:
        return tile_num, ub_block_num * align, 0
    return tile_num, ub_block_num * align, length - tile_num * ub_block_num * align


def ub_block_num(ctx: TilingContext, align: int) -> int:
    """32-byte blocks per UB tile: what the UB holds for every queue (``BUFFER_NUM`` deep) and scratch.

    Attributes: ``scratch_bytes_per_element`` (float32 scratch and the like,
    per tile element), ``ub_reserved_bytes`` (fixed UB use), ``max_tile_bytes``.
    """
    sizes = [d.itemsize for d in (*ctx.inputs, *ctx.outputs)]
    per_element = BUFFER_NUM * sum(sizes) + int(ctx.attr("scratch_bytes_per_element", 0))
    room = ctx.platform_ascendc().get_core_mem_size(CoreMemType.UB) - int(ctx.attr("ub_reserved_bytes", 0))
    fit = room // per_element
    cap = int(ctx.attr("max_tile_bytes", MAX_TILE_BYTES)) // max(sizes)
    blocks = min(fit, cap) // align
    if blocks < 1:
        raise TilingError(f"a tile of one 32-byte block needs {per_element * align} bytes of UB; "
                          f"{ctx.platform.name} has {room} for tiles")
    return blocks


def elementwise_tiling(ctx: TilingContext) -> TilingResult:
    """Tiling of an elementwise op: every input and output has the same number of elements.

    The alignment unit is 32 bytes of the smallest dtype (so a cast kernel's
    slices are aligned for both of its dtypes).  Attribute ``widen`` selects
    tiling key :data:`KEY_WIDEN` (else :data:`KEY_NATIVE`).
    """
    tensors = (*ctx.inputs, *ctx.outputs)
    if not tensors:
        raise TilingError("elementwise tiling needs at least one input or output")
    total = tensors[0].size
    if total < 1:
        raise TilingError("elementwise tiling needs at least one element")
    if any(t.size != total for t in tensors):
        raise TilingError(f"elementwise tiling needs tensors of one size, got {[t.size for t in tensors]}")
    align = BLOCK // min(t.itemsize for t in tensors)
    cores = ctx.platform_ascendc().get_core_num_aiv()
    former_num, tail_num, former_length, tail_length = tail_core_split(total, align, cores)
    blocks = ub_block_num(ctx, align)
    f_num, f_len, f_last = tail_tile_split(former_length, align, blocks)
    t_num, t_len, t_last = tail_tile_split(tail_length, align, blocks)
    data = ElementwiseTiling(
        total_length=total, former_num=former_num, tail_num=tail_num, former_length=former_length,
        tail_length=tail_length, former_tile_num=f_num, former_tile_length=f_len, former_last_tile_length=f_last,
        tail_tile_num=t_num, tail_tile_length=t_len, tail_last_tile_length=t_last)
    key = KEY_WIDEN if ctx.attr("widen", False) else KEY_NATIVE
    return TilingResult(block_dim=former_num + tail_num, tiling_data=data, tiling_key=key)


# ---------------------------------------------------------------------------- ops-math add_example


class AddExampleTilingData(Struct):
    """Tiling data of ops-math's add_example (§3.5 (e))."""

    totalNum = Field(KnownTypes.int64)
    blockFactor = Field(KnownTypes.int64)
    ubFactor = Field(KnownTypes.int64)


def add_example_tiling(ctx: TilingContext) -> TilingResult:
    """ops-math ``add_example``: unaligned ``ceil(N / cores)`` per core, UB for 2 inputs + 1 output, double buffered.

    Only 4-D float32 (key 0) or int32 (key 1) inputs are accepted, as in the
    original.  ``ubFactor`` is aligned to ``ub_block_size`` *elements*
    (stricter than needed; kept for fidelity).
    """
    x = ctx.input(0)
    if len(x.shape) != 4:
        raise TilingError(f"add_example accepts 4-D inputs only, got shape {x.shape}")
    keys = {"float32": 0, "int32": 1}
    if x.dtype not in keys:
        raise TilingError(f"add_example supports float32 and int32, got {x.dtype}")
    pa = ctx.platform_ascendc()
    total = x.size
    block_factor = -(-total // pa.get_core_num_aiv())
    used = -(-total // block_factor)
    type_size, ub_block_size = 4, 32
    ub_factor = pa.get_core_mem_size(CoreMemType.UB) // type_size // 6 // ub_block_size * ub_block_size
    data = AddExampleTilingData(totalNum=total, blockFactor=block_factor, ubFactor=ub_factor)
    return TilingResult(block_dim=used, tiling_data=data, tiling_key=keys[x.dtype], workspace_sizes=(0,))
