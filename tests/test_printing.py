"""numpy's print options apply to tensors' repr; numpy's formatters take tensors."""

import numpy as np

import jitgrad as jg


def test_printoptions_apply_to_repr():
    t = jg.tensor([1 / 3, 2.0])
    assert "0.33333333" in repr(t)
    with jg.printoptions(precision=2):
        assert repr(t) == "tensor([0.33, 2.  ])"
        assert jg.get_printoptions()["precision"] == 2
    assert jg.get_printoptions() == np.get_printoptions()
    before = jg.get_printoptions()
    try:
        jg.set_printoptions(threshold=5, edgeitems=1)
        assert repr(jg.arange(10)) == "tensor([0, ..., 9])"
    finally:
        jg.set_printoptions(**before)
    assert "..." not in repr(jg.arange(10))


def test_formatters_match_numpy():
    a = np.array([[1.0, 2.5], [1e-9, 4.0]])
    t = jg.from_numpy(a)
    assert jg.array2string(t, precision=2) == np.array2string(a, precision=2)
    assert jg.array_repr(t) == np.array_repr(a)
    assert jg.array_str(t, suppress_small=True) == np.array_str(a, suppress_small=True)
    x = np.float32(0.1)
    assert jg.format_float_positional(jg.float32(0.1)) == np.format_float_positional(x)
    assert jg.format_float_scientific(jg.tensor(1234.5), 2) == np.format_float_scientific(1234.5, 2)
    assert jg.format_float_positional(0.5) == "0.5"
    assert jg.base_repr(jg.tensor(255), 16) == "FF" == np.base_repr(255, 16)
    assert jg.binary_repr(jg.tensor(-5), width=8) == np.binary_repr(-5, width=8)
    assert jg.binary_repr(5) == "101"
