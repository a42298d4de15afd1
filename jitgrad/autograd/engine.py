"""The backward pass: nodes taken from a priority queue by generation, each exactly once.

A node's generation exceeds that of every node it feeds from, so when the highest
generation is popped every branch has already added its gradient into that node's buffer
(DeZero's argument). When the queue is empty and a node sends a single gradient, its
target is the only node left to run and has all its gradients: a chain's nodes run one
after another without the queue. Gradients are summed out of place: a buffer is replaced
by ``old + new``, never written into.
"""

from __future__ import annotations

import heapq
import itertools

from .._config import config
from .grad_mode import set_grad_enabled
from .tensor import as_tensor, ones_like_data, zeros


def run_backward(roots, root_grads, *, retain_graph: bool, create_graph: bool, capture=None):
    """Propagate ``root_grads`` from ``roots`` through the graph.

    With ``capture`` (a list of edges), the gradients arriving at those edges are returned
    and no leaf's ``.grad`` is touched (``autograd.grad``); otherwise leaves accumulate.
    """
    buffers: dict = {}
    heap: list = []
    tiebreak = itertools.count()
    captured = {} if capture is not None else None
    wanted = set(capture or ())
    edges = []
    for root in roots:
        edge = root._edge()
        if edge is None:
            raise RuntimeError(
                "element 0 of tensors does not require grad and has no grad_fn: "
                "nothing to differentiate"
            )
        edges.append(edge)
    gxs = root_grads
    with set_grad_enabled(create_graph):
        while True:
            if not heap and len(edges) == 1:
                # A chain: the one node sent a gradient is the only node waiting, so every
                # gradient it will get has arrived. It runs next, without the queue.
                edge, g = edges[0], gxs[0]
                if edge is None or g is None:
                    break
                node, nr = edge
                gys = [None] * len(node._output_meta)
                gys[nr] = g
            else:
                # The gradients sent along the edges (the roots' first, then each node's)
                # join their nodes' buffers; a node enters the queue with its first one.
                for edge, g in zip(edges, gxs):
                    if edge is None or g is None:
                        continue
                    target, nr = edge
                    buf = buffers.get(target)
                    if buf is None:
                        buf = buffers[target] = [None] * len(target._output_meta)
                        heapq.heappush(heap, (-target.generation, next(tiebreak), target))
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                if not heap:
                    break
                node = heapq.heappop(heap)[2]
                gys = buffers.pop(node)
            if node._tensor_hooks:
                _run_hooks(node._tensor_hooks, gys)
            if captured is not None:
                for nr, g in enumerate(gys):
                    if (node, nr) in wanted:
                        captured[(node, nr)] = g
            if node.accumulates:
                if captured is None:
                    _accumulate(node, gys[0], create_graph)
                edges = ()
                continue
            for g in gys:  # (a loop: no comprehension frame per node)
                if g is None:
                    _fill_missing(node, gys)
                    break
            edges, gxs = node.next_edges, node._apply(gys, retain_graph, create_graph)
    return captured


def _run_hooks(tensor_hooks: dict, gys: list) -> None:
    """The hooks registered on a node's outputs, each given its output's gradient."""
    for nr, hooks in tensor_hooks.items():
        for hook in hooks:
            if gys[nr] is not None:
                result = hook(gys[nr])
                if result is not None:
                    gys[nr] = _hook_result(hook, gys[nr], result)


def _fill_missing(node, gys: list) -> None:
    """Zeros for the outputs of ``node`` that no gradient reached."""
    for nr, g in enumerate(gys):
        if g is None:
            shape, dtype = node._output_meta[nr]
            gys[nr] = zeros(shape, dtype)


def _hook_result(hook, g, result):
    """A hook's replacement for ``g``: it must keep the gradient's shape and dtype."""
    name = getattr(hook, "__name__", repr(hook))
    if getattr(result, "_shape", None) != g._shape:
        raise RuntimeError(
            f"hook {name!r} has changed the size of value: it returned "
            f"{getattr(result, 'shape', type(result).__name__)} for a gradient of shape {g.shape}"
        )
    if result.dtype is not g.dtype:
        raise RuntimeError(
            f"hook {name!r} has changed the type of value (was {g.dtype.name} got "
            f"{result.dtype.name})"
        )
    return result


def _accumulate(node, g, create_graph: bool) -> None:
    tensor = node.variable()
    if tensor is None or g is None:
        return
    if not create_graph:
        g = g.detach()
        if tensor.grad is None and not g.is_contiguous():
            # PyTorch's layout contract: a stored gradient never aliases a broadcast or
            # transposed view, so in-place updates of it are safe and optimizer kernels
            # see contiguous memory.
            g = g.contiguous()
    tape = config.thread.tape
    if tape is not None:
        tape.accumulate(tensor)
    tensor._grad = g if tensor.grad is None else tensor.grad + g
    if tape is not None:
        tape.assigned(tensor)


def root_gradient(output, gradient):
    """The gradient a backward pass starts from: the one given, or ones for an output of
    a single element."""
    if gradient is None:
        if output.dtype.is_complex:
            raise RuntimeError(
                f"backward of a {output.dtype.name} tensor needs a gradient argument: it is "
                "implicit only for real outputs (take .real, abs() or similar first)"
            )
        if output.numel() != 1:
            raise RuntimeError(
                f"backward of a tensor of shape {output.shape} needs a gradient argument of "
                "that shape (it is implicit only for single-element outputs)"
            )
        return ones_like_data(output)
    gradient = as_tensor(gradient)
    if gradient.shape != output.shape:
        raise ValueError(
            f"gradient of shape {gradient.shape} does not match the tensor's {output.shape}"
        )
    return gradient


def grad(
    outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False
):
    """The gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    >>> import jitgrad as jg
    >>> x = jg.tensor(3.0, requires_grad=True)
    >>> (g,) = jg.autograd.grad(x ** 3, [x], create_graph=True)
    >>> (g2,) = jg.autograd.grad(g, [x])
    >>> g.item(), g2.item()
    (27.0, 18.0)
    """
    outputs = [outputs] if not isinstance(outputs, (list, tuple)) else list(outputs)
    single = not isinstance(inputs, (list, tuple))
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs]
    root_grads = [root_gradient(out, g) for out, g in zip(outputs, grad_outputs)]
    edges = []
    for i, x in enumerate(inputs):
        edge = x._edge()
        if edge is None:
            raise RuntimeError(f"input {i} of grad() does not require grad")
        edges.append(edge)
    retain = create_graph if retain_graph is None else retain_graph
    captured = run_backward(
        outputs, root_grads, retain_graph=retain, create_graph=create_graph, capture=edges
    )
    results = []
    for i, edge in enumerate(edges):
        g = captured.get(edge)
        if g is None and not allow_unused:
            raise RuntimeError(
                f"input {i} of grad() was not used to compute the outputs; "
                "pass allow_unused=True to get None for it"
            )
        results.append(g if g is None or create_graph else g.detach())
    return tuple(results)
