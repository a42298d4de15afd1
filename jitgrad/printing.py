"""numpy's printing over tensors: print options (which ``repr(t)`` follows, as it formats
with numpy's ``array2string``) and numpy's string formatters on the tensors' values.

>>> import jitgrad as jg
>>> with jg.printoptions(precision=2):
...     repr(jg.tensor([1 / 3, 2.0]))
'tensor([0.33, 2.  ])'
"""

from __future__ import annotations

import inspect

import numpy as np

from .tensor import TensorBase

# numpy's own options: a tensor's repr reads them through numpy's array2string.
set_printoptions, get_printoptions, printoptions = (
    np.set_printoptions,
    np.get_printoptions,
    np.printoptions,
)


def _on_values(numpy_function, example: str, scalar: bool = False):
    """numpy's formatter ``numpy_function`` with tensors given as their values (as
    numbers, for ``scalar`` formatters); ``example`` is its doctest."""
    name = numpy_function.__name__

    def call(x, *args, **kwargs):
        if isinstance(x, TensorBase):
            x = TensorBase.numpy(x)
            if scalar:
                x = x[()] if x.ndim == 0 else x
        return numpy_function(x, *args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = __name__
    call.__signature__ = inspect.signature(numpy_function)
    call.__doc__ = (
        f"numpy's ``{name}`` of a tensor's values (or of any value numpy "
        f"takes), with numpy's arguments.\n\n    >>> import jitgrad as jg\n"
        f"    >>> {example}\n    "
    )
    return call


array2string = _on_values(
    np.array2string, "jg.array2string(jg.tensor([1.0, 2.5]), separator=',')\n    '[1. ,2.5]'"
)
array_repr = _on_values(np.array_repr, "jg.array_repr(jg.tensor([1, 2]))\n    'array([1, 2])'")
array_str = _on_values(np.array_str, "jg.array_str(jg.tensor([1, 2]))\n    '[1 2]'")
format_float_positional = _on_values(
    np.format_float_positional,
    "jg.format_float_positional(jg.float32(0.1))\n    '0.1'",
    scalar=True,
)
format_float_scientific = _on_values(
    np.format_float_scientific,
    "jg.format_float_scientific(jg.tensor(1234.5), precision=2)\n    '1.23e+03'",
    scalar=True,
)
base_repr = _on_values(np.base_repr, "jg.base_repr(jg.tensor(10), 3)\n    '101'", scalar=True)
binary_repr = _on_values(
    np.binary_repr, "jg.binary_repr(jg.tensor(-3), width=4)\n    '1101'", scalar=True
)

__all__ = [
    "set_printoptions",
    "get_printoptions",
    "printoptions",
    "array2string",
    "array_repr",
    "array_str",
    "format_float_positional",
    "format_float_scientific",
    "base_repr",
    "binary_repr",
]
