"""Sorting (sort32, sort, mrg_sort, get_mrg_sort_result, get_sort_len/offset) against NumPy stable argsorts."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 128                       # scores per test: 4 groups of 32
ENTRY = {np.float16: np.dtype([("s", "<f2"), ("r", "<u2"), ("i", "<u4")]),
         np.float32: np.dtype([("s", "<f4"), ("i", "<u4")])}


def entries(raw, dtype):
    """The (score, index) entries a sorted tensor of ``dtype`` holds."""
    return np.ascontiguousarray(raw).view(ENTRY[dtype])


def per_entry(dtype):
    return 8 // np.dtype(dtype).itemsize


def scores(rng, dtype, n=N):
    """Random scores with ties, both zeros, infinities and NaN."""
    x = rng.choice(np.arange(-20, 20) * 0.5, n).astype(dtype)
    x[[3, 40, 77]] = np.nan
    x[[5, 41]] = -0.0
    x[[6, 42]] = 0.0
    x[7], x[70] = np.inf, -np.inf
    return x


def expected(x, idx, groups):
    """Entries of a stable descending sort of each of ``groups`` equal parts of ``x`` (NaN last)."""
    out = np.zeros(len(x), ENTRY[x.dtype.type])
    for g in np.split(np.arange(len(x)), groups):
        order = g[np.argsort(-x[g].astype(np.float64), kind="stable")]
        out["s"][g] = x[order]
        out["i"][g] = idx[order]
    return out


def same_entries(got, want):
    for f in want.dtype.names:
        np.testing.assert_array_equal(got[f].view(f"u{want.dtype[f].itemsize}"),
                                      want[f].view(f"u{want.dtype[f].itemsize}"), err_msg=f)


# --------------------------------------------------------------------------- sort32 and sort

@asc.jit
def sort_run(x: asc.GlobalAddress, idx: asc.GlobalAddress, out: asc.GlobalAddress, tmp_out: asc.GlobalAddress,
             repeat: int, how: asc.ConstExpr[int]):
    """how: 0 sort32, 1 sort, 2 sort with is_full_sort."""
    t = x.dtype
    size = asc.get_sort_len(N, t)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x, N)
    gi = asc.GlobalTensor()
    gi.set_global_buffer(idx, N)
    go = asc.GlobalTensor()
    go.set_global_buffer(out, size)
    gt = asc.GlobalTensor()
    gt.set_global_buffer(tmp_out, size)
    src = asc.LocalTensor(t, asc.TPosition.VECIN, 0, N)
    ind = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 1024, N)
    dst = asc.LocalTensor(t, asc.TPosition.VECOUT, 2048, size)
    tmp = asc.LocalTensor(t, asc.TPosition.VECCALC, 4096, size)
    asc.data_copy(src, gx, N)
    asc.data_copy(ind, gi, N)
    asc.data_copy(dst, go, size)
    asc.data_copy(tmp, gt, size)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if how == 0:
        asc.sort32(dst, src, ind, repeat)
    elif how == 1:
        asc.sort(dst, src, ind, tmp, repeat)
    else:
        asc.sort(dst, src, ind, tmp, repeat, is_full_sort=True)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(go, dst, size)
    asc.data_copy(gt, tmp, size)


def run_sort(rng, dtype, how, repeat=N // 32, **options):
    x = scores(rng, dtype)
    idx = rng.permutation(1000).astype(np.uint32)[:N]
    out = np.full(N * per_entry(dtype), 7, dtype)
    tmp = np.full(N * per_entry(dtype), 9, dtype)
    sort_run[1](x, idx, out, tmp, repeat, how, **options)
    return x, idx, out, tmp


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("how", [0, 1])
def test_sort32_sorts_each_group_of_32(dtype, how, rng, mode):
    x, idx, out, tmp = run_sort(rng, dtype, how, **mode)
    got = entries(out, dtype)
    same_entries(got, expected(x, idx, N // 32))
    if dtype == np.float16:
        assert (got["r"] == 0).all()                       # the reserved bytes
    assert (tmp == 9).all()                                # without is_full_sort tmp is not touched


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_full_sort_sorts_everything_and_leaves_tmp_equal_to_dst(dtype, rng, mode):
    x, idx, out, tmp = run_sort(rng, dtype, 2, **mode)
    same_entries(entries(out, dtype), expected(x, idx, 1))
    np.testing.assert_array_equal(out.view(np.uint8), tmp.view(np.uint8))


def test_fewer_repeats_leave_the_rest_of_dst(rng):
    x, idx, out, _ = run_sort(rng, np.float32, 0, repeat=3)
    got = entries(out, np.float32)
    same_entries(got[:96], expected(x[:96], idx[:96], 3))
    assert (out[192:] == 7).all()
    x, idx, out, _ = run_sort(rng, np.float32, 0, repeat=0)
    assert (out == 7).all()


def test_ties_keep_the_input_order():
    x = np.zeros(N, np.float32)
    x[:32] = [1.0, 2.0, 1.0, 2.0] * 8
    out = np.zeros(2 * N, np.float32)
    sort_run[1](x, np.arange(N, dtype=np.uint32), out, np.zeros(2 * N, np.float32), 1, 0)
    assert list(entries(out[:64], np.float32)["i"]) == [*range(1, 32, 2), *range(0, 32, 2)]


# --------------------------------------------------------------------------- mrg_sort and get_mrg_sort_result

LEN = 40                       # entries per list (room in each list tensor)
HOST_INFO = asc.MrgSort4Info([32, 17, 40, 5], False, 15, 1)      # a host-side struct, used as a constant


@asc.jit
def merge_run(lists: asc.GlobalAddress, out: asc.GlobalAddress, counts: asc.GlobalAddress, l1: int, l2: int,
              l3: int, l4: int, valid: int, repeat: int, form: asc.ConstExpr[int], suspend: asc.ConstExpr[bool]):
    """Four lists of up to LEN entries one after the other; form 0: count list, 1: MrgSort4Info, 2: the lists
    as 4 * l1-entry slices of one tensor (for repeats), 3: HOST_INFO."""
    t = lists.dtype
    e = asc.get_sort_len(1, t)
    total = 4 * LEN * e
    gl = asc.GlobalTensor()
    gl.set_global_buffer(lists, total)
    go = asc.GlobalTensor()
    go.set_global_buffer(out, total)
    gc = asc.GlobalTensor()
    gc.set_global_buffer(counts, 8)
    src = asc.LocalTensor(t, asc.TPosition.VECIN, 0, total)
    dst = asc.LocalTensor(t, asc.TPosition.VECOUT, 2048, total)
    res = asc.LocalTensor(asc.int32, asc.TPosition.VECOUT, 4096, 8)
    asc.data_copy(src, gl, total)
    asc.data_copy(dst, go, total)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if form == 2:
        step = asc.get_sort_offset(l1, t)
        sl = asc.MrgSortSrcList(t, src, src[step:], src[2 * step:], src[3 * step:])
        asc.mrg_sort(dst, sl, asc.MrgSort4Info([l1, l1, l1, l1], False, 15, repeat))
    else:
        sl = asc.MrgSortSrcList(t, src, src[LEN * e:], src[2 * LEN * e:], src[3 * LEN * e:])
        if form == 0:
            asc.mrg_sort(dst, sl, [l1, l2, l3, l4], [0, 0, 0, 0], valid, repeat, suspend)
        elif form == 3:
            asc.mrg_sort(dst, sl, HOST_INFO)
        else:
            info = asc.MrgSort4Info([l1, l2, l3, l4], suspend, valid, repeat)
            asc.mrg_sort(dst, sl, info)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    c0, c1, c2, c3 = asc.get_mrg_sort_result()
    res.set_value(0, c0)
    res.set_value(1, c1)
    res.set_value(2, c2)
    res.set_value(3, c3)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(go, dst, total)
    asc.data_copy(gc, res, 8)


def sorted_lists(rng, dtype, lengths, slot=LEN):
    """Four sorted entry lists (scores with ties across lists), in slots of ``slot`` entries; the lists."""
    buf = np.zeros(4 * slot, ENTRY[dtype])
    made = []
    for i, n in enumerate(lengths):
        s = rng.choice(np.arange(-8, 8) * 0.25, n).astype(dtype)
        order = np.argsort(-s.astype(np.float64), kind="stable")
        lst = np.zeros(n, ENTRY[dtype])
        lst["s"] = s[order]
        lst["i"] = 1000 * (i + 1) + np.arange(n)              # the list and position, to check ties
        if dtype == np.float16:
            lst["r"] = 0xBEEF                                  # carried along with the entry
        buf[i * slot:i * slot + n] = lst
        made.append(lst)
    return buf.view(dtype), made


def merged(made, suspend):
    """Stable sort of the concatenated lists: the merge with ties to the lower list; cut where a list ends."""
    allv = np.concatenate(made)
    order = np.argsort(-allv["s"].astype(np.float64), kind="stable")
    out = allv[order]
    if suspend:
        ends = [(out["i"] == 1000 * (i + 1) + len(m) - 1).nonzero()[0] for i, m in enumerate(made)]
        ends = [e[0] for e in ends if len(e)] if all(len(m) for m in made) else [-1]
        out = out[:min(ends) + 1]
    counts = [int(((out["i"] // 1000) == i + 1).sum()) for i in range(4)]
    return out, counts


def run_merge(rng, dtype, lengths, valid=15, suspend=False, form=0, repeat=1, **options):
    buf, made = sorted_lists(rng, dtype, lengths)
    out = np.zeros_like(buf)
    counts = np.full(8, -1, np.int32)
    merge_run[1](buf, out, counts, *lengths, valid, repeat, form, suspend, **options)
    return made, entries(out, dtype), counts


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("form", [0, 1])
@pytest.mark.parametrize("valid, lengths", [(15, (32, 17, 40, 5)), (7, (3, 32, 20, 9)), (3, (40, 1, 30, 30))])
def test_mrg_sort_merges_the_valid_lists(dtype, form, valid, lengths, rng):
    made, got, counts = run_merge(rng, dtype, lengths, valid, form=form)
    m = {3: 2, 7: 3, 15: 4}[valid]
    want, want_counts = merged(made[:m], False)
    same_entries(got[:len(want)], want)
    assert (got.view(np.uint8)[len(want) * 8:] == 0).all()
    assert list(counts[:4]) == want_counts[:m] + [0] * (4 - m)


def test_a_host_side_mrg_sort4_info_is_a_constant(rng):
    made, got, counts = run_merge(rng, np.float16, (32, 17, 40, 5), form=3)
    want, want_counts = merged(made, False)
    same_entries(got[:94], want)
    assert list(counts[:4]) == want_counts == [32, 17, 40, 5]


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_exhausted_suspension_stops_when_a_list_ends(dtype, rng, mode):
    lengths = (30, 6, 25, 12)
    made, got, counts = run_merge(rng, dtype, lengths, suspend=True, **mode)
    want, want_counts = merged(made, True)
    assert len(want) < sum(lengths)
    same_entries(got[:len(want)], want)
    assert (got.view(np.uint8)[len(want) * 8:] == 0).all()
    assert list(counts[:4]) == want_counts
    made, got, counts = run_merge(rng, dtype, (30, 0, 25, 12), suspend=True, form=1, **mode)
    assert list(counts[:4]) == [0, 0, 0, 0] and (got.view(np.uint8) == 0).all()


def test_repeats_merge_consecutive_groups_of_four_lists(rng, mode):
    buf, made = sorted_lists(rng, np.float32, (12,) * 4, slot=12)       # repeat 0: lists 0-3
    buf2, made2 = sorted_lists(rng, np.float32, (12,) * 4, slot=12)     # repeat 1: the next four
    lists = np.concatenate([buf, buf2, np.zeros(2 * (4 * LEN - 96), np.float32)])
    out = np.zeros_like(lists)
    counts = np.zeros(8, np.int32)
    merge_run[1](lists, out, counts, 12, 12, 12, 12, 15, 2, 2, False, **mode)
    got = entries(out, np.float32)
    same_entries(got[:48], merged(made, False)[0])
    same_entries(got[48:96], merged(made2, False)[0])
    assert (got.view(np.uint8)[96 * 8:] == 0).all()
    assert list(counts[:4]) == [12, 12, 12, 12]


# --------------------------------------------------------------------------- get_sort_len / get_sort_offset

@asc.jit
def sizes_run(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out, 8)
    r = asc.LocalTensor(asc.int32, asc.TPosition.VECOUT, 0, 8)
    r.set_value(0, asc.get_sort_len(n, asc.float16))
    r.set_value(1, asc.get_sort_len(n, asc.float32))
    r.set_value(2, asc.get_sort_offset(n, asc.float16))
    r.set_value(3, asc.get_sort_offset(n))
    r.set_value(4, asc.get_sort_len(100, asc.half))
    r.set_value(5, asc.get_sort_offset(3))
    asc.static_assert(asc.get_sort_len(100) == 200)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(g, r, 8)


def test_sort_len_and_offset_count_elements_of_the_score_type():
    out = np.zeros(8, np.int32)
    sizes_run[1](out, 10)
    assert list(out[:6]) == [40, 20, 40, 20, 400, 6]


# --------------------------------------------------------------------------- broken kernels

@asc.jit
def proposal_kernel(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 0, 256)
    asc.rp_sort16(t, t, 1)


@asc.jit
def mrg_sort4_kernel(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 1024, 256)
    asc.mrg_sort4(d, asc.MrgSortSrcList(asc.float32, t, t[64:]), asc.MrgSort4Info([32, 32, 0, 0], False, 3, 1))


@asc.jit
def concat_kernel(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
    asc.proposal_concat(t, t, 1, 4)


@asc.jit
def extract_kernel(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
    asc.proposal_extract(t, t, 1, 4)


@pytest.mark.parametrize("kernel, name, line", [
    (proposal_kernel, "rp_sort16", "asc.rp_sort16(t, t, 1)"),
    (mrg_sort4_kernel, "mrg_sort4", "asc.mrg_sort4(d, "),
    (concat_kernel, "proposal_concat", "asc.proposal_concat(t, t, 1, 4)"),
    (extract_kernel, "proposal_extract", "asc.proposal_extract(t, t, 1, 4)"),
])
@pytest.mark.parametrize("platform", ["Ascend910B1", "Ascend910_9392"])
def test_region_proposal_instructions_are_refused_on_a2_a3(kernel, name, line, platform):
    with pytest.raises(errors.KernelTypeError, match=rf"{name} is not available on {platform} \(Atlas A2/A3\)") \
            as e:
        kernel[1](np.zeros(8, np.float32), platform=platform)
    assert line in str(e.value)


@asc.jit
def int_scores(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 64)
    i = asc.LocalTensor(asc.uint32, asc.TPosition.VECCALC, 256, 64)
    d = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 512, 128)
    asc.sort32(d, t, i, 1)


@asc.jit
def int32_indices(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    i = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 256, 64)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 512, 128)
    asc.sort(d, t, i, d, 1)


@asc.jit
def bad_valid_bit(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 1024, 256)
    asc.mrg_sort(d, asc.MrgSortSrcList(asc.float32, t, t[64:]), [32, 32, 0, 0], [0, 0, 0, 0], 5, 1)


@asc.jit
def missing_list(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 1024, 256)
    asc.mrg_sort(d, asc.MrgSortSrcList(t, t[64:]), asc.MrgSort4Info([32, 32, 32, 0], False, 7, 1))


@pytest.mark.parametrize("kernel, message", [
    (int_scores, r"sort32 does not support int32 on this platform \(supported: float16, float32\)"),
    (int32_indices, r"sort index does not support int32 on this platform \(supported: uint32\)"),
    (bad_valid_bit, r"valid_bit must be 3 \(lists 1-2\), 7 \(lists 1-3\) or 15 \(lists 1-4\), got 5"),
    (missing_list, r"valid_bit 7 merges list 3, but the MrgSortSrcList has no src3"),
])
def test_wrong_arguments_are_compile_errors(kernel, message):
    with pytest.raises(errors.KernelTypeError, match=message):
        kernel[1](np.zeros(8, np.float32))


@asc.jit
def merge_faults(x: asc.GlobalAddress, dst_at: int, l1: int, l2: int, valid: int, repeat: int, dst_len: int):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 512)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, dst_at, dst_len)
    asc.duplicate(t, 1.0, 512)
    asc.mrg_sort(d, asc.MrgSortSrcList(asc.float32, t, t[64:], t[128:], t[192:]), [l1, l2, l1, l1],
                 [0, 0, 0, 0], valid, repeat)


@pytest.mark.parametrize("args, error, message", [
    ((4096, 32, 32, 15, 1, 256), None, None),                              # correct
    ((256, 32, 32, 15, 1, 256), errors.OverlapError, r"dst overlaps sort_list.src2 \(bytes 256..511"),
    ((4096, 32, 32, 15, 1, 200), errors.BoundsError,
     r"dst: the instruction touches 1024 bytes of a tensor that holds only 800"),
    ((4096, 32, 32, 6, 1, 256), errors.ParamRangeError, r"valid_bit 6 is not 3"),
    ((4096, 32, 4096, 3, 1, 256), errors.ParamRangeError, r"element length 4096 of list 2 out of range"),
    ((4096, 32, 16, 15, 2, 512), errors.ParamRangeError, r"the four element lengths must be equal"),
    ((4096, 16, 16, 15, 2, 512), errors.ParamRangeError, r"the four lists must be stored one after the other"),
    ((4096, 32, 32, 15, 0, 256), errors.ParamRangeError, r"repeat time 0 out of range \[1, 255\]"),
    ((4100, 32, 32, 15, 1, 256), errors.AlignmentError, r"not 32-byte aligned"),
])
def test_runtime_faults_name_the_rule(args, error, message):
    x = np.zeros(8, np.float32)
    if error is None:
        merge_faults[1](x, *args)
        return
    with pytest.raises(error, match=message) as e:
        merge_faults[1](x, *args)
    assert "asc.mrg_sort(d, " in str(e.value)


@asc.jit
def unsynced(x: asc.GlobalAddress, out: asc.GlobalAddress):
    """The usual mistake: the sorted entries are copied out without waiting for the vector pipe."""
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x, 32)
    go = asc.GlobalTensor()
    go.set_global_buffer(out, 64)
    s = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 32)
    i = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 256, 32)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 512, 64)
    asc.data_copy(s, gx, 32)
    asc.duplicate(i, 3, 32)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.sort32(d, s, i.reinterpret_cast(asc.uint32), 1)
    asc.data_copy(go, d, 64)


def test_a_missing_sync_after_sort32_is_a_race():
    with pytest.raises(errors.RaceError, match="asc.data_copy\\(go, d, 64\\)"):
        unsynced[1](np.zeros(32, np.float32), np.zeros(64, np.float32), check="full")


def test_a_correct_kernel_passes_the_full_checks(rng):
    x, idx, out, tmp = run_sort(rng, np.float32, 2, check="full")
    same_entries(entries(out, np.float32), expected(x, idx, 1))
    made, got, counts = run_merge(rng, np.float32, (32, 17, 40, 5), form=1, check="full")
    same_entries(got[:94], merged(made, False)[0])
