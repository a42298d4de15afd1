"""``jg.jit``: trace a whole step once per input signature, then replay it as a plan.

Tracing runs the function eagerly (forward, ``backward()``, optimizer updates) with a tape
attached to the thread: every write into array memory passes through
``recording.run``/``recording.compute`` and is appended as a call over concrete arrays.
Those arrays become the plan's buffers: allocated once, written again by every replay.
The function's tensor arguments are copied into input buffers first, so every view,
kernel argument and BLAS call in the tape stays valid, and a replay is a loop of kernel
launches with no graph building, no dispatch and no allocation. Buffers the function
writes in place (weights passed in and updated) are copied back to the caller's tensors
after each call, and a tensor passed twice is one buffer; an argument returned comes back as
the caller's tensor (a view of it, where its buffer has its layout, as that view of the
caller's memory), and a result returned twice as one tensor. Calls from several threads take
turns (a plan's buffers serve one call at a time); a jitted function called while another
one traces runs eagerly, as part of that trace. Large buffers that only
kernel launches touch skip those copies (``binding.py``): the launches read the caller's
arrays, and results leave in the buffers they were computed in.

What is specialised at trace time, as with any tracing JIT: Python control flow, Python
numbers computed from tensors (``.item()``) and attributes read inside the function
(an optimizer's learning rate): change them and call ``retrace()``. Reading a tensor's
value as a Python object while tracing (``item()``, ``float()``, ``bool()``, ``tolist()``)
warns with ``jg.jit.TracerWarning`` at the line that reads it. Some state is
guarded instead, as torch.compile guards on it: objects the traced call used register a
state of theirs on the tape (``Tape.guard``: a module its train/eval mode and which of
its parameters require grad, any leaf an op reads with grad enabled whether it requires
grad, an optimizer its parameter groups), and that state is part
of a plan's key: ``model.eval()``, freezing a layer, ``add_param_group`` or a parameter
appended to (removed from, replaced in) a group's ``"params"`` select another plan.
Memory moved under a tensor the plans read (``share_memory_``, ``resize_``, ``set_``) or
a module's parameter, buffer or child replaced (``config.memory_epoch``) makes every
plan trace again, and a leaf that holds a gradient where the plan assigned one (no
``zero_grad``) selects a plan that adds to it.
Signatures cover shapes, dtypes, strides and ``requires_grad`` of tensor arguments, which
arguments view one storage, the values of number arguments, and the grad mode and default
dtype the call runs under; kernels themselves never
depend on sizes, so a new batch size retraces in one eager step and compiles nothing.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import threading
import time
import types
import warnings
import weakref

import numpy as np

from .. import tiers
from .._config import config
from ..autograd.tensor import Tensor
from ..ops import blas
from ..ops.numpy_tier import new_tensor
from ..storage import kernels
from ..strided import layout
from ..tensor import TensorBase
from . import binding, cache, compile_ahead
from .schedule import minimum_traffic, schedule

log = logging.getLogger("jitgrad.jit")
_AS_IS = contextlib.nullcontext()
_TRACING = threading.Lock()  # (guards config.tracing: traces may start in several threads)


class Tape:
    """What a trace records: array writes in order, and the leaves' gradients."""

    def __init__(self):
        self.steps: list[tuple] = []
        self.grad_outputs: dict[int, tuple[Tensor, Tensor]] = {}
        self.grad_inputs: dict[int, tuple[Tensor, Tensor]] = {}
        self.fresh: set[int] = set()  # leaves whose .grad was None before the call
        self.reset: dict[int, Tensor] = {}  # leaves whose .grad the function itself assigned
        self.guards: dict[int, tuple] = {}  # id -> (object, its state function, state)
        self._made: list[tuple] = []  # (weak reference to a storage, its array)

    def made(self, storage) -> None:
        """``storage`` was allocated by the traced call (an op's result)."""
        self._made.append((weakref.ref(storage), storage.kernel_array))

    def made_arrays(self) -> tuple[set[int], list]:
        """The allocations of the call that nothing outside the plan can reach (their
        storages are gone once the function has returned: a step that only writes them,
        with no later reader, can be dropped), and the arrays of those something still
        holds (a tensor kept on an object: every replay writes them as the trace did)."""
        # Guards on the call's own tensors (leaves it made, read by ops) hold them: they
        # are not the caller's, and the guards go with them.
        made = {id(storage()) for storage, _ in self._made}
        self.guards = {
            key: guard
            for key, guard in self.guards.items()
            if not (isinstance(guard[0], TensorBase) and id(guard[0]._storage) in made)
        }
        internal, reachable = set(), []
        for storage, a in self._made:
            if storage() is None:
                internal.add(binding.owner(a))
            else:
                reachable.append(a)
        return internal, reachable

    def guard(self, obj, state) -> None:
        """``obj`` took part in the trace: a replay needs ``state(obj)`` as it was at its
        first use (layers above jit register themselves: a module, an optimizer)."""
        if id(obj) not in self.guards:
            self.guards[id(obj)] = (obj, state, state(obj))

    def record(self, fn, args) -> None:
        self.steps.append((fn, args))

    def accumulate(self, tensor: Tensor) -> None:
        """Called before a leaf's gradient is updated during the trace."""
        key = id(tensor)
        previous = tensor.grad
        assigned = self.grad_outputs.get(key)
        if previous is None and assigned is None and key not in self.reset:
            self.fresh.add(key)
        if previous is not None and (assigned is None or assigned[1] is not previous):
            # The step adds to a gradient from before the call: each replay reloads the
            # current one into this buffer first, as eager accumulation would read it.
            self.grad_inputs.setdefault(key, (tensor, previous))

    def assigned(self, tensor: Tensor) -> None:
        self.grad_outputs[id(tensor)] = (tensor, tensor.grad)

    def grad_assigned(self, tensor: Tensor) -> None:
        """``tensor.grad = ...`` inside the function (zero_grad): replays do it too."""
        self.reset[id(tensor)] = tensor

    def settle(self) -> None:
        """Once the function has returned: each leaf's gradient as it left it, which is
        what a replay hands back. Backward's gradient may have been cleared or replaced
        since (``zero_grad`` at the end of a step leaves None)."""
        for key, tensor in self.reset.items():
            self.grad_outputs.setdefault(key, (tensor, None))
        for key, (tensor, _) in self.grad_outputs.items():
            self.grad_outputs[key] = (tensor, tensor.grad)

    def forget_own_leaves(self, buffers: set[int]) -> None:
        """Once the function has returned: the leaves that nothing but the tape holds
        (``x.detach().requires_grad_()`` inside the function) were the call's own, made
        anew by each call with no gradient yet; the plan neither hands them gradients nor
        guards on them. Others (an argument's buffer, a closure's parameter, a returned
        leaf) are kept."""
        held = {}
        for key in [key for key in self.grad_outputs if key not in buffers]:
            tensor, grad = self.grad_outputs.pop(key)
            guard = self.guards.pop(key, None)  # (object, state, its state then)
            reset = self.reset.pop(key, None) is not None
            held[key] = (weakref.ref(tensor), grad, guard and guard[1:], reset)
            guard = tensor = None  # (the loop's names would hold the last leaf alive)
        for key, (ref, grad, guard, reset) in held.items():
            tensor = ref()
            if tensor is None:
                continue
            self.grad_outputs[key] = (tensor, grad)
            if guard:
                self.guards[key] = (tensor, *guard)
            if reset:
                self.reset[key] = tensor


class Plan:
    """One traced signature: input buffers, the tape, and where results live."""

    def __init__(
        self,
        tape: Tape,
        inputs: list[tuple[Tensor, Tensor]],
        result,
        seconds: float,
        written: list,
        arguments: list,
    ):
        self.steps = tape.steps
        self.arguments = arguments  # the ones its key names by id, held (``_by_identity``)
        self.inputs = inputs  # (buffer, position path) pairs
        self.written = written  # the (buffer, path) pairs the function wrote in place
        buffers = {id(buffer): path for buffer, path in inputs}
        # Gradients from before the call that the step adds to, reloaded by every replay:
        # of the leaves it closes over, and (by their place) of its arguments.
        self.grad_inputs = [(t, b) for t, b in tape.grad_inputs.values() if id(t) not in buffers]
        self.input_grad_inputs = [
            (buffers[id(t)], b) for t, b in tape.grad_inputs.values() if id(t) in buffers
        ]
        self.grad_outputs = [(t, g) for t, g in tape.grad_outputs.values() if id(t) not in buffers]
        # Gradients of the arguments go back to the caller's tensors.
        self.input_grads = [
            (buffers[id(t)], g) for t, g in tape.grad_outputs.values() if id(t) in buffers
        ]
        # Leaves whose .grad was None where backward reached them: the plan assigns their
        # gradient, so it models only calls in which they still have none (``Jitted``).
        self.fresh_leaves = [t for t, _ in self.grad_outputs if id(t) in tape.fresh]
        self.fresh_inputs = [
            buffers[id(t)]
            for t, _ in tape.grad_outputs.values()
            if id(t) in buffers and id(t) in tape.fresh
        ]
        self.watches_grads = bool(self.fresh_leaves or self.fresh_inputs)
        self.result = result
        # Arguments returned, or views of them: the caller gets its own memory back.
        self.passed = _passed_back(inputs, result)
        self.trace_seconds = seconds
        self.replays = 0
        self._calls = None  # the steps as direct calls, from the second replay on
        self.compiles = True  # whether runs of them may become compiled calls
        self._blas = _AS_IS  # what BLAS runs under during them
        self._by_reference(inputs)

    def _by_reference(self, inputs) -> None:
        """Which large buffers pass by reference (``binding``): inputs that only launches
        read, and results that only launches write and no leaf holds as its ``.grad``."""
        found = binding.launch_slots(self.steps)
        self._inputs = []
        viewers: dict[int, set[int]] = {}  # storage -> the buffers over it
        for buffer, _ in inputs:
            viewers.setdefault(id(buffer._storage), set()).add(id(buffer))
        results = _tensors_in(self.result) + [g for _, g in self.input_grads if g is not None]
        returned = {id(t._storage) for t in results}  # (copied out of the buffer itself)
        for buffer, path in inputs:
            slots = binding.slots_of(found, buffer) if binding.big(buffer) else None
            if slots is not None and (
                slots.written
                or len(viewers[id(buffer._storage)]) > 1
                or id(buffer._storage) in returned
            ):
                slots = None
            start = buffer._offset if buffer.is_contiguous() else None  # where a flat copy goes
            n = buffer.numel()
            array = buffer._storage.kernel_array
            # A small flat copy is numpy's, into a view made once (same dtype both sides).
            into = array[start : start + n] if start is not None and tiers.small(n) else None
            self._inputs.append((buffer, path, slots, array, start, n, into))
        kept = {id(t._storage) for t, _ in self.inputs}
        kept |= {id(g._storage) for _, g in self.grad_outputs if g is not None}
        kept |= {id(b._storage) for _, b in self.grad_inputs + self.input_grad_inputs}
        groups: dict[int, tuple] = {}
        for t in results:
            if id(t._storage) in kept or id(t._storage) in groups or not binding.big(t):
                continue
            slots = binding.slots_of(found, t)
            if slots is not None:
                groups[id(t._storage)] = (slots, [])
        seen: set[int] = set()
        for t in results:  # every result over a handed storage leaves with it, small views too
            if id(t._storage) in groups and id(t) not in seen:
                seen.add(id(t))
                groups[id(t._storage)][1].append(t)
        self._handed = list(groups.values())

    def replay(self, args):
        for buffer, path, slots, array, start, n, into in self._inputs:
            source = args[path[0]] if len(path) == 1 else _get(args, path)
            if source._strides != buffer._strides:
                # (launches index the buffer's own, contiguous layout: other strides copy)
                TensorBase.copy_(buffer, source)
            elif slots is not None:
                slots.point_at(source._storage.kernel_array, source._offset)
            elif into is not None:
                into[...] = source._storage.kernel_array[source._offset : source._offset + n]
            elif start is not None:  # one flat copy
                flag = source._storage.half_flag  # (the buffer's dtype is the source's)
                kernels.copy(
                    source._storage.kernel_array, flag, source._offset, array, flag, start, n
                )
            else:
                TensorBase.copy_(buffer, source)
        for tensor, buffer in self.grad_inputs:
            _reload(buffer, tensor.grad)
        for path, buffer in self.input_grad_inputs:
            _reload(buffer, _get(args, path).grad)
        if self._calls is None:  # the first replay runs the fused launches for the first time
            with compile_ahead.from_the_end(self.steps):
                for fn, call_args in self.steps:
                    fn(*call_args)
            calls = _direct_calls(self.steps)
            switched = blas.switched_once(calls)
            self._calls, self._blas = (switched, blas.one_thread) if switched else (calls, _AS_IS)
        else:
            if self.replays == config.compile_plan_after and self.compiles and self._fixed():
                from . import compiled_plan  # (numba's extension API: imported when needed)

                self._calls = compiled_plan.fuse(self._calls)
            with self._blas:
                for fn, call_args in self._calls:
                    fn(*call_args)
        self.replays += 1
        self.write_back(args)
        for _, _, slots, array, *_ in self._inputs:
            if slots is not None:  # hold no reference to the caller's memory
                slots.point_at(array, 0)
        # Results in handed-over buffers leave with those buffers; the plan takes fresh
        # ones (from the pool, once earlier results have been dropped).
        handed = {id(t): t._storage for _, tensors in self._handed for t in tensors}
        for slots, tensors in self._handed:
            fresh = binding.fresh_storage_like(tensors[0]._storage)
            slots.point_at(fresh.kernel_array, 0)
            for t in tensors:
                t._storage = fresh
        self.hand_back_grads(args, handed)
        return _copy_out(self.result, handed, self.passed_back(args))

    def _fixed(self) -> bool:
        """Whether the arrays the steps are given never move: no buffer is pointed at a
        caller's memory or handed over with a result (``compiled_plan``)."""
        return not self._handed and all(slots is None for _, _, slots, *_ in self._inputs)

    def passed_back(self, args) -> list:
        """(input buffer, the caller's argument) for the arguments the results hold."""
        return [(buffer, _get(args, path)) for buffer, path in self.passed]

    def write_back(self, args) -> None:
        """The function's in-place writes into its tensor arguments (an update of weights
        passed in, ``x[0] = ...``) reach the caller's tensors, as they do eagerly."""
        for buffer, path in self.written:
            TensorBase.copy_(_get(args, path), buffer)

    def hand_back_grads(self, args, handed=None) -> None:
        """Point the leaves at their gradients: the plan's own buffers, rewritten in place
        by the next call (as PyTorch updates ``.grad`` in place)."""
        for tensor, grad in self.grad_outputs:
            tensor._grad = grad
        for path, grad in self.input_grads:
            # (a handed-over grad's plan tensor moved on; None: the function cleared it)
            _get(args, path).grad = None if grad is None else _give(grad, handed or {})

    def grads_appeared(self, args) -> bool:
        """Whether a leaf or argument this plan gives its first gradient holds one now:
        eager backward would add to it, and the step may read the sum (an optimizer
        without zero_grad)."""
        return any(leaf._grad is not None for leaf in self.fresh_leaves) or any(
            _get(args, path)._grad is not None for path in self.fresh_inputs
        )


class Jitted:
    """A function traced per input signature and replayed (see the module docstring)."""

    def __init__(self, fn, max_traces: int = 8, compile_plans: bool = True):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.max_traces = max_traces
        self.compile_plans = compile_plans
        self.plans: dict = {}
        self.traces = 0
        # A plan's buffers serve one call at a time: calls from several threads take turns.
        self._lock = threading.Lock()
        # Per signature, the guarded objects its first trace used, (object, state function)
        # pairs: their states complete a plan's key.
        self._guards: dict = {}
        self._states: dict = {}  # signature -> (guard epoch, the guarded state then)
        self._memory_epoch = config.memory_epoch
        self._traces_kept = 0  # traces since the plans were last forgotten

    def __call__(self, *args, **kwargs):
        if config.thread.tape is not None:
            # Inside another function's trace: run eagerly, so that its tape records the
            # work (a replay here would bypass it and the outer plan would skip it).
            return self.fn(*args, **kwargs)
        if kwargs:  # one structure, whose tensors are found by their paths; the keywords'
            # order is the caller's spelling, not a new signature
            args = (args, dict(sorted(kwargs.items())))
        # (the default dtype decides what creation functions and Python floats make)
        signature = (
            config.backend,
            config.thread.grad_enabled,
            config.default_dtype,
            bool(kwargs),
            _tensors_signature(args) or _signature(args, {}),
        )
        with self._lock:
            if self._memory_epoch != config.memory_epoch:
                # Plans hold the arrays of the tensors the function closes over: once
                # memory moved (share_memory_, resize_, set_), they are traced again
                # rather than replayed over the old bytes.
                self._forget()
                self._memory_epoch = config.memory_epoch
            key = (signature, self._guarded(signature))
            plan = self.plans.get(key)
            while plan is not None and plan.watches_grads and plan.grads_appeared(args):
                # A plan traced with those gradients present, and so on: that one may
                # assign gradients of its own to leaves that hold one now.
                key += ("accumulating",)
                plan = self.plans.get(key)
            if plan is None:
                return self._trace(signature, args, key[2:])
            return plan.replay(args)

    def __get__(self, instance, owner=None):
        """A jitted method: the instance is its first argument, so each instance gets plans
        of its own (an object argument, known by id)."""
        return self if instance is None else types.MethodType(self, instance)

    def _guarded(self, signature) -> tuple:
        """The state of the objects the signature's plans are guarded on, worked out again
        only when such state has changed anywhere (``config.guard_epoch``): a replay's
        per-call cost stays a lookup."""
        guards = self._guards.get(signature)
        if not guards:
            return ()
        known = self._states.get(signature)
        if known is None or known[0] != config.guard_epoch:
            state = tuple([state(obj) for obj, state in guards])
            known = self._states[signature] = (config.guard_epoch, state)
        return known[1]

    def retrace(self) -> None:
        """Forget every plan (after changing what the function reads, e.g. a learning rate)."""
        self._forget()

    def _forget(self) -> None:
        """Drop the plans and the guards their traces registered: the next call traces as
        the first did (the objects it uses may be others now)."""
        self.plans.clear()
        self._guards.clear()
        self._states.clear()
        self._traces_kept = 0

    def _trace(self, signature, args, variant=()):
        self.traces += 1
        self._traces_kept += 1
        if self._traces_kept > self.max_traces:
            warnings.warn(
                f"jg.jit: {self.__name__} was traced {self._traces_kept} times (limit "
                f"{self.max_traces}); its arguments' shapes, dtypes or layouts keep changing",
                stacklevel=3,
            )
        if config.debug:
            log.info("tracing %s for a new signature: %s", self.__name__, signature[-1])
        inputs: list = []
        bound = _bind(args, inputs)
        versions = [buffer._storage._version for buffer, _ in inputs]
        originals = [(path, _get(args, path)._storage) for _, path in inputs]
        original_versions = [storage._version for _, storage in originals]
        tape = Tape()
        with _TRACING:
            config.tracing += 1
        previous, config.thread.tape = config.thread.tape, tape
        start = time.perf_counter()
        try:
            result = self.fn(*bound[0], **bound[1]) if signature[3] else self.fn(*bound)
        finally:
            config.thread.tape = previous
            with _TRACING:
                config.tracing -= 1
        tape.settle()
        tape.forget_own_leaves({id(buffer) for buffer, _ in inputs})
        written = [
            (buffer, path)
            for (buffer, path), version in zip(inputs, versions)
            if buffer._storage._version != version
        ]
        _check_no_hidden_alias(
            self.__name__,
            tape.steps,
            originals,
            original_versions,
            {id(buffer) for buffer, _ in written},
            inputs,
        )
        internal, reachable = tape.made_arrays()
        kept = _kept_arrays(tape, inputs, result) + reachable
        tape.steps = schedule(tape.steps, kept, internal)
        plan = Plan(tape, inputs, result, time.perf_counter() - start, written, _by_identity(args))
        plan.compiles = self.compile_plans
        plan.minimum_bytes = minimum_traffic(tape.steps, kept)
        passed = plan.passed_back(args)
        if not (tape.grad_outputs or tape.grad_inputs) and any(
            isinstance(t, Tensor) and t.requires_grad and all(t is not b for b, _ in passed)
            for t in _tensors_in(result)
        ):
            warnings.warn(
                f"jg.jit: {self.__name__} returns tensors that require grad, but a replayed "
                "call returns them without history: backward() on them cannot reach the "
                "inputs. Call backward() inside the jitted function (a whole training step), "
                "or call the function without jg.jit",
                stacklevel=3,
            )
        self.plans[(signature, self._guarded_state(signature, tape), *variant)] = plan
        self._states.pop(signature, None)
        plan.write_back(args)
        plan.hand_back_grads(args)
        return _copy_out(result, None, passed)

    def _guarded_state(self, signature, tape: Tape) -> tuple:
        """The guarded state a trace ran with, over the guards of the signature's first
        trace (every later call looks its plan up by those): an object's state at its
        first use in this trace, or now when this trace did not use it."""
        used = {id(obj): state for obj, _, state in tape.guards.values()}
        guards = self._guards.setdefault(
            signature, [(obj, state) for obj, state, _ in tape.guards.values()]
        )
        return tuple(used[id(obj)] if id(obj) in used else state(obj) for obj, state in guards)

    def explain(self) -> str:
        """The plans of this function: steps, kernels and their generated source."""
        from .report import explain_jitted

        return explain_jitted(self)


def jit(fn=None, *, max_traces: int = 8, compile_plans: bool = True):
    """Trace ``fn`` once per input signature and replay it as a plan of kernels.

    ``compile_plans=False`` keeps every replay a sequence of Python calls: a small plan
    is otherwise compiled as a whole once it has replayed ``config.compile_plan_after``
    times (``jit/compiled_plan.py``), which a server answering requests must not wait for.

    >>> import jitgrad as jg
    >>> w = jg.tensor([1.0, 2.0], requires_grad=True)
    >>> @jg.jit
    ... def step(x):
    ...     w.grad = None
    ...     loss = ((x * w).sum() - 1) ** 2
    ...     loss.backward()
    ...     with jg.no_grad():
    ...         w.sub_(0.1 * w.grad)
    ...     return loss
    >>> [round(step(jg.tensor([1.0, 1.0])).item(), 6) for _ in range(3)]
    [4.0, 1.44, 0.5184]
    """
    if fn is None:
        return lambda f: jit(f, max_traces=max_traces, compile_plans=compile_plans)
    if not callable(fn):
        raise TypeError(f"jg.jit compiles a function, got {type(fn).__name__}")
    return Jitted(fn, max_traces, compile_plans)


# -- arguments ---------------------------------------------------------------------------------


def _signature(value, seen: dict):
    """What a plan is specialised on; computed on every call, so kept to plain tuples (a
    tensor's starts with its shape, every other kind's with a tag). A tensor passed again
    (``seen``: id -> its first place) is one buffer in the plan, and tensors viewing one
    storage (``x`` and ``x.T``) are views of one buffer (``_shared_spans``), placed as
    they are in the storage: writes through one argument show through the others, as
    they do eagerly."""
    if isinstance(value, TensorBase):
        first = seen.get(id(value))
        if first is not None:
            return ("again", first)
        seen[id(value)] = len(seen)
        described = (
            value._shape,
            value._storage.dtype,
            value._strides,
            isinstance(value, Tensor) and value._requires_grad,
        )
        if 0 in value._shape:
            return described
        storage = seen.setdefault(("storage", id(value._storage)), (len(seen), value._offset))
        if storage[0] == len(seen) - 1:  # (the first tensor seen over that storage)
            return described
        return ("view", storage[0], value._offset - storage[1], described)
    kind = type(value)
    if isinstance(value, (list, tuple)):
        return (kind, tuple(_signature(v, seen) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _signature(v, seen)) for k, v in value.items()))
    if value is None or isinstance(value, (bool, int, str)):
        return ("value", kind, value)
    if isinstance(value, (float, np.floating)):  # -0.0 apart from 0.0; every NaN alike
        return ("value", kind, float(value).hex())
    if isinstance(value, (complex, np.complexfloating)):
        return ("value", kind, complex(value).real.hex(), complex(value).imag.hex())
    if isinstance(value, np.generic):  # numpy integers and bools: by value, not identity
        return ("value", kind, value.item())
    return ("object", id(value))


def _tensors_signature(args):
    """``_signature(args, {})`` of the commonest call, a tuple of tensors over storages of
    their own, worked out without its bookkeeping; None for any other call."""
    if args.__class__ is not tuple:
        return None
    described, storages = [], []
    for t in args:
        if t.__class__ is not Tensor:
            return None
        storage = t._storage
        for seen in storages:
            if seen is storage:  # (a tensor passed twice, or views of one storage)
                return None
        storages.append(storage)
        described.append((t._shape, storage.dtype, t._strides, t._requires_grad))
    return (tuple, tuple(described))


def _by_identity(args) -> list:
    """The arguments a signature knows by their id (a module, an optimizer, any object):
    a plan holds on to them, or once one was freed another object could take its id and
    replay a plan over memory the first one reached."""
    if isinstance(args, (list, tuple)):
        return [o for v in args for o in _by_identity(v)]
    if isinstance(args, dict):
        return [o for v in args.values() for o in _by_identity(v)]
    return [args] if _signature(args, {})[0] == "object" else []


def _map(value, fn, leaf=TensorBase, path=()):
    """``value`` with every ``leaf`` inside lists, tuples and dicts replaced by
    ``fn(leaf, path)``; the one walker over the containers a jitted function takes and
    returns."""
    if isinstance(value, leaf):
        return fn(value, path)
    if isinstance(value, (list, tuple)):
        items = [_map(v, fn, leaf, path + (i,)) for i, v in enumerate(value)]
        # (a namedtuple's constructor takes its fields one by one, not an iterable)
        return type(value)._make(items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        items = {k: _map(v, fn, leaf, path + (k,)) for k, v in value.items()}
        if isinstance(value, collections.defaultdict):
            return type(value)(value.default_factory, items)
        return items if type(value) is dict else type(value)(items)
    return value


def _bind(args, inputs: list):
    """``args`` with every tensor replaced by an input buffer of the same layout; the
    (buffer, path) pairs are appended to ``inputs``."""

    buffers: dict[int, Tensor] = {}
    spans = _shared_spans(args)

    def buffer_for(value, path):
        buffer = buffers.get(id(value))
        if buffer is None:
            span = spans.get(id(value._storage))
            if span is None or not value.numel():
                buffer = Tensor._make(*_cloned(value))
            else:
                storage, lo = span
                buffer = Tensor._make(storage, value._shape, value._strides, value._offset - lo)
            buffers[id(value)] = buffer
            if isinstance(value, Tensor) and value.requires_grad:
                buffer.requires_grad_()
                if value.grad is not None:  # the step adds to it (``Plan.input_grad_inputs``)
                    buffer._grad = Tensor._make(*_cloned(value.grad))
        inputs.append((buffer, path))
        return buffer

    return _map(args, buffer_for)


def _shared_spans(args) -> dict:
    """Storages that several (non-empty) argument tensors view: per storage, a copy of
    the part they span and where it starts, for their buffers to view alike."""
    views: dict[int, dict[int, TensorBase]] = {}
    for t in _tensors_in(args):
        if t.numel():
            views.setdefault(id(t._storage), {})[id(t)] = t
    spans = {}
    for key, group in views.items():
        if len(group) > 1:
            extents = [layout.extent(t._shape, t._strides, t._offset) for t in group.values()]
            lo, hi = min(e[0] for e in extents), max(e[1] for e in extents)
            first = next(iter(group.values()))
            span = TensorBase._make(first._storage, (hi - lo + 1,), (1,), lo)
            spans[key] = (TensorBase.clone(span)._storage, lo)
    return spans


def _kept_arrays(tape: Tape, inputs, result) -> list:
    """Memory the caller can see after a call: it must hold its value (never fused away)."""
    tensors = [buffer for buffer, _ in inputs] + _tensors_in(result)
    for tensor, grad in list(tape.grad_outputs.values()) + list(tape.grad_inputs.values()):
        tensors += [tensor, grad]
    return [t._storage.kernel_array for t in tensors if t is not None]


def _check_no_hidden_alias(name, steps, originals, versions, written, inputs) -> None:
    """Refuse a trace in which the function reached an argument's memory without going
    through the argument (a parameter passed in that its closure also updates): a plan
    copies arguments into buffers of its own, so the two would drift apart silently."""
    used = set()
    for fn, args in steps:
        reads, writes = binding.accesses(fn, args)
        used.update(reads, writes)
    for (path, storage), version, (buffer, _) in zip(originals, versions, inputs):
        writes = storage._version != version
        reads = id(buffer) in written and binding.owner(storage.kernel_array) in used
        if writes or reads:
            raise RuntimeError(
                f"jg.jit: {name} {'writes' if writes else 'reads'} the memory of its argument "
                f"at {list(path)} directly, not through the argument (a tensor it closes over "
                "shares that memory, e.g. a parameter passed in that the function also "
                "updates), while a plan works on a copy of each argument: the two would "
                "drift apart. Pass that tensor one way only: as an argument, or through the "
                "closure"
            )


def _tensors_in(value) -> list:
    found: list = []
    _map(value, lambda t, _: found.append(t))
    return found


def _get(value, path):
    for key in path:
        value = value[key]
    return value


def _copy_out(value, handed=None, passed=None):
    """What the caller gets for the plan's results ``value``: for an argument returned,
    the caller's tensor, and for a view of one, that view of the caller's memory
    (``passed``: (input buffer, argument) pairs); handed-over buffers (see ``_give``);
    else fresh copies, as the plan overwrites its buffers on the next call. A tensor
    returned twice is one tensor, and copied results over one storage leave over one copy
    of it, views of each other as they are eagerly (``_shared_spans``)."""
    handed = {} if handed is None else handed
    if not passed and isinstance(value, TensorBase):  # one result (a loss), no argument
        return _give(value, handed)
    given = {id(buffer): argument for buffer, argument in passed or ()}
    # A buffer holds its argument's elements shifted by one offset where it has its
    # strides (a contiguous argument's clone, or a span of a storage several share).
    shifted = {
        id(b._storage): (a._storage, a._offset - b._offset)
        for b, a in passed or ()
        if b._strides == a._strides
    }

    def argument_view(t):
        found = given.get(id(t))
        if found is None and id(t._storage) in shifted:
            storage, shift = shifted[id(t._storage)]
            found = Tensor._make(storage, t._shape, t._strides, t._offset + shift)
        return found

    if isinstance(value, TensorBase):  # one result (a loss): nothing to share
        found = argument_view(value) if passed else None
        return _give(value, handed) if found is None else found
    spans = _shared_spans(
        [
            t
            for t in _tensors_in(value)
            if id(t) not in handed and id(t._storage) not in shifted and id(t) not in given
        ]
    )

    def give(t, _):
        out = argument_view(t)
        if out is None:
            span = spans.get(id(t._storage)) if id(t) not in handed else None
            if span is None:
                out = _give(t, handed)
            else:
                storage, lo = span
                out = Tensor._make(storage, t._shape, t._strides, t._offset - lo)
        given[id(t)] = out
        return out

    return _map(value, give)


def _passed_back(inputs, result) -> list:
    """(input buffer, its argument's path) for the buffers whose memory ``result`` holds."""
    returned = {id(t._storage) for t in _tensors_in(result)}
    return [(buffer, path) for buffer, path in inputs if id(buffer._storage) in returned]


def _give(t: TensorBase, handed: dict) -> Tensor:
    """What the caller gets for the plan's tensor ``t``: the handed-over storage it was
    computed in, or a copy."""
    storage = handed.get(id(t))
    if storage is not None:
        return Tensor._make(storage, t._shape, t._strides, t._offset)
    if not layout.is_contiguous(t._shape, t._strides):
        return Tensor._make(*_cloned(t))
    n = layout.numel(t._shape)
    kind = type(t._storage)
    if kind._holds_small(n):  # (a loss): numpy's copy is the storage's whole array
        elements = t._storage.kernel_array[t._offset : t._offset + n].copy()
        return new_tensor(kind, elements, t._shape, t._strides)
    copy = binding.fresh_storage_like(t._storage, n)
    flag = t._storage.half_flag
    kernels.copy(t._storage.kernel_array, flag, t._offset, copy.kernel_array, flag, 0, n)
    return Tensor._make(copy, t._shape, t._strides, 0)


def _reload(buffer: TensorBase, grad) -> None:
    """Put a gradient from before the call into the buffer the plan adds to (zeros for
    none)."""
    if grad is None:
        TensorBase.fill_(buffer, 0)
    elif grad is not buffer:
        TensorBase.copy_(buffer, grad)


def _direct_calls(steps) -> list:
    """The steps as the calls they come down to once every kernel is compiled
    (a kernel step's ``direct``, ``Call.direct``)."""
    calls = []
    for fn, args in steps:
        if binding.kernel_step(fn):
            fn, args = fn.direct()
        elif isinstance(fn, cache.Call):
            fn = fn.direct(args)
        calls.append((fn, args))
    return calls


def _cloned(value: TensorBase):
    copy = TensorBase.clone(value)
    return copy._storage, copy.shape, copy.stride(), copy.storage_offset()
