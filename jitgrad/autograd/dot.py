"""The autograd graph behind a tensor as Graphviz DOT text (DeZero's ``get_dot_graph``).

Functions are boxes named by their class; tensors are ellipses labelled by shape and
dtype (leaves filled blue, inputs that need no gradient grey). The walk follows each
Function's ``next_edges``, the same edges ``backward`` follows, so what is drawn is what
gradients will flow through; inputs without an edge are drawn from the saved ``inputs``
while the graph still holds them (before a ``backward`` that does not retain it).
"""

from __future__ import annotations

from collections import deque

from .function import AccumulateGrad


def to_dot(tensor, names: dict | None = None) -> str:
    """DOT source of the graph that produced ``tensor``.

    ``names`` maps labels to tensors of the graph (``{"x": x}``) to show those labels.
    Render with ``dot -Tsvg`` or ``graphviz.Source(text)``.

    >>> import jitgrad as jg
    >>> x = jg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> print(to_dot(y, names={"x": x, "y": y}))
    digraph autograd {
      node [fontname="Helvetica", fontsize=11];
      t0 [label="y\\n() float64", shape=ellipse, style=filled, fillcolor="#f6e3a1"];
      f1 [label="Sum", shape=box, style=filled, fillcolor="#dddddd"];
      f1 -> t0;
      t2 [label="(2,) float64", shape=ellipse];
      f3 [label="Multiply", shape=box, style=filled, fillcolor="#dddddd"];
      f3 -> t2;
      t2 -> f1;
      t4 [label="x\\n(2,) float64", shape=ellipse, style=filled, fillcolor="#b7d7f0"];
      t4 -> f3;
      t4 -> f3;
    }
    """
    return _Writer(tensor, names or {}).text()


class _Writer:
    def __init__(self, root, names: dict):
        self.ids: dict = {}
        self.lines: list[str] = []
        # A tensor is known by the slot its gradient goes to: (creator, output_nr), or the
        # leaf's accumulator; named tensors are looked up the same way.
        self.names = {}
        for label, t in names.items():
            key = _slot(t)
            if key is not None:
                self.names[key] = label
        self.root = root

    def _id(self, key, prefix: str) -> tuple[str, bool]:
        new = key not in self.ids
        if new:
            self.ids[key] = f"{prefix}{len(self.ids)}"
        return self.ids[key], new

    def _tensor(self, key, shape, dtype, fill: str | None) -> tuple[str, bool]:
        node, new = self._id(key, "t")
        if new:
            label = f"{tuple(shape)} {dtype.name}"
            if key in self.names:
                name = self.names[key].replace("\\", "\\\\").replace('"', '\\"')
                label = f"{name}\\n{label}"
            style = "" if fill is None else f', style=filled, fillcolor="{fill}"'
            self.lines.append(f'  {node} [label="{label}", shape=ellipse{style}];')
        return node, new

    def _function(self, fn) -> tuple[str, bool]:
        node, new = self._id(("fn", id(fn)), "f")
        if new:
            self.lines.append(
                f'  {node} [label="{type(fn).__name__}", shape=box, style=filled, '
                'fillcolor="#dddddd"];'
            )
        return node, new

    def _slot(self, edge, root_fill: str | None = None) -> str:
        """Draw the tensor at ``edge`` and, the first time, the function that made it;
        returns the tensor's node."""
        fn, nr = edge
        if isinstance(fn, AccumulateGrad):
            leaf = fn.variable()
            shape, dtype = fn._output_meta[0] if leaf is None else (leaf.shape, leaf.dtype)
            return self._tensor((fn, 0), shape, dtype, root_fill or "#b7d7f0")[0]
        shape, dtype = fn._output_meta[nr]
        node, new = self._tensor((fn, nr), shape, dtype, root_fill)
        if new:
            f_node, new_fn = self._function(fn)
            self.lines.append(f"  {f_node} -> {node};")
            if new_fn:
                self.pending.append((fn, f_node))
        return node

    def text(self) -> str:
        self.pending: deque = deque()
        edge = _slot(self.root)
        if edge is None:  # no history and no gradient: a lone tensor
            self._tensor(("const", id(self.root)), self.root.shape, self.root.dtype, "#f2f2f2")
        else:
            self._slot(edge, root_fill="#f6e3a1")
        # Breadth first with an explicit queue: a graph built by a long loop is deep.
        while self.pending:
            fn, f_node = self.pending.popleft()
            saved = fn.inputs
            for i, edge in enumerate(fn.next_edges):
                if edge is not None:
                    node = self._slot(edge)
                elif saved is not None:
                    x = saved[i]
                    node = self._tensor(("const", id(fn), i), x.shape, x.dtype, "#f2f2f2")[0]
                else:
                    continue
                self.lines.append(f"  {node} -> {f_node};")
        body = "\n".join(self.lines)
        return f'digraph autograd {{\n  node [fontname="Helvetica", fontsize=11];\n{body}\n}}'


def _slot(t):
    """The (node, output_nr) a tensor's gradient goes to, or None."""
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    if t.requires_grad:
        return t._edge()
    return None


__all__ = ["to_dot"]
