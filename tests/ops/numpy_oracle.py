"""numpy as the oracle of elementwise tests: its result (or the error it raises) against
jitgrad's on tensors of the same arrays, under either backend."""

import contextlib
import warnings

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg
from jitgrad._config import config

INTS = ["uint8", "int8", "int16", "int32", "int64"]
BACKENDS = ["jit", "reference"]


@contextlib.contextmanager
def backend(name):
    # (a context manager, not monkeypatch: hypothesis runs many examples per fixture)
    before, config.backend = config.backend, name
    try:
        yield
    finally:
        config.backend = before


def numpy_result(fn, *args):
    """numpy's result, or the exception type it raises."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001  the type is what is compared
            return type(e)


def assert_matches_numpy(got_fn, want_fn, *args):
    """``got_fn`` on tensors of ``args`` gives numpy's values and dtype (each of a tuple's),
    or raises what numpy raises."""
    want = numpy_result(want_fn, *args)
    converted = [jg.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
    if isinstance(want, type):
        # numpy's own subclasses (UFuncTypeError) by the built-in they are
        builtin = next(c for c in want.__mro__ if c.__module__ == "builtins")
        with pytest.raises(builtin):
            got_fn(*converted)
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = got_fn(*converted)
    pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        assert isinstance(g, jg.Tensor), type(g)
        w = np.asarray(w)
        assert g.dtype.numpy == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_array_equal(g.numpy(), w)


@st.composite
def shapes_and_axes(draw, max_dims: int, max_side: int):
    """A shape and the axis of a reduction over it: None, one (possibly negative) or a
    tuple of distinct ones."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=max_dims, min_side=1, max_side=max_side))
    axis = draw(
        st.none()
        | st.integers(-len(shape), len(shape) - 1)
        | st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True).map(tuple)
    )
    return shape, axis
