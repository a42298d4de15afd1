"""Containers: Sequential (a chain), ModuleList and ModuleDict (submodules by position or
by name), ParameterList and ParameterDict (parameters by position or by name).

Positional children are named ``"0"``, ``"1"``, ..., so state_dict keys read
``0.weight`` as in PyTorch; named ones by their keys (``encoder.weight``). Edits that move
children (``del``, ``insert``, ``pop``) name them 0..n-1 again afterwards, as PyTorch does,
so ``net[i]`` and the key ``f"{i}.weight"`` keep meaning the same layer.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from .. import creation
from .._config import config
from ..tensor import TensorBase
from .module import Module, Parameter
from .registry import from_config


def _child_configs(container: Module) -> dict:
    # Every position, a layer held at two included (named_children() gives it once).
    children = [(name, m) for name, m in container._modules.items() if m is not None]
    names = [name for name, _ in children]
    args: dict = {"layers": [child.config() for _, child in children]}
    if names != [str(i) for i in range(len(names))]:
        args["names"] = names
    return args


def _moved() -> None:
    # The registry moves the epoch when a name is replaced or removed, but not when one is
    # added; a container's forward and parameters() follow its children, so a jitted plan
    # that ran the old chain must trace again after any edit.
    config.memory_epoch += 1


def _children_from(args: dict) -> list[tuple[str, Module]]:
    layers = [from_config(cfg) for cfg in args.get("layers", [])]
    names = args.get("names") or [str(i) for i in range(len(layers))]
    if len(names) != len(layers):
        raise ValueError(f"container config has {len(names)} names for {len(layers)} layers")
    return list(zip(names, layers, strict=True))


class _Indexed(Module):
    """What Sequential and ModuleList share: positional access to the children, and
    editing them as a list."""

    def _index(self, idx) -> str:
        keys = list(self._modules)
        i = operator.index(idx)
        if not -len(keys) <= i < len(keys):
            raise IndexError(
                f"index {idx} is out of range for {type(self).__name__} of length {len(keys)}"
            )
        return keys[i]

    def _modules_of(self, what: str, modules) -> list[Module]:
        """``modules`` as a list, every one checked before anything is changed: a refused
        edit leaves the container as it was."""
        try:
            modules = list(modules)
        except TypeError:
            raise TypeError(
                f"{type(self).__name__}.{what} takes an iterable of Modules, got "
                f"{type(modules).__name__}"
            ) from None
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(
                    f"{type(self).__name__}.{what} takes Modules, got "
                    f"{type(m).__name__} at position {i}"
                )
        return modules

    def _renumber(self, modules: list) -> None:
        """Hold ``modules`` as the children ``"0"``..``"n-1"``, in this order."""
        registry = self._modules
        registry.clear()  # (dict's own clear and update: the epoch is moved once, below)
        registry.update((str(i), m) for i, m in enumerate(modules))
        self._moved()

    @staticmethod
    def _moved() -> None:
        _moved()

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._sliced(list(self._modules.items())[idx])
        return self._modules[self._index(idx)]

    def __setitem__(self, idx, module: Module) -> None:
        self.add_module(self._index(idx), module)

    def __delitem__(self, idx) -> None:
        """Remove a child or a slice of them; the rest are named 0..n-1 again."""
        if not isinstance(idx, slice):
            self._index(idx)  # refuses an index out of range, naming the length
        modules = list(self._modules.values())
        del modules[idx]
        self._renumber(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module):
        """Add ``module`` at the end; returns the container."""
        self.add_module(str(len(self)), module)
        self._moved()
        return self

    def extend(self, modules: Iterable[Module]):
        """Append every module of ``modules`` (a list, a Sequential, a ModuleList)."""
        return self._extend(modules, "extend")

    def _extend(self, modules, what: str):
        for m in self._modules_of(what, modules):
            self.add_module(str(len(self)), m)
        self._moved()
        return self

    def insert(self, index: int, module: Module):
        """Put ``module`` before position ``index`` (``-len <= index <= len``, as PyTorch's
        Sequential.insert); the children are named 0..n-1 again."""
        if not isinstance(module, Module):
            raise TypeError(
                f"{type(self).__name__}.insert takes a Module, got {type(module).__name__}"
            )
        n = len(self)
        i = operator.index(index)
        if not -n <= i <= n:
            raise IndexError(
                f"insert index {index} is out of range for {type(self).__name__} "
                f"of length {n} (from {-n} to {n})"
            )
        modules = list(self._modules.values())
        modules.insert(i, module)
        self._renumber(modules)
        return self

    def pop(self, idx):
        """Remove and return the child at ``idx`` (a slice: a container of them)."""
        out = self[idx]
        del self[idx]
        return out

    def get_config(self) -> dict:
        return _child_configs(self)


class Sequential(_Indexed):
    """Modules applied in order: ``Sequential(a, b)(x) == b(a(x))``. Also accepts one
    dict of name → module.

    >>> import jitgrad as jg
    >>> from jitgrad import nn
    >>> net = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    >>> net(jg.ones((5, 2))).shape, list(net.state_dict())[:2]
    ((5, 1), ['0.weight', '0.bias'])

    Edited like a list; the layers are numbered 0..n-1 again after each edit:

    >>> del net[1]
    >>> net.insert(1, nn.Tanh()).append(nn.Sigmoid())[3]
    Sigmoid()
    >>> list(net.state_dict())[2:]
    ['2.weight', '2.bias']
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x

    def _sliced(self, items) -> Sequential:
        return Sequential(dict(items))  # names are kept, as in PyTorch

    def __add__(self, other: Sequential) -> Sequential:
        """A new Sequential of this one's modules and then ``other``'s (the same objects)."""
        return Sequential(*self, *_only_sequential(other))

    def __iadd__(self, other: Sequential) -> Sequential:
        return self._extend(_only_sequential(other), "__iadd__")

    @classmethod
    def from_config(cls, args: dict) -> Sequential:
        return cls(dict(_children_from(args)))


def _only_sequential(other) -> Sequential:
    if not isinstance(other, Sequential):
        raise TypeError(f"can only add a Sequential to a Sequential, got {type(other).__name__}")
    return other


class ModuleList(_Indexed):
    """A list of modules whose parameters the parent registers (a plain list would hide
    them).

    >>> from jitgrad import nn
    >>> blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> len(blocks), len(list(blocks.parameters()))
    (3, 6)
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        # (add_module, not append: a new container is no edit that jitted plans must see)
        for m in modules or ():
            self.add_module(str(len(self)), m)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        """A new ModuleList of this one's modules and then those of ``other``."""
        return ModuleList([*self, *self._modules_of("__add__", other)])

    def __iadd__(self, other: Iterable[Module]) -> ModuleList:
        return self._extend(other, "__iadd__")

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(): iterate over it")

    def _sliced(self, items) -> ModuleList:
        return ModuleList(m for _, m in items)

    @classmethod
    def from_config(cls, args: dict) -> ModuleList:
        out = cls()
        for name, m in _children_from(args):
            out.add_module(name, m)
        return out


def _pairs(what: str, items, sort_plain_mappings: bool = False) -> list[tuple]:
    """``items`` (a mapping, or an iterable of (key, value) pairs) as a list of pairs;
    ``sort_plain_mappings``: those of a mapping other than an OrderedDict or a container
    in key order (PyTorch's ParameterDict)."""
    if isinstance(items, Mapping):
        ordered = isinstance(items, (OrderedDict, Module)) or not sort_plain_mappings
        return list(items.items()) if ordered else sorted(items.items())
    try:
        pairs = [tuple(pair) for pair in items]
    except TypeError:
        raise TypeError(
            f"{what} takes a mapping or an iterable of (key, value) pairs, got "
            f"{type(items).__name__}"
        ) from None
    for i, pair in enumerate(pairs):
        if len(pair) != 2:
            raise ValueError(f"{what}: element {i} is not a (key, value) pair: {pair!r}")
    return pairs


class ModuleDict(Module):
    """Submodules by name, in insertion order; the parent registers their parameters
    (under ``name.``, as PyTorch).

    >>> from jitgrad import nn
    >>> heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "box": nn.Linear(4, 2)})
    >>> list(heads), list(heads.state_dict())[:2]
    (['cls', 'box'], ['cls.weight', 'cls.bias'])
    """

    def __init__(self, modules=None):
        super().__init__()
        for name, m in _pairs("ModuleDict", modules or {}):
            self.add_module(name, m)

    def __getitem__(self, key: str) -> Module:
        try:
            return self._modules[key]
        except KeyError:
            raise KeyError(f"ModuleDict has no module {key!r} (it has {list(self)})") from None

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)
        _moved()

    def __delitem__(self, key: str) -> None:
        self[key]  # refuses a missing key, naming those there are
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """Add or replace modules from a mapping or an iterable of (name, module) pairs."""
        for name, m in _pairs("ModuleDict.update", modules):
            self.add_module(name, m)
        _moved()

    def pop(self, key: str) -> Module:
        out = self[key]
        del self[key]
        return out

    def clear(self) -> None:
        self._modules.clear()
        _moved()

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward(): index it by name")

    def get_config(self) -> dict:
        return _child_configs(self)

    @classmethod
    def from_config(cls, args: dict) -> ModuleDict:
        return cls(dict(_children_from(args)))


def _as_parameter(what: str, value) -> Parameter:
    """A Parameter as it is, a tensor wrapped as one (as PyTorch's containers do)."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, TensorBase):
        return Parameter(value)
    raise TypeError(f"{what} holds tensors (made Parameters), got {type(value).__name__}")


def _parameter_specs(params) -> dict:
    """The shapes, dtypes and requires_grad of ``params``: what rebuilds the container
    (the values come from a state_dict)."""
    return {
        "shapes": [list(p.shape) for p in params],
        "dtypes": [p.dtype.name for p in params],
        "requires_grad": [p.requires_grad for p in params],
    }


def _parameters_from(args: dict) -> list[Parameter]:
    specs = zip(args["shapes"], args["dtypes"], args["requires_grad"], strict=True)
    return [Parameter(creation.zeros(tuple(s), d), r) for s, d, r in specs]


def _describe(name: str, p: Parameter) -> str:
    size = "x".join(map(str, p.shape))
    return f"  ({name}): Parameter containing: [jitgrad.{p.dtype.name} of size {size}]"


class ParameterList(Module):
    """Parameters by position, named ``"0"``, ``"1"``, ... in the state_dict, as in
    PyTorch; a tensor put in is wrapped as a Parameter.

    >>> import jitgrad as jg
    >>> from jitgrad import nn
    >>> scales = nn.ParameterList([jg.ones(3), jg.zeros(2)])
    >>> list(scales.state_dict()), scales[1].requires_grad
    (['0', '1'], True)
    """

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.register_parameter(str(len(self)), _as_parameter("ParameterList", v))

    def _index(self, idx) -> str:
        i = operator.index(idx)
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"index {idx} is out of range for ParameterList of length {n}")
        return str(i % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self)[idx])
        return self._parameters[self._index(idx)]

    def __setitem__(self, idx, value) -> None:
        self.register_parameter(self._index(idx), _as_parameter("ParameterList", value))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value) -> ParameterList:
        """Add ``value`` (a Parameter, or a tensor made one) at the end."""
        self.register_parameter(str(len(self)), _as_parameter("ParameterList", value))
        _moved()
        return self

    def extend(self, values) -> ParameterList:
        params = [_as_parameter("ParameterList", v) for v in values]  # all checked first
        for p in params:
            self.register_parameter(str(len(self)), p)
        _moved()
        return self

    __iadd__ = extend

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterList has no forward(): iterate over it")

    def get_config(self) -> dict:
        return _parameter_specs(list(self))

    @classmethod
    def from_config(cls, args: dict) -> ParameterList:
        return cls(_parameters_from(args))

    def __repr__(self) -> str:
        lines = [_describe(name, p) for name, p in self._parameters.items()]
        return "ParameterList(" + "".join("\n" + line for line in lines) + ("\n)" if lines else ")")


class ParameterDict(Module):
    """Parameters by name, in insertion order; a tensor put in is wrapped as a Parameter.
    As PyTorch's, the entries of a plain dict given (to the constructor or ``update``) are
    added in key order; those of an OrderedDict, a ParameterDict or a list of pairs in
    theirs.

    >>> import jitgrad as jg
    >>> from jitgrad import nn
    >>> gains = nn.ParameterDict({"a": jg.ones(2)})
    >>> gains["b"] = jg.zeros(3)
    >>> list(gains.state_dict()), len(list(gains.parameters()))
    (['a', 'b'], 2)
    """

    def __init__(self, parameters=None):
        super().__init__()
        for key, v in _pairs("ParameterDict", parameters or {}, sort_plain_mappings=True):
            self.register_parameter(key, _as_parameter("ParameterDict", v))

    def __getitem__(self, key: str) -> Parameter:
        try:
            return self._parameters[key]
        except KeyError:
            raise KeyError(
                f"ParameterDict has no parameter {key!r} (it has {list(self)})"
            ) from None

    def __setitem__(self, key: str, value) -> None:
        self.register_parameter(key, _as_parameter("ParameterDict", value))
        _moved()

    def __delitem__(self, key: str) -> None:
        self[key]  # refuses a missing key, naming those there are
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, parameters) -> None:
        """Add or replace parameters from a mapping or an iterable of (name, value) pairs."""
        pairs = [
            (k, _as_parameter("ParameterDict", v))
            for k, v in _pairs("ParameterDict.update", parameters, sort_plain_mappings=True)
        ]
        for key, p in pairs:
            self.register_parameter(key, p)
        _moved()

    def pop(self, key: str) -> Parameter:
        out = self[key]
        del self[key]
        return out

    def clear(self) -> None:
        self._parameters.clear()
        _moved()

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterDict has no forward(): index it by name")

    def get_config(self) -> dict:
        return {"names": list(self), **_parameter_specs(list(self.values()))}

    @classmethod
    def from_config(cls, args: dict) -> ParameterDict:
        return cls(list(zip(args["names"], _parameters_from(args), strict=True)))

    def __repr__(self) -> str:
        lines = [_describe(name, p) for name, p in self._parameters.items()]
        return "ParameterDict(" + "".join("\n" + line for line in lines) + ("\n)" if lines else ")")


__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
