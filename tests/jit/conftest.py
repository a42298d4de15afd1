"""The jit tests test kernels: eager ops here take kernels at every size (the numpy tier is
off), in this process and in the processes the tests start."""

import pytest

import jitgrad as jg


@pytest.fixture(autouse=True)
def kernels_at_every_size(monkeypatch):
    monkeypatch.setenv("JITGRAD_NUMPY_TIER_WORK", "0")
    monkeypatch.setattr(jg.config, "numpy_tier_work", 0)
