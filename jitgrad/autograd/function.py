"""Function: a differentiable operation and, once called, a node of the graph.

``Function.__call__`` converts the inputs, runs ``forward`` without recording, and when
any input requires grad records the call; ``Function._link`` is the single place where a
node joins the graph (DeZero's choke point; eager elementwise calls that skip ``__call__``
link through it too): it stores the inputs, the edges to their creators (captured now, so
a later in-place change of an input cannot reroute gradients), weak references to the
outputs and the generation. Outputs point at the function; the function only weakly at
its outputs, so dropping the outputs frees the graph by reference counting alone.
"""

from __future__ import annotations

import weakref

from .._config import config
from .tensor import as_tensor


class Node:
    """What the backward engine walks: a generation, edges to input nodes, and a rule that
    maps output gradients to input gradients."""

    generation: int = 0
    _tensor_hooks: dict | None = None  # output number -> hooks registered on that output
    accumulates = False  # True for a leaf's node, which ends a path (AccumulateGrad)

    def _hooks_for(self, output_nr: int) -> list:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        return self._tensor_hooks.setdefault(output_nr, [])


class Function(Node):
    """Subclass with ``forward(*xs)`` and ``backward(*gys)``; call an instance on tensors.

    ``forward`` receives tensors and runs with recording off. ``backward`` receives one
    gradient per output and returns one per input (``None`` where there is none); it is
    written with jitgrad ops, so with ``create_graph=True`` it is recorded too and
    higher-order gradients come for free.

    >>> import jitgrad as jg
    >>> class Square(jg.autograd.Function):
    ...     def forward(self, x):
    ...         return x * x
    ...     def backward(self, gy):
    ...         (x,) = self.inputs
    ...         return 2 * x * gy
    >>> x = jg.tensor(3.0, requires_grad=True)
    >>> Square()(x).backward()
    >>> x.grad.item()
    6.0
    """

    # Set False by ops whose backward never reads the input values (add, negate...): an
    # in-place change of such an input is then harmless and not an error.
    needs_input_values = True
    # True for shape ops whose output shares the input's memory (ops/movement.py, and
    # broadcast_to): an in-place write into that input later changes the output's values
    # too, and the output's creator is then taken again (``refresh``) before it is
    # recorded on.
    is_view = False
    # True for ops whose backward follows PyTorch's complex convention (the gradient of a
    # real loss is dL/d(re) + i dL/d(im)): only they take or give complex tensors that
    # require grad; any other op's real formula would give a wrong gradient silently.
    differentiates_complex = False
    inputs: tuple | None = None

    def base_of(self, t):
        """The input that ``t``, this function's output, is a view of; None when this is
        no view function, ``t`` has memory of its own (a reshape that had to copy) or the
        graph was freed."""
        if not self.is_view or self.inputs is None:
            return None
        base = self.inputs[0]
        return base if base._storage is t._storage else None

    def again(self, t) -> Function:
        """A new function taking the view that ``t``, this view function's output, is
        (view functions define it)."""
        raise NotImplementedError(f"{type(self).__name__} is no view function")

    def view_for(self, t):
        """The view of the base, taken without recording, that ``t`` (this view function's
        output) is: view functions' ``view_of``, but for those of several views."""
        return self.view_of

    def refresh(self, t):
        """``t``'s creator once an in-place write into the base changed ``t``'s values
        (``_record`` asks): the same view taken again, so that gradients through ``t``
        reach the base's new history (PyTorch regenerates a view's grad_fn too)."""
        base = self.base_of(t)
        if base is None:
            return self
        view = self.again(t)(base)
        t._set_creator(view._grad_fn, view._output_nr)
        return view._grad_fn

    def __call__(self, *inputs):
        # (A loop over the inputs, no generator: this runs once per op.)
        xs, recording = inputs, False
        try:
            for x in inputs:
                if x._requires_grad:
                    recording = True
        except AttributeError:  # an input that is no tensor yet
            xs = tuple(as_tensor(x) for x in inputs)
            recording = any(x._requires_grad for x in xs)
        state = config.thread
        enabled = state.grad_enabled
        if enabled and state.tape is not None:
            _guard_leaves(state.tape, xs)
        recording = recording and enabled
        state.grad_enabled = False
        try:
            ys = self.forward(*xs)
        finally:
            state.grad_enabled = enabled
        return self._record(xs, ys, recording)

    def _record(self, xs, ys, recording: bool):
        if not recording:
            return ys
        if not self.differentiates_complex:
            self._refuse_complex_inputs(xs)
        # Plain loops, no comprehensions: this runs once per recorded op, and eager overhead
        # is per op. Integer and bool outputs (argmax, comparisons) never carry gradients.
        if isinstance(ys, tuple):
            outputs, floating, meta, refs = ys, [], [], []
            for y in outputs:
                dtype = y._storage.dtype
                if dtype.kind == "c" and not self.differentiates_complex:
                    self._refuse_complex(dtype)
                floating.append(dtype.kind in "fc")
                meta.append((y._shape, dtype))
                refs.append(weakref.ref(y))
            if True not in floating:
                return ys
        else:  # most functions: one output, without the lists
            dtype = ys._storage.dtype
            if dtype.kind != "f":
                if dtype.kind != "c":
                    return ys
                if not self.differentiates_complex:
                    self._refuse_complex(dtype)
            outputs, floating = (ys,), (True,)
            meta, refs = ((ys._shape, dtype),), (weakref.ref(ys),)
        self._link(xs, meta, refs)
        for i, y in enumerate(outputs):
            if floating[i]:
                y._grad_fn, y._output_nr, y._requires_grad = self, i, True
        return ys

    def _link(self, xs, output_meta, output_refs) -> None:
        """Make this function a node of the graph: its inputs, the edges to their nodes,
        their versions now, its generation, and its outputs' shapes, dtypes and weak
        references (the outputs point back at it: the caller's part)."""
        edges, versions, generation = [], [], 0
        for x in xs:
            creator = x._grad_fn  # (_edge's common case without its call)
            if creator is not None:
                if creator.is_view and x._storage._version != creator._versions[0]:
                    creator = creator.refresh(x)  # its base was written in place since
                edges.append((creator, x._output_nr))
                if creator.generation >= generation:
                    generation = creator.generation + 1
            else:
                edge = x._edge()  # a leaf's: its AccumulateGrad, of generation 0
                edges.append(edge)
                if edge is not None and not generation:
                    generation = 1
            versions.append(x._storage._version)
        self.inputs, self.next_edges, self._versions = xs, edges, versions
        self.generation = generation
        self._output_meta, self.outputs = output_meta, output_refs

    def _refuse_complex(self, dtype) -> None:
        # Recording none here would silently drop this path's share of the inputs'
        # gradients.
        raise RuntimeError(
            f"{type(self).__name__} of a tensor that requires grad gives a {dtype.name} "
            "result, and jitgrad does not differentiate it for complex tensors; detach() the "
            "input or compute it under jg.no_grad()"
        )

    def _refuse_complex_inputs(self, xs) -> None:
        for x in xs:
            if x._requires_grad and x._storage.dtype.kind == "c":
                raise RuntimeError(
                    f"{type(self).__name__} of a {x.dtype.name} tensor that requires grad: "
                    "jitgrad does not differentiate it for complex tensors; detach() the "
                    "input or compute it under jg.no_grad()"
                )

    def forward(self, *xs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def backward(self, *gys):
        raise NotImplementedError(f"{type(self).__name__} does not define backward()")

    def _apply(self, gys, retain_graph: bool, create_graph: bool):
        """Run ``backward`` once all output gradients are summed (recorded, for higher
        derivatives, under ``create_graph``: the engine has set the grad mode so); release
        saved tensors unless the graph is to be kept."""
        if self.inputs is None:
            raise RuntimeError(
                f"trying to backward through {type(self).__name__} a second time: its saved "
                "tensors were freed after the first backward; pass retain_graph=True to the "
                "first backward() to keep them"
            )
        for i in self._inputs_read_by_backward():
            x, v = self.inputs[i], self._versions[i]
            if x._storage._version != v:
                raise RuntimeError(
                    f"input {i} of {type(self).__name__} (shape {x.shape}) was modified by "
                    f"an in-place operation after it was saved (version {v} -> "
                    f"{x._storage._version}); its gradient would be wrong. Clone it before "
                    "modifying it, or modify it out of place"
                )
        gxs = self.backward(*gys)
        if not isinstance(gxs, tuple):
            gxs = (gxs,)
        if len(gxs) != len(self.inputs):
            raise RuntimeError(
                f"{type(self).__name__}.backward returned {len(gxs)} gradients for "
                f"{len(self.inputs)} inputs"
            )
        # Where every gradient enters an input: one shape and dtype comparison each, the
        # work only on a mismatch. (A loop: no comprehension frame per op.)
        for i, x in enumerate(self.inputs):
            g = gxs[i]
            if (
                g is not None
                and x._requires_grad
                and (
                    getattr(g, "_shape", None) != x._shape
                    or g._storage.dtype is not x._storage.dtype
                )
            ):
                gxs = gxs[:i] + (self._fit_gradient(i, g, x),) + gxs[i + 1 :]
        if not retain_graph:
            self.inputs = None
            self._release()
        return gxs

    def _fit_gradient(self, i: int, g, x):
        """``g``, the gradient of input ``i``, as PyTorch fits it to ``x``: summed over the
        dimensions ``x`` was broadcast along, cast to ``x``'s dtype (mixed-dtype ops compute
        in the wider one; a real input takes a complex gradient's real part); any other
        shape is an error."""
        g = as_tensor(g)
        if g.dtype.is_complex and not x.dtype.is_complex:
            g = g.real
        if g.shape != x.shape:
            lead = g.ndim - x.ndim
            if lead < 0 or any(n != 1 and n != m for n, m in zip(x.shape, g.shape[lead:])):
                raise RuntimeError(
                    f"{type(self).__name__}.backward returned an invalid gradient at index {i}: "
                    f"shape {g.shape}, but input {i} has shape {x.shape} (a gradient has the "
                    "input's shape, or a shape the input broadcasts to)"
                )
            axes = tuple(range(lead)) + tuple(
                lead + k for k, n in enumerate(x.shape) if n == 1 and g.shape[lead + k] != 1
            )
            g = g.sum(axis=axes, keepdims=True).reshape(x.shape) if axes else g.reshape(x.shape)
        return g if g.dtype is x.dtype else g.astype(x.dtype)

    def _inputs_read_by_backward(self):
        """Indices of the inputs whose values this backward reads (their in-place change
        would make the gradient wrong)."""
        return range(len(self.inputs)) if self.needs_input_values else ()

    def _release(self) -> None:
        """Drop anything else saved for backward (ops that save more override this)."""


class AccumulateGrad(Node):
    """The node of a leaf tensor: it adds the arriving gradient into ``tensor.grad``."""

    generation = 0
    accumulates = True

    def __init__(self, tensor):
        self.variable = weakref.ref(tensor)
        self._output_meta = ((tensor.shape, tensor.dtype),)


def records_nothing(x) -> bool:
    """Whether an op of the tensor ``x`` alone records nothing: ``x`` requires no grad and
    no ``jg.jit`` trace runs (which guards on leaves). Such calls may skip the ``Function``
    and compute their result directly."""
    return not x._requires_grad and not config.tracing


def _guard_leaves(tape, xs) -> None:
    """A jitted plan computes gradients for the leaves that required grad when it was
    traced: one frozen or unfrozen since (a tensor the step closes over, outside any
    module) must select another plan."""
    for x in xs:
        if x._grad_fn is None and x._storage.dtype.kind in "fc":
            tape.guard(x, _requires_grad)


def _requires_grad(t) -> bool:
    return t._requires_grad
