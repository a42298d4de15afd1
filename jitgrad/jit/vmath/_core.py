"""Shared pieces of vmath: LLVM intrinsics (fma, roundeven, bit casts, Horner's
scheme), exact sums, powers of two, and the split of ln 2."""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

# fastmath is spelled out because numba lets a callee inherit its caller's flags otherwise.
_OPTS = dict(cache=True, error_model="numpy", fastmath=False, forceinline=True)

_F32 = np.float32
_F64 = np.float64
_I32 = np.int32
_I64 = np.int64
_NAN = -np.nan  # x86's default NaN, which numpy returns for invalid operations
_INF = np.inf

_INT_OF = {types.float32: types.int32, types.float64: types.int64}
_FLOAT_OF = {types.int32: types.float32, types.int64: types.float64}


@intrinsic
def _fma(typingctx, a, b, c):
    """a*b + c with one rounding (llvm.fma: one instruction with FMA3, else libm's fma)."""
    if not (a == b == c and a in _INT_OF):
        return None

    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t, t, t]))
        return builder.call(fn, args)

    return a(a, b, c), codegen


@intrinsic
def _rint(typingctx, x):
    """Round to the nearest integer, ties to even (llvm.roundeven), as a float."""
    if x not in _INT_OF:
        return None

    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.roundeven", [t], ir.FunctionType(t, [t]))
        return builder.call(fn, args)

    return x(x), codegen


@intrinsic
def _as_int(typingctx, x):
    """The bits of a float32/float64 as int32/int64 (signed, unlike storage.convert's)."""
    if x not in _INT_OF:
        return None
    rt = _INT_OF[x]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(rt))

    return rt(x), codegen


@intrinsic
def _as_float(typingctx, i):
    """int32/int64 bits as float32/float64."""
    if i not in _FLOAT_OF:
        return None
    rt = _FLOAT_OF[i]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(rt))

    return rt(i), codegen


@intrinsic
def _poly(typingctx, x, c):
    """Horner's scheme with fma; c is a tuple of coefficients, highest degree first.

    Emitted as straight-line code: a loop over the tuple is left rolled for long polynomials,
    and an inner loop stops LLVM from vectorizing the caller's loop.
    """
    if not (isinstance(c, types.UniTuple) and c.dtype == x and x in _INT_OF):
        return None

    def codegen(context, builder, signature, args):
        xv, cv = args
        t = xv.type
        fma = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t, t, t]))
        r = builder.extract_value(cv, 0)
        for i in range(1, c.count):
            r = builder.call(fma, [r, xv, builder.extract_value(cv, i)])
        return r

    return x(x, c), codegen


@njit(**_OPTS)
def _two_sum(a, b):
    """a + b = s + e exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(**_OPTS)
def _pow2_f32(k):
    """2**k for -126 <= k <= 127."""
    return _as_float(_I32((k + 127) << 23))


@njit(**_OPTS)
def _pow2_f64(k):
    """2**k for -1022 <= k <= 1023."""
    return _as_float(_I64((k + 1023) << 52))


@njit(**_OPTS)
def _scale_f32(k):
    """2**k as two factors, |k| <= 250: p * s1 * s2 rounds once, into subnormals too."""
    k1 = _I32(k >> 1)
    return _pow2_f32(k1), _pow2_f32(_I32(k - k1))


@njit(**_OPTS)
def _scale_f64(k):
    k1 = k >> 1
    return _pow2_f64(k1), _pow2_f64(k - k1)


@njit(**_OPTS)
def _ldexp_f32(p, k):
    """p * 2**k with a single rounding, for p normal and |k| <= 250."""
    s1, s2 = _scale_f32(k)
    return p * s1 * s2


@njit(**_OPTS)
def _ldexp_f64(p, k):
    s1, s2 = _scale_f64(k)
    return p * s1 * s2


# x = k ln2 + r with ln2 = hi + lo and k * hi exact (exp, log, pow and the reductions).
_LOG2E_F32 = _F32(1.442695)
_LN2HI_F32 = _F32(0.693145751953125)  # ln 2 rounded to 16 bits
_LN2LO_F32 = _F32(1.4286068e-06)
_SHIFT_F32 = _F32(12582912.0)  # 1.5 * 2**23: t + shift rounds t to an integer in the low bits
_LOG2E_F64 = 1.4426950408889634
_LN2HI_F64 = 0.6931471805598903  # ln 2 rounded to 42 bits
_LN2LO_F64 = 5.497923018708371e-14
_SHIFT_F64 = 6755399441055744.0  # 1.5 * 2**52
