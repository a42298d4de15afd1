"""A replayed plan's runs of small calls as one compiled call.

A small training step is mostly Python between kernels: each kernel call unboxes every
array it is given (about 0.2 µs each) and each product goes through numpy's matmul. Once
a plan has replayed ``config.compile_plan_after`` times, each run of consecutive calls
numba can express (kernels over flat arrays, 2-d products, fills) becomes one generated
function: the run's kernels called from compiled code, its products calling BLAS
directly (the ``cblas_?gemm`` numpy's OpenBLAS exports), and its arrays bound once, as
addresses. A call then unboxes four arrays however many the run touches.

Only plans whose arrays never move take this form: no buffer is repointed at a caller's
memory or handed over with a result (``binding``), so the addresses stay valid as long
as the plan's steps hold the arrays. Calls it cannot express (threaded pieces, an
optimizer's update, a copy between arguments) stay Python calls between the runs.
"""

from __future__ import annotations

import ctypes
import hashlib
import warnings
from pathlib import Path

import llvmlite.binding
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..ops import blas
from ..storage import kernels as storage_kernels
from . import cache

# -- what generated plans call -------------------------------------------------------------


@intrinsic
def address(typingctx, value):
    """The integer ``value`` as a pointer (``numba.carray``'s first argument)."""
    if not isinstance(value, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))

    return types.voidptr(value), codegen


def _cblas_symbols() -> dict[str, str]:
    """jitgrad's names for the ``cblas_sgemm``/``cblas_dgemm`` of numpy's OpenBLAS with
    64-bit integers, registered with LLVM; empty when that BLAS is not loaded."""
    found = {}
    for path in blas._loaded_openblas_paths():
        try:
            library = ctypes.CDLL(path)
            pointers = {
                t: ctypes.cast(getattr(library, f"scipy_cblas_{t}gemm64_"), ctypes.c_void_p)
                for t in "sd"
            }
        except (OSError, AttributeError):
            continue
        for t, pointer in pointers.items():
            found[t] = f"jitgrad_cblas_{t}gemm64"
            llvmlite.binding.add_symbol(found[t], pointer.value)
        break
    return found


_GEMM = _cblas_symbols()
_SOURCE_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def _gemm_intrinsic(letter: str, scalar):
    """``gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)``: ``c = op(a) @ op(b)``
    over row-major matrices at addresses (``cblas_?gemm``, alpha 1, beta 0)."""
    integer, pointer = types.int64, types.voidptr
    signature = types.none(*[integer] * 5, pointer, integer, pointer, integer, pointer, integer)

    @intrinsic
    def gemm(typingctx, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):
        def codegen(context, builder, sig, args):
            i32, real = ir.IntType(32), context.get_value_type(scalar)
            trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc = args
            order, one, zero = (
                ir.Constant(i32, _ROW_MAJOR),
                ir.Constant(real, 1),
                ir.Constant(real, 0),
            )
            flags = [builder.trunc(t, i32) for t in (trans_a, trans_b)]
            arguments = [order, *flags, m, n, k, one, a, lda, b, ldb, zero, c, ldc]
            fnty = ir.FunctionType(ir.VoidType(), [x.type for x in arguments])
            fn = cgutils.get_or_insert_function(builder.module, fnty, _GEMM[letter])
            builder.call(fn, arguments)
            return context.get_dummy_value()

        return signature, codegen

    return gemm


gemm_f32 = _gemm_intrinsic("s", types.float32)
gemm_f64 = _gemm_intrinsic("d", types.float64)


# -- generating a run's function -------------------------------------------------------------


class Run:
    """One generated function's call, compiled (or loaded) at its first call; the arrays
    it reaches through addresses stay held. Should numba fail to compile it, the calls
    it stands for run as they did."""

    __slots__ = ("call", "entry", "held", "calls")

    def __init__(self, call, held, calls):
        self.call, self.entry, self.held, self.calls = call, None, held, calls

    def __call__(self, *arguments):
        entry = self.entry
        if entry is None:
            self._first(arguments)
        else:
            entry(*arguments)

    def _first(self, arguments) -> None:
        try:
            self.call.kernel.compile("run", arguments)
        except Exception as e:  # numba's failure is not the step's: run it uncompiled
            warnings.warn(f"jg.jit: a plan's calls run uncompiled: {e}", stacklevel=4)
            self.entry = self._uncompiled
            self._uncompiled()
            return
        self.call(*arguments)  # (its first call, counted in the kernel's statistics)
        self.entry = self.call.direct(arguments)

    def _uncompiled(self, *arguments):
        for fn, args in self.calls:
            fn(*args)


class _Source:
    """The body of a run's function, and the values it reads from its four arrays."""

    def __init__(self):
        self.lines: list[str] = []
        self.arrays: dict[int, str] = {}  # id(array) -> its name in the body
        self.held: list[np.ndarray] = []
        self.addresses: list[int] = []
        self.numbers = {"ints": [], "f64s": [], "f32s": []}
        self.kernels: dict[str, str] = {}  # "module.variant" -> its name

    def array(self, a: np.ndarray) -> str:
        name = self.arrays.get(id(a))
        if name is None:
            name = self.arrays[id(a)] = f"a{len(self.arrays)}"
            self.held.append(a)
            self.lines.append(
                f"{name} = carray(address(addresses[{len(self.addresses)}]), "
                f"{tuple(a.shape)!r}, np.{a.dtype.name})"
            )
            self.addresses.append(a.__array_interface__["data"][0])
        return name

    def number(self, value) -> str:
        """The body's expression of a scalar argument (``_carried``), of the value's own
        numba type."""
        if isinstance(value, (bool, np.bool_)):
            return f"(ints[{self._put('ints', int(value))}] != 0)"
        if isinstance(value, (int, np.int64)):
            return f"ints[{self._put('ints', int(value))}]"
        if isinstance(value, np.float32):
            return f"f32s[{self._put('f32s', value)}]"
        return f"f64s[{self._put('f64s', float(value))}]"

    def _put(self, kind: str, value) -> int:
        self.numbers[kind].append(value)
        return len(self.numbers[kind]) - 1

    def kernel(self, dispatcher) -> str:
        key = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__name__}"
        if key not in self.kernels:
            self.kernels[key] = f"k{len(self.kernels)}"
        return self.kernels[key]


def _plain(a) -> bool:
    """Whether a kernel argument is an array the body can rebuild from its address: a
    writable C-contiguous array, numba's type for it being that of a ``carray``."""
    return (
        isinstance(a, np.ndarray)
        and a.ndim >= 1
        and a.flags.c_contiguous
        and a.flags.writeable
        and a.dtype.isnative
        and a.dtype.kind in "biuf"
    )


def _carried(value) -> bool:
    """Whether a scalar argument is of a type the body carries with numba's own type
    for it: int64 for ints, float64 for floats, float32, bool."""
    if isinstance(value, int) and not isinstance(value, bool):
        return -(1 << 63) <= value < 1 << 63  # (numba types larger ints as uint64)
    return isinstance(value, (bool, np.bool_, np.int64, float, np.float64, np.float32))


def _operand(a: np.ndarray) -> tuple[int, int] | None:
    """(cblas transpose flag, leading dimension) of a 2-d operand, or None."""
    rows, cols = a.shape
    if any(step % a.itemsize for step in a.strides):
        return None
    row_step, col_step = (step // a.itemsize for step in a.strides)
    if col_step == 1 or cols == 1:  # rows one after another
        lead = row_step if rows > 1 else cols
        if lead >= max(1, cols):
            return _NO_TRANS, lead
    if row_step == 1 or rows == 1:  # columns one after another
        lead = col_step if cols > 1 else rows
        if lead >= max(1, rows):
            return _TRANS, lead
    return None


def _product(args) -> bool:
    """Whether ``np.matmul(*args)`` is a 2-d product ``cblas_?gemm`` computes."""
    if len(args) != 3 or not all(isinstance(x, np.ndarray) for x in args):
        return False
    a, b, out = args
    letter = {"float32": "s", "float64": "d"}.get(a.dtype.name)
    return (
        letter in _GEMM
        and a.ndim == b.ndim == out.ndim == 2
        and a.dtype == b.dtype == out.dtype
        and 0 not in a.shape + b.shape
        and out.flags.c_contiguous
        and out.flags.writeable
        and _operand(a) is not None
        and _operand(b) is not None
        and not np.may_share_memory(a, out)
        and not np.may_share_memory(b, out)
    )


def _expressible(fn, args) -> bool:
    if fn is np.matmul:
        return _product(args)
    if fn is storage_kernels.fill:
        a, _, _, value = args  # (a float fill: the value is of a's type)
        return _plain(a) and a.dtype.name in ("float32", "float64") and _carried(value)
    dispatcher = cache.dispatcher_of(fn)
    # (a generated module's name is the hash of its source: a plan naming it stays right)
    return (
        dispatcher is not None
        and dispatcher.py_func.__module__.startswith("jitgrad_kernels.")
        and all(_plain(a) if isinstance(a, np.ndarray) else _carried(a) for a in args)
    )


def _line(src: _Source, fn, args) -> str:
    """The body's line for one direct call (``_expressible``)."""
    if fn is np.matmul:
        a, b, out = args
        (m, k), (_, n) = a.shape, b.shape
        (trans_a, lda), (trans_b, ldb) = _operand(a), _operand(b)
        src.held += [a, b, out]
        pa, pb, pc = (src.number(x.__array_interface__["data"][0]) for x in (a, b, out))
        gemm = "gemm_f32" if a.dtype == np.float32 else "gemm_f64"
        return (
            f"{gemm}({trans_a}, {trans_b}, {m}, {n}, {k}, address({pa}), {lda}, "
            f"address({pb}), {ldb}, address({pc}), {n})"
        )
    if fn is storage_kernels.fill:
        a, start, stop, value = args
        return f"{src.array(a)}[{start}:{stop}] = {src.number(value)}"
    parts = [src.array(a) if isinstance(a, np.ndarray) else src.number(a) for a in args]
    return f"{src.kernel(cache.dispatcher_of(fn))}({', '.join(parts)})"


def _module(src: _Source) -> str:
    header = [
        f"# compiled_plan {_SOURCE_HASH}: its intrinsics are inlined",
        "import sys",
        "import numpy as np",
        "from numba import carray, njit",
        "from jitgrad.jit.compiled_plan import address, gemm_f32, gemm_f64",
        "",
    ]
    for key, name in src.kernels.items():
        module, variant = key.rsplit(".", 1)
        header.append(f"{name} = sys.modules[{module!r}].{variant}")
    body = "\n".join("    " + line for line in src.lines)
    return "\n".join(header) + (
        "\n\n\n@njit(cache=True, error_model='numpy', nogil=True)\n"
        f"def run(addresses, ints, f64s, f32s):\n{body}\n"
    )


def fuse(calls: list) -> list:
    """``calls`` (a plan's direct calls) with each run of two or more calls the body can
    express replaced by one call of its generated function."""
    fused: list = []
    run: list = []

    def close():
        if len(run) >= 2:
            src = _Source()
            for fn, args in run:
                src.lines.append(_line(src, fn, args))
            source = _module(src)
            kernel = cache.get(("plan", source), lambda: source)
            arguments = (
                np.array(src.addresses, np.int64),
                np.array(src.numbers["ints"], np.int64),
                np.array(src.numbers["f64s"], np.float64),
                np.array(src.numbers["f32s"], np.float32),
            )
            fused.append((Run(kernel.call("run"), src.held, list(run)), arguments))
        else:
            fused.extend(run)
        run.clear()

    for fn, args in calls:
        expanded = getattr(fn, "expanded", None)  # a step of several kernel calls
        parts = expanded(args) if expanded is not None else None
        if parts is None or not all(_expressible(*part) for part in parts):
            parts = [(fn, args)]
        for part in parts:
            if _expressible(*part):
                run.append(part)
            else:
                close()
                fused.append(part)
    close()
    return fused
