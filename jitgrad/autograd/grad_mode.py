"""Whether operations record the graph: ``no_grad`` and ``enable_grad``, per thread."""

from __future__ import annotations

import contextlib

from .._config import config


def is_grad_enabled() -> bool:
    return config.thread.grad_enabled


class set_grad_enabled(contextlib.ContextDecorator):
    """Turn graph recording on or off inside a ``with`` block or a decorated function.

    >>> import jitgrad as jg
    >>> x = jg.ones(2, requires_grad=True)
    >>> with jg.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._saved: list[bool] = []

    def __enter__(self):
        self._saved.append(config.thread.grad_enabled)
        config.thread.grad_enabled = self.mode
        return self

    def __exit__(self, *exc) -> None:
        config.thread.grad_enabled = self._saved.pop()


class no_grad(set_grad_enabled):
    """Run without recording gradients (optimizer updates, evaluation)."""

    def __init__(self):
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Record gradients again inside a ``no_grad`` region."""

    def __init__(self):
        super().__init__(True)
