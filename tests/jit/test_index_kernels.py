"""The scatter-add of rows equals numpy's ``np.add.at``, and an embedding's gradient
through it equals PyTorch's."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.jit import index_kernels


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 9),
    row_shape=st.sampled_from([(), (1,), (5,), (3, 4)]),
    index_shape=st.sampled_from([(0,), (1,), (7,), (3, 5)]),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_add_rows_equals_numpys_add_at(rows, row_shape, index_shape, dtype, seed):
    rng = np.random.default_rng(seed)
    index = rng.integers(-rows, rows, index_shape)  # repeats and negative indices
    values = rng.standard_normal(index_shape + row_shape).astype(dtype)
    start = rng.standard_normal((rows, *row_shape)).astype(dtype)
    expected = start.copy()
    np.add.at(expected, (index,), values)
    out = start.copy()
    assert index_kernels.applies(out, index, values)
    index_kernels.add_rows(out, index, values)
    np.testing.assert_array_equal(out, expected)  # the same additions in the same order


def test_add_rows_refuses_an_index_outside_the_table():
    out = np.zeros((3, 2))
    with pytest.raises(IndexError, match="out of range"):
        index_kernels.add_rows(out, np.array([0, 3]), np.ones((2, 2)))


def test_arrays_it_does_not_take():
    out, index = np.zeros((3, 2)), np.array([0, 1])
    assert not index_kernels.applies(out, index, np.ones((2, 2), np.float32))  # dtypes differ
    assert not index_kernels.applies(out.astype(np.int64), index, np.ones((2, 2), np.int64))
    assert not index_kernels.applies(out, index.astype(bool), np.ones((2, 2)))  # a mask
    assert not index_kernels.applies(np.zeros((2, 3)).T, index, np.ones((2, 2)))  # strided
    assert not index_kernels.applies(out, index, np.ones((2, 3)))  # rows of another width


def test_an_embeddings_gradient_under_jit_equals_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    weights = rng.standard_normal((11, 6)).astype(np.float32)
    ids = rng.integers(0, 11, (4, 9))
    scale = rng.standard_normal((4, 9, 6)).astype(np.float32)
    emb = jg.nn.Embedding(11, 6)
    with jg.no_grad():
        emb.weight.copy_(jg.from_numpy(weights))

    @jg.jit
    def step(ids, scale):
        emb.weight.grad = None
        (emb(ids) * scale).sum().backward()
        return emb.weight.grad

    for _ in range(3):
        got = step(jg.from_numpy(ids), jg.from_numpy(scale))
    w = torch.tensor(weights, requires_grad=True)
    (
        torch.nn.functional.embedding(torch.from_numpy(ids), w) * torch.from_numpy(scale)
    ).sum().backward()
    np.testing.assert_allclose(got.numpy(), w.grad.numpy(), rtol=1e-6, atol=1e-6)
