"""to_dot: the autograd graph as DOT text, walked along the edges backward follows."""

import re
import shutil
import subprocess
import sys

import pytest

import jitgrad as jg
from jitgrad.autograd import Function
from jitgrad.autograd.dot import to_dot

NODE = re.compile(r'^  (\w+) \[label="((?:[^"\\]|\\.)*)", shape=(box|ellipse)')
EDGE = re.compile(r"^  (\w+) -> (\w+);$")


def parse(text: str):
    """(labels by node, shapes by node, edges) of the DOT text; every line must be one of
    the header, a node, an edge or the closing brace."""
    lines = text.splitlines()
    assert lines[0] == "digraph autograd {" and lines[-1] == "}"
    labels, shapes, edges = {}, {}, []
    for line in lines[2:-1]:
        node, edge = NODE.match(line), EDGE.match(line)
        assert node or edge, line
        if node:
            assert node[1] not in labels, f"{node[1]} declared twice"
            labels[node[1]] = node[2]
            shapes[node[1]] = node[3]
        else:
            assert edge[1] in labels and edge[2] in labels, f"edge before its nodes: {line}"
            edges.append((labels[edge[1]], labels[edge[2]]))
    return labels, shapes, edges


def functions(text: str) -> list[str]:
    labels, shapes, _ = parse(text)
    return sorted(labels[n] for n in labels if shapes[n] == "box")


def test_ops_and_shapes_are_labelled():
    x = jg.ones((2, 3), requires_grad=True)
    w = jg.ones((3, 4), requires_grad=True)
    y = jg.tanh(x @ w).sum()
    text = to_dot(y, names={"x": x, "w": w, "y": y})
    labels, _, edges = parse(text)
    assert functions(text) == ["MatMul", "Sum", "Tanh"]
    assert "x\\n(2, 3) float64" in labels.values()
    assert "w\\n(3, 4) float64" in labels.values()
    assert "y\\n() float64" in labels.values()
    assert ("(2, 4) float64", "Tanh") in edges


def test_same_input_twice_is_two_edges_to_one_leaf():
    x = jg.tensor(3.0, requires_grad=True)
    _, _, edges = parse(to_dot(jg.add(x, x), names={"x": x}))
    assert edges.count(("x\\n() float64", "Add")) == 2


def test_shared_intermediate_is_drawn_once():
    # DeZero's generation example: a = x², y = a² + a²
    x = jg.tensor(2.0, requires_grad=True)
    a = jg.square(x)
    y = jg.add(jg.square(a), jg.square(a))
    text = to_dot(y, names={"a": a})
    labels, _, edges = parse(text)
    assert list(labels.values()).count("a\\n() float64") == 1
    assert functions(text) == ["Add", "Square", "Square", "Square"]
    assert edges.count(("a\\n() float64", "Square")) == 2


def test_inputs_without_gradient_are_drawn_while_saved():
    x = jg.ones(3, requires_grad=True)
    c = jg.full((3,), 2.0)
    y = (x * c).sum()
    labels, _, edges = parse(to_dot(y))
    assert len(labels) == 6  # x, c, x*c, y and the two functions
    y.backward()  # frees the saved inputs: c has no edge and is no longer known
    labels, _, _ = parse(to_dot(y))
    assert len(labels) == 5


def test_variadic_function_with_two_outputs():
    class SplitSum(Function):
        def forward(self, a, b):
            return a + b, a - b

        def backward(self, g_sum, g_diff):
            return g_sum + g_diff, g_sum - g_diff

    a = jg.ones(2, requires_grad=True)
    b = jg.ones(2, requires_grad=True)
    s, d = SplitSum()(a, b)
    text = to_dot(s * d)
    _, _, edges = parse(text)
    assert functions(text) == ["Multiply", "SplitSum"]
    assert edges.count(("SplitSum", "(2,) float64")) == 2


def test_leaves_and_constants_alone():
    x = jg.ones(2, requires_grad=True)
    labels, shapes, edges = parse(to_dot(x, names={"x": x}))
    assert list(labels.values()) == ["x\\n(2,) float64"] and edges == []
    labels, _, edges = parse(to_dot(jg.zeros((1, 2), dtype=jg.float32)))
    assert list(labels.values()) == ["(1, 2) float32"] and edges == []


def test_a_long_chain_does_not_recurse():
    x = jg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(3 * sys.getrecursionlimit()):
        y = y * 1.0
    labels, _, _ = parse(to_dot(y))
    assert len(labels) > 6 * sys.getrecursionlimit()


def test_names_are_escaped():
    x = jg.ones(1, requires_grad=True)
    labels, _, _ = parse(to_dot(x * 2, names={'say "hi"': x}))
    assert 'say \\"hi\\"\\n(1,) float64' in labels.values()


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")
def test_graphviz_accepts_the_text():
    x = jg.ones((2, 2), requires_grad=True)
    text = to_dot(jg.sigmoid(x * x + x).sum(), names={"x": x})
    out = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "<svg" in out.stdout
