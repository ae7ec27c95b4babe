"""The per-pipe timing model: what a binary built with ``profile=True`` calls as it runs.

A core's scalar unit issues instructions in program order into one in-order
queue per pipe (S, V, M, MTE1, MTE2, MTE3, FIX); the queues run in parallel.
Each function here advances the core's clocks in ``st`` (``state.COST_*``,
times in ticks of ``1 / COST_TICK`` cycle):

* every instruction takes ``issue`` cycles of the scalar unit to issue;
* an instruction starts when it is issued and its pipe has finished the one
  before it, and occupies the pipe for its duration (``charge``): an
  instruction of pipe S stalls issue until it ends;
* ``set_flag`` records when its source pipe has finished everything issued
  before it; ``wait_flag`` holds its destination pipe (or, for ``*_S`` events,
  issue) until then; ``pipe_barrier(PIPE_ALL)`` waits for every pipe;
* a hard ``sync_all`` holds every core it joins until the last of them has
  arrived (each core's arrival time goes to the system region: ``sync_arrive``
  before the barrier's wait, ``sync_depart`` after it);
* ``TQue.enque``/``free_tensor`` record when the producer (consumer) pipe is
  done with the block; ``deque``/``alloc_tensor`` hold the consumer (producer)
  pipe until then;
* in a SuperKernel's sub-kernel, ``set_next_task_start`` records when its pipe
  is done (``sk_set``) and ``wait_pre_task_end`` holds every pipe until the
  time the runner hands over (``sk_wait``; npuemu/superkernel/profile.py).

The first ``TRACE_EVENTS`` instructions of each core are also recorded
(pipe, start, end, source line) for the pipeline trace.  The words live past
``STATE_SIZE``: a core's state has them only when the launch runs a profiled
binary, and every function here does nothing on a state without them.

The durations are worked out by the lowering from the platform profile
(``frontend/costs.py``); here they are only added up.  npuemu still executes
every instruction at issue, in program order, so these clocks change no result.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from . import cross_core as X
from . import state as S

TICK = S.COST_TICK
PIPE_S = 0                 # isa.hb.S


@njit(cache=True)
def _ticks(cycles):
    return np.int64(cycles * TICK + 0.5)


@njit(cache=True)
def _issue(st, issue):
    """The scalar unit issues one instruction: the time it is issued."""
    t = st[S.COST_ISSUE] + _ticks(issue)
    st[S.COST_ISSUE] = t
    st[S.COST_BUSY + PIPE_S] += _ticks(issue)
    return t


@instruction
def charge(st, pipe, units, per_unit, startup, gm_per_unit, gm_bytes, issue, loc):
    """One instruction on ``pipe``: ``startup + units * per_unit`` cycles.

    ``gm_per_unit`` > 0 marks a transfer to or from GM (``units`` are its
    bytes).  The HBM's bandwidth is shared evenly by the launch's active cores
    (``st[COST_CORES]``), a byte of the core's share taking ``gm_per_unit``
    cycles times the core count: no transfer moves faster than that, and
    ``st[COST_HBM]`` adds up the time the core's GM bytes need of its share
    (all its GM pipes together; the core cannot finish sooner).  ``gm_bytes``
    counts towards the core's GM traffic.
    """
    if st.shape[0] < S.PROFILE_STATE_SIZE:      # a state without the cost words: nothing to time
        return
    if units < 0:
        units = 0
    rate = per_unit
    if gm_per_unit > 0.0:
        share = gm_per_unit * max(st[S.COST_CORES], 1)
        rate = max(per_unit, share)
        st[S.COST_HBM] += _ticks(units * share)
    t = _issue(st, issue)
    start = max(t, st[S.COST_READY + pipe])
    dur = _ticks(startup + units * rate)
    end = start + dur
    st[S.COST_READY + pipe] = end
    st[S.COST_BUSY + pipe] += dur
    st[S.COST_COUNT + pipe] += 1
    st[S.COST_GM_BYTES] += max(gm_bytes, 0)
    if pipe == PIPE_S:
        st[S.COST_ISSUE] = end
    n = st[S.TRACE_N]
    st[S.TRACE_N] = n + 1
    if n < S.TRACE_EVENTS:
        w = S.TRACE + n * S.TRACE_WORDS
        st[w] = pipe
        st[w + 1] = start
        st[w + 2] = end
        st[w + 3] = loc


@njit(cache=True)
def _hold(st, pipe, t):
    """Pipe ``pipe`` starts nothing before ``t`` (the scalar unit: issues nothing before ``t``)."""
    if pipe == PIPE_S:
        st[S.COST_ISSUE] = max(st[S.COST_ISSUE], t)
    else:
        st[S.COST_READY + pipe] = max(st[S.COST_READY + pipe], t)


@njit(cache=True)
def _done(st, pipe, issue):
    """Issue a marker on ``pipe``: the time the pipe has finished everything issued before it."""
    t = max(_issue(st, issue), st[S.COST_READY + pipe])
    if pipe != PIPE_S:
        st[S.COST_READY + pipe] = t
    return t


@instruction
def set_flag(st, event, event_id, src, issue, loc):
    """``set_flag``: the flag is set when pipe ``src`` has finished what was issued before."""
    if st.shape[0] < S.PROFILE_STATE_SIZE:
        return
    if 0 <= event < S.N_EVENTS and 0 <= event_id < S.N_EVENT_IDS:
        st[S.COST_EVENT + event * S.N_EVENT_IDS + event_id] = _done(st, src, issue)


@instruction
def wait_flag(st, event, event_id, dst, issue, loc):
    """``wait_flag``: pipe ``dst`` waits until the flag was set."""
    if st.shape[0] < S.PROFILE_STATE_SIZE:
        return
    _issue(st, issue)
    if 0 <= event < S.N_EVENTS and 0 <= event_id < S.N_EVENT_IDS:
        _hold(st, dst, st[S.COST_EVENT + event * S.N_EVENT_IDS + event_id])


@instruction
def barrier_all(st, issue, loc):
    """``pipe_barrier(PIPE_ALL)`` / ``data_sync_barrier``: everything waits for every pipe."""
    if st.shape[0] < S.PROFILE_STATE_SIZE:
        return
    t = _issue(st, issue)
    for p in range(S.N_COST_PIPES):
        t = max(t, st[S.COST_READY + p])
    for p in range(S.N_COST_PIPES):
        st[S.COST_READY + p] = t
    st[S.COST_ISSUE] = t


@njit(cache=True)
def _block(st, qid, addr):
    """Block index of queue ``qid``'s buffer at ``addr`` (-1: none; the queue instruction reports that)."""
    if qid < 0 or qid >= S.MAX_QUEUES:
        return -1
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    blk = st[q + S.Q_BLKLEN]
    if blk <= 0:
        return -1
    rel = addr - st[q + S.Q_BASE]
    if rel < 0 or rel % blk != 0 or rel // blk >= min(st[q + S.Q_NBLK], S.MAX_QUEUE_BLOCKS):
        return -1
    return rel // blk


@instruction
def queue_mark(st, qid, addr, pipe, issue, loc):
    """``enque`` (the producer pipe is done with the block) or ``free_tensor`` (the consumer pipe is)."""
    if st.shape[0] < S.PROFILE_STATE_SIZE:
        return
    b = _block(st, qid, addr)
    t = _done(st, pipe, issue)
    if b >= 0:
        st[S.COST_QUEUE + qid * S.MAX_QUEUE_BLOCKS + b] = t


@instruction
def queue_wait(st, qid, addr, pipe, issue, loc):
    """``deque`` (the consumer pipe waits for the enque) or ``alloc_tensor`` (the producer for the free)."""
    if st.shape[0] < S.PROFILE_STATE_SIZE:
        return
    _issue(st, issue)
    b = _block(st, qid, addr)
    if b >= 0:
        _hold(st, pipe, st[S.COST_QUEUE + qid * S.MAX_QUEUE_BLOCKS + b])


@njit(cache=True)
def _arrivals(w, parity):
    """Word offset of round ``parity``'s arrival times (one per launch slot) in the system region."""
    ncores = w[X.N_AIC] + w[X.N_AIV]
    return X.CORES + ncores * X.CORE_WORDS + parity * ncores


@instruction
def sync_arrive(st, sysmem, issue, loc):
    """A hard ``sync_all``: the core arrives once all its pipes are done (the barrier begins with
    ``PIPE_ALL``); the time goes to its slot of this round."""
    if st.shape[0] < S.PROFILE_STATE_SIZE:
        return
    w = X.words(sysmem)
    t = _issue(st, issue)
    for p in range(S.N_COST_PIPES):
        t = max(t, st[S.COST_READY + p])
    w[_arrivals(w, st[S.COST_SYNC_ROUND] & 1) + st[S.CORE_SLOT]] = t


@instruction
def sync_depart(st, sysmem, aiv_only, loc):
    """After the wait of a hard ``sync_all``: nothing of the core starts before the last core it waited for
    arrived (the AIVs of the launch for ``aiv_only``, else every core)."""
    if st.shape[0] < S.PROFILE_STATE_SIZE:
        return
    w = X.words(sysmem)
    base = _arrivals(w, st[S.COST_SYNC_ROUND] & 1)
    st[S.COST_SYNC_ROUND] += 1
    t = st[S.COST_ISSUE]
    for i in range(w[X.N_AIV]):
        t = max(t, w[base + w[X.AIV_BASE] + i])
    if not aiv_only:
        for i in range(w[X.N_AIC]):
            t = max(t, w[base + w[X.AIC_BASE] + i])
    for p in range(S.N_COST_PIPES):
        st[S.COST_READY + p] = max(st[S.COST_READY + p], t)
    st[S.COST_ISSUE] = t


@instruction
def cross_set(st, sysmem, flag, pipe_id, issue, loc):
    """Before ``cross_core_set_flag``: the set happens once pipe ``pipe_id`` (a PipeID) has finished what
    was issued before it.  The counters it raises carry the latest set time of the cores taking part."""
    if st.shape[0] < S.PROFILE_STATE_SIZE or flag < 0 or flag >= X.N_FLAGS:
        return
    pipe = X.HB_PIPE[pipe_id] if 0 <= pipe_id < X.HB_PIPE.shape[0] else -1
    t = _done(st, pipe, issue) if pipe >= 0 else _issue(st, issue)
    w = X.words(sysmem)
    w[X.times_at(w, st[S.CORE_SLOT], flag) + X.T_SET] = t


@instruction
def cross_wait(st, sysmem, flag, issue, loc):
    """After ``cross_core_wait_flag`` took a count: on A2/A3 the wait stalls every pipe, so nothing of the
    core starts before the set that raised that count."""
    if st.shape[0] < S.PROFILE_STATE_SIZE or flag < 0 or flag >= X.N_FLAGS:
        return
    w = X.words(sysmem)
    tw = X.times_at(w, st[S.CORE_SLOT], flag)
    t = max(_issue(st, issue), w[tw + X.T_RING + w[tw + X.T_TAKEN] % X.RING])
    w[tw + X.T_TAKEN] += 1
    for p in range(S.N_COST_PIPES):
        st[S.COST_READY + p] = max(st[S.COST_READY + p], t)
    st[S.COST_ISSUE] = t


@instruction
def sk_set(st, aiv_pipe, aic_pipe, issue, loc):
    """``set_next_task_start`` where it takes effect (a SuperKernel's sub-kernel): the set happens once the
    core's pipe (``aiv_pipe`` / ``aic_pipe``, PipeIDs) has finished what was issued before it; the runner
    reads the time from ``COST_SK_SET`` for the next sub-kernel's cores."""
    if st.shape[0] < S.PROFILE_STATE_SIZE or not st[S.SK_FLAGS] & S.SK_EARLY_SET:
        return
    pipe_id = aiv_pipe if st[S.CORE_TYPE] == 0 else aic_pipe
    pipe = X.HB_PIPE[pipe_id] if 0 <= pipe_id < X.HB_PIPE.shape[0] else -1
    st[S.COST_SK_SET] = _done(st, pipe, issue) if pipe >= 0 else _issue(st, issue)


@instruction
def sk_wait(st, issue, loc):
    """After ``wait_pre_task_end`` passed where it takes effect: nothing of the core starts before the last
    set of the previous sub-kernel's cores (``COST_SK_OPEN``, written by the runner as it lets it pass)."""
    if st.shape[0] < S.PROFILE_STATE_SIZE or not st[S.SK_FLAGS] & S.SK_EARLY_WAIT:
        return
    t = max(_issue(st, issue), st[S.COST_SK_OPEN])
    for p in range(S.N_COST_PIPES):
        st[S.COST_READY + p] = max(st[S.COST_READY + p], t)
    st[S.COST_ISSUE] = t
