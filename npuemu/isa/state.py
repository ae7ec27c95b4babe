"""Layout of a core's scalar state vector (``st``, int64).

Each emulated core owns three arrays: ``lm`` (its on-chip memories, bytes),
``st`` (the registers and bookkeeping below) and ``log`` (its print/dump
buffer).  Compiled instructions index ``st`` with these constants, which
Numba freezes at compile time.
"""
from __future__ import annotations

# identity of the core
BLOCK_IDX = 0
BLOCK_NUM = 1
CORE_TYPE = 2          # 0 = AIV, 1 = AIC
SUB_BLOCK_IDX = 3
SUB_BLOCK_NUM = 4
CORE_SLOT = 5          # position of this core in the launch (indexes arrays shared by all cores)
CHECK_FULL = 6         # 1 when the launch runs at check level "full"
LM_DIRTY = 7           # lm bytes [0, LM_DIRTY) may have been handed to the kernel (TPipe, static tensors)

# vector mask registers
MASK_MODE = 8          # 0 = normal, 1 = counter
MASK_LO = 9
MASK_HI = 10

# DataCopyPad pad value (raw bits of the last set_pad_value)
PAD_VALUE = 11
PAD_VALUE_SET = 12

# cube registers: set_hf32_mode / set_hf32_trans_mode (isa/mmad.py), the fixpipe's scalar
# quantisation register set_fix_pipe_pre_quant_flag (isa/fixpipe.py)
HF32_MODE = 13
HF32_TRANS = 14
FIX_PRE_QUANT = 15

# physical memories of this core: base offset in lm and size, indexed by Hardware
# (a size of 0 means the core type has no such memory)
N_HARDWARE = 8
SEG_BASE = 16
SEG_SIZE = SEG_BASE + N_HARDWARE

# TPipe: bump allocator per memory, buffer counters
PIPE_CUR = SEG_SIZE + N_HARDWARE        # next free byte offset per Hardware
PIPE_NBUF = PIPE_CUR + N_HARDWARE       # total buffers handed out by init_buffer
POS_ALLOC = PIPE_NBUF + 1               # tensors currently allocated per TPosition (13 slots)
N_POSITIONS = 13

# hardware event flags (set_flag/wait_flag): one slot per (HardEvent, event id)
N_EVENTS = 35
N_EVENT_IDS = 8
FLAGS = POS_ALLOC + N_POSITIONS
FLAG_LOC = FLAGS + N_EVENTS * N_EVENT_IDS   # loc of the set_flag that set each flag

# log buffer cursor (in int64 words) and overflow flag
LOG_CUR = FLAG_LOC + N_EVENTS * N_EVENT_IDS
LOG_LOST = LOG_CUR + 1

# queues: QUEUE_BASE + qid * QUEUE_STRIDE
QUEUE_BASE = 640
MAX_QUEUE_BLOCKS = 32
Q_POS = 0              # TPosition of the queue (producer side)
Q_NBLK = 1             # blocks given by init_buffer (0 = not initialised)
Q_BLKLEN = 2           # bytes per block (rounded up to 32)
Q_BASE = 3             # absolute lm address of block 0
Q_DEPTH = 4
Q_COUNT = 5            # tensors currently enqueued
Q_HEAD = 6             # ring index of the oldest enqueued block
Q_CURSOR = 7           # next block alloc_tensor tries
Q_INIT_LOC = 8
Q_STATE = 16           # per-block state, MAX_QUEUE_BLOCKS slots
Q_RING = Q_STATE + MAX_QUEUE_BLOCKS
Q_ALLOC_LOC = Q_RING + MAX_QUEUE_BLOCKS    # per block: the loc of the alloc_tensor that holds it
QUEUE_STRIDE = Q_ALLOC_LOC + MAX_QUEUE_BLOCKS
MAX_QUEUES = 32

# TBuf: TBUF_BASE + bid * TBUF_STRIDE: [base address, length in bytes]
TBUF_BASE = QUEUE_BASE + MAX_QUEUES * QUEUE_STRIDE
TBUF_STRIDE = 2
MAX_TBUFS = 32

STATE_SIZE = TBUF_BASE + MAX_TBUFS * TBUF_STRIDE

# block states of a queue
BLK_FREE = 0
BLK_ALLOCATED = 1
BLK_ENQUEUED = 2
BLK_DEQUEUED = 3

LOG_WORDS = (1 << 20) // 8     # 1 MiB per core, as the hardware's dump buffer

# what st[PAD_VALUE] holds (st[PAD_VALUE_SET]); the value is converted to the copied type at use
PAD_UNSET = 0          # never written: DataCopyPad padding bytes are undefined
PAD_INT = 1            # an integer value
PAD_FLOAT = 2          # the float32 bits of a float value
PAD_RAW = 3            # raw element bits (legacy DataCopyPadParams.padding_value)

# CMPMASK: the 128-bit compare/select register (low and high 64 bits), in two words after the tables
CMPMASK_LO = STATE_SIZE
CMPMASK_HI = STATE_SIZE + 1
STATE_SIZE += 2

# cross-core waits (npuemu/isa/cross_core.py).  A wait that cannot complete records what it waits
# for here before the core yields, so a deadlock report can say it; WAIT_KIND 0 = not waiting.
WAIT_KIND = STATE_SIZE
WAIT_A = STATE_SIZE + 1
WAIT_B = STATE_SIZE + 2
WAIT_C = STATE_SIZE + 3
WAIT_D = STATE_SIZE + 4
SYNC_STAGE = STATE_SIZE + 5      # progress through the set/wait steps of a hard sync_all
SOFT_STAGE = STATE_SIZE + 6      # 1 between a soft sync_all's arrival and its departure
SOFT_ROUND = STATE_SIZE + 7      # value this core wrote to its soft sync_all slot on arrival
SOFT_FIRST = STATE_SIZE + 8      # 1 when the slot held 0 on arrival (the hardware's "first sync" path)
SOFT_DONE = STATE_SIZE + 9       # soft sync_all calls this core completed
STATE_SIZE += 10

# TPipe event-id pool (alloc_event_id / release_event_id, npuemu/isa/sync.py): bit i of
# st[EVENT_POOL + event] is set while id i of that HardEvent is allocated
EVENT_POOL = STATE_SIZE
STATE_SIZE += N_EVENTS

# TPipe.reset() (queue.pipe_reset) clears every word from QUEUE_BASE up to here
PIPE_STATE_END = STATE_SIZE

# cube: an accumulation into L0C not carried out yet (npuemu/isa/mmad.py).  mmads that accumulate
# into the same C collect their A^T and B panels in the core's cube scratch (lm past its memories,
# SCRATCH_BASE / SCRATCH_SIZE bytes: the panels, then a product buffer of L0C's size); one product
# over the whole K runs when L0C is next used.
PEND_MODE = STATE_SIZE           # mmad.PEND_*: none, C holds the start value, C from 0, C in the buffer
PEND_DST = STATE_SIZE + 1        # byte address of C in lm
PEND_M1 = STATE_SIZE + 2
PEND_N1 = STATE_SIZE + 3
PEND_KIND = STATE_SIZE + 4       # input kind (mmad.IN_*)
PEND_K = STATE_SIZE + 5          # rows (K) of the panels filled so far
PEND_KCAP = STATE_SIZE + 6       # rows the panels can hold
SCRATCH_BASE = STATE_SIZE + 7
SCRATCH_SIZE = STATE_SIZE + 8
# BLAS's cblas_sgemm for mmad's products (npuemu/runtime/sgemm.py): its address (0: none, use objmode)
# and whether its integers are 64-bit
SGEMM = STATE_SIZE + 9
SGEMM_WIDE = STATE_SIZE + 10
STATE_SIZE += 11

# runaway loops (npuemu/isa/runaway.py, runtime/watchdog.py).  Every loop iteration counts a step and
# compares the count with STEP_LIMIT, which another thread may write: the launch stops a core by setting
# STOP (a runaway.STOP_* reason) and then STEP_LIMIT to -1.  MAX_STEPS is the launch's step budget per
# core; POLL the address of the launcher's poll callback for cores on the launching thread (0: none).
STEP_LIMIT = STATE_SIZE
STOP = STATE_SIZE + 1
MAX_STEPS = STATE_SIZE + 2
POLL = STATE_SIZE + 3
STATE_SIZE += 4

# DEQSCALE: the vector unit's 64-bit dequantisation register (set_deq_scale; read by add_deq_relu and
# cast_deq, npuemu/isa/vec_fused.py)
DEQSCALE = STATE_SIZE
STATE_SIZE += 1

# VMS4_SR: what the last mrg_sort took from each of its lists, 16 bits per list (npuemu/isa/sort.py)
VMS4_SR = STATE_SIZE
STATE_SIZE += 1

# SYS_WORKSPACE: the system workspace pointer of set_sys_workspace (region id + 1, 0 = never set; byte
# offset); HCCL_CONTEXT: the same for each HCCL context of set_hccl_context (npuemu/isa/system.py)
SYS_WORKSPACE = STATE_SIZE
HCCL_CONTEXT = STATE_SIZE + 2
STATE_SIZE += 6

# USER_TAGS: N_USER_TAGS pairs (local address + 1, tag) of LocalTensor.set_user_tag (npuemu/isa/user_tag.py)
N_USER_TAGS = 64
USER_TAGS = STATE_SIZE
STATE_SIZE += 2 * N_USER_TAGS

# the store-atomic config register (npuemu/isa/atomic.py): the AtomicDtype of atomic GM writes (0: plain
# stores) and the operation (atomic.OP_*); ATOMIC_LOCK is the address of the launch's lock word, set with them
ATOMIC_TYPE = STATE_SIZE
ATOMIC_OP = STATE_SIZE + 1
ATOMIC_LOCK = STATE_SIZE + 2
STATE_SIZE += 3

# RSVD_CNT: the elements the last gather_mask kept (get_gather_mask_remain_count, npuemu/isa/vec_rearrange.py)
RSVD_CNT = STATE_SIZE
STATE_SIZE += 1

# WATCH: 4 UB watch registers of check_local_memory_ia, 3 words each (kinds armed, start and end byte)
# (npuemu/isa/watch.py)
WATCH = STATE_SIZE
STATE_SIZE += 12

# Load3D registers (npuemu/isa/img2col.py): the padding value (LOAD3D_PAD_KIND 0: never set, 1: the int in
# LOAD3D_PAD, 2: float32 bits in LOAD3D_PAD), the L1 boundary in bytes (0: none) and the repeat of
# set_load_data_repeat packed as time | stride << 8 | mode << 24 | 1 << 32 (0: never set, one iteration)
LOAD3D_PAD = STATE_SIZE
LOAD3D_PAD_KIND = STATE_SIZE + 1
LOAD3D_BOUNDARY = STATE_SIZE + 2
LOAD3D_REPEAT = STATE_SIZE + 3
STATE_SIZE += 4

# the 4:2 sparsity indices load_data_with_sparse loads with each L0B fractal (npuemu/isa/sparse.py): 128
# bytes per 512-byte L0B fractal, for the 128 fractals of a 64 KiB L0B; they live at the end of an AIC's
# cube scratch (runtime/cores.py), not here, so that only kernels that use the cube pay for them
SPARSE_TABLE_BYTES = 128 * 128

# AIPP (npuemu/isa/aipp.py): set_aipp_functions' input format + 1 (0: never set), output kind (0 int8,
# 1 float16), the source images as (region id + 1, byte offset, size in bytes or -1) for src0 and src1,
# then the preprocessing configuration (aipp.N_INT integer fields, aipp.N_FLOAT float fields as float64 bits)
AIPP = STATE_SIZE
AIPP_N = 8 + 26 + 11
STATE_SIZE += AIPP_N

# TBufPool (npuemu/isa/buf_pool.py): POOL_BASE + pid * POOL_STRIDE, one record per pool of the kernel.  A pool
# is a region of one memory (absolute lm address P_START, P_LEN bytes) handed out from P_START upwards; P_IDS
# counts the buffer ids its queues, TBufs and child pools took of P_ID_SIZE.  P_GEN counts its resets, and each
# queue and TBuf initialised on a pool records the pool (id + 1; 0: the TPipe's) and its generation then.
MAX_POOLS = 16
P_HW = 0
P_START = 1
P_LEN = 2
P_CUR = 3
P_IDS = 4
P_ID_SIZE = 5
P_STATE = 6            # POOL_* below
P_GEN = 7
POOL_STRIDE = 8
POOL_BASE = STATE_SIZE
QUEUE_POOL = POOL_BASE + MAX_POOLS * POOL_STRIDE
QUEUE_POOL_GEN = QUEUE_POOL + MAX_QUEUES
TBUF_POOL = QUEUE_POOL_GEN + MAX_QUEUES
TBUF_POOL_GEN = TBUF_POOL + MAX_TBUFS
STATE_SIZE = TBUF_POOL_GEN + MAX_TBUFS
POOL_STATE_END = STATE_SIZE      # TPipe.reset() clears POOL_BASE .. POOL_STATE_END too
POOL_NEVER = 0
POOL_LIVE = 1
POOL_RESET = 2


# count-form data_copy whose byte count is not a whole number of 32-byte blocks (isa/datamove.py): the
# hardware copies the whole blocks and drops the rest; the launch warns (PartialCopyWarning) with the
# number of such copies, the first one's source location + 1 and the bytes it dropped
PARTIAL_COPIES = STATE_SIZE
PARTIAL_LOC = STATE_SIZE + 1
PARTIAL_BYTES = STATE_SIZE + 2
STATE_SIZE += 3

# SuperKernel (npuemu/superkernel): SK_FLAGS bits for a core running a sub-kernel of a SuperKernel
# (SK_SUB: no end-of-kernel DCache flush, the SuperKernel's entry decides; SK_GETSET_DCCI: get_value and
# set_value clean their line, CANN's __ASCENDC_SUPER_KERNEL_ENABLE_GM_GET_SET_VALUE_DCCI__), then the
# SuperKernel's block num (what the raw builtin get_block_num would return; 0 outside a SuperKernel)
SK_FLAGS = STATE_SIZE
SK_BLOCK_NUM = SK_FLAGS + 1
SK_GT = SK_FLAGS + 2           # the pending slot of the GlobalTensor the current set_value writes through
# early start (npuemu/isa/task_sync.py): set_next_task_start / wait_pre_task_end calls on this core in the
# sub-kernel and the location id + 1 of the first; SK_WAIT_OPEN: the runner says the previous sub-kernel
# has let this one start; SK_WAIT_ASKED: the core waits in wait_pre_task_end now
SK_SET_N = SK_FLAGS + 3
SK_SET_LOC = SK_FLAGS + 4
SK_WAIT_N = SK_FLAGS + 5
SK_WAIT_LOC = SK_FLAGS + 6
SK_WAIT_OPEN = SK_FLAGS + 7
SK_WAIT_ASKED = SK_FLAGS + 8
SK_SYNC_IDX = SK_FLAGS + 9     # hard sync_all calls this core has arrived at in the sub-kernel (feed-sync-all)
SK_SYNC_TYPE = SK_FLAGS + 10   # 1: the last was sync_all() (AIV only), 0: the mix form
# set_value's deferred line clean, per GlobalTensor (its slot: the tensor's identity modulo N_PEND): region id
# + 1 (0: none) and a byte of the line it wrote last
N_PEND = 16
SK_PEND = SK_FLAGS + 11
STATE_SIZE += 11 + 2 * N_PEND
SK_SUB = 1
SK_GETSET_DCCI = 2
SK_EARLY_SET = 4       # set_next_task_start takes effect in this sub-kernel
SK_EARLY_WAIT = 8      # wait_pre_task_end takes effect


# NEW PER-CORE SLOTS GO ABOVE THIS LINE: the cost model's words start where the core state ends.
# the cost model (npuemu/isa/cost.py, docs/cost-model.md): words past STATE_SIZE, which only the state of a
# core running a binary built with profile=True has (PROFILE_STATE_SIZE words; other launches do not pay
# for them).  Times are in ticks of 1/COST_TICK cycle.  COST_ISSUE is the scalar unit's issue time; per
# pipe (isa.hb order S, V, M, MTE1, MTE2, MTE3, FIX) the time its last instruction ends, its busy time and
# its instruction count; the GM bytes the core's DMA moved; the launch's active cores (set by the launch:
# they share the HBM); the time the core's GM bytes need of its share of the HBM bandwidth (whichever pipe
# moved them); the hard sync_all barriers the core has passed; in a SuperKernel's sub-kernel, the time its
# set_next_task_start set and the time its wait_pre_task_end may pass (written by the runner); the time each (HardEvent, event id) flag was set and each (queue, block) was last enqueued
# or freed; then the trace: the number of instructions charged and, for the first TRACE_EVENTS of them,
# TRACE_WORDS words each (pipe, start, end, source-location id).
COST_TICK = 256
N_COST_PIPES = 7
COST_ISSUE = STATE_SIZE
COST_READY = COST_ISSUE + 1
COST_BUSY = COST_READY + N_COST_PIPES
COST_COUNT = COST_BUSY + N_COST_PIPES
COST_GM_BYTES = COST_COUNT + N_COST_PIPES
COST_CORES = COST_GM_BYTES + 1
COST_HBM = COST_CORES + 1
COST_SYNC_ROUND = COST_HBM + 1
COST_SK_SET = COST_SYNC_ROUND + 1      # a SuperKernel sub-kernel: when its set_next_task_start set
COST_SK_OPEN = COST_SK_SET + 1         # ... and when the previous sub-kernel let its wait_pre_task_end pass
COST_EVENT = COST_SK_OPEN + 1
COST_QUEUE = COST_EVENT + N_EVENTS * N_EVENT_IDS
COST_END = COST_QUEUE + MAX_QUEUES * MAX_QUEUE_BLOCKS
TRACE_N = COST_END
TRACE_EVENTS = 4096
TRACE_WORDS = 4
TRACE = TRACE_N + 1
PROFILE_STATE_SIZE = TRACE + TRACE_EVENTS * TRACE_WORDS
