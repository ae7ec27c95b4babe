"""Wrong kernels are rejected at compile time with an error naming the kernel's own line.

Each case below marks its offending line with a ``# <- name`` comment; the
error must be the expected :class:`npuemu.KernelCompileError` subclass, point
at that line (``err.loc``), show it with a caret, and carry no chained Python
or Numba traceback.  None of these kernels reaches Numba, so the cases are
cheap.  Misuse of the launch itself is a :class:`npuemu.LaunchError`.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc
from npuemu.codegen import abi, compiler

VECIN, VECCALC = asc.TPosition.VECIN, asc.TPosition.VECCALC


def line_of(marker: str) -> int:
    """Line number of the line of this file that ends with ``# <- marker``."""
    with open(__file__) as f:
        hits = [i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# <- {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def check_points_at(err: npuemu.KernelCompileError, marker: str) -> None:
    lineno = line_of(marker)
    assert err.loc is not None
    assert (err.loc.filename, err.loc.lineno) == (__file__, lineno)
    lines = str(err).splitlines()
    header = f'  File "{__file__}", line {lineno}, in '
    i = next(i for i, line in enumerate(lines) if line.startswith(header))
    assert lines[i + 1].strip() and f"# <- {marker}" in lines[i + 1]
    assert lines[i + 2].strip() == "^"
    assert lines[i + 1][lines[i + 2].index("^")] != " "      # the caret points into the statement
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)
    assert "numba" not in str(err).lower()


def compile_error(kernel, *args) -> npuemu.KernelCompileError:
    with pytest.raises(npuemu.KernelCompileError) as info:
        kernel[1](*args)
    return info.value


OUT = np.zeros(8, np.int32)


# --------------------------------------------------------------------------- kernels, one mistake each


@asc.jit
def uses_lambda(out: asc.GlobalAddress, n: int):
    f = lambda a: a * 2  # noqa: E731 # <- lambda


@asc.jit
def nested_def(out: asc.GlobalAddress, n: int):
    def inner():  # <- nested-def
        return 1


counter = 0


@asc.jit
def uses_global(out: asc.GlobalAddress, n: int):
    global counter  # <- global
    counter = n


@asc.jit
def uses_try(out: asc.GlobalAddress, n: int):
    try:  # <- try
        n = n // 2
    except ZeroDivisionError:
        pass


@asc.jit
def uses_with(out: asc.GlobalAddress, n: int):
    with open("file.txt") as f:  # <- with
        pass


@asc.jit
def returns_value(out: asc.GlobalAddress, n: int):
    return n * 2  # <- kernel-return


@asc.jit
def early_return(out: asc.GlobalAddress, n: int):
    if n > 2:
        return  # <- kernel-early-return
    g = asc.GlobalTensor()


@asc.jit
def returns_early(v):
    if v > 0:
        return v  # <- helper-early-return
    return -v


@asc.jit
def calls_early_return_helper(out: asc.GlobalAddress, n: int):
    m = returns_early(n)  # <- call-of-early-return


@asc.jit
def factorial(v):
    return v * factorial(v - 1)  # <- recursion


@asc.jit
def recursive(out: asc.GlobalAddress, n: int):
    m = factorial(n)


@asc.jit
def unknown_name(out: asc.GlobalAddress, n: int):
    m = n + undefined_variable  # noqa: F821 # <- unknown-name


@asc.jit
def unknown_asc_function(out: asc.GlobalAddress, n: int):
    asc.no_such_instruction(n)  # <- unknown-asc


def plain_python(a, b):
    return a + b


@asc.jit
def calls_plain_python(out: asc.GlobalAddress, n: int):
    folded = plain_python(1, 2)      # constants: runs at compile time
    m = plain_python(n, folded)  # <- plain-python


@asc.jit
def builtin_arg_count(out: asc.GlobalAddress, n: int):
    i = asc.get_block_idx(n)  # <- builtin-arg-count


@asc.jit
def method_missing_arg(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    v = g.get_value()  # <- missing-arg


@asc.jit
def wrong_kwarg(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    g.set_value(index=0, val=n)  # <- wrong-kwarg


@asc.jit
def python_builtin_arg_count(out: asc.GlobalAddress, n: int):
    m = abs(n, 2)  # <- abs-arg-count


@asc.jit
def helper_of_two(a, b):
    return a + b


@asc.jit
def helper_arg_count(out: asc.GlobalAddress, n: int):
    m = helper_of_two(n, 1, 2)  # <- helper-arg-count


@asc.jit
def tensor_where_int_was(out: asc.GlobalAddress, n: int):
    v = 0
    v = asc.LocalTensor(asc.float32, VECCALC, 0, 64)  # <- tensor-for-int


@asc.jit
def float_where_int_was(out: asc.GlobalAddress, n: int):
    v = 0
    for i in range(n):
        v = v + 0.5  # <- float-for-int


@asc.jit
def changes_a_constant(out: asc.GlobalAddress, n: int):
    d = out.dtype
    if n > 0:
        d = asc.float32  # <- change-constant


@asc.jit
def uses_fstring(out: asc.GlobalAddress, n: int):
    s = f"n = {n}"  # <- fstring


@asc.jit
def uses_star_args(out: asc.GlobalAddress, n: int):
    pair = (n, n)
    m = helper_of_two(*pair)  # <- star-args


@asc.jit
def compares_tensors(out: asc.GlobalAddress, n: int):
    a = asc.LocalTensor(asc.float32, VECCALC, 0, 64)
    b = asc.LocalTensor(asc.float32, VECCALC, 256, 64)
    if a < b:  # <- tensor-compare
        n = 1


@asc.jit
def runtime_in(out: asc.GlobalAddress, n: int):
    pair = (n, n + 1)
    if 1 in pair:  # <- runtime-in
        n = 0


@asc.jit
def second_pipe(out: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    other = asc.TPipe()  # <- second-pipe


@asc.jit
def runtime_queue_depth(out: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    que = asc.TQue(VECIN, n)  # <- queue-depth


@asc.jit
def float_index(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    g.set_value(1.5, n)  # <- float-index


@asc.jit
def unbound_global_tensor(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    v = g.get_value(0)  # <- unbound-global-tensor


@asc.jit
def slice_with_stop(out: asc.GlobalAddress, n: int):
    t = asc.LocalTensor(asc.float32, VECCALC, 0, 64)
    part = t[1:4]  # <- slice-stop


@asc.jit
def break_in_unrolled(out: asc.GlobalAddress, n: int):
    for i in asc.static_range(4):
        if i == n:
            break  # <- unrolled-break


@asc.jit
def runtime_assert(out: asc.GlobalAddress, n: int):
    assert n > 0  # <- runtime-assert


@asc.jit
def failing_static_assert(out: asc.GlobalAddress, n: int):
    asc.static_assert(out.dtype == asc.float32, "needs float32")  # <- static-assert


@asc.jit
def asserts_on_constants(out: asc.GlobalAddress, n: asc.ConstExpr[int]):
    assert n > 0, f"n must be positive, got {n} for {out.dtype!r}"  # <- assert-fstring


@asc.jit
def constant_division_by_zero(out: asc.GlobalAddress, n: int):
    m = 1 // 0  # <- constant-div-zero


@asc.jit
def ifexp_with_calls(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    v = g.get_value(0) if n > 0 else g.get_value(1)  # <- ifexp-calls


@asc.jit
def uses_walrus(out: asc.GlobalAddress, n: int):
    if (m := n + 1) > 2:  # <- walrus
        n = m


@asc.jit
def uses_yield(out: asc.GlobalAddress, n: int):
    yield n  # <- yield


@asc.jit
def uses_import(out: asc.GlobalAddress, n: int):
    import math as m  # noqa: F401 # <- import


@asc.jit
def uses_raise(out: asc.GlobalAddress, n: int):
    raise ValueError("no")  # <- raise


@asc.jit
def while_else(out: asc.GlobalAddress, n: int):
    while n > 0:  # <- while-else
        n -= 1
    else:
        n = 5


@asc.jit
def augassign_attribute(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.size += 1  # <- augassign-attribute


@asc.jit
def math_module_at_runtime(out: asc.GlobalAddress, n: int):
    m = math.sqrt(n)  # <- math-runtime


CASES = [
    ("lambda", uses_lambda, npuemu.UnsupportedSyntaxError, r"'Lambda' expressions are not supported"),
    ("nested-def", nested_def, npuemu.UnsupportedSyntaxError, r"'FunctionDef' statements are not supported"),
    ("global", uses_global, npuemu.UnsupportedSyntaxError, r"'Global' statements are not supported"),
    ("try", uses_try, npuemu.UnsupportedSyntaxError, r"'Try' statements are not supported"),
    ("with", uses_with, npuemu.UnsupportedSyntaxError, r"'With' statements are not supported"),
    ("kernel-return", returns_value, npuemu.UnsupportedSyntaxError, r"a kernel cannot return"),
    ("kernel-early-return", early_return, npuemu.UnsupportedSyntaxError, r"a kernel cannot return"),
    ("helper-early-return", calls_early_return_helper, npuemu.UnsupportedSyntaxError,
     r"'return' is only supported as the last statement"),
    ("recursion", recursive, npuemu.UnsupportedSyntaxError, r"recursive call of @asc.jit helper 'factorial'"),
    ("unknown-name", unknown_name, npuemu.UnknownAPIError, r"name 'undefined_variable' is not defined"),
    ("unknown-asc", unknown_asc_function, npuemu.UnknownAPIError, r"has no attribute 'no_such_instruction'"),
    ("plain-python", calls_plain_python, npuemu.UnknownAPIError,
     r"plain_python\(\) is called with run-time values.*@asc.jit"),
    ("builtin-arg-count", builtin_arg_count, npuemu.KernelTypeError, r"takes at most 0 arguments \(1 given\)"),
    ("missing-arg", method_missing_arg, npuemu.KernelTypeError, r"missing required argument 'index'"),
    ("wrong-kwarg", wrong_kwarg, npuemu.KernelTypeError,
     r"unexpected keyword argument 'val' \(parameters: index, value\)"),
    ("abs-arg-count", python_builtin_arg_count, npuemu.KernelTypeError, r"abs\(\) takes at most 1 arguments"),
    ("helper-arg-count", helper_arg_count, npuemu.KernelTypeError, r"bad call of helper 'helper_of_two'"),
    ("tensor-for-int", tensor_where_int_was, npuemu.KernelTypeError,
     r"variable 'v' holds a int; cannot assign LocalTensor\[float32, VECCALC\]"),
    ("float-for-int", float_where_int_was, npuemu.KernelTypeError,
     r"variable 'v' was first assigned an integer and now a float"),
    ("change-constant", changes_a_constant, npuemu.KernelTypeError,
     r"variable 'd' is a compile-time constant \(asc.int32\) and cannot be reassigned to DataType asc.float32"),
    ("fstring", uses_fstring, npuemu.UnsupportedSyntaxError, r"f-strings are not supported"),
    ("star-args", uses_star_args, npuemu.UnsupportedSyntaxError, r"\*args and \*\*kwargs are not supported"),
    ("tensor-compare", compares_tensors, npuemu.KernelTypeError, r"cannot compare LocalTensor.*at run time"),
    ("runtime-in", runtime_in, npuemu.KernelTypeError, r"cannot compare constant 1 and tuple of 2 at run time"),
    ("second-pipe", second_pipe, npuemu.UnsupportedSyntaxError, r"another TPipe only after destroy"),
    ("queue-depth", runtime_queue_depth, npuemu.KernelTypeError,
     r"the queue depth must be a compile-time constant, got a runtime int"),
    ("float-index", float_index, npuemu.KernelTypeError, r"an element index must be an integer"),
    ("unbound-global-tensor", unbound_global_tensor, npuemu.KernelTypeError,
     r"GlobalTensor used before set_global_buffer"),
    ("slice-stop", slice_with_stop, npuemu.UnsupportedSyntaxError, r"tensor slices take a start index only"),
    ("unrolled-break", break_in_unrolled, npuemu.UnsupportedSyntaxError,
     r"break/continue inside a compile-time unrolled loop"),
    ("runtime-assert", runtime_assert, npuemu.UnsupportedSyntaxError, r"assert needs a compile-time condition"),
    ("static-assert", failing_static_assert, npuemu.KernelCompileError, r"static_assert failed: needs float32"),
    ("constant-div-zero", constant_division_by_zero, npuemu.KernelTypeError, r"cannot evaluate 1 // 0"),
    ("ifexp-calls", ifexp_with_calls, npuemu.UnsupportedSyntaxError,
     r"conditional expression whose branches call kernel APIs"),
    ("walrus", uses_walrus, npuemu.UnsupportedSyntaxError, r"'NamedExpr' expressions are not supported"),
    ("yield", uses_yield, npuemu.UnsupportedSyntaxError, r"'Yield' expressions are not supported"),
    ("import", uses_import, npuemu.UnsupportedSyntaxError, r"'Import' statements are not supported"),
    ("raise", uses_raise, npuemu.UnsupportedSyntaxError, r"'Raise' statements are not supported"),
    ("while-else", while_else, npuemu.UnsupportedSyntaxError, r"while/else is not supported"),
    ("augassign-attribute", augassign_attribute, npuemu.UnsupportedSyntaxError,
     r"augmented assignment is only supported to a variable"),
    ("math-runtime", math_module_at_runtime, npuemu.UnknownAPIError, r"sqrt\(\) is called with run-time values"),
]


@pytest.mark.parametrize("marker, kernel, cls, message", CASES, ids=[c[0] for c in CASES])
def test_compile_error_names_the_offending_line(marker, kernel, cls, message):
    err = compile_error(kernel, OUT, 4)

    assert type(err) is cls
    assert re.search(message, str(err)), str(err)
    assert str(err).startswith(f"in kernel '{kernel.__name__}': ")
    check_points_at(err, marker)


def test_assert_on_constants_with_an_fstring_message():
    asserts_on_constants[1](OUT, 3, debug=True)          # holds: nothing to report

    err = compile_error(asserts_on_constants, OUT, -1)
    assert type(err) is npuemu.KernelCompileError
    assert "assertion failed: n must be positive, got -1 for asc.int32" in str(err)
    check_points_at(err, "assert-fstring")


def test_error_in_helper_shows_the_call_site():
    err = compile_error(calls_early_return_helper, OUT, 4)

    assert err.loc.function == "returns_early"
    assert err.loc.called_from is not None
    assert err.loc.called_from.lineno == line_of("call-of-early-return")
    assert err.loc.called_from.function == "calls_early_return_helper"
    assert "called from:" in str(err)


def test_compile_errors_are_raised_again_on_the_next_launch():
    for _ in range(2):
        err = compile_error(unknown_name, OUT, 4)
        assert err.loc.lineno == line_of("unknown-name")
    assert not unknown_name.binaries()


def test_caret_column_in_an_indented_kernel():
    @asc.jit
    def indented(out: asc.GlobalAddress, n: int):
        m = n + 2 * not_defined_here  # noqa: F821 # <- indented-kernel

    err = compile_error(indented, OUT, 4)

    check_points_at(err, "indented-kernel")
    source_line, caret_line = str(err).splitlines()[-2:]
    assert source_line[caret_line.index("^"):].startswith("not_defined_here")
    assert err.loc.col == open(__file__).read().splitlines()[err.loc.lineno - 1].index("not_defined_here")


def test_kernel_parameter_named_like_a_launch_option():
    with pytest.raises(npuemu.UnsupportedSyntaxError) as info:
        @asc.jit
        def takes_debug(out: asc.GlobalAddress, debug: int):  # <- option-name
            pass

    assert "parameter name(s) debug clash with launch options" in str(info.value)
    check_points_at(info.value, "option-name")
    source_line, caret_line = str(info.value).splitlines()[-2:]
    assert source_line[caret_line.index("^"):].startswith("debug: int")


def test_variable_arguments_are_rejected_at_definition():
    with pytest.raises(npuemu.UnsupportedSyntaxError) as info:
        @asc.jit
        def takes_varargs(out: asc.GlobalAddress, *sizes):  # <- varargs
            pass

    assert "*sizes: variable arguments are not supported" in str(info.value)
    check_points_at(info.value, "varargs")


# --------------------------------------------------------------------------- generated code npuemu cannot compile


def test_numba_failure_is_an_internal_error_naming_the_generated_file(tmp_path, monkeypatch):
    monkeypatch.setenv("NPUEMU_CACHE_DIR", str(tmp_path))
    source = ("import numpy as np\n\n\n"
              "def kernel(_st, _lm, _gm, _log):\n"
              "    _st.no_such_attribute = 1\n"
              "    yield 0\n")
    ck = compiler.generated_module("ill_typed", source)
    signature = abi.numba_signature(0, [])[:4]

    with pytest.raises(npuemu.KernelCompileError) as info:
        compiler.compile_native(ck, signature)

    text = str(info.value)
    assert text.startswith("internal error: Numba could not compile the code generated for kernel 'ill_typed'")
    assert str(ck.path) in text and ck.path.is_file() and ck.path.parent.parent == tmp_path
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_generated_code_that_does_not_load_is_an_internal_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NPUEMU_CACHE_DIR", str(tmp_path))

    with pytest.raises(npuemu.KernelCompileError, match=r"internal error: the code generated for kernel "
                                                        r"'broken' does not load \(generated source: .*broken_"):
        compiler.generated_module("broken", "def kernel(:\n")


# --------------------------------------------------------------------------- launch misuse


@asc.jit
def trivial_kernel(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    g.set_value(0, n)


@pytest.mark.parametrize("core_num", [0, -2, 1.5, True, "4", None])
def test_launch_with_bad_core_num(core_num):
    with pytest.raises(npuemu.LaunchError, match=r"kernel 'trivial_kernel': core_num must be a positive int"):
        trivial_kernel[core_num](OUT, 1)


def test_launch_with_numpy_integer_core_num(mode):
    out = np.zeros(8, np.int32)
    trivial_kernel[np.int64(2)](out, 5, **mode)
    assert out[0] == 5


@pytest.mark.parametrize("bad, message", [
    ({"a": 1}, r"kernel 'trivial_kernel': kernel argument 'n' has unsupported type dict"),
    ([1, 2], r"kernel 'trivial_kernel': kernel argument 'n' has unsupported type list"),
    (np.zeros(4, np.complex64), r"arrays of dtype complex64 cannot be passed to kernels"),
])
def test_launch_with_bad_argument_type(bad, message):
    with pytest.raises(npuemu.LaunchError, match=message):
        trivial_kernel[1](OUT, bad)


def test_launch_with_wrong_argument_count():
    with pytest.raises(npuemu.LaunchError, match=r"kernel 'trivial_kernel': missing a required argument: 'n'"):
        trivial_kernel[1](OUT)
    with pytest.raises(npuemu.LaunchError, match=r"kernel 'trivial_kernel': too many positional arguments"):
        trivial_kernel[1](OUT, 1, 2)


def test_calling_a_kernel_without_core_num():
    with pytest.raises(npuemu.LaunchError, match=r"'trivial_kernel' is an @asc.jit kernel: launch it as "
                                                 r"trivial_kernel\[core_num\]\(...\)"):
        trivial_kernel(OUT, 1)


def test_unhashable_constexpr_argument():
    @asc.jit
    def takes_constexpr(out: asc.GlobalAddress, shape: asc.ConstExpr[tuple]):
        pass

    with pytest.raises(npuemu.LaunchError, match=r"ConstExpr argument 'shape' must be hashable, got list"):
        takes_constexpr[1](OUT, [1, 2])


def test_bad_option_value():
    with pytest.raises(npuemu.LaunchError, match=r"check must be one of off, default, full"):
        trivial_kernel[1](OUT, 1, check="most")


def test_gm_buffer_needs_a_kernel_dtype():
    with pytest.raises(npuemu.LaunchError, match=r"gm_buffer needs a kernel data type"):
        npuemu.gm_buffer(np.zeros(4, np.uint16), np.uint16)
