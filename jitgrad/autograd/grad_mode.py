"""Whether operations record the graph: ``no_grad`` and ``enable_grad``, per thread."""

from __future__ import annotations

import contextlib

from .._config import config


def is_grad_enabled() -> bool:
    return config.thread.grad_enabled


class set_grad_enabled(contextlib.ContextDecorator):
    """Turn graph recording on or off: called alone, until switched again; inside a
    ``with`` block or a decorated function, for that block or call only (PyTorch's rules).

    >>> import jitgrad as jg
    >>> x = jg.ones(2, requires_grad=True)
    >>> with jg.set_grad_enabled(False):
    ...     y = x * 2
    >>> y.requires_grad, (x * 2).requires_grad
    (False, True)
    >>> _ = jg.set_grad_enabled(False)
    >>> (x * 2).requires_grad
    False
    >>> _ = jg.set_grad_enabled(True)
    """

    # True while the switch a plain call made may still turn out to be a with block's (which
    # then restores the mode from before the call) or a decorator's (which undoes it).
    _switched = False

    def __init__(self, mode: bool):
        self._setup(mode)
        self._saved.append(config.thread.grad_enabled)
        config.thread.grad_enabled = self.mode
        self._switched = True

    def _setup(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._saved: list[bool] = []

    def __enter__(self):
        if self._switched:
            self._switched = False  # the mode to restore was saved by the call
        else:
            self._saved.append(config.thread.grad_enabled)
        config.thread.grad_enabled = self.mode
        return self

    def __exit__(self, *exc) -> None:
        config.thread.grad_enabled = self._saved.pop()

    def __call__(self, fn):
        if self._switched:  # decorating switches nothing until the function runs
            self._switched = False
            config.thread.grad_enabled = self._saved.pop()
        return super().__call__(fn)


class no_grad(set_grad_enabled):
    """Run without recording gradients (optimizer updates, evaluation)."""

    def __init__(self):
        self._setup(False)


class enable_grad(set_grad_enabled):
    """Record gradients again inside a ``no_grad`` region."""

    def __init__(self):
        self._setup(True)
