"""Containers: Sequential (a chain) and ModuleList (an indexable list of submodules).

Children are named by position (``"0"``, ``"1"``, ...), so state_dict keys read
``0.weight`` as in PyTorch.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

from .module import Module


def _child_configs(container: Module) -> dict:
    # Every position, a layer held at two included (named_children() gives it once).
    children = [(name, m) for name, m in container._modules.items() if m is not None]
    names = [name for name, _ in children]
    args: dict = {"layers": [child.config() for _, child in children]}
    if names != [str(i) for i in range(len(names))]:
        args["names"] = names
    return args


def _children_from(args: dict) -> list[tuple[str, Module]]:
    from .registry import from_config

    layers = [from_config(cfg) for cfg in args.get("layers", [])]
    names = args.get("names") or [str(i) for i in range(len(layers))]
    if len(names) != len(layers):
        raise ValueError(f"container config has {len(names)} names for {len(layers)} layers")
    return list(zip(names, layers, strict=True))


class _Indexed(Module):
    """What Sequential and ModuleList share: positional access to the children."""

    def _index(self, idx) -> str:
        keys = list(self._modules)
        i = operator.index(idx)
        if not -len(keys) <= i < len(keys):
            raise IndexError(f"index {idx} is out of range for {type(self).__name__} of "
                             f"length {len(keys)}")  # fmt: skip
        return keys[i]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._sliced(list(self._modules.items())[idx])
        return self._modules[self._index(idx)]

    def __setitem__(self, idx, module: Module) -> None:
        self.add_module(self._index(idx), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

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

    @classmethod
    def from_config(cls, args: dict) -> Sequential:
        return cls(dict(_children_from(args)))


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
        for m in modules or ():
            self.append(m)

    def extend(self, modules: Iterable[Module]):
        for m in modules:
            self.append(m)
        return self

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


__all__ = ["Sequential", "ModuleList"]
