"""One local Dask cluster for the tests that need one: two worker processes of one thread,
whose kernel cache directory is a fresh one of their own (not the test process's)."""

import shutil
import tempfile

import pytest


@pytest.fixture(scope="session")
def dask_client():
    from distributed import Client, LocalCluster

    import jitgrad.dask  # noqa: F401  (registers jitgrad with Dask in this process)

    fresh = tempfile.mkdtemp(prefix="jitgrad-dask-workers-")
    cluster = LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        dashboard_address=None,
        env={"JITGRAD_CACHE_DIR": fresh},
    )
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()
    shutil.rmtree(fresh, ignore_errors=True)
