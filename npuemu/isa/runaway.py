"""The loop check through which a launch stops a runaway core.

Every iteration of a kernel loop (``while`` and runtime ``range``) adds one to
the kernel's step counter, a local, and compares it with ``st[STEP_LIMIT]``
through :func:`limit`.  That is an atomic (relaxed) load: another thread may
write the word, and a plain load would be hoisted out of a loop that stores
nothing, which would then never see it.  Only past the limit does the core
call :func:`poll`, which

* stops the core with ``Fault(F_STOPPED)`` when the launch has set
  ``st[STOP]`` (Ctrl-C, the launch's time budget, another core's fault);
* stops it with ``Fault(F_STEPS)`` when the counter passed ``st[MAX_STEPS]``;
* otherwise, for a core on the launching thread, calls the launcher's poll
  callback (``st[POLL]``, the address of a C function taking the core's slot
  and step count): that lets Python run the Ctrl-C handler and look at the
  clock, and returns the next limit;
* or returns: a core on the thread pool that saw the launcher's limit
  before its stop word looks again at its next iteration.

The launcher stops a core by writing ``st[STOP]`` and then -1 to
``st[STEP_LIMIT]`` (runtime/watchdog.py).  Fault codes 1400-1401 (runaway loops).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from .. import errors
from . import state as S
from .fault import Fault, register
from .linkage import instruction

F_STOPPED = 1400
F_STEPS = 1401

# why the launch stopped its cores (st[STOP])
STOP_INTERRUPT = 1          # Ctrl-C (SIGINT)
STOP_TIMEOUT = 2            # the launch's time budget ran out
STOP_FAULT = 3              # another core faulted and the others had their time to finish

REASONS = {STOP_INTERRUPT: "stopped by Ctrl-C", STOP_TIMEOUT: "stopped at the launch's time budget",
           STOP_FAULT: "stopped after another core's fault"}

register({
    F_STOPPED: (errors.KernelTimeoutError,
                lambda a, b, c, env: f"{REASONS.get(a, 'stopped')} after {b} loop iterations"),
    F_STEPS: (errors.KernelTimeoutError,
              lambda a, b, c, env: f"more than max_steps={a} loop iterations"),
})


@intrinsic
def _load_relaxed(typingctx, array, index):
    """``array[index]`` of an int64 array as an atomic monotonic load (unchecked)."""
    if not (isinstance(array, types.Array) and array.dtype == types.int64 and isinstance(index, types.Integer)):
        return None
    sig = types.int64(array, index)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        return builder.load_atomic(builder.gep(ary.data, [idx]), "monotonic", 8)

    return sig, codegen


@intrinsic
def _call_poll(typingctx, fn, slot, steps):
    """``fn(slot, steps)`` for ``fn`` the address of a C function ``int64 (int64, int64)``."""
    if not all(isinstance(t, types.Integer) for t in (fn, slot, steps)):
        return None
    sig = types.int64(fn, slot, steps)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        a = [context.cast(builder, v, t, types.int64) for v, t in zip(args, signature.args)]
        target = builder.inttoptr(a[0], ir.FunctionType(i64, [i64, i64]).as_pointer())
        return builder.call(target, [a[1], a[2]])

    return sig, codegen


def limit(st):
    """The step count past which the core must :func:`poll` (CPython: a plain read)."""
    return st[S.STEP_LIMIT]


# not inline="always": Numba's IR inliner assumes SSA form, which generated kernels are compiled without
# (see isa/borrow.py); LLVM inlines the call anyway
@overload(limit)
def _limit(st):
    if isinstance(st, types.Array) and st.dtype == types.int64:
        return lambda st: _load_relaxed(st, S.STEP_LIMIT)
    return None


@instruction
def poll(st, steps, loc):
    """Past the step limit: stop the core, or take the next limit (see the module docstring)."""
    reason = _load_relaxed(st, S.STOP)
    if reason != 0:
        raise Fault(F_STOPPED, loc, reason, steps, 0)
    if steps > st[S.MAX_STEPS]:
        raise Fault(F_STEPS, loc, st[S.MAX_STEPS], steps, 0)
    callback = st[S.POLL]
    if callback != 0:
        nxt = _call_poll(callback, st[S.CORE_SLOT], steps)
        reason = _load_relaxed(st, S.STOP)
        if reason != 0:
            raise Fault(F_STOPPED, loc, reason, steps, 0)
        st[S.STEP_LIMIT] = nxt
