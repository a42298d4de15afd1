"""gradcheck: central differences against autograd's gradients."""

import jitgrad as jg
from jitgrad.autograd import gradcheck


def test_inputs_come_one_per_argument_or_as_pytorchs_tuple():
    a = jg.tensor([0.5, -1.0], requires_grad=True)
    b = jg.tensor([2.0, 3.0], requires_grad=True)
    assert gradcheck(lambda x, y: x * y, a, b)
    assert gradcheck(lambda x, y: x * y, (a, b))
    assert gradcheck(lambda x, y: x * y, [a, b])
