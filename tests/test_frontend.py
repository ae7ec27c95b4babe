"""The kernel language end to end.

Each construct is lowered, run in compiled and debug mode (the ``mode``
fixture) and checked against the same computation done in plain Python or
NumPy.  Where the point is *how* something is lowered (constant folding,
unrolling, dead branches) the generated source is inspected as well.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import npuemu
import npuemu.asc as asc

VECIN, VECOUT, VECCALC = asc.TPosition.VECIN, asc.TPosition.VECOUT, asc.TPosition.VECCALC
BLOCK_BYTES = 32            # a module global: folded into the kernels that read it


def only_binary(kernel):
    """The one specialisation ``kernel`` has been compiled to."""
    (binary,) = kernel.binaries()
    return binary


def generated_source(kernel, spec):
    """Generated source of the binary whose key names argument kind ``spec`` (e.g. "x=gm:float16")."""
    (source,) = [b.source for b in kernel.binaries()
                 if f" {spec}," in f" {b.key.describe()}" or f" {spec};" in f" {b.key.describe()}"]
    return source


# --------------------------------------------------------------------------- helpers shared by the kernels


@asc.jit
def global_tensor(addr, size=None):
    """A GlobalTensor bound to ``addr`` (a helper returning an object)."""
    g = asc.GlobalTensor()
    g.set_global_buffer(addr, size)
    return g


# --------------------------------------------------------------------------- constant folding


@asc.jit
def constant_folding_kernel(out: asc.GlobalAddress, x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    res = global_tensor(out)
    per_block = BLOCK_BYTES // x.dtype.sizeof()
    tiles = asc.ceildiv(n, per_block)
    flags = (n > 4) + (x.dtype == asc.float16) * 2
    res.set_value(0, per_block)
    res.set_value(1, tiles)
    res.set_value(2, n * per_block - 1)
    res.set_value(3, flags)
    res.set_value(4, len((1, 2, 3)) + abs(-n) + min(n, 3) + max(2, per_block) + int(2.7))
    res.set_value(5, (n << 2) | 1 if n % 2 else n ** 2)


@pytest.mark.parametrize("dtype, n", [(np.float16, 20), (np.float32, 3)])
def test_constants_fold_across_constexpr_globals_and_sizeof(mode, dtype, n):
    out = np.zeros(8, np.int32)
    constant_folding_kernel[1](out, np.zeros(4, dtype), n, **mode)

    per_block = BLOCK_BYTES // np.dtype(dtype).itemsize
    expected = [per_block, -(-n // per_block), n * per_block - 1, (n > 4) + (dtype == np.float16) * 2,
                3 + n + min(n, 3) + max(2, per_block) + 2, (n << 2) | 1 if n % 2 else n ** 2]
    assert out[:6].tolist() == expected
    # everything was computed at compile time: no runtime variable holds an intermediate
    source = generated_source(constant_folding_kernel, f"n=const:int={n}")
    assert "per_block" not in source and "tiles" not in source and "flags" not in source


# --------------------------------------------------------------------------- static and runtime if


@asc.jit
def dtype_dispatch_kernel(out: asc.GlobalAddress, x: asc.GlobalAddress):
    res = global_tensor(out)
    if x.dtype == asc.float16:
        res.set_value(0, 16)
    elif x.dtype == asc.float32:
        res.set_value(0, 32)
    else:
        this_name_is_not_defined()  # noqa: F821 - never lowered for float inputs
    if x.dtype in (asc.float16, asc.bfloat16):
        res.set_value(1, 2)
    else:
        res.set_value(1, 4)


@pytest.mark.parametrize("dtype, expected", [(np.float16, [16, 2]), (np.float32, [32, 4])])
def test_if_on_dtype_lowers_only_the_taken_branch(mode, dtype, expected):
    out = np.zeros(2, np.int32)
    dtype_dispatch_kernel[1](out, np.zeros(4, dtype), **mode)

    assert out.tolist() == expected
    source = generated_source(dtype_dispatch_kernel, f"x=gm:{np.dtype(dtype).name}")
    assert source.count("gm_set_i32(") == 2
    assert "if " not in source.split("def kernel", 1)[1]


@asc.jit
def classify_kernel(out: asc.GlobalAddress, x: asc.GlobalAddress, n: int, threshold: float):
    res = global_tensor(out)
    src = global_tensor(x)
    for i in range(n):
        v = src.get_value(i)
        if v < -threshold:
            res.set_value(i, -1)
        elif v > threshold:
            res.set_value(i, 1)
        elif v == 0:
            res.set_value(i, 100)
        else:
            res.set_value(i, 0)
    res.set_value(62, n.ceildiv(7))              # pyasc's RuntimeInt.ceildiv
    res.set_value(63, (n + 1).ceildiv(n))


def test_runtime_if_elif_else(mode, rng):
    x = rng.uniform(-2, 2, 64).astype(np.float32)
    x[::7] = 0
    out = np.full(64, -7, np.int32)
    classify_kernel[1](out, x, 60, 0.5, **mode)

    expected = np.select([x < -0.5, x > 0.5, x == 0], [-1, 1, 100], 0)
    expected[60:] = -7
    expected[62:] = [9, 2]                       # ceil(60 / 7), ceil(61 / 60)
    np.testing.assert_array_equal(out, expected)


# --------------------------------------------------------------------------- loops


@asc.jit
def while_kernel(out: asc.GlobalAddress, x: asc.GlobalAddress, n: int, start: int):
    res = global_tensor(out)
    src = global_tensor(x, n)
    # the condition reads GM; ``and`` short-circuits, so src[n] is never read
    i = 0
    while i < n and src.get_value(i) != 0:
        i += 1
    res.set_value(0, i)
    res.set_value(3, 1 if i == n or src.get_value(i) == 0 else 0)
    # arithmetic-only condition
    steps = 0
    c = start
    while c != 1:
        if c % 2 == 0:
            c = c // 2
        else:
            c = 3 * c + 1
        steps += 1
    res.set_value(1, steps)
    # the condition calls a queue API on every iteration
    pipe = asc.TPipe()
    que = asc.TQue(VECIN, 4)
    pipe.init_buffer(que, 4, 32)
    while que.get_tensor_count_in_que() < 3:
        t = que.alloc_tensor(asc.int32)
        que.enque(t)
    drained = 0
    while que.has_tensor_in_que():
        t = que.deque(asc.int32)
        que.free_tensor(t)
        drained += 1
    res.set_value(2, drained)


def collatz_steps(c):
    steps = 0
    while c != 1:
        c = c // 2 if c % 2 == 0 else 3 * c + 1
        steps += 1
    return steps


@pytest.mark.parametrize("first_zero", [5, None])
def test_while_loops(mode, first_zero):
    x = np.arange(1, 17, dtype=np.int32)
    if first_zero is not None:
        x[first_zero] = 0
    out = np.zeros(4, np.int32)
    while_kernel[1](out, x, x.size, 27, **mode)

    assert out.tolist() == [first_zero if first_zero is not None else x.size, collatz_steps(27), 3, 1]


@asc.jit
def range_kernel(out: asc.GlobalAddress, x: asc.GlobalAddress, start: int, stop: int, step: int, limit: int):
    res = global_tensor(out)
    src = global_tensor(x)
    total = 0
    count = 0
    for i in range(start, stop, step):
        v = src.get_value(i)
        if v % 3 == 0:
            continue
        total += v
        count += 1
        if total > limit:
            break
    res.set_value(0, total)
    res.set_value(1, count)
    odd = 0
    for i in asc.range(1, count, 2):
        odd += i
    res.set_value(2, odd)


def range_reference(x, start, stop, step, limit):
    total = count = 0
    for i in range(start, stop, step):
        if x[i] % 3 == 0:
            continue
        total += int(x[i])
        count += 1
        if total > limit:
            break
    return [total, count, sum(range(1, count, 2))]


@pytest.mark.parametrize("start, stop, step, limit", [
    (0, 40, 1, 10 ** 6), (5, 37, 4, 10 ** 6), (39, -1, -3, 10 ** 6), (0, 40, 1, 150), (10, 10, 1, 0)])
def test_for_range_with_step_break_and_continue(mode, rng, start, stop, step, limit):
    x = rng.integers(0, 50, 40).astype(np.int32)
    out = np.zeros(3, np.int32)
    range_kernel[1](out, x, start, stop, step, limit, **mode)

    assert out.tolist() == range_reference(x, start, stop, step, limit)


@asc.jit
def unrolled_kernel(out: asc.GlobalAddress, n: int):
    res = global_tensor(out)
    for i in asc.static_range(4):
        square = i * i              # a constant in each unrolled copy
        res.set_value(i, square)
    for k in asc.static_range(4, 10, 3):
        res.set_value(k, k * 10)
    k = k + 1                       # the unrolled loop left its last value in k
    res.set_value(15, k)
    for j in asc.static_range(2):
        found = -1
        for i in range(n):          # a runtime loop, with a break, inside an unrolled one
            if i * (j + 2) > 10:
                found = i
                break
        res.set_value(10 + j, found)
    for v in (3, 5):
        res.set_value(9 + v, v)


def test_static_range_unrolls(mode):
    out = np.full(16, -9, np.int32)
    unrolled_kernel[1](out, 20, **mode)

    expected = np.full(16, -9)
    expected[:4] = [0, 1, 4, 9]
    expected[[4, 7]] = [40, 70]
    expected[10:12] = [next(i for i in range(20) if i * (j + 2) > 10) for j in range(2)]
    expected[[12, 14, 15]] = [3, 5, 8]
    np.testing.assert_array_equal(out, expected)
    source = only_binary(unrolled_kernel).source
    assert source.count(" in range(") == 2        # only the two copies of the runtime loop


# --------------------------------------------------------------------------- variables and expressions


@asc.jit
def accumulate_kernel(out_i: asc.GlobalAddress, out_f: asc.GlobalAddress, x: asc.GlobalAddress, n: int,
                      scale: float):
    ri = global_tensor(out_i)
    rf = global_tensor(out_f)
    src = global_tensor(x)
    acc = 0                         # an int constant first, then a runtime int
    for i in range(n):
        acc = acc + i * i
    ri.set_value(0, acc)
    m = 5
    if n > 3:
        m = 7
    ri.set_value(1, m * 2)
    count: int = 3
    ri.set_value(2, count)
    s = 0.0
    for i in range(n):
        s += src.get_value(i) * scale
    rf.set_value(0, s)
    mean: float = s / n
    rf.set_value(1, mean)
    mixed = n * 0.5 + acc // 7 - acc % 7
    rf.set_value(2, mixed)
    rf.set_value(3, float(n) / 4 + int(scale))


@pytest.mark.parametrize("n", [2, 9])
def test_reassigned_variables_and_float32_arithmetic(mode, rng, n):
    x = rng.uniform(-1, 1, 16).astype(np.float32)
    out_i, out_f = np.zeros(3, np.int32), np.zeros(4, np.float32)
    accumulate_kernel[1](out_i, out_f, x, n, 1.25, **mode)

    acc = sum(i * i for i in range(n))
    s = np.float32(0)
    for v in x[:n]:
        s = np.float32(s + v * np.float32(1.25))
    assert out_i.tolist() == [acc, 14 if n > 3 else 10, 3]
    assert out_f[0] == s
    assert out_f[1] == s / np.float32(n)
    assert out_f[2] == np.float32(n * 0.5 + acc // 7 - acc % 7)
    assert out_f[3] == np.float32(n / 4 + 1)


def random_int_expression(rng, depth: int) -> str:
    """A random integer expression over a, b, c whose value stays far inside int64."""
    if depth == 0 or rng.random() < 0.25:
        return str(rng.choice(["a", "b", "c", str(rng.integers(-9, 10))]))
    x, y = random_int_expression(rng, depth - 1), random_int_expression(rng, depth - 1)
    forms = [
        f"({x} + {y})", f"({x} - {y})", f"({x} * {y})",
        f"({x} // (abs({y}) + 1))", f"({x} % (abs({y}) + 2))", f"(-{x})", f"(~{x})",
        f"({x} if {x} > {y} else {y})", f"min({x}, {y}, 3)", f"max({x}, {y})",
        f"(({x} < {y}) + ({x} == {y}) * 2 + ({x} != {y}) * 4)", f"(1 if 0 <= {x} < 5 else 0)",
        f"({x} >> 2)", f"({x} << 1)", f"({x} & {y})", f"({x} | {y})", f"({x} ^ {y})",
        f"(7 if ({x} > 0 and {y} < 3) or not {x} else 8)", f"(2 if {x} in (1, 2, 3) else 3)",
    ]
    return forms[rng.integers(len(forms))]


def random_float_expression(rng, depth: int) -> str:
    """A random float expression over x, y (float32 arguments) and float literals."""
    if depth == 0 or rng.random() < 0.25:
        return str(rng.choice(["x", "y", "x", "y", str(round(float(rng.uniform(-4, 4)), 2))]))
    u, v = random_float_expression(rng, depth - 1), random_float_expression(rng, depth - 1)
    forms = [
        f"({u} + {v})", f"({u} - {v})", f"({u} * {v})", f"({u} / (abs({v}) + 0.5))", f"(-{u})",
        f"min({u}, {v})", f"max({u}, {v}, -1.5)", f"({u} if {u} > {v} else {v})",
        f"({u} if 0.0 <= {v} < 2.0 else {v} * 0.25)",
    ]
    return forms[rng.integers(len(forms))]


FLOAT_EXPRESSION_KERNEL = """
import npuemu.asc as asc


@asc.jit
def float_expressions(out: asc.GlobalAddress, x: float, y: float):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
{body}
"""


def load_kernel_module(name, text):
    """Import kernels from ``text``, written to a stable path so the disk cache serves later runs."""
    import importlib.util

    from npuemu.codegen.cache import cache_dir

    path = cache_dir() / "test-sources" / f"{name}.py"
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXPRESSION_KERNEL = """
import npuemu.asc as asc


@asc.jit
def runtime_expressions(out: asc.GlobalAddress, a: int, b: int, c: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
{body}


@asc.jit
def constant_expressions(out: asc.GlobalAddress, a: asc.ConstExpr[int], b: asc.ConstExpr[int],
                         c: asc.ConstExpr[int]):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
{body}
"""


@pytest.fixture(scope="module")
def expression_kernels():
    """A module of two kernels evaluating the same random expressions (kernels must live in a file)."""
    rng = np.random.default_rng(7)
    expressions = [random_int_expression(rng, 3) for _ in range(60)]
    body = "\n".join(f"    g.set_value({i}, {e})" for i, e in enumerate(expressions))
    return expressions, load_kernel_module("expression_kernels", EXPRESSION_KERNEL.format(body=body))


@pytest.mark.parametrize("a, b, c", [(3, -7, 11), (-20, 0, 1), (17, 17, -4)])
def test_integer_expressions_match_python(mode, expression_kernels, a, b, c):
    expressions, module = expression_kernels
    out = np.zeros(len(expressions), np.int64)
    module.runtime_expressions[1](out, a, b, c, **mode)

    expected = [eval(e, {}, {"a": a, "b": b, "c": c}) for e in expressions]  # noqa: S307 - our own text
    assert out.tolist() == expected


def test_constant_folding_matches_runtime_evaluation(expression_kernels):
    expressions, module = expression_kernels
    folded = np.zeros(len(expressions), np.int64)
    module.constant_expressions[1](folded, 3, -7, 11)
    runtime = np.zeros(len(expressions), np.int64)
    module.runtime_expressions[1](runtime, 3, -7, 11, debug=True)

    assert folded.tolist() == runtime.tolist()
    source = only_binary(module.constant_expressions).source
    assert "arith__" not in source and " if " not in source        # nothing left to compute at run time


@pytest.fixture(scope="module")
def float_expression_kernel():
    rng = np.random.default_rng(11)
    expressions = [random_float_expression(rng, 3) for _ in range(40)]
    body = "\n".join(f"    g.set_value({i}, {e})" for i, e in enumerate(expressions))
    return expressions, load_kernel_module("float_expression_kernel", FLOAT_EXPRESSION_KERNEL.format(body=body))


@pytest.mark.parametrize("x, y", [(1.25, -0.3), (-3.7, 2.9)])
def test_float_expressions_are_float32_in_both_modes(mode, float_expression_kernel, x, y):
    expressions, module = float_expression_kernel
    out = np.zeros(len(expressions), np.float32)
    module.float_expressions[1](out, x, y, **mode)

    # NumPy float32 scalars with Python float literals compute in float32, as the kernel does
    env = {"x": np.float32(x), "y": np.float32(y), "abs": abs, "min": min, "max": max}
    expected = np.array([eval(e, env) for e in expressions], np.float32)  # noqa: S307 - our own text
    np.testing.assert_array_equal(out, expected)


@asc.jit
def augmented_assignment_kernel(out_f: asc.GlobalAddress, out_i: asc.GlobalAddress, a: int, b: int):
    rf = global_tensor(out_f)
    ri = global_tensor(out_i)
    result: float = a               # the annotation makes it a float from the start
    result += b
    result *= 2
    result -= 5
    result /= a
    result %= 3
    rf.set_value(0, result)
    count = a
    count <<= 2
    count |= 1
    count //= b
    count -= 1
    ri.set_value(0, count)


def test_augmented_assignment(mode):
    a, b = 4, 3
    out_f, out_i = np.zeros(1, np.float32), np.zeros(1, np.int32)
    augmented_assignment_kernel[1](out_f, out_i, a, b, **mode)

    f32 = np.float32
    result = f32(a)
    for op, v in ((np.add, b), (np.multiply, 2), (np.subtract, 5), (np.divide, a), (np.remainder, 3)):
        result = op(result, f32(v))
    assert out_f[0] == result
    assert out_i[0] == ((a << 2) | 1) // b - 1


@asc.jit
def divmod_helper(a, b):
    return a // b, a % b


@asc.jit
def unpack_kernel(out: asc.GlobalAddress, a: int, b: int, n: int):
    res = global_tensor(out)
    a, b = b, a
    res.set_value(0, a)
    res.set_value(1, b)
    f0, f1 = 0, 1
    for _ in range(n):
        f0, f1 = f1, f0 + f1
    res.set_value(2, f0)
    q, r = divmod_helper(a * 7 + 3, b)
    res.set_value(3, q)
    res.set_value(4, r)
    p, (u, w) = 2, (a, 9)
    res.set_value(5, p * u + w)
    pair = [a, b]
    res.set_value(6, pair[0] - pair[1] + len(pair))


def test_tuple_unpacking(mode):
    a, b, n = 4, 11, 12
    out = np.zeros(7, np.int32)
    unpack_kernel[1](out, a, b, n, **mode)

    a, b = b, a
    f0, f1 = 0, 1
    for _ in range(n):
        f0, f1 = f1, f0 + f1
    assert out.tolist() == [a, b, f0, (a * 7 + 3) // b, (a * 7 + 3) % b, 2 * a + 9, a - b + 2]


@asc.jit
def ifexp_kernel(out_i: asc.GlobalAddress, out_f: asc.GlobalAddress, x: asc.GlobalAddress, n: int):
    ri = global_tensor(out_i)
    rf = global_tensor(out_f)
    src = global_tensor(x)
    for i in range(n):
        v = src.get_value(i)
        ri.set_value(i, 1 if v > 0 else -1)
        rf.set_value(i, v if v > 0 else 0)
    ri.set_value(n, 10 if out_i.dtype == asc.int32 else 20)


def test_conditional_expressions(mode, rng):
    x = rng.uniform(-1, 1, 16).astype(np.float32)
    out_i, out_f = np.zeros(17, np.int32), np.zeros(16, np.float32)
    ifexp_kernel[1](out_i, out_f, x, 16, **mode)

    np.testing.assert_array_equal(out_i, np.append(np.where(x > 0, 1, -1), 10))
    np.testing.assert_array_equal(out_f, np.where(x > 0, x, 0))


# --------------------------------------------------------------------------- helpers (inlined @asc.jit functions)


@asc.jit
def copy_in(que, src, offset, count: int = 64):
    t = que.alloc_tensor(src.dtype)
    asc.data_copy(t, src[offset:], count)
    que.enque(t)


@asc.jit
def add_tiles(qx, qy, qz, dtype, count):
    a = qx.deque(dtype)
    b = qy.deque(dtype)
    c = qz.alloc_tensor(dtype)
    asc.add(c, a, b, count)
    qz.enque(c)
    qx.free_tensor(a)
    qy.free_tensor(b)


@asc.jit
def copy_out(que, dst, offset, *, count):
    t = que.deque(dst.dtype)
    asc.data_copy(dst[offset:], t, count)
    que.free_tensor(t)


@asc.jit
def add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int,
               tile: asc.ConstExpr[int]):
    per_core = n // asc.get_block_num()
    base = per_core * asc.get_block_idx()
    xg = global_tensor(x + base, per_core)
    yg = global_tensor(y + base, per_core)
    zg = global_tensor(z + base, per_core)
    pipe = asc.TPipe()
    qx = asc.TQue(VECIN, 2)
    qy = asc.TQue(VECIN, 2)
    qz = asc.TQue(VECOUT, 2)
    pipe.init_buffer(qx, 2, tile * x.dtype.sizeof())
    pipe.init_buffer(qy, 2, tile * x.dtype.sizeof())
    pipe.init_buffer(que=qz, num=2, len=tile * x.dtype.sizeof())
    for i in range(per_core // tile):
        copy_in(qx, xg, i * tile, tile)
        copy_in(qy, yg, offset=i * tile, count=tile)
        add_tiles(qx, qy, qz, x.dtype, tile)
        copy_out(qz, zg, i * tile, count=tile)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("cores", [1, 4])
def test_helpers_with_queues_tensors_and_keywords(mode, rng, dtype, cores):
    n = 1024
    x = rng.uniform(-4, 4, n).astype(dtype)
    y = rng.uniform(-4, 4, n).astype(dtype)
    z = np.zeros(n, dtype)
    add_kernel[cores](x, y, z, n, 128, **mode)

    expected = (x.astype(np.float32) + y.astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(z, expected)


@asc.jit
def bump(value, t):
    value = value + 100             # rebinding parameters: the caller's variables are unchanged
    t = t[8:]
    return value, t.get_size()


@asc.jit
def bind_and_fill(g, addr, n, value):
    g.set_global_buffer(addr, n)    # mutates the caller's GlobalTensor
    for i in range(n):
        g.set_value(i, value + i)


@asc.jit
def twice(v):
    return double(double(v))


@asc.jit
def double(v):
    return v * 2


@asc.jit
def scale_offset(v, scale=10, offset=0):
    return v * scale + offset


@asc.jit
def helper_semantics_kernel(out: asc.GlobalAddress, scratch: asc.GlobalAddress, k: int):
    res = global_tensor(out)
    buf = asc.LocalTensor(asc.int32, VECCALC, 0, 64)
    v = k
    bumped, size = bump(v, buf)
    res.set_value(0, v)
    res.set_value(1, bumped)
    res.set_value(2, buf.get_size())
    res.set_value(3, size)
    const_bumped, _ = bump(5, buf)
    res.set_value(4, const_bumped)
    g = asc.GlobalTensor()
    bind_and_fill(g, scratch, 4, k)
    res.set_value(5, g.get_value(3))
    res.set_value(6, g.get_size())
    res.set_value(7, twice(k))
    res.set_value(8, twice(3))
    res.set_value(9, scale_offset(k, offset=1))
    res.set_value(10, scale_offset(k, 3, 2))


def test_helper_argument_semantics(mode):
    k = 7
    out, scratch = np.zeros(11, np.int32), np.zeros(8, np.int32)
    helper_semantics_kernel[1](out, scratch, k, **mode)

    assert out.tolist() == [k, k + 100, 64, 56, 105, k + 3, 4, 4 * k, 12, 10 * k + 1, 3 * k + 2]
    assert scratch.tolist() == [k, k + 1, k + 2, k + 3, 0, 0, 0, 0]
    source = only_binary(helper_semantics_kernel).source
    assert "np.int32(np.int64(12))" in source       # twice(3) folded


# --------------------------------------------------------------------------- arguments


class Tiling(asc.Struct):
    tile_length = asc.Field(asc.int32, default=0)
    scale = asc.Field(asc.float32, default=1.0)


class KernelConfig(asc.Struct):
    tiling = asc.StructField(Tiling)
    total = asc.Field(asc.int64, default=0)
    offset = asc.Field(asc.int32, default=3)


@asc.jit
def struct_kernel(out_i: asc.GlobalAddress, out_f: asc.GlobalAddress, cfg: KernelConfig):
    ri = global_tensor(out_i)
    rf = global_tensor(out_f)
    ri.set_value(0, cfg.total)
    ri.set_value(1, cfg.tiling.tile_length)
    ri.set_value(2, cfg.offset)
    ri.set_value(3, cfg.total // cfg.tiling.tile_length)
    t = cfg.tiling
    rf.set_value(0, t.scale * 2)
    rf.set_value(1, t.scale + t.tile_length)


@pytest.mark.parametrize("total, tile_length, scale", [(4096, 256, 0.5), (100, 7, -3.25)])
def test_struct_argument_with_nested_struct_and_float_fields(mode, total, tile_length, scale):
    cfg = KernelConfig(tiling=Tiling(tile_length=tile_length, scale=scale), total=total)
    out_i, out_f = np.zeros(4, np.int32), np.zeros(2, np.float32)
    struct_kernel[1](out_i, out_f, cfg, **mode)

    assert out_i.tolist() == [total, tile_length, 3, total // tile_length]
    assert out_f.tolist() == [np.float32(scale) * 2, np.float32(scale) + tile_length]
    assert len(struct_kernel.binaries()) == 1       # field values are runtime arguments


@asc.jit
def scalar_args_kernel(out_i: asc.GlobalAddress, out_f: asc.GlobalAddress, i: int, f: float, b: bool):
    ri = global_tensor(out_i)
    rf = global_tensor(out_f)
    ri.set_value(0, i * 3)
    ri.set_value(1, 1 if b else 0)
    if b and i > 0:
        ri.set_value(2, 7)
    else:
        ri.set_value(2, 8)
    ri.set_value(3, 1 if i in (5, 200) else 0)
    rf.set_value(0, f * 0.5)
    rf.set_value(1, f + i)


@pytest.mark.parametrize("i, f, b", [
    (5, 1.5, True), (np.int16(-4), np.float64(2.25), np.bool_(False)), (np.uint8(200), np.float32(-0.75), True)])
def test_int_float_bool_and_numpy_scalar_arguments(mode, i, f, b):
    out_i, out_f = np.zeros(4, np.int32), np.zeros(2, np.float32)
    scalar_args_kernel[1](out_i, out_f, i, f, b, **mode)

    assert out_i.tolist() == [int(i) * 3, int(bool(b)), 7 if b and i > 0 else 8, int(i in (5, 200))]
    assert out_f.tolist() == [np.float32(f) * np.float32(0.5), np.float32(f) + np.float32(int(i))]
    assert len(scalar_args_kernel.binaries()) == 1


@asc.jit
def constexpr_kernel(out: asc.GlobalAddress, n: asc.ConstExpr[int]):
    res = global_tensor(out)
    for i in asc.static_range(n):
        res.set_value(i, i + n)


def test_constexpr_values_specialise():
    constexpr_kernel.builder.clear()
    out = np.zeros(4, np.int32)
    constexpr_kernel[1](out, 2)
    assert out.tolist() == [2, 3, 0, 0]
    constexpr_kernel[1](out, 3)
    assert out.tolist() == [3, 4, 5, 0]
    assert len(constexpr_kernel.binaries()) == 2
    constexpr_kernel[1](out, np.int64(3))           # equal value: the binary is reused
    constexpr_kernel[1](out, n=2)
    assert len(constexpr_kernel.binaries()) == 2
    out[:] = 0
    constexpr_kernel[1](out, True)                  # equal to 1 but a different type
    assert out.tolist() == [True + 0, 0, 0, 0]
    assert len(constexpr_kernel.binaries()) == 3


# --------------------------------------------------------------------------- scalar access per dtype


@asc.jit
def double_through_ub(src_addr, dst_addr, n, ub_offset):
    """dst[i] = (src[i] * 2) + 1, the product stored in UB in between."""
    src = global_tensor(src_addr, n)
    dst = global_tensor(dst_addr, n)
    buf = asc.LocalTensor(src_addr.dtype, VECCALC, ub_offset, n)
    for i in range(n):
        buf.set_value(i, src.get_value(i) * 2)
    for i in range(n):
        dst.set_value(i, buf.get_value(i) + 1)


@asc.jit
def scalar_access_kernel(f32_in: asc.GlobalAddress, f32_out: asc.GlobalAddress,
                         f16_in: asc.GlobalAddress, f16_out: asc.GlobalAddress,
                         bf16_in: asc.GlobalAddress, bf16_out: asc.GlobalAddress,
                         i8_in: asc.GlobalAddress, i8_out: asc.GlobalAddress,
                         u16_in: asc.GlobalAddress, u16_out: asc.GlobalAddress,
                         i32_in: asc.GlobalAddress, i32_out: asc.GlobalAddress,
                         u64_in: asc.GlobalAddress, u64_out: asc.GlobalAddress, n: int):
    double_through_ub(f32_in, f32_out, n, 0)
    double_through_ub(f16_in, f16_out, n, 1024)
    double_through_ub(bf16_in, bf16_out, n, 2048)
    double_through_ub(i8_in, i8_out, n, 3072)
    double_through_ub(u16_in, u16_out, n, 4096)
    double_through_ub(i32_in, i32_out, n, 5120)
    double_through_ub(u64_in, u64_out, n, 6144)


def doubled_reference(x):
    """What double_through_ub computes, with the kernel's scalar types (float32, int64)."""
    if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16:
        stored = (x.astype(np.float32) * np.float32(2)).astype(x.dtype)
        return (stored.astype(np.float32) + np.float32(1)).astype(x.dtype)
    stored = (x.astype(np.int64) * 2).astype(x.dtype)
    return (stored.astype(np.int64) + 1).astype(x.dtype)


def test_get_value_and_set_value_for_each_dtype(mode, rng):
    n = 40
    inputs = [
        rng.standard_normal(n).astype(np.float32),
        rng.standard_normal(n).astype(np.float16),
        rng.standard_normal(n).astype(ml_dtypes.bfloat16),
        rng.integers(-128, 128, n).astype(np.int8),           # * 2 wraps, as a C++ store does
        rng.integers(0, 1 << 16, n).astype(np.uint16),
        rng.integers(-(1 << 30), 1 << 30, n).astype(np.int32),
        rng.integers(0, 1 << 62, n).astype(np.uint64),
    ]
    outputs = [np.zeros_like(x) for x in inputs]
    scalar_access_kernel[1](*[a for pair in zip(inputs, outputs) for a in pair], n, **mode)

    for x, got in zip(inputs, outputs):
        np.testing.assert_array_equal(got.view(np.uint8), doubled_reference(x).view(np.uint8), err_msg=str(x.dtype))


@asc.jit
def bf16_copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    src = global_tensor(x, n)
    dst = global_tensor(y, n)
    pipe = asc.TPipe()
    que = asc.TQueBind(VECIN, VECOUT, 1)
    pipe.init_buffer(que, 1, 64 * x.dtype.sizeof())
    staged = que.alloc_tensor(x.dtype)
    asc.data_copy(staged, src, 64)
    que.enque(staged)
    t = que.deque(x.dtype)
    if t.get_position() == VECOUT:                   # static: a TQueBind hands out VECOUT tensors
        for i in range(n):
            t.set_value(i, t.get_value(i) * 0.5)
    asc.data_copy(dst, t, 64)
    que.free_tensor(t)


def test_bfloat16_via_ml_dtypes_and_via_gm_buffer(mode, rng):
    assert npuemu.gm_buffer is npuemu.arrays.gm_buffer
    x = rng.standard_normal(64).astype(ml_dtypes.bfloat16)
    expected = (x.astype(np.float32) * np.float32(0.5)).astype(ml_dtypes.bfloat16)

    y = np.zeros(64, ml_dtypes.bfloat16)
    bf16_copy_kernel[1](x, y, 64, **mode)
    np.testing.assert_array_equal(y.view(np.uint16), expected.view(np.uint16))

    y_bits = np.zeros(64, np.uint16)
    bf16_copy_kernel[1](npuemu.gm_buffer(x.view(np.uint16), asc.bfloat16),
                        npuemu.gm_buffer(y_bits, asc.bfloat16), 64, **mode)
    np.testing.assert_array_equal(y_bits, expected.view(np.uint16))
    assert len(bf16_copy_kernel.binaries()) == 1     # both are bfloat16 arguments


# --------------------------------------------------------------------------- tensors, buffers and allocators


@asc.jit
def sub_tensor_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, offset: int):
    src = global_tensor(x)
    dst = global_tensor(y)
    buf = asc.LocalTensor(asc.float32, VECCALC, 0, 64)
    part = buf[16:]
    asc.data_copy(part, src[offset:], 32)
    asc.data_copy(buf, src, 16)
    asc.data_copy(dst, buf, 48)
    dst[48:].set_value(0, part.get_size())
    dst[49:].set_value(0, part.get_value(1))


def test_sub_tensors(mode, rng):
    x = rng.standard_normal(128).astype(np.float32)
    y = np.zeros(64, np.float32)
    sub_tensor_kernel[1](x, y, 40, **mode)

    np.testing.assert_array_equal(y[:16], x[:16])
    np.testing.assert_array_equal(y[16:48], x[40:72])
    assert y[48:50].tolist() == [48, x[41]]


@asc.jit
def tbuf_kernel(out: asc.GlobalAddress, n: int):
    res = global_tensor(out)
    pipe = asc.TPipe()
    tbuf = asc.TBuf(VECCALC)
    pipe.init_buffer(tbuf, 1024)
    whole = tbuf.get(asc.int32)
    head = tbuf.get(asc.int32, 16)
    tail = tbuf.get_with_offset(8, 256, asc.int32)
    for i in range(n):
        whole.set_value(i, i * 10)
    res.set_value(0, whole.get_size())
    res.set_value(1, head.get_size())
    res.set_value(2, tail.get_size())
    res.set_value(3, head.get_value(5))
    res.set_value(4, tail.get_value(2))              # element 64 + 2 of the buffer
    res.set_value(5, tail.get_phy_addr() - whole.get_phy_addr())
    res.set_value(6, whole.get_phy_addr(3) - whole.get_phy_addr())   # the offset counts elements


def test_tbuf_get_and_get_with_offset(mode):
    out = np.zeros(7, np.int32)
    tbuf_kernel[1](out, 256, **mode)

    assert out.tolist() == [256, 16, 8, 50, 660, 256, 12]


@asc.jit
def allocator_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, info: asc.GlobalAddress):
    res = global_tensor(info)
    allocator = asc.LocalMemAllocator()
    a = allocator.alloc(VECIN, asc.float32, 48)
    b = allocator.alloc(VECIN, asc.float32, 40)     # 160 bytes: the next tensor starts 32-byte aligned
    c = allocator.alloc(VECOUT, asc.float32, 40)
    asc.data_copy(a, global_tensor(x), 40)
    asc.data_copy(b, global_tensor(y), 40)
    asc.add(c, a, b, 40)
    asc.data_copy(global_tensor(z), c, 40)
    res.set_value(0, b.get_phy_addr() - a.get_phy_addr())
    res.set_value(1, c.get_phy_addr() - b.get_phy_addr())
    res.set_value(2, allocator.get_cur_addr())


def test_local_mem_allocator(mode, rng):
    x, y = rng.standard_normal(40).astype(np.float32), rng.standard_normal(40).astype(np.float32)
    z, info = np.zeros(40, np.float32), np.zeros(3, np.int32)
    allocator_kernel[1](x, y, z, info, **mode)

    np.testing.assert_array_equal(z, x + y)
    assert info.tolist() == [192, 160, 192 + 160 + 160]


# --------------------------------------------------------------------------- cores and arrays


@asc.jit
def core_identity_kernel(out: asc.GlobalAddress):
    res = global_tensor(out)
    idx = asc.get_block_idx()
    res.set_value(2 * idx, idx)
    res.set_value(2 * idx + 1, asc.get_block_num())


@pytest.mark.parametrize("cores", [1, 3, 8])
def test_block_idx_and_block_num(mode, cores):
    out = np.full(16, -1, np.int32)
    core_identity_kernel[cores](out, **mode)

    expected = np.full(16, -1)
    expected[0:2 * cores:2] = np.arange(cores)
    expected[1:2 * cores:2] = cores
    np.testing.assert_array_equal(out, expected)
    assert len(core_identity_kernel.binaries()) == 1   # the core count is not part of the binary


@asc.jit
def scale_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    src = global_tensor(x)
    dst = global_tensor(y)
    for i in range(n):
        dst.set_value(i, src(i) * 3)                # g(i) is g.get_value(i)


def test_non_contiguous_arrays_are_copied_in_and_out(mode, rng):
    base = rng.standard_normal((8, 6)).astype(np.float32)
    x = base[:, ::2]                                 # strided input
    y_base = np.zeros((8, 6), np.float32)
    y = y_base[:, 1::2]                              # strided output, written back in place
    scale_kernel[1](x, y, x.size, **mode)

    np.testing.assert_array_equal(y, x * 3)
    np.testing.assert_array_equal(y_base[:, ::2], 0)
    f_order = np.asfortranarray(base)
    out = np.zeros((8, 6), np.float32, order="F")
    scale_kernel[1](f_order, out, base.size, **mode)
    np.testing.assert_array_equal(out, base * 3)


def test_read_only_array_is_a_launch_error():
    x = np.ones(8, np.float32)
    x.flags.writeable = False
    with pytest.raises(npuemu.LaunchError, match=r"kernel 'scale_kernel'.*argument 'x' is a read-only array"):
        scale_kernel[1](x, np.zeros(8, np.float32), 8)


def test_keyword_arguments_at_launch(mode):
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    scale_kernel[1](n=8, y=y, x=x, **mode)
    np.testing.assert_array_equal(y, x * 3)


def test_top_level_package_exports():
    assert isinstance(npuemu.__version__, str) and npuemu.__version__
    for name in ("KernelCompileError", "UnsupportedSyntaxError", "KernelTypeError", "UnknownAPIError",
                 "KernelFault", "BoundsError", "CapacityError", "QueueError", "DivisionByZeroError",
                 "LaunchError", "NpuemuError"):
        assert issubclass(getattr(npuemu, name), npuemu.NpuemuError), name
    assert issubclass(npuemu.UnsupportedSyntaxError, npuemu.KernelCompileError)
    assert issubclass(npuemu.DivisionByZeroError, npuemu.KernelFault)
