"""Edge cases of the shape and indexing ops against numpy (values, shapes, views, errors)
and PyTorch (gradients)."""

import numpy as np
import pytest

import jitgrad as jg


def leaf(shape, seed=0):
    return jg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


# -- shapes and axes as numpy integer arrays (numpy takes any sequence of integers) ----------


@pytest.mark.parametrize(
    "op, np_op",
    [
        (lambda t: t.reshape(np.array([3, 2])), lambda a: a.reshape(np.array([3, 2]))),
        (lambda t: jg.reshape(t, np.array([-1, 3])), lambda a: np.reshape(a, np.array([-1, 3]))),
        (lambda t: t.view(np.array([6])), lambda a: a.reshape(6)),
        (lambda t: t.expand(np.array([4, 2, 3])), lambda a: np.broadcast_to(a, (4, 2, 3))),
        (
            lambda t: jg.broadcast_to(t, np.array([4, 2, 3])),
            lambda a: np.broadcast_to(a, np.array([4, 2, 3])),
        ),
        (lambda t: t.permute(np.array([1, 0])), lambda a: a.transpose(np.array([1, 0]))),
        (lambda t: t.transpose(np.array([1, 0])), lambda a: a.transpose(np.array([1, 0]))),
        (
            lambda t: jg.transpose(t, axes=np.array([1, 0])),
            lambda a: np.transpose(a, axes=np.array([1, 0])),
        ),
        (lambda t: t.flip(np.array([0, 1])), lambda a: np.flip(a, np.array([0, 1]))),
    ],
)
def test_shape_and_axes_given_as_numpy_arrays(op, np_op):
    a = np.arange(6.0).reshape(2, 3)
    x = jg.tensor(a, requires_grad=True)
    y = op(x)
    expected = np_op(a)
    np.testing.assert_array_equal(y.numpy(), expected)
    assert np.shares_memory(y.numpy(), x.numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(a) * (expected.size // a.size))


def test_shape_given_as_a_2d_array_is_a_type_error():
    with pytest.raises(TypeError, match="shape"):
        jg.arange(6.0).reshape(np.array([[2, 3]]))
