"""The optimizer base class, and the one place where an update formula meets storage.

Each optimizer writes its per-parameter update once, as a pure elementwise formula over
the parameter, its gradient, its state tensors and scalar hyper-parameters, against a math
namespace ``m`` (like the op formulas of ``ops/elementwise.py``)::

    def sgd_update(m, param, grad, momentum_buffer, *, lr, ..., nesterov, first_step):
        ...
        return new_param, new_momentum_buffer

Tensors come positionally, hyper-parameters by keyword. Keyword values that are Python
``bool`` are *flags*: they choose the formula's structure (a compiled kernel is specialised
on them); every other keyword is a number that may change from step to step (``lr`` under
a scheduler, the step count). The formula returns one value per tensor it updates, in a
fixed order, and never writes anything itself.

``apply_update`` evaluates a formula with the numpy reference namespace
(``jitgrad.ops.reference``) on the tensors' numpy views and copies each result into its
tensor's storage (``TensorBase.copy_``, which bumps the storage version, so autograd still
detects a graph that saw the old values). The JIT lowers the same formula to one fused
kernel per parameter; this function is the seam where it plugs in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from .. import backend, dtypes
from .._config import config
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..creation import zeros_like
from ..ops import reference
from ..recording import run
from ..tensor import TensorBase, wrap_numpy


def apply_update(
    formula: Callable,
    tensors: Sequence[Tensor | None],
    outputs: Sequence[Tensor | None],
    launches: dict | None = None,
    **hyper,
):
    """Evaluate ``formula(reference, *tensors, **hyper)`` on numpy views and write its
    i-th result into ``outputs[i]`` (None: nothing to write). Returns the kernel launch
    that did it, or None when the numpy reference evaluator did.

    float16 tensors are computed in float32 and rounded once, as the kernels do.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p, g = jg.ones(3), jg.full((3,), 2.0)
    >>> _ = apply_update(lambda m, p, g, *, lr: (p - lr * g,), [p, g], [p], lr=0.25)
    >>> p.tolist()
    [0.5, 0.5, 0.5]
    """
    kernels = backend.kernels()
    if kernels is not None:
        launch = kernels.update(formula, tensors, outputs, hyper, launches)
        if launch is not None:
            return launch  # one fused kernel, writing parameter and state in place
    arrays = [None if t is None else _compute_array(t) for t in tensors]
    with np.errstate(all="ignore"):  # inf/nan propagate as in the kernels, silently
        results = formula(reference, *arrays, **hyper)
    if len(results) != len(outputs):
        raise RuntimeError(
            f"{getattr(formula, '__name__', formula)} returned {len(results)} values for "
            f"{len(outputs)} outputs"
        )
    for out, value in zip(outputs, results, strict=True):
        if out is None:
            continue
        value = np.asarray(value)
        if value.dtype != out.dtype.numpy:
            value = value.astype(out.dtype.numpy)
        TensorBase.copy_(out, wrap_numpy(value, TensorBase))


def _compute_array(t: Tensor) -> np.ndarray:
    a = t.numpy()
    return a.astype(np.float32) if t.dtype is dtypes.float16 else a


def scalars(group: dict, names: Iterable[str]) -> dict:
    """The group's numeric hyper-parameters as Python floats: a numpy scalar would be a
    strongly typed operand (NEP 50) and silently promote float32 parameters."""
    return {name: float(group[name]) for name in names}


_REQUIRED = object()
# Parameters are numbered by their order in state_dict, and a set's order changes from run
# to run: a checkpoint would restore each parameter's state into another one.
_UNORDERED = (
    "optimizer parameters must be an ordered collection (a list, a tuple, "
    "model.parameters()), not a set: the order of a set changes between runs"
)
_MAX_REPLAYED = 16  # traced steps whose optimizer work lists are remembered (see _apply)


class _Replayed:
    """A work list a jitted step replays, and the launches its last replay prepared: the
    token they were prepared under and the tensors they write (versions to advance)."""

    __slots__ = ("work", "token", "launches", "calls", "written")

    def __init__(self, work, token=None, launches=(), written=()):
        self.work, self.token, self.launches, self.written = work, token, launches, written
        self.calls = [launch.direct() for launch in launches]


class Optimizer:
    """Base class: parameter groups (each with its own options), per-parameter state,
    ``zero_grad``, ``state_dict`` / ``load_state_dict``. Subclasses define ``step``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> w, b = jg.nn.Parameter(jg.ones(2)), jg.nn.Parameter(jg.zeros(1))
    >>> opt = optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.5]
    """

    required = _REQUIRED  # a default that every group must set itself
    _state_shaped_like_params = True  # load_state_dict refuses state of another shape

    def __init__(self, params, defaults: dict):
        self.defaults = dict(defaults)
        self.state: dict = {}  # parameter -> dict of its state (keyed by identity)
        self._launches: dict = {}  # prepared update kernels, reused while arrays stay
        # id(work list) -> _Replayed, for the lists a jitted step replays
        self._replays: dict = {}
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params must be an iterable of tensors or of dicts, got a single tensor; "
                "pass [tensor] or model.parameters()"
            )
        if isinstance(params, (set, frozenset)):
            raise TypeError(_UNORDERED)
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        """Add a group of parameters with options overriding the defaults."""
        if not isinstance(group, dict):
            raise TypeError(f"a parameter group is a dict, got {type(group).__name__}")
        params = group["params"]
        if isinstance(params, (set, frozenset)):
            raise TypeError(_UNORDERED)
        params = [params] if isinstance(params, Tensor) else list(params)
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize tensors, got {type(p).__name__} "
                    f"at position {i} of group {len(self.param_groups)}"
                )
            if not p.is_leaf:
                raise ValueError(
                    f"can't optimize a non-leaf tensor (position {i} of group "
                    f"{len(self.param_groups)}): optimize the leaf it came from"
                )
            if not p.dtype.is_floating_point:
                raise TypeError(f"can't optimize a {p.dtype.name} tensor (position {i})")
        if len({id(p) for p in params}) != len(params):
            raise ValueError("a parameter group contains the same parameter twice")
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        full = _ParamGroup({**self.defaults, **group, "params": params})
        for name, value in full.items():
            if value is _REQUIRED:
                raise ValueError(
                    f"parameter group {len(self.param_groups)} didn't specify '{name}', a "
                    "required option of this optimizer"
                )
        self._check_group(full)
        self.param_groups.append(full)
        config.guard_epoch += 1  # (the groups' count is part of a jitted step's guard)

    def _check_group(self, group: dict) -> None:
        """Validate a group's options (subclasses name their bad values)."""
        self._check_numbers(group, ("lr",))
        if group["lr"] < 0:
            raise ValueError(f"invalid learning rate: {group['lr']}")

    def _check_numbers(self, group: dict, names: Iterable[str]) -> None:
        """Refuse options that are not numbers before they are compared with bounds (which
        would fail with an unhelpful message) or passed to a kernel."""
        for name in names:
            value = group[name]
            if not hasattr(type(value), "__float__"):
                raise TypeError(
                    f"{type(self).__name__}: {name} must be a number, got "
                    f"{type(value).__name__} {value!r}"
                )

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every parameter (None, or zeros in place)."""
        if config.thread.tape is not None:  # a replay clears the parameters traced
            config.thread.tape.guard(self, _param_lists)
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None  # even when already None: a traced step records the reset
                elif p.grad is not None:
                    TensorBase.fill_(p.grad, 0)

    def step(self, closure=None):
        """Update every parameter that has a gradient; ``closure`` (optional) recomputes
        and returns the loss first."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        work = [
            (group, p, p.grad, self.state.setdefault(p, {}))
            for group in self.param_groups
            for p in group["params"]
            if p.grad is not None
        ]
        # One recorded step: a replay of a jitted training step reruns the whole update,
        # reading the learning rate and step counts as they are then, with the gradients
        # the replay computed.
        if config.thread.tape is not None:  # replays will pass this list again
            config.thread.tape.guard(self, _param_lists)
            if len(self._replays) >= _MAX_REPLAYED:  # plans retraced away: forget the oldest
                del self._replays[next(iter(self._replays))]
            self._replays[id(work)] = _Replayed(work)
        run(self._apply, work)
        return loss

    def _apply(self, work) -> None:
        # A replayed jitted step passes the same work list every time. While nothing the
        # updates depend on has changed (``_replay_token``), the kernel launches the last
        # call prepared run again directly: no per-parameter Python.
        replayed = self._replays.get(id(work))
        token = self._replay_token(work)
        if replayed is not None and replayed.launches and token == replayed.token:
            self._advance(work, replayed.launches)
            for compiled, args in replayed.calls:
                compiled(*args)
            for tensor in replayed.written:
                tensor._storage._written()
            return
        with no_grad():
            launches = [self._update(group, p, grad, state) for group, p, grad, state in work]
        if replayed is not None and token is not None and all(u is not None for u in launches):
            for launch in launches:
                launch.traced = True  # the plan's now: eager steps must not repoint it
            written = [o for launch in launches for o in launch.updated if o is not None]
            self._replays[id(work)] = _Replayed(work, _frozen(token), launches, written)

    # What prepared update launches depend on beyond their arrays and ``_advance``: these
    # group options, and per parameter the state entry its first step creates (that step's
    # kernels differ from the next one's).
    _token_options: tuple[str, ...] = ()
    _token_state: str = ""

    def _replay_token(self, work):
        """The token prepared launches are valid for, or None to run ``_update`` for every
        parameter."""
        if not self._token_options:
            return None
        for group, _, _, state in work:
            if self._token_state not in state and self._keeps_state(group):
                return None
        return [tuple(map(group.__getitem__, self._token_options)) for group in self.param_groups]

    def _keeps_state(self, group: dict) -> bool:
        """Whether a parameter of ``group`` gains ``_token_state`` at its first step."""
        return True

    def _advance(self, work, launches) -> None:
        """Before prepared launches rerun: move per-step state on (a step count) and put
        the numbers that follow from it into the launches."""

    def _update(self, group: dict, param: Tensor, grad: Tensor, state: dict):
        """Update one parameter; return ``apply_update``'s result."""
        raise NotImplementedError(f"{type(self).__name__} does not define _update()")

    @staticmethod
    def _zeros_state(state: dict, name: str, param: Tensor) -> Tensor:
        """``state[name]``, created as zeros shaped and typed like ``param``."""
        if name not in state:
            state[name] = zeros_like(param.detach())
        return state[name]

    # -- state_dict ----------------------------------------------------------------------

    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``:
        parameters are numbered across groups in order, as in PyTorch. Tensors are shared,
        not copied (numbers such as Adam's step count are): ``jg.save`` it to checkpoint, or
        ``copy.deepcopy`` it to keep a snapshot in memory, since later steps change the
        shared tensors.

        >>> import jitgrad as jg
        >>> from jitgrad import optim
        >>> p = jg.nn.Parameter(jg.ones(2))
        >>> opt = optim.SGD([p], lr=0.1, momentum=0.9)
        >>> p.grad = jg.ones(2); opt.step()
        >>> sd = opt.state_dict()
        >>> sorted(sd["state"][0]), sd["param_groups"][0]["params"]
        (['momentum_buffer'], [0])
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p in self.state and self.state[p]:
                    state[index[id(p)]] = dict(self.state[p])
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore state and hyper-parameters saved by ``state_dict`` into an optimizer
        over the same parameters (same group sizes). State tensors are copied and cast
        to each parameter's dtype."""
        if set(state_dict) != {"state", "param_groups"}:
            raise ValueError(
                "an optimizer state_dict has exactly the keys 'state' and 'param_groups', "
                f"got {sorted(state_dict)}"
            )
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has {len(saved)} parameter groups, this "
                f"optimizer has {len(self.param_groups)}"
            )
        by_index: dict[int, Tensor] = {}
        for k, (old, new) in enumerate(zip(saved, self.param_groups, strict=True)):
            if len(old["params"]) != len(new["params"]):
                raise ValueError(
                    f"parameter group {k} of the loaded state dict has {len(old['params'])} "
                    f"parameters, this optimizer's has {len(new['params'])}"
                )
            for i, p in zip(old["params"], new["params"], strict=True):
                by_index[i] = p
        # Every parameter's state is checked (and copied) before any is written, so that a
        # bad entry leaves this optimizer as it was.
        loaded: dict[Tensor, dict] = {}
        for i, values in state_dict["state"].items():
            if i not in by_index:
                raise ValueError(
                    f"loaded optimizer state refers to parameter {i}, which no group lists"
                )
            p = by_index[i]
            restored = {}
            for name, value in values.items():
                if isinstance(value, TensorBase):
                    if (
                        self._state_shaped_like_params
                        and value.dtype.is_floating_point
                        and value.shape != p.shape
                    ):
                        raise ValueError(
                            f"state '{name}' of parameter {i} has shape "
                            f"{value.shape}, the parameter {p.shape}"
                        )
                    cast = p.dtype if value.dtype.is_floating_point else value.dtype
                    value = as_tensor(TensorBase.astype(value, cast))  # a copy
                restored[name] = value
            loaded[p] = restored
        self.state.update(loaded)
        for old, new in zip(saved, self.param_groups, strict=True):
            for key, value in old.items():
                if key != "params":
                    new[key] = tuple(value) if isinstance(value, list) else value
        # Jitted steps replay work lists holding the state they were traced with: point
        # them at the restored state, and drop the launches prepared over the old one.
        self._launches.clear()
        for key, replayed in list(self._replays.items()):
            work = replayed.work
            work[:] = [(g, p, grad, self.state.setdefault(p, {})) for g, p, grad, _ in work]
            self._replays[key] = _Replayed(work)

    def __getstate__(self) -> dict:
        # copy.deepcopy and pickle. The prepared launches and the replayed work lists are
        # caches over this optimizer's own arrays (launches hold compiled kernels, which do
        # not pickle): a copy prepares its own on its first step.
        state = dict(self.__dict__)
        state["_launches"], state["_replays"] = {}, {}
        return state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for k, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {k}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"


class CountedOptimizer(Optimizer):
    """An optimizer whose update takes numbers that follow from a per-parameter step count
    (bias corrections, a decayed rate). ``_count(group, state)`` moves the count (and any
    running product) on and returns those numbers, worked out in double precision as
    PyTorch does: a jitted step's replay only sets them into the prepared launches.

    Subclasses define ``_formula``, ``_tensors(group, param, grad, state)`` (the formula's
    tensors and the outputs it writes), ``_count`` and the group options a kernel is
    specialised on (``_token_options``).
    """

    _token_state = "step"
    _formula: Callable

    def _count(self, group: dict, state: dict) -> dict:
        """Advance ``state["step"]`` (and what follows it); the step's numbers."""
        raise NotImplementedError(f"{type(self).__name__} does not define _count()")

    def _tensors(self, group: dict, param: Tensor, grad: Tensor, state: dict):
        """(tensors, outputs, hyper) of one parameter's update, beside ``_count``'s numbers."""
        raise NotImplementedError(f"{type(self).__name__} does not define _tensors()")

    def _advance(self, work, launches) -> None:
        for (group, *_, state), launch in zip(work, launches):
            for name, value in self._count(group, state).items():
                launch.set_number(name, value)

    def _update(self, group: dict, param: Tensor, grad: Tensor, state: dict):
        state.setdefault("step", 0)
        numbers = self._count(group, state)
        tensors, outputs, hyper = self._tensors(group, param, grad, state)
        return apply_update(
            type(self)._formula, tensors, outputs, self._launches, **hyper, **numbers
        )


def _frozen(token):
    """``token`` with each tensor in it (a learning rate given as a 0-d tensor) replaced by
    its value: a later token holding the same tensor, changed in place since, compares
    unequal, as its value does."""
    if isinstance(token, (list, tuple)):
        return type(token)(_frozen(v) for v in token)
    return float(token) if isinstance(token, TensorBase) else token


def _param_lists(optimizer: Optimizer) -> tuple:
    """What a jitted step's recorded work assumes of the parameter groups: which
    parameters each lists, known by its list's version (``_ParamList``), so that
    ``add_param_group``, a parameter appended, removed or replaced, or a new list select
    another plan. O(groups), and only worked out again after a change."""
    return tuple(group["params"].version for group in optimizer.param_groups)


class _ParamList(list):
    """A parameter group's ``"params"``: a list that tells jitted steps when it changes.

    Users change it in place, as in PyTorch (``opt.param_groups[0]["params"].append(p)``
    to train a layer unfrozen mid-run). A jitted step replays the parameters it was
    traced with, so every change takes a new ``version`` (the moved-on
    ``config.guard_epoch``, never reused) and moves the epoch on, which is what makes a
    jitted call look at its guards again: replays themselves pay nothing for it, where
    comparing the parameters with the traced ones would cost O(parameters) per call.
    Reading, iterating and indexing are list's own.

    >>> import jitgrad as jg
    >>> params = _ParamList([jg.ones(1)])
    >>> before = params.version
    >>> params.append(jg.zeros(1))
    >>> params.version > before
    True
    """

    __slots__ = ("version",)

    def __init__(self, params=()):
        super().__init__([params] if isinstance(params, Tensor) else params)
        self._changed()

    def _changed(self) -> None:
        config.guard_epoch += 1
        self.version = config.guard_epoch

    def __reduce__(self):
        # A copy (copy, deepcopy, pickle) is a new list, with a version of its own: two
        # lists sharing one could be told apart by no guard.
        return type(self), (list(self),)


def _changing(name: str):
    change = getattr(list, name)

    @functools.wraps(change)
    def changed(self, *args):
        result = change(self, *args)
        self._changed()
        return result

    return changed


for _name in (
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "clear",
    "sort",
    "reverse",
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
):
    setattr(_ParamList, _name, _changing(_name))


class _ParamGroup(dict):
    """A parameter group: a dict whose ``"params"`` is always a ``_ParamList``, so that
    a list assigned in place of the old one (``group["params"] = [...]``) is seen by
    jitted steps too. Options are read live by every replay (``_replay_token``) and are
    stored as in any dict."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "params" in self:
            self["params"] = dict.__getitem__(self, "params")

    def __setitem__(self, key, value) -> None:
        if key == "params":
            if isinstance(value, _ParamList):
                config.guard_epoch += 1  # another list, which keeps its own version
            else:
                value = _ParamList(value)
        super().__setitem__(key, value)

    def update(self, *args, **kwargs) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other):
        self.update(other)
        return self
