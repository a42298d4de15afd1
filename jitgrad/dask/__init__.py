"""jitgrad on Dask: Dask arrays of jitgrad tensors, tensors sent between workers without
pickling, data-parallel training with one replica per worker, and workers that share
their compiled kernels.

Importing this module registers jitgrad with Dask (the chunk dispatch of ``dask.array``,
``sizeof``, the tokenizer, and ``distributed``'s serializers); ``setup(client)`` does it on
every worker of a cluster, present and future (``dask worker --preload jitgrad.dask``
does it at a worker's start), and shares the kernel cache. Needs ``pip install
'jitgrad[dask]'``.
"""

from __future__ import annotations

try:
    import dask.array  # noqa: F401
    import distributed  # noqa: F401
except ImportError as e:  # pragma: no cover (the dask extra installs both)
    raise ImportError(
        f"jitgrad.dask needs Dask's arrays and distributed scheduler ({e}): "
        "pip install 'jitgrad[dask]'"
    ) from e

from distributed.diagnostics.plugin import WorkerPlugin

from . import arrays, transport
from .arrays import from_file, from_tensor
from .kernels import share_kernels
from .parallel import DataParallel

arrays.register()
transport.register()


class _Registration(WorkerPlugin):
    """Imports this module on a worker (unpickling the plugin does): jitgrad's serializers
    and dispatch are registered there before any tensor arrives."""

    name = "jitgrad"


def setup(client) -> dict[str, int]:
    """Register jitgrad on every worker of ``client``'s cluster, present and future, and
    give each the kernel cache entries it lacks (``share_kernels``: the number written, by
    receiver)."""
    client.register_plugin(_Registration(), name=_Registration.name)
    return share_kernels(client)


__all__ = ["DataParallel", "from_file", "from_tensor", "setup", "share_kernels"]
