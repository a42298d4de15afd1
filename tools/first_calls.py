"""``python -m tools.first_calls``: the time of the first call of each function of the Array
API standard (its namespace, ``linalg`` and ``fft``, as array-api-strict lists them) on
small inputs, in a fresh process whose kernel cache (``JITGRAD_CACHE_DIR``) is an empty
temporary directory; prints the calls over 0.1 s, slowest first.

The calls run one after another in one process, in the order of ``CALLS``: a call's time
is what it costs after the calls above it (a kernel they compiled is not compiled again).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from functools import partial

THRESHOLD = 0.1  # seconds


def calls() -> dict:
    """Each standard function's name (``linalg.x``, ``fft.x``) -> a call of it on small
    inputs."""
    import numpy as np

    import jitgrad as jg

    f = jg.asarray([[0.5, -1.5, 2.0], [1.0, 0.25, -3.0]])
    g = jg.asarray([0.75, -0.5, 4.0], dtype=jg.float32)
    i = jg.asarray([[3, -2, 7], [0, 5, -1]], dtype=jg.int16)
    u = jg.asarray([1, 2, 3], dtype=jg.uint8)
    b = jg.asarray([True, False, True])
    c = jg.asarray([1 + 2j, -0.5j, 3.0], dtype=jg.complex64)
    m = jg.asarray([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]])
    v3 = jg.asarray([1.0, 2.0, 3.0])
    unary_float = (
        "acos acosh asin asinh atan atanh cos cosh exp expm1 log log1p log2 log10 reciprocal"
        " sin sinh sqrt tan tanh signbit"
    ).split()
    unary_real = ["abs", "ceil", "floor", "negative", "positive", "round", "sign", "square"]
    unary_real += ["trunc", "isfinite", "isinf", "isnan", "conj", "real"]
    binary_float = ["atan2", "copysign", "hypot", "logaddexp", "nextafter", "divide", "pow"]
    binary_real = ["add", "subtract", "multiply", "maximum", "minimum", "floor_divide"]
    binary_real += ["remainder", "equal", "not_equal", "greater", "greater_equal", "less"]
    binary_real += ["less_equal"]
    bitwise = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift"]
    bitwise += ["bitwise_right_shift"]
    logical = ["logical_and", "logical_or", "logical_xor"]
    table = {
        "arange": lambda: jg.arange(1, 7, 2, dtype=jg.int32),
        "asarray": lambda: jg.asarray([[1, 2], [3, 4]], dtype=jg.uint16),
        "empty": lambda: jg.empty((2, 3), dtype=jg.float32),
        "empty_like": lambda: jg.empty_like(i),
        "eye": lambda: jg.eye(4, 3, k=1, dtype=jg.int16),
        "from_dlpack": lambda: jg.from_dlpack(np.arange(3.0)),
        "full": lambda: jg.full((2, 2), 7, dtype=jg.int8),
        "full_like": lambda: jg.full_like(f, 2.5),
        "linspace": lambda: jg.linspace(0.0, 1.0, num=5, dtype=jg.float32),
        "meshgrid": lambda: jg.meshgrid(v3, g, indexing="ij"),
        "ones": lambda: jg.ones((3,), dtype=jg.complex128),
        "ones_like": lambda: jg.ones_like(b),
        "zeros": lambda: jg.zeros((2, 2), dtype=jg.uint32),
        "zeros_like": lambda: jg.zeros_like(g),
        "tril": lambda: jg.tril(m, k=-1),
        "triu": lambda: jg.triu(i),
        "astype": lambda: jg.astype(i, jg.float32),
        "broadcast_arrays": lambda: jg.broadcast_arrays(f, v3),
        "broadcast_shapes": lambda: jg.broadcast_shapes((2, 1), (3,)),
        "broadcast_to": lambda: jg.broadcast_to(v3, (2, 3)),
        "can_cast": lambda: jg.can_cast(jg.int8, jg.int32),
        "finfo": lambda: jg.finfo(jg.float32),
        "iinfo": lambda: jg.iinfo(jg.int16),
        "isdtype": lambda: jg.isdtype(jg.float32, "real floating"),
        "result_type": lambda: jg.result_type(jg.int8, g),
        "__array_namespace_info__": lambda: jg.__array_namespace_info__().dtypes(),
        "bitwise_invert": lambda: jg.bitwise_invert(i),
        "logical_not": lambda: jg.logical_not(b),
        "imag": lambda: jg.imag(c),
        "clip": lambda: jg.clip(f, -1.0, 1.0),
        "take": lambda: jg.take(f, jg.asarray([2, 0]), axis=1),
        "take_along_axis": lambda: jg.take_along_axis(f, jg.asarray([[1], [0]]), axis=1),
        "matmul": lambda: jg.matmul(f, m),
        "tensordot": lambda: jg.tensordot(f, m, axes=1),
        "matrix_transpose": lambda: jg.matrix_transpose(f),
        "vecdot": lambda: jg.vecdot(f, v3),
        "concat": lambda: jg.concat([f, f], axis=1),
        "expand_dims": lambda: jg.expand_dims(i, axis=1),
        "flip": lambda: jg.flip(f, axis=0),
        "moveaxis": lambda: jg.moveaxis(f, 0, -1),
        "permute_dims": lambda: jg.permute_dims(i, (1, 0)),
        "repeat": lambda: jg.repeat(v3, 2),
        "reshape": lambda: jg.reshape(f, (3, 2)),
        "roll": lambda: jg.roll(i, 1, axis=1),
        "squeeze": lambda: jg.squeeze(jg.expand_dims(v3, axis=0), axis=0),
        "stack": lambda: jg.stack([v3, v3]),
        "tile": lambda: jg.tile(u, (2,)),
        "unstack": lambda: jg.unstack(f),
        "argmax": lambda: jg.argmax(f, axis=1),
        "argmin": lambda: jg.argmin(i),
        "nonzero": lambda: jg.nonzero(i),
        "count_nonzero": lambda: jg.count_nonzero(i, axis=0),
        "searchsorted": lambda: jg.searchsorted(v3, g),
        "where": lambda: jg.where(b, v3, 0.0),
        "isin": lambda: jg.isin(i, jg.asarray([3, 5], dtype=jg.int16)),
        "unique_all": lambda: jg.unique_all(i),
        "unique_counts": lambda: jg.unique_counts(f),
        "unique_inverse": lambda: jg.unique_inverse(u),
        "unique_values": lambda: jg.unique_values(g),
        "argsort": lambda: jg.argsort(f, axis=1, descending=True),
        "sort": lambda: jg.sort(i, axis=0),
        "cumulative_sum": lambda: jg.cumulative_sum(f, axis=1, include_initial=True),
        "cumulative_prod": lambda: jg.cumulative_prod(v3),
        "max": lambda: jg.max(f, axis=0),
        "min": lambda: jg.min(i),
        "mean": lambda: jg.mean(f, axis=1, keepdims=True),
        "prod": lambda: jg.prod(i, axis=1),
        "std": lambda: jg.std(f, correction=1),
        "sum": lambda: jg.sum(u, dtype=jg.uint64),
        "var": lambda: jg.var(g),
        "all": lambda: jg.all(b),
        "any": lambda: jg.any(i, axis=1),
        "diff": lambda: jg.diff(f, axis=1),
        "linalg.cholesky": lambda: jg.linalg.cholesky(m),
        "linalg.cross": lambda: jg.linalg.cross(f, v3),
        "linalg.det": lambda: jg.linalg.det(m),
        "linalg.diagonal": lambda: jg.linalg.diagonal(m, offset=1),
        "linalg.eigh": lambda: jg.linalg.eigh(m),
        "linalg.eigvalsh": lambda: jg.linalg.eigvalsh(m),
        "linalg.inv": lambda: jg.linalg.inv(m),
        "linalg.matmul": lambda: jg.linalg.matmul(m, v3),
        "linalg.matrix_norm": lambda: jg.linalg.matrix_norm(m, ord="nuc"),
        "linalg.matrix_power": lambda: jg.linalg.matrix_power(m, 3),
        "linalg.matrix_rank": lambda: jg.linalg.matrix_rank(m),
        "linalg.matrix_transpose": lambda: jg.linalg.matrix_transpose(i),
        "linalg.outer": lambda: jg.linalg.outer(v3, g),
        "linalg.pinv": lambda: jg.linalg.pinv(f),
        "linalg.qr": lambda: jg.linalg.qr(f),
        "linalg.slogdet": lambda: jg.linalg.slogdet(m),
        "linalg.solve": lambda: jg.linalg.solve(m, v3),
        "linalg.svd": lambda: jg.linalg.svd(f, full_matrices=False),
        "linalg.svdvals": lambda: jg.linalg.svdvals(f),
        "linalg.tensordot": lambda: jg.linalg.tensordot(v3, v3, axes=1),
        "linalg.trace": lambda: jg.linalg.trace(m),
        "linalg.vecdot": lambda: jg.linalg.vecdot(m, v3),
        "linalg.vector_norm": lambda: jg.linalg.vector_norm(f, ord=1, axis=1),
        "fft.fft": lambda: jg.fft.fft(c),
        "fft.ifft": lambda: jg.fft.ifft(c, n=4),
        "fft.fftn": lambda: jg.fft.fftn(jg.astype(f, jg.complex128)),
        "fft.ifftn": lambda: jg.fft.ifftn(jg.astype(f, jg.complex128), axes=(1,)),
        "fft.rfft": lambda: jg.fft.rfft(g),
        "fft.irfft": lambda: jg.fft.irfft(c),
        "fft.rfftn": lambda: jg.fft.rfftn(f),
        "fft.irfftn": lambda: jg.fft.irfftn(jg.astype(f, jg.complex128)),
        "fft.hfft": lambda: jg.fft.hfft(c),
        "fft.ihfft": lambda: jg.fft.ihfft(v3),
        "fft.fftfreq": lambda: jg.fft.fftfreq(6, d=0.5),
        "fft.rfftfreq": lambda: jg.fft.rfftfreq(6, dtype=jg.float32),
        "fft.fftshift": lambda: jg.fft.fftshift(f),
        "fft.ifftshift": lambda: jg.fft.ifftshift(c),
    }
    for name in unary_float:
        table[name] = partial(getattr(jg, name), g)
    for name in unary_real:
        table[name] = partial(getattr(jg, name), f)
    for name in binary_float:
        table[name] = partial(getattr(jg, name), f, v3)
    for name in binary_real:
        table[name] = partial(getattr(jg, name), i, i)
    for name in bitwise:
        table[name] = partial(getattr(jg, name), u, u)
    for name in logical:
        table[name] = partial(getattr(jg, name), b, b)
    return table


def standard_functions() -> list[str]:
    import array_api_strict as xps

    own = {"set_array_api_strict_flags", "get_array_api_strict_flags"}
    own |= {"reset_array_api_strict_flags", "ArrayAPIStrictFlags"}
    names = []
    for prefix, module in (("", xps), ("linalg.", xps.linalg), ("fft.", xps.fft)):
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and not isinstance(obj, type) and name not in own:
                names.append(prefix + name)
    return names


def _evaluate(result) -> None:
    """The values of every array in ``result``, so that no work is left pending."""
    import jitgrad as jg

    if isinstance(result, tuple | list):
        for part in result:
            _evaluate(part)
    elif isinstance(result, jg.Tensor):
        result.numpy()


def measure() -> dict[str, float]:
    """In this process: seconds of jitgrad's import and of each first call."""
    start = time.perf_counter()
    import jitgrad  # noqa: F401

    seconds = {"import jitgrad": time.perf_counter() - start}
    table = calls()
    missing = [name for name in standard_functions() if name not in table]
    if missing:
        raise SystemExit(f"first_calls: no call for {', '.join(missing)}")
    for name, call in table.items():
        start = time.perf_counter()
        _evaluate(call())
        seconds[name] = time.perf_counter() - start
    return seconds


def main() -> None:
    if sys.argv[1:] == ["--measure"]:
        print(json.dumps(measure()))
        return
    with tempfile.TemporaryDirectory(prefix="jitgrad-first-calls-") as cache:
        env = {**os.environ, "JITGRAD_CACHE_DIR": cache}
        run = subprocess.run(
            [sys.executable, "-m", "tools.first_calls", "--measure"],
            env=env,
            capture_output=True,
            text=True,
        )
    if run.returncode:
        raise SystemExit(f"first_calls: the measuring process failed:\n{run.stderr}")
    seconds = json.loads(run.stdout.strip().splitlines()[-1])
    slow = sorted(((s, n) for n, s in seconds.items() if s > THRESHOLD), reverse=True)
    print(f"{len(seconds) - 1} first calls, {len(slow)} over {THRESHOLD} s (and the import):")
    for s, name in slow:
        print(f"{s:8.3f} s  {name}")
    print(f"{sum(seconds.values()):8.3f} s  in all")


if __name__ == "__main__":
    main()
