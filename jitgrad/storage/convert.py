"""float16 <-> float conversion and dtype-converting stores for numba kernels.

numba's CPU target has no float16 type: any kernel touching a float16 array
raises NotImplementedError. jitgrad therefore hands half arrays to kernels as
``half.view(np.uint16)``. A uint16 array in a kernel is then either float16 bits
or jitgrad's own uint16 numbers, and only the jitgrad dtype tells which: the
kernel's builder says so explicitly, never this module by looking at numba
types. Generated kernels call ``half_to_float`` on their float16 loads and
``store_half`` for their float16 outputs; fixed kernels (copies) take a
``HALF``/``NOT_HALF`` flag per array and ``cast`` picks the conversion at compile
time. ``store`` is numpy's ``astype`` between arrays of the other dtypes.

The conversions reproduce numpy's ``astype`` bit for bit.

Everything is written with integer masks and selects rather than branches so
that LLVM can vectorize loops of conversions. numba types ``uint64 op int``
as int64 or float64, so every integer constant below is an explicit np.uint64.
"""

import numpy as np
from numba import njit, types
from numba.extending import intrinsic, overload

_BITS_TYPE = {types.float32: types.uint32, types.float64: types.uint64}
_FLOAT_TYPE = {bits: flt for flt, bits in _BITS_TYPE.items()}


@intrinsic
def _float_bits(typingctx, x):
    """Reinterpret a float32/float64 as uint32/uint64 (numba scalars have no .view)."""
    if x not in _BITS_TYPE:
        return None
    return_type = _BITS_TYPE[x]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(return_type))

    return return_type(x), codegen


@intrinsic
def _bits_float(typingctx, bits):
    """Reinterpret a uint32/uint64 as float32/float64."""
    if bits not in _FLOAT_TYPE:
        return None
    return_type = _FLOAT_TYPE[bits]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(return_type))

    return return_type(bits), codegen


_HALF_SIGN = np.uint64(0x8000)
_HALF_MAGNITUDE = np.uint64(0x7FFF)
_HALF_PAYLOAD = np.uint64(0x03FF)
_HALF_MIN_NORMAL = np.uint64(0x0400)
_HALF_INF = np.uint64(0x7C00)
_HALF_MIN_NAN_PAYLOAD = np.uint64(1)
_HALF_SUBNORMAL_STEP = np.float32(2.0**-24)

_F32_REBIAS = np.uint64((127 - 15) << 23)
_F32_INF = np.uint64(0x7F80_0000)

_F64_SIGN = np.uint64(0x8000_0000_0000_0000)
_F64_MAGNITUDE = np.uint64(0x7FFF_FFFF_FFFF_FFFF)
_F64_INF = np.uint64(0x7FF0_0000_0000_0000)
_F64_HALF_MIN_NORMAL = np.float64(2.0**-14).view(np.uint64)
_F64_REBIAS = np.uint64((1023 - 15) << 52)
_F64_HALF_ULP_MINUS_ONE = np.uint64((1 << 41) - 1)  # in units of the 42 bits float16 drops
_ONE = np.uint64(1)
_TWO_TO_63 = 2.0**63
# Adding 2**28 (whose ulp is 2**-24, the half subnormal step) makes the FPU
# round |x| to a subnormal half significand with a single, correct rounding.
_SUBNORMAL_MAGIC = 2.0**28
_SUBNORMAL_MAGIC_BITS = np.float64(_SUBNORMAL_MAGIC).view(np.uint64)


@njit(cache=True)
def half_to_float(h):
    """float16 bits (uint16) -> exact float32 value."""
    bits = np.uint64(h)
    magnitude = bits & _HALF_MAGNITUDE
    normal = (magnitude << 13) + _F32_REBIAS
    # Inf/NaN keep their payload verbatim (no quieting), as numpy does.
    inf_nan = (magnitude << 13) | _F32_INF
    # Subnormals are magnitude * 2**-24, exactly representable in float32.
    subnormal = np.uint64(_float_bits(np.float32(magnitude) * _HALF_SUBNORMAL_STEP))
    result = subnormal if magnitude < _HALF_MIN_NORMAL else normal
    result = inf_nan if magnitude >= _HALF_INF else result
    return _bits_float(np.uint32(result | ((bits & _HALF_SIGN) << 16)))


@njit(cache=True)
def half_to_double(h):
    """float16 bits (uint16) -> exact float64 value."""
    bits = np.uint64(h)
    # Widening float32 -> float64 quiets signalling NaNs on x86 while numpy's
    # half -> double keeps them, so NaNs are assembled from the half bits.
    nan = ((bits & _HALF_SIGN) << 48) | _F64_INF | ((bits & _HALF_PAYLOAD) << 42)
    is_nan = (bits & _HALF_MAGNITUDE) > _HALF_INF
    return _bits_float(nan) if is_nan else np.float64(half_to_float(h))


def _nan_payload(x):
    """The 10 leading significand bits of x, which numpy carries into a half NaN."""
    raise NotImplementedError("only callable from numba-compiled code")


@overload(_nan_payload)
def _nan_payload_impl(x):
    # Reading float32 bits directly, not through float64, keeps a signalling
    # NaN's payload as numpy's float32 -> float16 cast does.
    if x == types.float32:
        return lambda x: (np.uint64(_float_bits(x)) >> 13) & _HALF_PAYLOAD
    return lambda x: (_float_bits(np.float64(x)) >> 42) & _HALF_PAYLOAD


@njit(cache=True)
def float_to_half(x):
    """float64/float32 (or int/bool) -> float16 bits (uint16), rounded once to nearest even."""
    value = np.float64(x)  # exact for float32, so there is still only one rounding
    bits = _float_bits(value)
    magnitude = bits & _F64_MAGNITUDE
    # Rounding the rebiased bits as one integer lets the carry ripple into the
    # exponent, which also yields inf when 65504 rounds up. Adding the kept
    # lowest bit to "half an ulp minus one" sends exact ties to even.
    # (The subtraction wraps for subnormal inputs; that lane is not selected.)
    rebiased = magnitude - _F64_REBIAS
    rounding = _F64_HALF_ULP_MINUS_ONE + ((rebiased >> 42) & _ONE)
    normal = min((rebiased + rounding) >> 42, _HALF_INF)
    subnormal = _float_bits(abs(value) + _SUBNORMAL_MAGIC) - _SUBNORMAL_MAGIC_BITS
    # numpy keeps the top payload bits and forces a nonzero payload so the
    # result stays a NaN rather than becoming inf.
    nan = _HALF_INF | max(_nan_payload(x), _HALF_MIN_NAN_PAYLOAD)
    result = subnormal if magnitude < _F64_HALF_MIN_NORMAL else normal
    result = nan if magnitude > _F64_INF else result
    return np.uint16(result | ((bits & _F64_SIGN) >> 48))


# Whether a kernel's array holds float16 bits, as an argument whose numba *type* is the
# answer (HALF: a bool, NOT_HALF: None): each combination compiles its own conversions, and
# a uint16 array of numbers is never read as half bits.
HALF = True
NOT_HALF = None


def half_flag(half: bool):
    """``HALF`` or ``NOT_HALF``: the kernel argument for an array of float16 bits or not."""
    return HALF if half else NOT_HALF


def store_half(dst, i, x):
    """dst[i] = x rounded to float16 as numpy's astype, ``dst`` holding float16 bits."""
    raise NotImplementedError("only callable from numba-compiled code")


@overload(store_half)
def _store_half_impl(dst, i, x):
    if isinstance(x, types.Complex):

        def impl(dst, i, x):
            dst[i] = float_to_half(x.real)
    else:

        def impl(dst, i, x):
            dst[i] = float_to_half(x)

    return impl


def cast(dst, i, x, dst_half, x_half):
    """dst[i] = x with numpy's astype semantics, where ``dst_half`` and ``x_half`` (``HALF``
    or ``NOT_HALF``) say which side holds float16 bits."""
    raise NotImplementedError("only callable from numba-compiled code")


@overload(cast)
def _cast_impl(dst, i, x, dst_half, x_half):
    to_half = isinstance(dst_half, types.Boolean)
    from_half = isinstance(x_half, types.Boolean)
    if to_half == from_half:  # float16 to float16 copies the bits
        return lambda dst, i, x, dst_half, x_half: store(dst, i, x)
    if to_half:
        return lambda dst, i, x, dst_half, x_half: store_half(dst, i, x)
    # numpy widens half straight to double; via float32 otherwise.
    if dst.dtype in (types.float64, types.complex128):
        return lambda dst, i, x, dst_half, x_half: store(dst, i, half_to_double(x))
    return lambda dst, i, x, dst_half, x_half: store(dst, i, half_to_float(x))


def store(dst, i, x):
    """dst[i] = x with numpy's astype semantics, for arrays of any jitgrad dtype but float16
    (``cast``, ``store_half``): uint16 is a number here."""
    raise NotImplementedError("only callable from numba-compiled code")


@overload(store)
def _store_impl(dst, i, x):
    if not isinstance(dst, types.Array):
        return None
    dtype = dst.dtype
    if isinstance(x, types.Complex) and not isinstance(dtype, types.Complex):
        if dtype == types.boolean:

            def impl(dst, i, x):
                dst[i] = x != 0
        else:

            def impl(dst, i, x):
                store(dst, i, x.real)
    elif isinstance(x, types.Float) and isinstance(dtype, types.Integer) and not dtype.signed:
        # numpy's C cast goes through a signed conversion, so negatives wrap around
        # (-2.0 -> 254 in uint8); LLVM's float -> unsigned saturates or is undefined.
        if dtype.bitwidth < 64:

            def impl(dst, i, x):
                dst[i] = np.int64(x)
        else:

            def impl(dst, i, x):
                high = x >= _TWO_TO_63
                low = np.uint64(np.int64(x - _TWO_TO_63 if high else x))
                dst[i] = low ^ _F64_SIGN if high else low
    else:
        # numba's implicit casts already match numpy, including NaN -> True.
        def impl(dst, i, x):
            dst[i] = x

    return impl
