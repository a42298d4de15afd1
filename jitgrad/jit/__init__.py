"""The JIT: elementwise formulas lowered to generated numba kernels, whole steps traced.

Importing this package makes every elementwise op run its forward and its backward as one
generated kernel each, sums and extrema over axes run as reduction kernels
(``reduction.py``) and cross-entropy over class rows as row kernels (``rows.py``)
(``config.backend = "reference"`` switches back to the numpy evaluator, the oracle of the
tests). Kernels are cached in memory by structure and on disk under
``JITGRAD_CACHE_DIR``. ``jg.jit(fn)`` (this module is callable) traces a whole training
step once per signature and replays it (see ``trace.py``), with large buffers passed by
reference (``binding.py``).
"""

from __future__ import annotations

import logging
import sys
import types

from .._config import config
from ..backend import install
from ..recording import TracerWarning
from . import lowering  # noqa: F401
from .backend import KERNELS
from .cache import cache_dir, clear_cache
from .cache import stats as _stats
from .composite import function
from .trace import Jitted, jit

install(KERNELS)

if config.debug:  # JITGRAD_DEBUG: kernels generated, compiled, loaded; =2 with sources
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("jitgrad: %(message)s"))
    logging.getLogger("jitgrad.jit").addHandler(_handler)
    logging.getLogger("jitgrad.jit").setLevel(logging.DEBUG)


def stats() -> dict:
    """Counts of kernels generated, compiled, loaded from disk, and compile seconds."""
    return _stats.snapshot()


def kernels() -> list:
    """Every kernel this process has used (each with ``.source`` and ``.compile_seconds``)."""
    return list(_stats.kernels.values())


def explain(fn=None) -> str:
    """A report of the kernels behind a jitted function (or of this whole process)."""
    from .report import explain_jitted, explain_process

    fn = getattr(fn, "__func__", fn)  # (a jitted method, bound to its instance)
    return explain_jitted(fn) if isinstance(fn, Jitted) else explain_process()


class _CallableModule(types.ModuleType):
    """``jg.jit(fn)`` decorates; ``jg.jit.explain()`` and friends are module functions."""

    def __call__(self, fn=None, **options):
        return jit(fn, **options)


sys.modules[__name__].__class__ = _CallableModule

__all__ = [
    "Jitted",
    "TracerWarning",
    "cache_dir",
    "clear_cache",
    "explain",
    "function",
    "jit",
    "kernels",
    "stats",
]
