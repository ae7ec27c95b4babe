"""printf and dump_tensor: what the host prints after a launch, compared as text."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.binary.facts import DumpSite
from npuemu.isa import state
from npuemu.runtime import debuglog


@asc.jit
def show_kernel(x: asc.GlobalAddress, n: int, reps: int, dump_n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf, 64)
    t = buf.get(asc.float32, 8)
    asc.data_copy(t, xg, 8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.printf("block %d of %d: n=%i u=%u x=%x f=%.3f %s p=%p\\n", asc.get_block_idx(), asc.get_block_num(), n, -1,
               255, 2.5, "tag", t)
    asc.printf("%5d|%-4d|%%|", n, n)
    asc.dump_tensor(t, 7, dump_n)
    asc.dump_tensor(xg, 9, 6, asc.ShapeInfo((2, 4)))
    for i in range(reps):
        asc.printf("%d\\n", i)


def _head(core: int, used_words: int, block_dim: int = 2) -> str:
    return (f"opType=show_kernel, DumpHead: AIV-{core}, CoreType=AIV, block dim={block_dim}, "
            f"total_block_num={block_dim}, block_remain_len={(1 << 20) - 8 * used_words}, "
            f"block_initial_space=1048576, rsv=0, magic=5aa5bccd\n")


def _core_text(core: int) -> str:
    return (_head(core, 34)
            + f"block {core} of 2: n=3 u=18446744073709551615 x=ff f=2.500 tag p=0x0\n"
            + "    3|3   |%|\n"
            + "DumpTensor: desc=7, addr=0, data_type=float32, position=UB, dump_size=8\n"
            + "[0.000000, 0.500000, 1.000000, 1.500000, 2.000000, 2.500000, 3.000000, 3.500000]\n"
            + "DumpTensor: desc=9, addr=100000000, data_type=float32, position=GM, dump_size=6\n"
            + "[[0.000000, 0.500000, 1.000000, 1.500000],\n"
            + "[2.000000, 2.500000, -,-]]\n")


def test_printf_and_dump_tensor_output(mode, capfd):
    x = np.arange(16, dtype=np.float32) / 2
    show_kernel[2](x, 3, 0, 8, **mode)
    out, _ = capfd.readouterr()
    assert out == _core_text(0) + _core_text(1)


def test_full_dump_buffer_drops_records(capfd):
    x = np.arange(16, dtype=np.float32)
    reps = 33000
    show_kernel[1](x, 3, reps, 8, debug=True)
    out, _ = capfd.readouterr()
    lines = out.splitlines()
    fitted = (state.LOG_WORDS - 34) // 4                  # each printf("%d\n", i) takes 4 words
    assert lines[-1] == (f"[npuemu] AIV-0: the 1048576-byte dump buffer is full; {reps - fitted} later "
                         f"printf/dump_tensor record(s) were dropped")
    assert lines[-2] == str(fitted - 1)
    assert lines[0] == _head(0, state.LOG_WORDS - (state.LOG_WORDS - 34) % 4, block_dim=1).rstrip("\n")


def test_dump_size_past_the_tensor(mode, capfd):
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(errors.BoundsError, match=r"dump_tensor of 9 elements from a local tensor of 8 elements"):
        show_kernel[1](x, 3, 0, 9, **mode)
    out, _ = capfd.readouterr()
    assert out.startswith("opType=show_kernel, DumpHead: AIV-0")   # what was logged before the fault still prints


@pytest.mark.parametrize("dtype, data, want", [
    ("float16", np.array([1.5, -2, 0.25], np.float16), "[1.500000, -2.000000, 0.250000]"),
    ("bfloat16", np.array([0x3FC0, 0xC000], np.uint16), "[1.500000, -2.000000]"),
    ("int8", np.array([-3, 7, 0, 127], np.int8), "[-3, 7, 0, 127]"),
    ("uint64", np.array([2**64 - 1], np.uint64), "[18446744073709551615]"),
])
def test_dump_element_formats(dtype, data, want):
    raw = np.zeros(-(-data.nbytes // 8) * 8, np.uint8)
    raw[:data.nbytes] = data.view(np.uint8)
    payload = np.concatenate([np.array([1, data.size, 0x40], np.int64), raw.view(np.int64)])
    text = debuglog.format_dump(DumpSite(dtype, "UB", None), payload)
    assert text == f"DumpTensor: desc=1, addr=40, data_type={dtype}, position=UB, dump_size={data.size}\n{want}\n"


def test_printf_compile_time_errors():
    @asc.jit
    def count_mismatch(x: asc.GlobalAddress, n: int):
        asc.printf("%d %d\\n", n)

    @asc.jit
    def float_for_int(x: asc.GlobalAddress, f: float):
        asc.printf("%d\\n", f)

    @asc.jit
    def raw_newline(x: asc.GlobalAddress, n: int):
        asc.printf("%d\n", n)

    @asc.jit
    def unsupported(x: asc.GlobalAddress, f: float):
        asc.printf("%e\\n", f)

    @asc.jit
    def runtime_string(x: asc.GlobalAddress, n: int):
        asc.printf("%s\\n", n)

    x = np.zeros(8, np.float32)
    with pytest.raises(errors.KernelTypeError, match="has 2 conversions but 1 arguments"):
        count_mismatch[1](x, 1)
    with pytest.raises(errors.KernelTypeError, match="printf '%d' needs an integer or bool, got float"):
        float_for_int[1](x, 1.0)
    with pytest.raises(errors.KernelCompileError, match=r"newline character; as in pyasc, write it escaped"):
        raw_newline[1](x, 1)
    with pytest.raises(errors.KernelCompileError, match=r"printf conversion '%e' is not supported"):
        unsupported[1](x, 1.0)
    with pytest.raises(errors.KernelTypeError, match=r"'%s' prints compile-time strings"):
        runtime_string[1](x, 1)


@asc.jit
def checkpoint_kernel(x: asc.GlobalAddress, off: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 16)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf, 64)
    t = buf.get(asc.float32, 16)
    asc.data_copy(t, xg, 16)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.metrics_prof_start()
    asc.print_time_stamp(65577)
    asc.dump_acc_chk_point(t, 3, off, 2)
    asc.dump_acc_chk_point(xg, 4, off + 1, 3)
    asc.metrics_prof_stop()


def test_time_stamp_and_checkpoint_dumps(capfd):
    """print_time_stamp logs its id, the system counter and the call site; dump_acc_chk_point dumps from an
    element offset (a UB offset keeps the 32-byte alignment rule of dump_tensor)."""
    x = np.arange(16, dtype=np.float32)
    checkpoint_kernel[1](x, 8)
    lines = capfd.readouterr()[0].splitlines()
    stamp = lines[1].split(", ")
    assert stamp[0] == "descId is 65577" and stamp[1] == "rsv is 0" and stamp[4] == "entry is 0."
    assert int(stamp[2].removeprefix("timeStamp is ")) > 0 and stamp[3].startswith("pcPtr is ")
    assert lines[2:] == ["DumpTensor: desc=3, addr=20, data_type=float32, position=UB, dump_size=2",
                         "[8.000000, 9.000000]",
                         "DumpTensor: desc=4, addr=100000024, data_type=float32, position=GM, dump_size=3",
                         "[9.000000, 10.000000, 11.000000]"]
    with pytest.raises(errors.AlignmentError):          # 4 floats in: 16 bytes, not a 32-byte boundary
        checkpoint_kernel[1](x, 4)
    with pytest.raises(errors.BoundsError):
        checkpoint_kernel[1](x, 17)


@asc.jit
def shaped_kernel(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    xg.set_shape_info(asc.ShapeInfo((2, 4)))
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.float32, 8)
    t.set_shape_info(asc.ShapeInfo((4, 2)))
    asc.data_copy(t, xg, 8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.dump_tensor(t, 1, 8)                               # printed with the shape set on it
    asc.dump_tensor(xg, 2, 8, t.get_shape_info())          # another tensor's shape, read back
    asc.dump_tensor(xg[2:], 3, 2)                          # a sub-tensor has none


def test_shape_info_set_on_a_tensor(capfd):
    shaped_kernel[1](np.arange(8, dtype=np.float32))
    lines = capfd.readouterr()[0].splitlines()[1:]
    assert lines[1:3] == ["[[0.000000, 1.000000],", "[2.000000, 3.000000],"]
    assert lines[5:7] == ["DumpTensor: desc=2, addr=100000000, data_type=float32, position=GM, dump_size=8",
                         "[[0.000000, 1.000000],"]
    assert lines[-1] == "[2.000000, 3.000000]"
