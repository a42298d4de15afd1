"""Serving: TensorFlow Serving's model of loaders, versions and a REST API for jitgrad models.

- ``loader.py``: the ``Loader`` contract and ``ModelLoader`` (maps, builds, warms a model
  directory); ``predictor.py``: the thread-safe servable; ``signature.py``: its inputs
  and outputs.
- ``state.py``, ``policy.py``, ``resources.py``, ``manager.py``: versions moving one way
  through their states under a version policy and a resource budget, with
  reference-counted handles and labels.
- ``source.py``: the file-system source; ``rest.py``: TF Serving's REST API as plain
  functions; ``asgi.py``: the ASGI front end and its limits; ``metrics.py``: Prometheus
  metrics; ``app.py``: all of it for one model; ``__main__.py``: the command line;
  ``workers.py``: its worker processes; ``loadgen.py``: a loopback load generator.
"""

from .app import ServingApp
from .asgi import Limits, create_app
from .loader import (
    Loader,
    Metadata,
    ModelLoader,
    ResourceAllocation,
    ServableId,
    VersionLoadError,
)
from .manager import Manager, ServableHandle, ServableNotFound, ServableUnavailable
from .policy import availability_preserving, resource_preserving
from .predictor import Predictor
from .signature import Signature, SignatureError
from .source import AllVersions, FileSystemSource, LatestVersions, SpecificVersions
from .state import ServableState, State

__all__ = [
    "AllVersions",
    "FileSystemSource",
    "LatestVersions",
    "Limits",
    "Loader",
    "Manager",
    "Metadata",
    "ModelLoader",
    "Predictor",
    "ResourceAllocation",
    "ServableHandle",
    "ServableId",
    "ServableNotFound",
    "ServableState",
    "ServableUnavailable",
    "ServingApp",
    "Signature",
    "SignatureError",
    "SpecificVersions",
    "State",
    "VersionLoadError",
    "availability_preserving",
    "create_app",
    "resource_preserving",
]
