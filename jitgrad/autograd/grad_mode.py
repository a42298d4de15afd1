"""Whether operations record the graph: ``no_grad`` and ``enable_grad``, per thread."""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys

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

    def _recreate_cm(self):
        # Each call of a decorated function runs in a context of its own, as PyTorch's: on
        # one shared stack of saved modes, calls from several threads would pop each
        # other's, and a thread would leave with another thread's mode.
        context = object.__new__(type(self))
        context._setup(self.mode)
        return context

    def __call__(self, fn):
        if self._switched:  # decorating switches nothing until the function runs
            self._switched = False
            config.thread.grad_enabled = self._saved.pop()
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)
        return super().__call__(fn)

    def _wrap_generator(self, fn):
        """A generator function whose body runs in this mode each time it resumes, and the
        caller's code between its yields in the caller's mode (PyTorch's rule)."""

        @functools.wraps(fn)
        def generator(*args, **kwargs):
            gen = fn(*args, **kwargs)
            mode = self._recreate_cm()
            try:
                with mode:
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with mode:
                            gen.close()
                        raise
                    except BaseException:
                        with mode:
                            response = gen.throw(*sys.exc_info())
                    else:
                        with mode:
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator


class _NoArgumentMode(set_grad_enabled):
    """A mode of its own (``no_grad``, ``enable_grad``): used with parentheses or without
    (``@jg.no_grad`` decorates directly, as PyTorch's)."""

    _mode: bool

    def __new__(cls, fn=None):
        if fn is None:
            return super().__new__(cls)
        if not callable(fn):
            raise TypeError(
                f"{cls.__name__}() takes no arguments; use it as @{cls.__name__} "
                f"or @{cls.__name__}() or in a with block"
            )
        return cls()(fn)

    def __init__(self, fn=None):
        self._setup(self._mode)


class no_grad(_NoArgumentMode):
    """Run without recording gradients (optimizer updates, evaluation)."""

    _mode = False


class enable_grad(_NoArgumentMode):
    """Record gradients again inside a ``no_grad`` region."""

    _mode = True


class inference_mode(set_grad_enabled):
    """PyTorch's ``inference_mode``: run without recording gradients (``no_grad``; jitgrad
    has no separate inference tensors). ``mode=False`` leaves grad mode as it is."""

    def __new__(cls, mode=True):
        if callable(mode):  # (``@jg.inference_mode`` without parentheses)
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self._setup(is_grad_enabled() and not mode)
