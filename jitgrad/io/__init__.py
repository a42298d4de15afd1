"""Saving and loading tensors: a safe (no pickle), mmap-able format that keeps storage
sharing. The format is specified in ``jitgrad/io/format.py``.

>>> import os, tempfile, jitgrad as jg
>>> path = os.path.join(tempfile.mkdtemp(), "t.jg")
>>> jg.save(jg.arange(3.0), path)
>>> jg.load(path).tolist()
[0.0, 1.0, 2.0]
"""

from .format import FORMAT_VERSION, FormatError
from .model_dir import ModelDirectoryError, load_model, read_manifest, save_model
from .serialize import load, save

__all__ = ["FORMAT_VERSION", "FormatError", "load", "save", "save_model", "load_model",
           "read_manifest", "ModelDirectoryError"]  # fmt: skip
