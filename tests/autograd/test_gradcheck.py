"""gradcheck: central differences against autograd's gradients."""

import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck


def test_inputs_come_one_per_argument_or_as_pytorchs_tuple():
    a = jg.tensor([0.5, -1.0], requires_grad=True)
    b = jg.tensor([2.0, 3.0], requires_grad=True)
    assert gradcheck(lambda x, y: x * y, a, b)
    assert gradcheck(lambda x, y: x * y, (a, b))
    assert gradcheck(lambda x, y: x * y, [a, b])


def test_inputs_whose_elements_share_memory_are_refused():
    weights = jg.arange(6.0).reshape(3, 2)
    expanded = jg.tensor([1.0, 2.0]).expand(3, 2).requires_grad_()
    overlapping = jg.arange(4.0).as_strided((3, 2), (1, 1)).requires_grad_()
    for x in (expanded, overlapping):
        with pytest.raises(ValueError, match="share memory"):
            gradcheck(lambda t: (t * t * weights).sum(), x)
    transposed = jg.arange(6.0).reshape(2, 3).T.requires_grad_()  # distinct: still checked
    assert gradcheck(lambda t: (t * t * weights).sum(), transposed)


@pytest.mark.parametrize(
    "fn",
    [lambda t: t > 1, lambda t: 3, lambda t: (t.argmax(), None)],
    ids=["bool tensor", "number", "int tensor and None"],
)
def test_a_function_with_nothing_to_differentiate_is_named(fn):
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="no floating-point tensor to differentiate"):
        gradcheck(fn, x)
