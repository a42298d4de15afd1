"""Traced steps computed by numpy, so that a trace compiles nothing it may not keep.

While ``jg.jit`` traces a function, every elementwise launch is recorded with its formula
for the scheduler, which fuses most of them into kernels of its own (and row kernels
absorb most reductions): compiling each step's kernel to run it once in the trace is
mostly wasted (charlm's cold trace compiled 38 kernels, 31 of which its plan never ran).
A step whose kernel is not compiled yet is therefore recorded and computed by numpy
(``run_or_defer``); a launch by ``evaluate``: its formula (``exprs``) over numpy views of
its inputs, with ``ops.reference``'s math, each output stored with numpy's casts as the
kernel's ``store`` does. The first replay compiles the kernels the plan keeps.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._config import config
from ..ops import reference
from ..recording import run
from ..tiers import quietly
from . import ir


def run_or_defer(step, call, on_numpy) -> None:
    """Run ``step`` (a plan step calling the kernel ``call``); or, in a trace while that
    kernel is not compiled, record it and let ``on_numpy()`` write its outputs."""
    tape = config.thread.tape
    if tape is None or call.compiled is not None:
        run(step)
    else:
        quietly(on_numpy)
        tape.record(step, ())


def evaluate(launch) -> None:
    """Write ``launch``'s outputs (a ``lowering.Launch``) from numpy."""
    shape = launch.shape
    loaded = [
        _load(array, offset, strides, shape, dtype, as_bool, launch.ct)
        for array, offset, strides, (dtype, as_bool) in zip(
            launch.arrays, launch.offsets, launch.strides, launch.loads
        )
    ]
    values = quietly(ir.evaluate, launch.exprs, loaded, reference, launch.scalars)
    count = int(np.prod(shape, dtype=np.int64))
    for out, dtype, value in zip(launch.outs, launch.out_dtypes, values):
        target = out[:count].reshape(shape)
        if dtype == "float16":  # (its storage holds the bits)
            quietly(np.copyto, target, np.asarray(value).astype(np.float16).view(np.uint16))
        else:
            quietly(np.copyto, target, value, casting="unsafe")


def _load(array, offset, strides, shape, dtype, as_bool, ct):
    """Input ``array`` at ``offset`` with element ``strides`` over ``shape``, as the kernel
    loads it: bools as bools where the formula keeps them, else in the compute dtype."""
    view = np.lib.stride_tricks.as_strided(
        array[offset:], shape, [s * array.itemsize for s in strides], writeable=False
    )
    if dtype == "float16":
        view = view.view(np.float16)
    if as_bool:
        return view
    return view.astype(dtypes.as_dtype(ct).numpy, copy=False)
