"""The one configuration object of jitgrad.

Every setting a user may change at run time lives here, so that no other module keeps
mutable state of its own.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

# numba's OpenMP threads spin after every parallel kernel; on a machine with two cores and
# any other busy process that spinning stalls each parallel call by milliseconds. Passive
# waiting costs about 20 µs per call instead. (Only before OpenMP starts; a user's own
# setting wins.)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not an integer") from None


class ThreadState(threading.local):
    """Settings each thread sees on its own (PyTorch's grad mode is thread-local too)."""

    grad_enabled: bool = True
    tape: object = None  # the jg.jit trace being recorded by this thread, if any


@dataclass
class Config:
    # Stored by name so this module needs nothing from the dtype table.
    default_dtype: str = "float64"
    # Below this many elements a kernel with transcendental math (exp, tanh...) runs
    # serially: handing a share to another thread costs more than it saves (20-25 us per
    # parallel launch on a busy 2-core machine, measured; a kernel with tanh breaks even at
    # about 2^16 float32 elements). Kernels that mostly move memory start at
    # LIGHT_KERNEL_FACTOR times as many (``parallel_from``).
    parallel_threshold: int = field(
        default_factory=lambda: _env_int("JITGRAD_PARALLEL_THRESHOLD", 1 << 16)
    )
    # Eager elementwise work of at most this many element operations (output elements
    # times the numpy calls of the formula) runs in numpy's loops instead of a kernel
    # (ops/numpy_tier.py): below it a launch's fixed cost is more than numpy's whole call.
    # 0 turns the numpy tier off: every eager op takes a kernel (jitgrad/tiers.py).
    numpy_tier_work: int = field(
        default_factory=lambda: _env_int("JITGRAD_NUMPY_TIER_WORK", 1 << 12)
    )
    # An eager elementwise signature whose work is beyond the numpy tier runs there anyway
    # for its first calls and compiles its kernel at this call (ops/numpy_tier.py); 1
    # compiles at the first call, waiting for it (JITGRAD_COMPILE_AFTER_CALLS).
    compile_after_calls: int = field(
        default_factory=lambda: _env_int("JITGRAD_COMPILE_AFTER_CALLS", 2)
    )
    # A jitted plan's first replay compiles its kernels beside a forked process compiling
    # them from the last one back (jit/compile_ahead.py); JITGRAD_COMPILE_AHEAD=0 turns
    # that off.
    compile_ahead: bool = field(default_factory=lambda: bool(_env_int("JITGRAD_COMPILE_AHEAD", 1)))
    # A jitted plan replayed this many times runs its runs of small calls as one compiled
    # call each (jit/compiled_plan.py): generating and compiling it costs about a second,
    # repaid by a loop of many steps. 0 never (JITGRAD_COMPILE_PLAN_AFTER).
    compile_plan_after: int = field(
        default_factory=lambda: _env_int("JITGRAD_COMPILE_PLAN_AFTER", 50)
    )
    # A jitted plan's matrix products of at most this many multiply-adds run BLAS on one thread
    # (ops/blas.py): below about 2^20 two threads cost more than they save (measured).
    blas_one_thread_up_to: int = field(
        default_factory=lambda: _env_int("JITGRAD_BLAS_ONE_THREAD_UP_TO", 1 << 20)
    )
    # In a jitted plan whose kernels share jitgrad's threads, products of at least this
    # many multiply-adds cut their rows among those threads (ops/blas.py): below it a
    # thread's wake-up costs about what the second thread saves (measured).
    blas_split_from: int = field(
        default_factory=lambda: _env_int("JITGRAD_BLAS_SPLIT_FROM", 1 << 23)
    )
    # Bytes of freed large buffers kept for reuse (storage/buffers.py: BufferPool).
    pool_bytes: int = field(default_factory=lambda: _env_int("JITGRAD_POOL_BYTES", 1 << 30))
    # JITGRAD_DEBUG=1 logs every kernel generated (and why), =2 also prints its source.
    debug: int = field(default_factory=lambda: _env_int("JITGRAD_DEBUG", 0))
    # Where generated kernels and their compiled code live (JITGRAD_CACHE_DIR); empty
    # means the user's cache directory.
    cache_dir: str = field(default_factory=lambda: os.environ.get("JITGRAD_CACHE_DIR", ""))
    # "jit": elementwise work runs in generated numba kernels. "reference": the numpy
    # evaluator, the oracle the kernels are tested against.
    backend: str = field(default_factory=lambda: os.environ.get("JITGRAD_BACKEND", "jit"))
    thread: ThreadState = field(default_factory=ThreadState)
    # How many jg.jit traces run, in all threads together (jit/trace.py): while none does,
    # no thread has a tape, and the eager hot paths skip reading their thread's.
    tracing: int = 0
    # The dicts in which eager dispatch remembers what a call signature decided
    # (ops/elementwise.py, jit/lowering.py). A decision includes whether its launches run
    # in parallel, the result dtype and whether kernels run at all, so a new
    # parallel_threshold, default dtype or backend empties them.
    memos: list = field(default_factory=list)
    # Moved on whenever state that jitted plans are guarded on changes (a module's
    # train/eval mode, a tensor's requires_grad, an optimizer's groups): jg.jit works out
    # the guarded state of a call again only then (jit/trace.py).
    guard_epoch: int = 0
    # Moved on whenever a storage's bytes move (share_memory_, resize_, free), a tensor is
    # pointed at other memory (set_) or a module's parameter, buffer or child is replaced:
    # jitted plans read the memory of the tensors they close over by reference, so jg.jit
    # traces again after it (jit/trace.py).
    memory_epoch: int = 0

    def parallel_from(self, computes_much: bool = False) -> int:
        """The size from which a kernel is worth sharing out among threads;
        ``computes_much``: its body calls transcendental math, not only arithmetic."""
        return self.parallel_threshold if computes_much else self.light_threshold

    def __setattr__(self, name, value):
        if name == "backend" and value not in BACKENDS:
            raise ValueError(
                f"the backend (config.backend, JITGRAD_BACKEND) is one of {', '.join(BACKENDS)}; "
                f"got {value!r}"
            )
        super().__setattr__(name, value)
        if name == "parallel_threshold":
            # (kept beside it: flat copies and fills compare with it on every call)
            super().__setattr__("light_threshold", value * LIGHT_KERNEL_FACTOR)
        if name in ("parallel_threshold", "numpy_tier_work"):
            # Work over fewer elements that numpy does in one call runs there
            # (``tiers.small``): read on every eager call, so kept as one number.
            on = getattr(self, "numpy_tier_work", 0) > 0
            below = getattr(self, "light_threshold", 0) if on else 0
            super().__setattr__("numpy_tier_below", below)
        if name in _DECIDING:
            for memo in getattr(self, "memos", ()):
                memo.clear()


BACKENDS = ("jit", "reference")
# The settings that eager dispatch's remembered decisions (``Config.memos``) depend on.
_DECIDING = (
    "parallel_threshold",
    "default_dtype",
    "backend",
    "numpy_tier_work",
    "compile_after_calls",
)

# Copies, fills and arithmetic like bias + relu run at memory speed, about 0.15 ns per
# float32 element on one thread here: two threads pay only from 2^18 elements (measured:
# copy 42 us serial vs 43 in parallel at 2^18, 75 vs 53 at 2^19; relu 38 vs 44 and 76 vs
# 61), where a tanh kernel pays from 2^16.
LIGHT_KERNEL_FACTOR = 4

config = Config()
