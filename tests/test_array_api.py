"""The Array API standard's array protocol: namespace, inspection, device and DLPack."""

import array_api_compat
import array_api_strict as xps
import numpy as np
import pytest
import torch

import jitgrad as jg


def test_the_namespace_is_found_through_array_api_compat():
    t = jg.ones(3)
    assert t.__array_namespace__() is jg
    assert array_api_compat.is_array_api_obj(t)
    assert array_api_compat.array_namespace(t) is jg
    assert jg.__array_api_version__ == "2024.12"


def test_api_version_is_checked():
    assert jg.ones(1).__array_namespace__(api_version="2023.12") is jg
    with pytest.raises(ValueError, match="2099.12"):
        jg.ones(1).__array_namespace__(api_version="2099.12")


def test_inspection_matches_the_standard_shape():
    info, strict = jg.__array_namespace_info__(), xps.__array_namespace_info__()
    assert info.capabilities().keys() == strict.capabilities().keys()
    assert info.default_dtypes().keys() == strict.default_dtypes().keys()
    assert info.default_dtypes()["real floating"] is jg.float64
    assert info.default_device() in info.devices()
    for kind in [
        None,
        "bool",
        "signed integer",
        "unsigned integer",
        "integral",
        "real floating",
        "complex floating",
        "numeric",
        ("bool", "integral"),
    ]:
        names = set(info.dtypes(kind=kind))
        expected = set(strict.dtypes(kind=kind))
        assert names == expected, kind


def test_device():
    t = jg.arange(3)
    assert t.device == "cpu" and t.device == jg.Device("cpu") and t.device == torch.device("cpu")
    assert t.to_device(t.device) is t
    assert hash(t.device) == hash(jg.Device("cpu"))
    with pytest.raises(ValueError, match="cuda"):
        t.to_device("cuda")


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.complex128, np.bool_])
def test_dlpack_exchanges_memory_with_numpy_and_torch(dtype):
    t = jg.asarray(np.arange(6).astype(dtype).reshape(2, 3))[:, ::2]
    a = np.from_dlpack(t)
    assert a.ctypes.data == t.data_ptr() and a.strides == t.numpy().strides
    if dtype is not np.complex128 or hasattr(torch, "complex128"):
        assert torch.from_dlpack(t).data_ptr() == t.data_ptr()
    back = jg.from_dlpack(torch.arange(4, dtype=torch.float32))
    assert back.dtype is jg.float32 and back.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert t.__dlpack_device__() == (1, 0)


def test_from_dlpack_shares_memory_and_copies_on_request():
    a = np.arange(3.0)
    shared = jg.from_dlpack(a)
    copied = jg.from_dlpack(a, copy=True)
    a[0] = 5.0
    assert shared[0].item() == 5.0 and copied[0].item() == 0.0
    with pytest.raises(ValueError, match="cuda"):
        jg.from_dlpack(a, device="cuda")
