"""Pickling and copying tensors: the data and requires_grad travel, the graph never does."""

import copy
import pickle

import pytest

import jitgrad as jg
from jitgrad import nn


def roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x + 1,
        lambda x: x.exp(),
        lambda x: x.sum(),
        lambda x: x @ x,
        lambda x: x[0],
        lambda x: x.reshape(2, 1),
    ],
    ids=["add", "exp", "sum", "matmul", "index", "reshape"],
)
def test_a_non_leaf_pickles_as_a_leaf_that_requires_grad(make):
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = make(x)
    loaded = roundtrip(y)
    # As PyTorch: the data and the flag, not the graph.
    assert loaded.is_leaf and loaded.grad_fn is None and loaded.requires_grad
    assert loaded.tolist() == y.tolist() and loaded.shape == y.shape
    loaded.sum().backward()
    assert loaded.grad is not None and x.grad is None


def test_a_non_leaf_view_keeps_sharing_storage_with_its_base_in_one_pickle():
    x = jg.arange(6.0).requires_grad_()
    x2, v2 = roundtrip((x, x[2:4]))
    assert v2.storage_offset() == 2 and v2.storage() is x2.storage()
    with jg.no_grad():
        x2[2] = -1
    assert v2.tolist() == [-1.0, 3.0]


def test_a_model_output_pickles_without_its_graph():
    out = nn.Linear(2, 2)(jg.ones((1, 2)))
    loaded = roundtrip(out)
    assert loaded.is_leaf and loaded.requires_grad and loaded.tolist() == out.tolist()


def test_deepcopy_of_a_non_leaf_is_refused_by_name():
    out = nn.Linear(2, 2)(jg.ones((1, 2)))
    with pytest.raises(RuntimeError, match="graph leaves.*made by Linear.*detach"):
        copy.deepcopy(out)
    assert copy.deepcopy(out.detach()).tolist() == out.tolist()


def test_pickling_drops_grad_and_deepcopy_keeps_it():
    x = jg.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    assert roundtrip(x).grad is None  # as PyTorch
    c = copy.deepcopy(x)
    assert c.grad.tolist() == [2.0, 2.0] and c.grad is not x.grad


@pytest.mark.parametrize("clone", [roundtrip, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_leaves_copy_with_layout_flag_and_shared_storage(clone):
    base = jg.arange(12.0).requires_grad_()
    view = base.detach().reshape(3, 4).T[::2]
    b2, v2, f2 = clone((base, view, jg.tensor([1.5], dtype="float16")))
    assert b2.requires_grad and b2.is_leaf and b2.tolist() == base.tolist()
    assert v2.stride() == view.stride() and v2.storage_offset() == view.storage_offset()
    assert v2.tolist() == view.tolist() and not v2.requires_grad
    assert v2.storage() is b2.storage() and b2.storage() is not base.storage()
    assert f2.dtype is jg.float16 and f2.tolist() == [1.5]


def test_parameters_and_tied_weights_survive_pickle_and_deepcopy():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.weight = a.weight
    model = nn.Sequential(a, b)
    for clone in (roundtrip, copy.deepcopy):
        c = clone(model)
        assert type(c[0].weight) is nn.Parameter and c[0].weight.requires_grad
        assert c[0].weight is c[1].weight and c[0].weight is not a.weight
        x = jg.ones((1, 2))
        assert c(x).tolist() == model(x).tolist()


def test_copy_copy_of_a_tensor_shares_its_storage():
    t = jg.arange(3.0)
    c = copy.copy(t)
    c[0] = 100
    assert t.tolist() == [100.0, 1.0, 2.0]


def test_an_out_of_bounds_pickled_layout_is_refused():
    t = jg.arange(3.0)
    func, args, state = t.__reduce_ex__(4)
    with pytest.raises(ValueError, match="outside a storage of size 3"):
        func(*args).__setstate__((state[0], (4,), (1,), 0, *state[4:]))


def test_a_leaf_pickled_by_an_earlier_version_still_loads():
    x = jg.ones(2, requires_grad=True)
    # Earlier versions pickled tensors with object's default reduction: (None, slots).
    func, args, state = object.__reduce_ex__(x, 4)[:3]
    loaded = func(*args)
    loaded.__setstate__(state)
    assert loaded.requires_grad and loaded.tolist() == [1.0, 1.0]
