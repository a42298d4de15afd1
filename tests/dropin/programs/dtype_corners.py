"""dtype corner cases every numpy user meets: wraparound, promotion, casting."""


def run(np):
    pixels = np.array([250, 5, 128], dtype=np.uint8)
    brighter = pixels + np.uint8(10)  # wraps around modulo 256
    darker = pixels - 10  # a Python int keeps uint8 (NEP 50)
    widened = pixels.astype(np.int16) + 10
    ints = np.arange(5)
    halves = ints / 2  # true division promotes to float64
    floors = ints // 2
    small = np.array([1.5, 2.5, -1.5], dtype=np.float32)
    scaled = small * 2.0  # a Python float keeps float32
    mixed = small * np.float64(2.0)  # a numpy float64 scalar keeps float32 too
    promoted = small + np.arange(3)  # int64 + float32 promotes to float64
    bools = np.array([True, False, True])
    int8 = np.array([100, -100], dtype=np.int8)
    return {
        "brighter": brighter,
        "darker": darker,
        "widened": widened,
        "halves": halves,
        "floors": floors,
        "negative_floor": np.array([-7, 7]) // 2,
        "negative_mod": np.array([-7, 7]) % 3,
        "scaled": scaled,
        "mixed": mixed,
        "promoted": promoted,
        "bool_sum": bools.sum(),
        "bool_plus": bools + bools,
        "int8_wrap": int8 + int8,
        "truncated": np.array([1.7, -1.7, 2.5]).astype(np.int32),
        "rounded": np.round(np.array([0.5, 1.5, 2.5, -0.5])),
        "as_uint8": np.array([3.9, 255.0]).astype(np.uint8),
        "float32_scalar": np.float32(1.5) * 2,
        "int_of_sum": int(np.arange(4).sum()),
        "float_of_mean": float(np.arange(4).mean()),
        "result_type": str(np.result_type(np.int32, np.float32)),
        "can_cast": np.can_cast(np.int64, np.float64),
        "uint_max": np.iinfo(np.uint16).max,
        "eps32": np.finfo(np.float32).eps,
        "complex_promote": (np.array([1, 2]) * 1j).dtype.name,
    }
