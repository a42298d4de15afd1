"""Rebuilding modules from ``Module.config()``: ``{"type": name, "args": {...}}``.

There is no registry to fill in: a type name is looked up among the ``Module`` subclasses
that exist in the process. jitgrad's own layers are named plainly (``"Linear"``); any other
class by ``"package.module:QualName"``. Nothing is ever imported or executed on a file's
say-so: a model of a custom class loads only once the program has imported that class.
"""

from __future__ import annotations

from .module import Module, type_name


def _subclasses(cls: type):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def module_class(name: str) -> type[Module]:
    """The ``Module`` subclass recorded as ``name``."""
    found = [cls for cls in _subclasses(Module) if type_name(cls) == name]
    if not found:
        own = sorted(type_name(c) for c in _subclasses(Module) if ":" not in type_name(c))
        hint = (
            "import the module that defines it before loading"
            if ":" in name
            else f"jitgrad.nn knows {', '.join(own)}"
        )
        raise ValueError(f"unknown module type {name!r} in the architecture: {hint}")
    return found[-1]  # a class redefined (e.g. reloaded) wins over its older self


def from_config(config: dict) -> Module:
    """Build the module that ``config`` (from ``Module.config()``) describes.

    >>> import jitgrad as jg
    >>> from jitgrad import nn
    >>> net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    >>> nn.from_config(net.config())
    Sequential(
      (0): Linear(in_features=4, out_features=3, bias=True)
      (1): ReLU()
      (2): Linear(in_features=3, out_features=2, bias=True)
    )
    """
    if not isinstance(config, dict) or set(config) != {"type", "args"}:
        raise ValueError(
            f"a module config is a dict with exactly the keys 'type' and 'args', got {config!r}"
        )
    if not isinstance(config["type"], str):
        raise ValueError(f"a module config's 'type' is a class name, got {config['type']!r}")
    if not isinstance(config["args"], dict):
        raise ValueError(f"the 'args' of a {config['type']!r} config must be a dict")
    cls = module_class(config["type"])
    try:
        return cls.from_config(dict(config["args"]))
    except TypeError as e:
        raise ValueError(f"cannot build {config['type']} from args {config['args']!r}: {e}") from e
