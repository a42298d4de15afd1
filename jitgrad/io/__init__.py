"""Saving and loading tensors: a safe (no pickle), mmap-able format that keeps storage
sharing, specified in ``jitgrad/io/format.py``; and numpy's formats (``.npy``, ``.npz``,
text, raw bytes) through numpy's own functions, in ``jitgrad/io/numpy_formats.py``.

>>> import os, tempfile, jitgrad as jg
>>> path = os.path.join(tempfile.mkdtemp(), "t.jg")
>>> jg.save(jg.arange(3.0), path)
>>> jg.load(path).tolist()
[0.0, 1.0, 2.0]
"""

from .format import FORMAT_VERSION, FormatError
from .model_dir import ModelDirectoryError, load_model, read_manifest, save_model
from .numpy_formats import *  # noqa: F403
from .numpy_formats import __all__ as _numpy_formats_all
from .serialize import load, save

__all__ = [
    "FORMAT_VERSION",
    "FormatError",
    "load",
    "save",
    "save_model",
    "load_model",
    "read_manifest",
    "ModelDirectoryError",
    *_numpy_formats_all,
]
