"""``python -m tools.compat_table [--check]``: write docs/numpy-compatibility.md, the table of
every public name of numpy, numpy.linalg, numpy.fft and numpy.random and what jitgrad
offers for it (``--check``: only say whether the committed table is up to date).

A name's status:

- **jitgrad**: jitgrad's namespace of the same place has the name, and the object is
  jitgrad's own (defined in a jitgrad module, or a plain constant such as ``pi``).
- **re-export**: jitgrad has the name, but the object is numpy's own, handed on as it is
  (calling it runs numpy).
- **via numpy**: jitgrad lacks the name, but numpy's function takes tensors: a ufunc
  (``__array_ufunc__``) or a function that dispatches on ``__array_function__``. Where
  jitgrad routes the call to its own op, numpy's call on tensors gives tensors with
  gradients ("jitgrad op" in the table); else numpy's own result, arrays without gradients.
- **missing**: neither.

The gradient column is measured, not declared: each of jitgrad's functions (own or routed
from numpy) is called on small float64 tensors that require grad, with the first of a few
argument patterns (``f(x)``, ``f(x, x)``, ``f(x, 1)``, ...) that both numpy and jitgrad
accept and for which numpy's result is floating. **yes**: jitgrad's result carries a graph,
and ``backward()`` of its sum gives the inputs finite gradients. **no**: it carries no
graph, its backward fails, or jitgrad refuses operands that require grad there. **—**: not
a question of gradients: numpy's result is not floating for any accepted pattern
(integers, booleans, indices), or the name is a constant, a type, a module, a random draw,
I/O, a question about dtypes, a creation from shapes, or piecewise constant (``floor``,
``sign``, ...). **?**: no argument pattern worked on both sides, so nothing was measured.
The probe shows that a gradient flows, not that it is right: the op's own tests check its
values.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import types
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "numpy-compatibility.md"
COMMAND = "python -m tools.compat_table"

# numpy namespace -> jitgrad's namespace for it (an attribute path from jitgrad)
NAMESPACES = {"numpy": "", "numpy.linalg": "linalg", "numpy.fft": "fft", "numpy.random": "random"}

# Names whose results do not depend differentiably on array values: gradients do not apply.
# (Random draws are all of numpy.random; a numpy type or module is found by its kind.)
NO_GRADIENT = {
    # creation from shapes, values or ranges
    "arange",
    "array",
    "asarray",
    "asanyarray",
    "ascontiguousarray",
    "asfortranarray",
    "empty",
    "empty_like",
    "eye",
    "frombuffer",
    "fromfunction",
    "fromiter",
    "fromstring",
    "full",
    "full_like",
    "geomspace",
    "identity",
    "indices",
    "linspace",
    "logspace",
    "ones",
    "ones_like",
    "tri",
    "zeros",
    "zeros_like",
    # piecewise constant
    "ceil",
    "fix",
    "floor",
    "floor_divide",
    "heaviside",
    "rint",
    "round",
    "around",
    "sign",
    "trunc",
    "spacing",
    "nextafter",
    # I/O and global state
    "fftfreq",
    "rfftfreq",
    "fromfile",
    "genfromtxt",
    "load",
    "loadtxt",
    "save",
    "savetxt",
    "savez",
    "savez_compressed",
    "errstate",
    "geterr",
    "geterrcall",
    "getbufsize",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
    "setbufsize",
    "seterr",
    "seterrcall",
    # questions about dtypes
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "issubdtype",
    "min_scalar_type",
    "promote_types",
    "result_type",
}


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # what numpy's object is: ufunc, function, type, module, constant
    status: str  # jitgrad, re-export, via numpy, missing
    gradient: str  # yes, no, —, ?, or "" where jitgrad runs no code of its own
    note: str = ""


def public_names(module: types.ModuleType) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def _kind(obj) -> str:
    if isinstance(obj, np.ufunc):
        return "ufunc"
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, type):
        return "type"
    if callable(obj):
        return "function"
    return "constant"


def _is_jitgrads(obj, numpy_obj) -> bool:
    """``obj`` (jitgrad's object for a name) is jitgrad's own, not numpy's handed on."""
    if obj is numpy_obj:
        return not callable(obj) and not isinstance(obj, types.ModuleType)  # pi, newaxis
    if isinstance(obj, types.ModuleType):
        return obj.__name__.startswith("jitgrad")
    if isinstance(obj, (bool, int, float, complex, str, type(None))):
        return True  # a constant: nothing to implement but its value
    owner = getattr(obj, "__module__", None) if callable(obj) else None
    if not isinstance(owner, str) or not owner.startswith("jitgrad"):
        owner = type(obj).__module__  # an instance: a DType, a ufunc-like object
    return owner.startswith("jitgrad")


def _numpy_dispatches(numpy_obj) -> bool:
    """numpy's object takes tensors: a ufunc or an ``__array_function__`` dispatcher."""
    return isinstance(numpy_obj, np.ufunc) or hasattr(numpy_obj, "_implementation")


def _routed_op(numpy_obj, jitgrad):
    """jitgrad's op that numpy's call on tensors runs, or None (numpy's own result)."""
    protocol = jitgrad.ops.numpy_protocol
    if isinstance(numpy_obj, np.ufunc):
        name = numpy_obj.__name__
        op = getattr(protocol, "_UFUNC_OPS", {}).get(name)
        alias = getattr(protocol, "_UFUNC_ALIASES", {}).get(name, name)
        return op or getattr(jitgrad.ops, alias, None)
    return numpy_obj if numpy_obj in getattr(protocol, "_FUNCTIONS", {}) else None


# -- the gradient probe ----------------------------------------------------------------------

_X = np.array([[0.5, 0.1, 0.2], [0.1, 0.6, 0.3], [0.2, 0.3, 0.7]])  # SPD, entries in (0, 1)


# Argument lists to try, simplest first: ``x()`` gives a fresh operand, ``i()`` an index
# array for it ((3, 1) integers).
_PATTERNS = [
    lambda x, i: (x(),),
    lambda x, i: (x(), x()),
    lambda x, i: (x(), 1),
    lambda x, i: ([x(), x()],),
    lambda x, i: ("ij,jk->ik", x(), x()),
    lambda x, i: (x(), (3, 3)),
    lambda x, i: (x(), 0, 1),
    lambda x, i: (x(), "float32"),
    lambda x, i: (x(), i(), 1),
    lambda x, i: (x() > 0.3, x(), x()),
    lambda x, i: (x()[0],),
    lambda x, i: (x()[0], x()[0]),
]
_INDEX = [[0], [2], [1]]


def _floating(result) -> list:
    parts = result if isinstance(result, (tuple, list)) else (result,)
    return [p for p in parts if _dtype_kind(p) in "fc"]


def _dtype_kind(part) -> str:
    """numpy's dtype kind of ``part``; "O" for what is no array (einsum_path's report)."""
    try:
        return np.asarray(part).dtype.kind
    except ValueError:
        return "O"


def _takes_floats(numpy_obj) -> bool:
    """False for a ufunc with no floating loop (bitwise ops, shifts): integers only."""
    if not isinstance(numpy_obj, np.ufunc):
        return True
    return any("d" in signature.split("->")[0] for signature in numpy_obj.types)


def _leaf(jitgrad, leaves: list, requires_grad: bool = True):
    """A fresh operand, kept in ``leaves``."""
    t = jitgrad.tensor(_X.copy(), requires_grad=requires_grad)
    leaves.append(t)
    return t


def _gradient(numpy_fn, jitgrad_fn, jitgrad) -> str:
    """yes / no / — / ? for ``jitgrad_fn`` (see the module's docstring)."""
    if not _takes_floats(numpy_fn):
        return "—"
    worked = False
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for pattern in _PATTERNS:
            try:
                expected = numpy_fn(*pattern(_X.copy, lambda: np.array(_INDEX)))
            except Exception:
                continue
            floating = bool(_floating(expected))  # (integers may come of other arguments)
            leaves = []
            try:
                got = jitgrad_fn(*pattern(partial(_leaf, jitgrad, leaves), _index(jitgrad)))
            except Exception:
                # Refused for operands that require grad, but runs on plain ones: "no".
                try:
                    jitgrad_fn(*pattern(partial(_leaf, jitgrad, [], False), _index(jitgrad)))
                except Exception:
                    continue
                if floating:
                    return "no"
                worked = True
                continue
            worked = True
            if floating:
                return _backward_reaches(_floating(got), leaves, jitgrad)
    return "—" if worked else "?"


def _index(jitgrad):
    return lambda: jitgrad.tensor(_INDEX)


def _backward_reaches(outputs, inputs, jitgrad) -> str:
    """yes when every floating output carries a graph and the backward of their summed
    real parts gives some input a finite gradient."""
    if not outputs or not all(getattr(o, "requires_grad", False) for o in outputs):
        return "no"
    try:
        total = sum(jitgrad.sum(jitgrad.real(o) if o.dtype.is_complex else o) for o in outputs)
        total.backward()
    except Exception:
        return "no"
    grads = [t.grad for t in inputs if t.grad is not None]
    return "yes" if grads and all(np.isfinite(np.asarray(g)).all() for g in grads) else "no"


# -- the table -------------------------------------------------------------------------------


def entries(numpy_name: str, jitgrad) -> list[Entry]:
    """One Entry per public name of numpy's namespace ``numpy_name``."""
    # The probes ask whether a graph is recorded, which no backend changes: numpy's
    # evaluator answers without compiling a kernel per op.
    backend = jitgrad.config.backend
    jitgrad.config.backend = "reference"
    try:
        return _entries(numpy_name, jitgrad)
    finally:
        jitgrad.config.backend = backend


def _entries(numpy_name: str, jitgrad) -> list[Entry]:
    numpy_ns = importlib.import_module(numpy_name)
    ours = jitgrad
    for part in filter(None, NAMESPACES[numpy_name].split(".")):
        ours = getattr(ours, part, None)
    rows = []
    for name in public_names(numpy_ns):
        numpy_obj = getattr(numpy_ns, name)
        kind = _kind(numpy_obj)
        probed = kind in ("function", "ufunc") and numpy_name != "numpy.random"
        probed = probed and name not in NO_GRADIENT
        present = ours is not None and hasattr(ours, name)  # (jg.newaxis is None)
        obj = getattr(ours, name) if present else None
        if present and _is_jitgrads(obj, numpy_obj):
            gradient = _gradient(numpy_obj, obj, jitgrad) if probed and callable(obj) else "—"
            rows.append(Entry(name, kind, "jitgrad", gradient))
        elif present:
            rows.append(Entry(name, kind, "re-export", ""))
        elif _numpy_dispatches(numpy_obj):
            if _routed_op(numpy_obj, jitgrad) is None:
                rows.append(Entry(name, kind, "via numpy", "", "numpy's result"))
            else:
                gradient = _gradient(numpy_obj, numpy_obj, jitgrad) if probed else "—"
                rows.append(Entry(name, kind, "via numpy", gradient, "jitgrad op"))
        else:
            rows.append(Entry(name, kind, "missing", ""))
    return rows


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def render(tables: dict[str, list[Entry]]) -> str:
    doc = (__doc__ or "").split("\n\n", 1)[1].strip()
    lines = [
        "# numpy compatibility",
        "",
        f"Generated by `{COMMAND}` against numpy {np.__version__}; do not edit by hand: run "
        "that command after a change to jitgrad's namespaces (the test "
        "`tests/tools/test_compat_table.py` fails while this page is out of date).",
        "",
        doc,
        "",
        "## Summary",
        "",
        "| namespace | public names | jitgrad | gradient yes | re-export | via numpy "
        "| missing | in jitgrad | takes tensors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for namespace, rows in tables.items():
        count = {
            s: sum(r.status == s for r in rows)
            for s in ("jitgrad", "re-export", "via numpy", "missing")
        }
        grads = sum(r.gradient == "yes" for r in rows if r.status == "jitgrad")
        total = len(rows)
        have = count["jitgrad"] + count["re-export"]
        lines.append(
            f"| `{namespace}` | {total} | {count['jitgrad']} | {grads} | {count['re-export']} "
            f"| {count['via numpy']} | {count['missing']} | {_percent(have, total)} "
            f"| {_percent(have + count['via numpy'], total)} |"
        )
    lines += [
        "",
        '"in jitgrad": the share of names jitgrad has (its own or re-exported), which '
        '`import jitgrad as np` finds; "takes tensors" adds the names whose numpy function '
        "accepts tensors.",
    ]
    for namespace, rows in tables.items():
        lines += [
            "",
            f"## `{namespace}`",
            "",
            "| name | numpy's kind | status | gradient | note |",
            "|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(f"| `{r.name}` | {r.kind} | {r.status} | {r.gradient} | {r.note} |")
    return "\n".join(lines) + "\n"


def generate() -> str:
    import jitgrad

    return render({name: entries(name, jitgrad) for name in NAMESPACES})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help=f"exit 1 if {OUTPUT.relative_to(ROOT)} is out of date"
    )
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"{OUTPUT.relative_to(ROOT)} is out of date: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
