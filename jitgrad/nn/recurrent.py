"""Recurrent layers in PyTorch's spelling: ``LSTM`` and ``GRU`` (stacked, optionally
bidirectional) and their one-step ``LSTMCell`` and ``GRUCell``.

Parameters carry PyTorch's names (``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``,
``bias_hh_l0``, ``..._reverse`` for the backward direction), gate order (LSTM: input,
forget, cell, output; GRU: reset, update, new) and initialisation (every parameter
U(±1/√hidden_size)), so a torch state_dict loads. Each time step is composed of
differentiable ops; the input projection of a whole sequence is one matrix product.

>>> import jitgrad as jg
>>> lstm = jg.nn.LSTM(3, 5, num_layers=2, batch_first=True, generator=0)
>>> out, (h, c) = lstm(jg.ones((4, 7, 3)))
>>> out.shape, h.shape, c.shape
((4, 7, 5), (2, 4, 5), (2, 4, 5))
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .. import creation
from ..autograd.function import Function
from ..autograd.tensor import Tensor, as_tensor
from ..ops.linalg import linear
from ..ops.movement import concatenate, stack
from ..ops.unary import sigmoid, tanh
from . import functional as F
from . import init
from ._common import param_dtype
from .module import Module, Parameter


class _Unbind(Function):
    """The slices of ``x`` along ``axis``, one output each. The backward stacks their
    gradients in one write, where a view per slice would add up as many full-size
    gradients (quadratic in the sequence length)."""

    needs_input_values = False

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        lead = (slice(None),) * self.axis
        return tuple(x[(*lead, i)] for i in range(x.shape[self.axis]))

    def backward(self, *gys):
        return stack(gys, self.axis)


def _gates(g: Tensor, count: int) -> tuple:
    """The ``count`` gate blocks of the (N, count·H) pre-activations ``g``."""
    return _Unbind(1)(g.reshape(g.shape[0], count, -1))


def _lstm_step(gi: Tensor, state: tuple, w_hh, b_hh) -> tuple:
    """One LSTM step from the input's projection ``gi`` (N, 4H); state is (h, c)."""
    h, c = state
    i, f, cell, o = _gates(gi + linear(h, w_hh, b_hh), 4)
    c = sigmoid(f) * c + sigmoid(i) * tanh(cell)
    return sigmoid(o) * tanh(c), c


def _gru_step(gi: Tensor, state: tuple, w_hh, b_hh) -> tuple:
    """One GRU step from the input's projection ``gi`` (N, 3H); state is (h,)."""
    (h,) = state
    i_r, i_z, i_n = _gates(gi, 3)
    h_r, h_z, h_n = _gates(linear(h, w_hh, b_hh), 3)
    r, z = sigmoid(i_r + h_r), sigmoid(i_z + h_z)
    n = tanh(i_n + r * h_n)
    return ((1 - z) * n + z * h,)


def _uniform_init(module: Module, generator) -> None:
    """Every parameter of ``module`` from U(±1/√hidden_size), as PyTorch's."""
    rng = init.as_generator(generator)
    bound = 1 / math.sqrt(module.hidden_size)
    for p in module.parameters():
        init.uniform_(p, -bound, bound, generator=rng)


def _check_size(name: str, what: str, value) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__") or value <= 0:
        raise ValueError(f"{name}: {what} must be a positive integer, got {value!r}")
    return int(value)


class _RNNBase(Module):
    """The layers × directions of weights and the loop over time shared by LSTM and GRU."""

    _gates: int  # gate blocks stacked in each weight's rows
    _states: int  # tensors of the recurrent state: (h, c) or (h,)
    _step: Callable  # (input projection, state, weight_hh, bias_hh) -> state

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        *,
        dtype=None,
        generator=None,
    ):
        super().__init__()
        name = type(self).__name__
        self.input_size = _check_size(name, "input_size", input_size)
        self.hidden_size = _check_size(name, "hidden_size", hidden_size)
        self.num_layers = _check_size(name, "num_layers", num_layers)
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1], got {dropout}")
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.dropout, self.bidirectional = float(dropout), bool(bidirectional)
        d = param_dtype(dtype)
        rows, H = self._gates * self.hidden_size, self.hidden_size
        for layer in range(self.num_layers):
            for suffix in self._suffixes():
                width = self.input_size if layer == 0 else H * len(self._suffixes())
                shapes = {"weight_ih": (rows, width), "weight_hh": (rows, H)}
                if self.bias:
                    shapes |= {"bias_ih": (rows,), "bias_hh": (rows,)}
                for kind, shape in shapes.items():
                    self.register_parameter(
                        f"{kind}_l{layer}{suffix}", Parameter(creation.empty(shape, d))
                    )
        self.generator = init.as_generator(generator)
        self.reset_parameters(self.generator)

    def _suffixes(self) -> tuple[str, ...]:
        return ("", "_reverse") if self.bidirectional else ("",)

    def reset_parameters(self, generator=None) -> None:
        _uniform_init(self, generator)

    def _weights(self, layer: int, suffix: str) -> tuple:
        """(weight_ih, weight_hh, bias_ih, bias_hh) of one layer and direction."""
        kinds = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        return tuple(self._parameters.get(f"{k}_l{layer}{suffix}") for k in kinds)

    def forward(self, input, hx=None):  # noqa: A002  PyTorch's name
        name = type(self).__name__
        x = as_tensor(input)
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}: input of shape {x.shape} must be (L, N, {self.input_size}) (batch "
                f"first: (N, L, {self.input_size})) or unbatched (L, {self.input_size})"
            )
        batched = x.ndim == 3
        if not batched:
            x = x.reshape(x.shape[0], 1, x.shape[1])
        elif self.batch_first:
            x = x.swapaxes(0, 1)
        L, N = x.shape[:2]
        if L == 0:
            raise ValueError(f"{name}: input of shape {as_tensor(input).shape} has no time steps")
        states = self._initial_states(hx, batched, N, x.dtype)
        directions = self._suffixes()
        finals = []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                x = F.dropout(x, self.dropout, generator=self.generator)
            outputs = []
            for k, suffix in enumerate(directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, suffix)
                gi = _Unbind(0)(linear(x, w_ih, b_ih))
                state = tuple(s[layer * len(directions) + k] for s in states)
                steps = range(L - 1, -1, -1) if suffix == "_reverse" else range(L)
                hs = [None] * L
                for t in steps:
                    state = self._step(gi[t], state, w_hh, b_hh)
                    hs[t] = state[0]
                outputs.append(stack(hs, 0))
                finals.append(state)
            x = outputs[0] if len(outputs) == 1 else concatenate(outputs, -1)
        out_states = tuple(stack([f[i] for f in finals], 0) for i in range(self._states))
        if not batched:
            x = x.reshape(L, x.shape[-1])
            out_states = tuple(s.reshape(s.shape[0], s.shape[2]) for s in out_states)
        elif self.batch_first:
            x = x.swapaxes(0, 1)
        return x, out_states

    def _initial_states(self, hx, batched: bool, N: int, dtype) -> tuple:
        """The initial states as (num_layers·directions, N, H) tensors."""
        name = type(self).__name__
        rows = self.num_layers * len(self._suffixes())
        shape = (rows, N, self.hidden_size)
        if hx is None:
            return (creation.zeros(shape, dtype),) * self._states
        given = tuple(hx) if self._states > 1 else (hx,)
        if len(given) != self._states:
            raise ValueError(f"{name}: hx must be a pair (h_0, c_0), got {len(given)} tensors")
        expected = shape if batched else (rows, self.hidden_size)
        out = []
        for t in map(as_tensor, given):
            if t.shape != expected:
                raise ValueError(
                    f"{name}: initial state of shape {t.shape} must be {expected} (layers·"
                    "directions, batch, hidden_size)"
                )
            out.append(t if batched else t.reshape(shape))
        return tuple(out)

    def get_config(self) -> dict:
        return {
            "input_size": self.input_size,
            "hidden_size": self.hidden_size,
            "num_layers": self.num_layers,
            "bias": self.bias,
            "batch_first": self.batch_first,
            "dropout": self.dropout,
            "bidirectional": self.bidirectional,
            "dtype": self.weight_ih_l0.dtype.name,
        }

    def extra_repr(self) -> str:
        extras = [f"{self.input_size}, {self.hidden_size}"]
        for key, default in (("num_layers", 1), ("bias", True), ("batch_first", False)):
            if getattr(self, key) != default:
                extras.append(f"{key}={getattr(self, key)}")
        for key, default in (("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, key) != default:
                extras.append(f"{key}={getattr(self, key)}")
        return ", ".join(extras)


class LSTM(_RNNBase):
    """Long short-term memory over a sequence, as PyTorch's ``nn.LSTM``.

    ``forward(input, hx=None)`` takes (L, N, input_size) ((N, L, input_size) with
    ``batch_first``, or unbatched (L, input_size)) and an optional ``(h_0, c_0)``, each
    (num_layers·directions, N, hidden_size); returns ``(output, (h_n, c_n))`` with output
    (L, N, directions·hidden_size). ``dropout`` drops the outputs of every layer but the
    last while training.
    """

    _gates, _states = 4, 2
    _step = staticmethod(_lstm_step)


class GRU(_RNNBase):
    """Gated recurrent unit over a sequence, as PyTorch's ``nn.GRU``: ``forward(input,
    hx=None)`` returns ``(output, h_n)``, shapes as LSTM's."""

    _gates, _states = 3, 1
    _step = staticmethod(_gru_step)

    def forward(self, input, hx=None):  # noqa: A002  PyTorch's name
        out, (h,) = super().forward(input, hx)
        return out, h


class _CellBase(Module):
    """One recurrent step with weights ``weight_ih``, ``weight_hh``, ``bias_ih`` and
    ``bias_hh``, initialised as PyTorch's."""

    _gates: int
    _states: int
    _step: Callable

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, *, dtype=None, generator=None
    ):
        super().__init__()
        name = type(self).__name__
        self.input_size = _check_size(name, "input_size", input_size)
        self.hidden_size = _check_size(name, "hidden_size", hidden_size)
        self.bias = bool(bias)
        d = param_dtype(dtype)
        rows = self._gates * self.hidden_size
        self.weight_ih = Parameter(creation.empty((rows, self.input_size), d))
        self.weight_hh = Parameter(creation.empty((rows, self.hidden_size), d))
        if self.bias:
            self.bias_ih = Parameter(creation.empty((rows,), d))
            self.bias_hh = Parameter(creation.empty((rows,), d))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        _uniform_init(self, generator)

    def _run(self, input, hx) -> tuple:
        name = type(self).__name__
        x = as_tensor(input)
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}: input of shape {x.shape} must be (N, {self.input_size}) or "
                f"unbatched ({self.input_size},)"
            )
        batched = x.ndim == 2
        x = x if batched else x.reshape(1, -1)
        shape = (x.shape[0], self.hidden_size)
        if hx is None:
            state = (creation.zeros(shape, x.dtype),) * self._states
        else:
            given = tuple(hx) if self._states > 1 else (hx,)
            expected = shape if batched else (self.hidden_size,)
            if len(given) != self._states:
                raise ValueError(f"{name}: hx must be a pair (h, c), got {len(given)} tensors")
            for t in map(as_tensor, given):
                if t.shape != expected:
                    raise ValueError(
                        f"{name}: state of shape {t.shape} must be {expected} (batch, hidden_size)"
                    )
            state = tuple(as_tensor(t).reshape(shape) for t in given)
        gi = linear(x, self.weight_ih, self.bias_ih)
        state = self._step(gi, state, self.weight_hh, self.bias_hh)
        return state if batched else tuple(s.reshape(self.hidden_size) for s in state)

    def get_config(self) -> dict:
        return {
            "input_size": self.input_size,
            "hidden_size": self.hidden_size,
            "bias": self.bias,
            "dtype": self.weight_ih.dtype.name,
        }

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class LSTMCell(_CellBase):
    """One LSTM step: ``forward(input, hx=None)`` with ``hx = (h, c)`` returns ``(h', c')``.

    >>> import jitgrad as jg
    >>> h, c = jg.nn.LSTMCell(3, 4, generator=0)(jg.ones((2, 3)))
    >>> h.shape, c.shape
    ((2, 4), (2, 4))
    """

    _gates, _states = 4, 2
    _step = staticmethod(_lstm_step)

    def forward(self, input, hx=None):  # noqa: A002  PyTorch's name
        return self._run(input, hx)


class GRUCell(_CellBase):
    """One GRU step: ``forward(input, hx=None)`` returns ``h'``."""

    _gates, _states = 3, 1
    _step = staticmethod(_gru_step)

    def forward(self, input, hx=None):  # noqa: A002  PyTorch's name
        return self._run(input, hx)[0]


__all__ = ["LSTM", "GRU", "LSTMCell", "GRUCell"]
