"""Warm workers: a worker on a fresh kernel cache directory receives the client's compiled
kernels and compiles nothing; workers sharing a directory receive them once."""

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.dask as jgd
from jitgrad.dask import kernels
from jitgrad.jit import cache


def test_a_worker_on_a_fresh_cache_receives_kernels_and_compiles_none(dask_client):
    @jg.function
    def bump(x):
        return jg.sin(x) * 3.25 - jg.exp(-x) / 7.0

    x = jg.linspace(0.0, 1.0, 1000)
    expected = bump(x)  # compiled (or loaded) here, in the test process's cache
    here = str(cache._kernel_directory())
    theirs = set(dask_client.run(lambda: str(cache._kernel_directory())).values())
    assert len(theirs) == 1 and here not in theirs  # both workers share one fresh directory
    lacking = set(kernels.entry_names()) - set(dask_client.run(kernels.entry_names).popitem()[1])
    assert any(name.endswith(".py") for name in lacking)

    written = jgd.share_kernels(dask_client)
    to_workers = {w: n for w, n in written.items() if w != "client"}
    # One worker receives every missing entry; the other finds them in the shared directory.
    assert list(to_workers.values()) == [len(lacking)]
    assert jgd.share_kernels(dask_client) == {}

    def run_counting(x):
        from jitgrad.jit import stats

        before = stats()
        y = bump(x)
        after = stats()
        return y, {k: after[k] - before[k] for k in ("generated", "compiled", "disk_hits")}

    for worker in dask_client.nthreads():
        y, counts = dask_client.submit(run_counting, x, workers=[worker], pure=False).result()
        assert counts == {"generated": 1, "compiled": 0, "disk_hits": 1}
        np.testing.assert_array_equal(y.numpy(), expected.numpy())


def test_only_kernel_entries_are_written(tmp_path):
    with pytest.raises(ValueError, match="not a jitgrad kernel cache entry"):
        kernels.write_entries({"../evil.py": (b"", 0)})
