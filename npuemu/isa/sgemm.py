"""A call of ``cblas_sgemm`` through its address (``runtime/sgemm.py``), from compiled code.

Row-major ``C = alpha * op(A) @ B + beta * C`` with ``op(A) = A^T`` when
``trans_a``: the form ``mmad`` needs for its K-major operand panels.
"""
from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

ROW_MAJOR = 101
NO_TRANS = 111
TRANS = 112


@intrinsic
def _call(typingctx, fn, wide, trans_a, m, n, k, a, lda, b, ldb, beta, c, ldc):
    """``cblas_sgemm(RowMajor, trans_a, NoTrans, m, n, k, 1, a, lda, b, ldb, beta, c, ldc)`` at address ``fn``;
    ``wide`` (a literal) says whether BLAS's integers are 64-bit."""
    if not isinstance(wide, types.BooleanLiteral):
        return None
    if not all(isinstance(x, types.Array) and x.dtype == types.float32 for x in (a, b, c)):
        return None
    sig = types.void(fn, wide, trans_a, m, n, k, a, lda, b, ldb, beta, c, ldc)

    def codegen(context, builder, signature, args):
        blasint = ir.IntType(64 if wide.literal_value else 32)
        i32, f32 = ir.IntType(32), ir.FloatType()
        fp = f32.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, blasint, blasint, blasint, f32, fp, blasint, fp,
                                               blasint, f32, fp, blasint])
        ty = signature.args

        def integer(i, width):
            v = context.cast(builder, args[i], ty[i], types.int64)
            return builder.trunc(v, width) if width.width < 64 else v

        def data(i):
            return builder.bitcast(context.make_array(ty[i])(context, builder, args[i]).data, fp)

        target = builder.inttoptr(context.cast(builder, args[0], ty[0], types.int64), fnty.as_pointer())
        one = ir.Constant(f32, 1.0)
        beta_ = context.cast(builder, args[10], ty[10], types.float32)
        builder.call(target, [ir.Constant(i32, ROW_MAJOR), integer(2, i32), ir.Constant(i32, NO_TRANS),
                              integer(3, blasint), integer(4, blasint), integer(5, blasint), one, data(6),
                              integer(7, blasint), data(8), integer(9, blasint), beta_, data(11),
                              integer(12, blasint)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, inline="always")
def at_b(fn, wide, at, b, c, beta):
    """``c = at.T @ b + beta * c`` for C-contiguous float32 ``at`` (K x M), ``b`` (K x N), ``c`` (M x N)."""
    m, n, k = c.shape[0], c.shape[1], at.shape[0]
    if wide:
        _call(fn, True, TRANS, m, n, k, at, at.shape[1], b, b.shape[1], beta, c, n)
    else:
        _call(fn, False, TRANS, m, n, k, at, at.shape[1], b, b.shape[1], beta, c, n)
