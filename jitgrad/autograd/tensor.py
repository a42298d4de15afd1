"""Tensor: a TensorBase that can require gradients and remember its creator."""

from __future__ import annotations

import copy
import numbers
import weakref
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from .._config import config
from ..tensor import TensorBase, scalar_tensor, wrap_numpy
from .grad_mode import is_grad_enabled

if TYPE_CHECKING:
    from .function import Function


class Tensor(TensorBase):
    """jitgrad's tensor: numpy-like data (``TensorBase``) plus PyTorch's autograd state.

    >>> import jitgrad as jg
    >>> x = jg.tensor([2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.tolist()
    [4.0, 6.0]
    """

    __slots__ = ("_requires_grad", "_grad", "_grad_fn", "_output_nr", "_accumulator")

    def __init__(self, storage, shape, strides=None, offset: int = 0, requires_grad=False):
        super().__init__(storage, shape, strides, offset)
        self._init_autograd()
        self.requires_grad = requires_grad

    @classmethod
    def _make(cls, storage, shape, strides, offset):
        # TensorBase._make's and _init_autograd's work in one frame: every op result is made
        # here, and eager overhead is per op.
        t = cls.__new__(cls)
        t._storage, t._shape, t._strides, t._offset = storage, tuple(shape), tuple(strides), offset
        t._requires_grad, t._grad, t._grad_fn, t._output_nr, t._accumulator = (
            False,
            None,
            None,
            0,
            None,
        )
        return t

    def _init_autograd(self) -> None:
        self._requires_grad = False
        self._grad = None
        self._grad_fn = None
        self._output_nr = 0
        self._accumulator = None

    # -- the graph -----------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        flag = bool(flag)
        if self._grad_fn is not None and not flag:
            raise RuntimeError(
                "requires_grad can only be turned off on leaf tensors; use detach() to get "
                "a tensor without history"
            )
        if flag and self.dtype.kind not in "fc":
            raise RuntimeError(
                "only floating point and complex tensors can require gradients, not "
                f"{self.dtype.name}"
            )
        if flag != self._requires_grad:
            config.guard_epoch += 1
        self._requires_grad = flag

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (leaves, and tensors that ``retain_grad()``)."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(
                    f"assigned grad must be a tensor or None, not {type(value).__name__}"
                )
            if value._shape != self._shape or value.dtype is not self.dtype:
                raise RuntimeError(
                    f"assigned grad has shape {value.shape} and dtype {value.dtype.name}; the "
                    f"tensor has shape {self.shape} and dtype {self.dtype.name}: they must match"
                )
        self._set_grad(value)

    def _set_grad(self, value: Tensor | None) -> None:
        tape = config.thread.tape
        if tape is not None:  # a jitted step that resets gradients itself
            tape.grad_assigned(self)
        self._grad = value

    @property
    def grad_fn(self) -> Function | None:
        """The function that made this tensor, or None for leaves."""
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    def _set_creator(self, fn: Function, output_nr: int) -> None:
        self._requires_grad = True
        self._grad_fn = fn
        self._output_nr = output_nr

    def _edge(self):
        """Where a gradient for this tensor goes: its creator's output slot, the leaf's
        accumulator, or None when it needs none."""
        if self._grad_fn is not None:
            return self._grad_fn, self._output_nr
        if not self._requires_grad:
            return None
        if self._accumulator is None:
            from .function import AccumulateGrad  # (Function builds on this module)

            self._accumulator = AccumulateGrad(self)
        return self._accumulator, 0

    def detach(self) -> Tensor:
        """The same data (shared storage) without history."""
        return Tensor._make(self._storage, self._shape, self._strides, self._offset)

    def cleargrad(self) -> None:
        self.grad = None

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if self._grad_fn is None:
            return
        hooks = self._grad_fn._hooks_for(self._output_nr)
        if not any(isinstance(h, _RetainGrad) for h in hooks):  # idempotent, as PyTorch
            hooks.append(_RetainGrad(self))

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it."""
        edge = self._edge()
        if edge is None:
            raise RuntimeError("cannot register a hook on a tensor that does not require grad")
        hooks = edge[0]._hooks_for(edge[1])
        hooks.append(hook)
        return HookHandle(hooks, hook)

    def backward(self, gradient=None, retain_graph: bool = False, create_graph: bool = False):
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

        A tensor of one element needs no ``gradient``; any other needs one of its shape.
        """
        from .engine import root_gradient, run_backward  # (the engine builds on this module)

        gradient = root_gradient(self, gradient)
        run_backward(
            [self], [gradient], retain_graph=retain_graph or create_graph, create_graph=create_graph
        )

    # -- in-place writes -----------------------------------------------------------------

    def _check_inplace(self, others_require_grad: bool = False) -> bool:
        """Raise for a leaf that requires grad or a view of one (as PyTorch); True when the
        write must be recorded: recording is on and this tensor or the written value has
        history."""
        if not is_grad_enabled():
            return False
        if self._requires_grad and self._grad_fn is None:
            raise RuntimeError(
                "a leaf tensor that requires grad is used in an in-place operation; "
                "wrap the update in jg.no_grad() or operate on a clone"
            )
        root = self  # a view of a leaf is no different: the leaf's gradient would miss it
        while root._grad_fn is not None and (base := root._grad_fn.base_of(root)) is not None:
            root = base
        if root is not self and root._requires_grad and root._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf tensor that requires grad is used in an in-place "
                "operation; wrap the update in jg.no_grad() or operate on a clone"
            )
        return self._requires_grad or others_require_grad

    def _rebase(self, result: Tensor) -> Tensor:
        """Make this tensor hold ``result`` (data and history) after an in-place op.

        Functions that used this tensor before keep their captured edges, so gradients
        still reach the old history through them.
        """
        TensorBase.copy_(self, result.detach())
        if result._grad_fn is not None:
            self._set_creator(result._grad_fn, result._output_nr)
        return self

    # -- pickling and copying ------------------------------------------------------------

    def __getstate__(self):
        """The data and ``requires_grad``, as PyTorch pickles them: never the graph (a
        non-leaf loads as a leaf, requiring grad if it did) and never ``.grad``."""
        return (
            *TensorBase.__getstate__(self),
            self._requires_grad,
            getattr(self, "__dict__", None),
        )

    def __setstate__(self, state) -> None:
        if len(state) == 2:  # (None, slots): how earlier versions pickled leaves
            for name, value in state[1].items():
                object.__setattr__(self, name, value)
            return
        TensorBase.__setstate__(self, state)
        self._init_autograd()
        self._requires_grad = state[4]
        if state[5]:
            self.__dict__.update(state[5])

    def __deepcopy__(self, memo) -> Tensor:
        """A leaf's copy, ``.grad`` included, as PyTorch's; a copied graph would
        differentiate into the original's leaves, so non-leaves refuse."""
        if self._grad_fn is not None:
            raise RuntimeError(
                "only tensors created explicitly by the user (graph leaves) support deepcopy; "
                f"this one was made by {type(self._grad_fn).__name__}: deepcopy its detach() "
                "to copy the data without the graph"
            )
        new = type(self).__new__(type(self))
        memo[id(self)] = new  # before the state, which may lead back here
        new.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        return new

    def __repr__(self) -> str:
        text = super().__repr__()
        if self._grad_fn is not None:
            return f"{text[:-1]}, grad_fn=<{type(self._grad_fn).__name__}>)"
        if self._requires_grad:
            return f"{text[:-1]}, requires_grad=True)"
        return text


class _RetainGrad:
    """The hook ``retain_grad`` adds: it accumulates the gradient into ``.grad``. One per
    graph output slot, however often ``retain_grad`` is called."""

    def __init__(self, tensor):
        self.tensor = weakref.ref(tensor)

    def __call__(self, g) -> None:
        t = self.tensor()
        if t is not None:
            t._set_grad(g if t.grad is None else t.grad + g)


class HookHandle:
    """What registering a hook returns: ``remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def uninitialised(shape, dtype) -> Tensor:
    """A new contiguous tensor whose elements are yet to be written: every op's result."""
    t = Tensor._uninitialised(shape, dtype)
    if config.tracing:
        tape = config.thread.tape
        if tape is not None:
            tape.made(t._storage)
    return t


def filled(shape, dtype, value) -> Tensor:
    """A new contiguous tensor of ``value`` (one fill: a traced step records one write)."""
    return uninitialised(shape, dtype).fill_(value)


def zeros(shape, dtype) -> Tensor:
    return filled(shape, dtype, 0)


def ones_like_data(t: TensorBase) -> Tensor:
    return filled(t.shape, t.dtype, 1)


def as_tensor(value, dtype=None) -> Tensor:
    """A ``Tensor`` of ``value`` without copying when possible: tensors pass through, raw
    data and numpy arrays are wrapped, Python scalars become 0-d tensors."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, TensorBase):
        return Tensor._make(value._storage, value._shape, value._strides, value._offset)
    if isinstance(value, np.ndarray):
        return wrap_numpy(value, Tensor)
    if isinstance(value, (numbers.Number, np.generic)):
        return scalar_tensor(value, dtypes.result_type(value) if dtype is None else dtype, Tensor)
    return wrap_numpy(np.asarray(value), Tensor)


__all__ = ["Tensor", "as_tensor"]
