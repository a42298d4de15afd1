"""Module and Parameter: PyTorch's way of holding a model's state.

A ``Module`` registers what is assigned to it by kind: a ``Parameter`` (a tensor the
optimizer trains), another ``Module`` (a child), or a buffer (a tensor that is state but
not trained, e.g. BatchNorm's running mean; registered explicitly with
``register_buffer``). Everything else is a plain attribute. ``state_dict`` names every
parameter and persistent buffer by its dotted path (``0.weight``, ``fc1.bias``), as PyTorch
does, so a checkpoint's keys read the same in both.

A module also describes how to rebuild itself: ``config()`` gives a JSON-able
``{"type": ..., "args": ...}`` and ``jg.nn.from_config`` turns it back into a module, so a
model directory needs no pickled code (see ``jitgrad/io/model_dir.py``).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator

from .. import dtypes
from .._config import config
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import HookHandle, Tensor, as_tensor
from ..device import check_device
from ..tensor import TensorBase


class Parameter(Tensor):
    """A tensor that a ``Module`` registers as trainable: a leaf that requires grad.

    It shares ``data``'s storage (no copy). Views and results of ops on a parameter are
    plain tensors, as in PyTorch.

    >>> import jitgrad as jg
    >>> p = jg.nn.Parameter(jg.zeros(3))
    >>> p.requires_grad, p.is_leaf, type(p * 2).__name__
    (True, True, 'Tensor')
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True):
        data = as_tensor([] if data is None else data)
        super().__init__(
            data.storage(),
            data.shape,
            data.stride(),
            data.storage_offset(),
            requires_grad=requires_grad,
        )

    @classmethod
    def _make(cls, storage, shape, strides, offset):
        # Every tensor derived from a parameter (views, clones) is a plain Tensor: only
        # what the user wraps is registered as a parameter.
        return Tensor._make(storage, shape, strides, offset)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self.detach())


IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _Registry(dict):
    """A module's parameters, buffers or children by name. Replacing or removing one
    (assignment, ``to``, ``load_state_dict(assign=True)``, ``del``) moves
    ``config.memory_epoch``: a jitted plan holds the arrays of the tensors it read, and
    traces again rather than replay over the ones the module no longer holds."""

    __slots__ = ()

    def __setitem__(self, name, value) -> None:
        if self.get(name, value) is not value:
            config.memory_epoch += 1
        super().__setitem__(name, value)

    def __delitem__(self, name) -> None:
        super().__delitem__(name)
        config.memory_epoch += 1

    def pop(self, name, *default):
        if name in self:
            config.memory_epoch += 1
        return super().pop(name, *default)


class Module:
    """Base class of layers and models: subclass it, assign parameters and submodules in
    ``__init__`` (after ``super().__init__()``) and define ``forward``.

    >>> import jitgrad as jg
    >>> from jitgrad import nn
    >>> class MLP(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = nn.Linear(4, 8, generator=0)
    ...         self.fc2 = nn.Linear(8, 2, generator=1)
    ...     def forward(self, x):
    ...         return self.fc2(jg.nn.functional.relu(self.fc1(x)))
    >>> model = MLP()
    >>> list(model.state_dict())
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
    >>> model(jg.ones((3, 4))).shape
    (3, 2)
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", _Registry())
        object.__setattr__(self, "_buffers", _Registry())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", _Registry())

    # -- registration --------------------------------------------------------------------

    def _registries(self) -> tuple[dict, dict, dict]:
        try:
            d = self.__dict__
            return d["_parameters"], d["_buffers"], d["_modules"]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before "
                "assigning parameters, buffers or submodules"
            ) from None

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, Module) and name in self.__dict__.get("_parameters", ()):
            raise TypeError(
                f"cannot assign {type(value).__name__} to {type(self).__name__}.{name}: it "
                "is a parameter (assign a Parameter or None, or delete it first)"
            )
        if isinstance(value, Parameter) and hasattr(type(self), name):
            # Checked before anything is replaced: the class attribute (a method such as
            # forward, a property) would still shadow the parameter.
            _check_name(self, name, {})
        if isinstance(value, (Parameter, Module)) or name in self.__dict__.get("_buffers", ()):
            params, buffers, modules = self._registries()
            # A name reassigned within its own registry keeps its place there (the order of
            # parameters() and state_dict(), as in PyTorch).
            keep = (
                params
                if isinstance(value, Parameter)
                else (modules if isinstance(value, Module) else buffers)
            )
            for registry in (params, buffers, modules):
                if registry is not keep:
                    registry.pop(name, None)
            self.__dict__.pop(name, None)
            if isinstance(value, Parameter):
                params[name] = value
            elif isinstance(value, Module):
                modules[name] = value
            else:
                self.register_buffer(name, value, name not in self._non_persistent)
            return
        params, modules = self.__dict__.get("_parameters", {}), self.__dict__.get("_modules", {})
        if name in params or name in modules:
            if value is not None:
                kind = "parameter" if name in params else "submodule"
                raise TypeError(
                    f"cannot assign {type(value).__name__} to {type(self).__name__}.{name}: "
                    f"it is a {kind} (assign a {'Parameter' if kind == 'parameter' else 'Module'} "
                    "or None)"
                )
            (params if name in params else modules)[name] = None
            return
        if name == "training":
            config.guard_epoch += 1
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: parameters, buffers and children live in
        # their registries, not in __dict__.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in d.get(registry, ()):
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, ()):
                del self.__dict__[registry][name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` (or None: a declared but absent parameter, e.g. ``bias=False``).
        ``name`` may already be a parameter (it is replaced), but no other attribute."""
        _check_name(self, name, self._registries()[0])
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot register {type(param).__name__} as parameter '{name}': wrap it in "
                "nn.Parameter (or use register_buffer for state that is not trained)"
            )
        self._registries()[0][name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a tensor that is state but not trained; ``persistent=False`` keeps it out of
        ``state_dict``. ``name`` may already be a buffer (it is replaced), but no other
        attribute."""
        _check_name(self, name, self._registries()[1])
        if tensor is not None and not isinstance(tensor, TensorBase):
            raise TypeError(
                f"buffer '{name}' must be a tensor or None, got {type(tensor).__name__}"
            )
        self._registries()[1][name] = None if tensor is None else as_tensor(tensor)
        (self._non_persistent.discard if persistent else self._non_persistent.add)(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module; ``name`` may already be a child (it is replaced), but no other
        attribute."""
        _check_name(self, name, self._registries()[2])
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"submodule '{name}' must be a Module, got {type(module).__name__}")
        self._registries()[2][name] = module

    register_module = add_module

    # -- traversal -----------------------------------------------------------------------

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, child) pairs; a child held under two names comes once, as in PyTorch
        (so ``apply`` visits a shared layer once)."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(
        self, prefix: str = "", memo: set | None = None, remove_duplicate: bool = True
    ):
        """This module and every descendant, with dotted names (this one is ''); a module
        reachable by two paths comes once unless ``remove_duplicate=False``."""
        if remove_duplicate:
            memo = set() if memo is None else memo
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            path = f"{prefix}.{name}" if prefix else name
            yield from child.named_modules(path, memo, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def _named_members(self, registry: str, prefix: str, recurse: bool, persistent_only=False):
        seen: set[int] = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for path, module in modules:
            skip = module._non_persistent if persistent_only else ()
            for name, t in getattr(module, registry).items():
                if t is None or id(t) in seen or name in skip:
                    continue
                seen.add(id(t))
                yield (f"{path}.{name}" if path else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True):
        """(dotted name, parameter) pairs; a parameter shared by two modules comes once."""
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every child (recursively), then on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- modes and gradients -------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Training mode (Dropout drops, BatchNorm uses and updates batch statistics)."""
        if not isinstance(mode, bool):  # train("no") would otherwise mean train(True)
            raise ValueError(
                f"training mode is expected to be boolean, got {type(mode).__name__} {mode!r}"
            )
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        config.guard_epoch += 1
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient (None, or zeros in place)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                TensorBase.fill_(p.grad, 0)

    def to(self, dtype) -> Module:
        """Cast floating parameters and buffers to ``dtype`` (integer ones, such as
        ``num_batches_tracked``, stay). Parameters are replaced by new ones, so build
        optimizers after calling ``to``; a parameter's gradient is cast with it, and a
        parameter or buffer shared by several modules stays shared, as in PyTorch.

        >>> import jitgrad as jg
        >>> jg.nn.Linear(2, 3).to(jg.float32).weight.dtype
        jitgrad.float32
        """
        d = dtypes.as_dtype(dtype)
        if not d.is_floating_point:
            raise TypeError(f"Module.to casts floating parameters; {d.name} is not floating")
        # One replacement per old tensor, so tied weights stay tied; the old tensor is kept
        # beside it so that its id cannot be reused while the modules are walked.
        cast: dict[int, tuple[Tensor, Tensor]] = {}

        def convert(t, make):
            if t is None or not t.dtype.is_floating_point or t.dtype is d:
                return t
            if id(t) not in cast:
                cast[id(t)] = (t, make(t))
            return cast[id(t)][1]

        def new_parameter(p):
            q = Parameter(p.detach().astype(d), p.requires_grad)
            if p.grad is not None:
                q.grad = p.grad.detach().astype(d)
            return q

        for m in self.modules():
            for name, p in m._parameters.items():
                m._parameters[name] = convert(p, new_parameter)
            for name, b in m._buffers.items():
                m._buffers[name] = convert(b, lambda b: b.detach().astype(d))
        return self

    def float(self) -> Module:
        return self.to(dtypes.float32)

    def double(self) -> Module:
        return self.to(dtypes.float64)

    def half(self) -> Module:
        return self.to(dtypes.float16)

    def cpu(self) -> Module:
        """This module: the CPU is jitgrad's one device."""
        return self

    def cuda(self, device=None) -> Module:
        """An error naming the problem: jitgrad computes on the CPU only."""
        check_device("cuda" if device is None else device)
        return self

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` ("" is this module)."""
        module = self
        for name in target.split(".") if target else ():
            child = module.__dict__["_modules"].get(name)
            if not isinstance(child, Module):
                raise AttributeError(
                    f"{type(module).__name__} has no submodule {name!r} ({target!r})"
                )
            module = child
        return module

    # -- state ---------------------------------------------------------------------------

    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> dict:
        """Every parameter and persistent buffer by dotted name, in registration order (a
        layer shared by two paths appears under both names, as in PyTorch).

        Values share storage with the module (detached unless ``keep_vars``): save them
        with ``jg.save`` to checkpoint. ``prefix`` is prepended to every key as given (so
        it ends with its own dot, ``"model."``), as PyTorch's.

        >>> import jitgrad as jg
        >>> bn = jg.nn.BatchNorm1d(2)
        >>> list(bn.state_dict())
        ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
        """
        out = {}
        for key, (module, name, kind) in self._state_slots().items():
            t = (module._parameters if kind == "param" else module._buffers)[name]
            out[prefix + key] = t if keep_vars else t.detach()
        return out

    def _state_slots(self) -> dict[str, tuple[Module, str, str]]:
        """Each state_dict key -> (owning module, attribute name, 'param' or 'buffer')."""
        slots = {}
        for path, module in self.named_modules(remove_duplicate=False):
            for name, t in module._parameters.items():
                if t is not None:
                    slots[f"{path}.{name}" if path else name] = (module, name, "param")
            for name, t in module._buffers.items():
                if t is not None and name not in module._non_persistent:
                    slots[f"{path}.{name}" if path else name] = (module, name, "buffer")
        return slots

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy ``state_dict``'s tensors into this module's parameters and buffers.

        Everything is checked before anything is written: a wrong shape, a non-floating
        tensor to adopt as a parameter that requires grad, or (with ``strict``) a missing or
        unexpected key, raises a RuntimeError listing every problem by key and leaves the
        module untouched. Values are cast to each
        parameter's dtype. ``assign=True`` adopts the given tensors instead of copying
        (zero-copy: a memory-mapped checkpoint stays mapped) with their own dtype; a tied
        parameter or buffer (one object under several keys, such as an embedding and an
        output layer sharing a weight) stays one object, as it does when copied into.
        Returns ``(missing_keys, unexpected_keys)``.

        >>> import jitgrad as jg
        >>> lin = jg.nn.Linear(2, 2)
        >>> lin.load_state_dict({"weight": jg.zeros((2, 2))})
        Traceback (most recent call last):
        ...
        RuntimeError: Error(s) in loading state_dict for Linear:
            Missing key(s) in state_dict: 'bias'.
        """
        if not hasattr(state_dict, "items"):
            raise TypeError(f"load_state_dict expects a dict, got {type(state_dict).__name__}")
        slots = self._state_slots()
        missing = [k for k in slots if k not in state_dict]
        unexpected = [k for k in state_dict if k not in slots]
        problems = []
        for key, (module, name, kind) in slots.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            current = getattr(module, name)
            if not isinstance(value, TensorBase):
                problems.append(f"value for '{key}' is a {type(value).__name__}, not a tensor.")
            elif value.shape != current.shape:
                problems.append(
                    f"size mismatch for '{key}': copying a tensor of shape {value.shape} "
                    f"from the checkpoint, the shape in the current model is {current.shape}."
                )
            elif (
                assign
                and kind == "param"
                and current.requires_grad
                and not value.dtype.is_floating_point
            ):
                # The adopted tensor becomes a parameter that requires grad, which only a
                # floating tensor can be: caught here, before anything is written.
                problems.append(
                    f"cannot assign a tensor of dtype {value.dtype.name} to parameter "
                    f"'{key}', which requires grad: only floating point tensors can require "
                    "gradients (load without assign=True to cast into the parameter's dtype)."
                )
        if strict:
            if missing:
                problems.insert(
                    0, "Missing key(s) in state_dict: " + ", ".join(repr(k) for k in missing) + "."
                )
            if unexpected:
                problems.insert(
                    0,
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(repr(k) for k in unexpected)
                    + ".",
                )
        if problems:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n    "
                + "\n    ".join(problems)
            )
        with no_grad():
            if not assign:
                for key, (module, name, _) in slots.items():
                    if key in state_dict:
                        TensorBase.copy_(getattr(module, name), as_tensor(state_dict[key]))
            else:
                _adopt(slots, state_dict)
        return IncompatibleKeys(missing, unexpected)

    # -- calling and describing ----------------------------------------------------------

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        tape = config.thread.tape
        if tape is not None:  # a jitted plan of this call holds only while this state does
            tape.guard(self, _guarded_state)
        hooks = self.__dict__.get("_call_hooks")
        if not hooks:
            return self.forward(*args, **kwargs)
        for hook in hooks["pre"]:
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        output = self.forward(*args, **kwargs)
        for hook in hooks["post"]:
            changed = hook(self, args, output)
            if changed is not None:
                output = changed
        return output

    def register_forward_pre_hook(self, hook):
        """Call ``hook(module, args)`` before every ``forward``; a returned value (a tuple,
        or one argument) replaces the positional arguments. Returns a handle whose
        ``remove()`` unregisters it. (A jitted step runs hooks when it traces, not when
        it replays.)"""
        return self._hook("pre", hook)

    def register_forward_hook(self, hook):
        """Call ``hook(module, args, output)`` after every ``forward``; a returned value
        replaces the output. Returns a handle whose ``remove()`` unregisters it."""
        return self._hook("post", hook)

    def _hook(self, kind: str, hook):
        if not callable(hook):
            raise TypeError(f"a forward hook must be callable, got {type(hook).__name__}")
        hooks = self.__dict__.get("_call_hooks")
        if hooks is None:
            hooks = {"pre": [], "post": []}
            object.__setattr__(self, "_call_hooks", hooks)
        hooks[kind].append(hook)
        config.guard_epoch += 1  # (plans traced without the hook are traced again)
        return _ForwardHookHandle(hooks[kind], hook)

    def get_config(self) -> dict:
        """The constructor arguments that rebuild this module (JSON-able). Subclasses that
        can be saved as an architecture override this."""
        raise NotImplementedError(
            f"{type(self).__name__} does not define get_config(), so it cannot be described "
            "in an architecture file; define get_config() returning its constructor "
            "arguments (and from_config if they are not plain keywords)"
        )

    @classmethod
    def from_config(cls, args: dict) -> Module:
        """Rebuild from ``get_config()``'s output (default: ``cls(**args)``)."""
        return cls(**args)

    def config(self) -> dict:
        """``{"type": ..., "args": ...}``: what ``jg.nn.from_config`` rebuilds this from.

        >>> import jitgrad as jg
        >>> jg.nn.ReLU().config()
        {'type': 'ReLU', 'args': {}}
        """
        return {"type": type_name(type(self)), "args": self.get_config()}

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, child in self._modules.items():
            text = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {text}")
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n" + "\n".join(lines) + "\n)"

    def __dir__(self):
        extra = [*self._parameters, *self._buffers, *self._modules]
        return sorted(set(super().__dir__()) | set(extra))


def _adopt(slots: dict, state_dict) -> None:
    """``load_state_dict(assign=True)``'s writes: each slot given a value takes a new
    parameter (or buffer) over it. The slots that held one object take one new object,
    made from the value of the last of their keys given (what copying into the shared
    object would leave), also under their keys that were not given: a tie is the model's
    structure (one gradient from every use, one optimizer entry), and a new object per
    key would break it, as PyTorch's assign=True does (pytorch/pytorch#188346)."""
    current = {key: getattr(module, name) for key, (module, name, _) in slots.items()}
    given = {
        (kind, id(current[key])): key for key, (_, _, kind) in slots.items() if key in state_dict
    }
    adopted: dict[tuple, Tensor] = {}
    for key, (module, name, kind) in slots.items():
        old = current[key]
        tie = (kind, id(old))
        if tie not in given:
            continue
        new = adopted.get(tie)
        if new is None:
            value = as_tensor(state_dict[given[tie]]).detach()
            new = adopted[tie] = Parameter(value, old.requires_grad) if kind == "param" else value
        (module._parameters if kind == "param" else module._buffers)[name] = new


_OWN_PREFIX = "jitgrad.nn."


def type_name(cls: type) -> str:
    """The name ``config()`` records for ``cls``."""
    if cls.__module__.startswith(_OWN_PREFIX):
        return cls.__name__
    return f"{cls.__module__}:{cls.__qualname__}"


def _check_name(module: Module, name: str, registry: dict) -> None:
    """Refuse ``name`` unless it is new or already in ``registry`` (PyTorch's rule): one
    name for two things would leave forward() using one and state_dict() saving the
    other."""
    if not isinstance(name, str):
        raise TypeError(f"attribute names are strings, got {type(name).__name__}")
    if not name or "." in name:
        raise KeyError(f"invalid name {name!r} in {type(module).__name__}: non-empty, no '.'")
    if name in registry or not hasattr(module, name):
        return
    kinds = (("_parameters", "a parameter"), ("_buffers", "a buffer"), ("_modules", "a submodule"))
    what = next(
        (kind for attr, kind in kinds if name in module.__dict__.get(attr, ())),
        "an attribute of the instance"
        if name in module.__dict__
        else f"defined by class {type(module).__name__}",
    )
    raise KeyError(
        f"attribute '{name}' already exists in {type(module).__name__} ({what}); pick another "
        "name, or delete the existing one first"
    )


def _guarded_state(module: Module) -> tuple:
    """What a jitted plan that ran ``module`` assumes beyond its arrays: the train/eval
    mode, and which of its own parameters require grad (which ones the step trains)."""
    hooks = module.__dict__.get("_call_hooks")
    return (
        module.training,
        *[p is not None and p._requires_grad for p in module._parameters.values()],
        *([id(h) for h in hooks["pre"] + hooks["post"]] if hooks else ()),
    )


class _ForwardHookHandle(HookHandle):
    """A forward hook's handle: removing it changes the module's guarded state."""

    def remove(self) -> None:
        super().remove()
        config.guard_epoch += 1
