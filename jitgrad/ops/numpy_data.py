"""Functions numpy also defines for data that tensors cannot hold (strings, Python objects,
dates): given such an array, jitgrad's function of numpy's name gives numpy's result, so
a program that sorts or groups labels runs unchanged (``jg.array`` of strings is numpy's
own array already).

>>> import jitgrad as jg
>>> jg.unique(jg.array(["pear", "fig", "pear"])).tolist()
['fig', 'pear']
"""

from __future__ import annotations

import functools

import numpy as np


def _not_numbers(value) -> bool:
    if type(value) is np.ndarray:
        return value.dtype.kind not in "biufc"
    if isinstance(value, (list, tuple)) and value:
        leaf = value[0]
        while isinstance(leaf, (list, tuple)) and leaf:
            leaf = leaf[0]
        return isinstance(leaf, (str, bytes))
    return False


def also_for_numpy_data(fn):
    """Decorate ``fn``, a jitgrad function under a numpy name: a call whose first operand
    is data tensors cannot hold runs numpy's function of that name instead."""
    numpy_fn = getattr(np, fn.__name__)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if args and _not_numbers(args[0]):
            return numpy_fn(*args, **kwargs)
        return fn(*args, **kwargs)

    return wrapper
