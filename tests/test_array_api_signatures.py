"""The Array API standard's signatures on jitgrad's functions.

Every function of the standard's namespace and of its ``linalg`` and ``fft`` extensions
is compared with array_api_strict's (the standard's reference namespace): what the
standard passes by position, jitgrad takes by position; what it names, jitgrad takes
under that name; what it leaves optional, jitgrad does not require. Where numpy differs,
numpy's signature is kept beside the standard's (``jg.sum(x, 0)``, ``jg.clip(x, a_min=0)``).
"""

import doctest
import functools
import inspect
import sys

import array_api_strict as xps
import numpy as np
import pytest

import jitgrad as jg

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
NAMED = (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)

# array_api_strict's own switches, not the standard's.
STRICT_ONLY = {
    "get_array_api_strict_flags",
    "set_array_api_strict_flags",
    "reset_array_api_strict_flags",
}

# Scalar first parameters that numpy callers name (``np.arange(start=0, stop=5)``,
# ``np.eye(N=3)``): they stay keywords too. Every other first parameter the standard makes
# positional-only (an array: numpy programs pass it by position) is positional-only.
NUMPY_NAMED_FIRST = {"arange", "linspace", "eye", "fft.fftfreq", "fft.rfftfreq"}


def mismatches(standard: inspect.Signature, ours: inspect.Signature, *, named_first=False):
    """What a call written to ``standard`` cannot do with a function of signature
    ``ours``, one line each (empty when every such call binds)."""
    params = list(ours.parameters.values())
    positional = [p for p in params if p.kind in POSITIONAL]
    named = {p.name: p for p in params if p.kind in NAMED}
    varargs = any(p.kind is P.VAR_POSITIONAL for p in params)
    problems = []
    if any(p.kind is P.VAR_KEYWORD for p in params):
        problems.append("takes **kwargs: a real signature names every keyword")
    used, at = set(), 0
    for s in standard.parameters.values():
        if s.kind is P.VAR_POSITIONAL:
            if not varargs:
                problems.append(f"*{s.name}: takes no variable number of arguments")
            continue
        optional = s.default is not P.empty
        if s.kind in POSITIONAL:
            if at >= len(positional):
                problems.append(f"{s.name}: cannot be passed as positional argument {at}")
            else:
                mine = positional[at]
                used.add(mine.name)
                if optional and mine.default is P.empty:
                    problems.append(f"{s.name}: optional in the standard, required here")
                if at == 0 and s.kind is P.POSITIONAL_ONLY and not named_first:
                    if mine.kind is not P.POSITIONAL_ONLY:
                        problems.append(f"{s.name}: positional-only in the standard")
            at += 1
        if s.kind in NAMED:
            mine = named.get(s.name)
            if mine is None:
                problems.append(f"{s.name}=: not accepted as a keyword")
            else:
                used.add(mine.name)
                if optional and mine.default is P.empty:
                    problems.append(f"{s.name}=: optional in the standard, required here")
    for p in params:
        if p.kind in POSITIONAL + (P.KEYWORD_ONLY,) and p.default is P.empty:
            if p.name not in used:
                problems.append(f"{p.name}: required here, not a parameter of the standard")
    return problems


def _standard_functions():
    spaces = (("", xps, jg), ("linalg.", xps.linalg, jg.linalg), ("fft.", xps.fft, jg.fft))
    for prefix, standard, ours in spaces:
        for name in standard.__all__:
            fn = getattr(standard, name)
            if callable(fn) and not isinstance(fn, type) and name not in STRICT_ONLY:
                yield prefix + name, fn, getattr(ours, name, None)


STANDARD = list(_standard_functions())


@pytest.mark.parametrize(("name", "standard", "ours"), STANDARD, ids=[s[0] for s in STANDARD])
def test_signature_takes_every_call_the_standard_writes(name, standard, ours):
    assert ours is not None, f"jitgrad has no {name}"
    problems = mismatches(
        inspect.signature(standard),
        inspect.signature(ours),
        named_first=name in NUMPY_NAMED_FIRST,
    )
    assert not problems, f"{name}{inspect.signature(ours)}: " + "; ".join(problems)


def test_the_comparison_finds_each_kind_of_mismatch():
    def standard(x, /, shape, *, axis=None, copy=None): ...

    def fine(x, /, shape=None, *dims, axis=None, copy=None, order="C"): ...

    def wrong(a, *shape, axis, dtype, **kwargs): ...

    assert mismatches(inspect.signature(standard), inspect.signature(fine)) == []
    assert mismatches(inspect.signature(standard), inspect.signature(wrong)) == [
        "takes **kwargs: a real signature names every keyword",
        "x: positional-only in the standard",
        "shape: cannot be passed as positional argument 1",
        "shape=: not accepted as a keyword",
        "axis=: optional in the standard, required here",
        "copy=: not accepted as a keyword",
        "dtype: required here, not a parameter of the standard",
    ]


def test_every_fft_function_has_a_real_signature():
    for name in jg.fft.__all__:
        kinds = [p.kind for p in inspect.signature(getattr(jg.fft, name)).parameters.values()]
        assert P.VAR_POSITIONAL not in kinds and P.VAR_KEYWORD not in kinds, name


# One call of each function that takes the standard's ``device=``.
_x = jg.ones(2)
DEVICE_CALLS = {
    "asarray": lambda **kw: jg.asarray([1.0, 2.0], **kw),
    "arange": lambda **kw: jg.arange(2, **kw),
    "empty": lambda **kw: jg.empty(2, **kw),
    "empty_like": lambda **kw: jg.empty_like(_x, **kw),
    "eye": lambda **kw: jg.eye(2, **kw),
    "from_dlpack": lambda **kw: jg.from_dlpack(np.ones(2), **kw),
    "full": lambda **kw: jg.full(2, 1.0, **kw),
    "full_like": lambda **kw: jg.full_like(_x, 1.0, **kw),
    "linspace": lambda **kw: jg.linspace(0.0, 1.0, 2, **kw),
    "ones": lambda **kw: jg.ones(2, **kw),
    "ones_like": lambda **kw: jg.ones_like(_x, **kw),
    "zeros": lambda **kw: jg.zeros(2, **kw),
    "zeros_like": lambda **kw: jg.zeros_like(_x, **kw),
    "astype": lambda **kw: jg.astype(_x, jg.float32, **kw),
    "fft.fftfreq": lambda **kw: jg.fft.fftfreq(2, **kw),
    "fft.rfftfreq": lambda **kw: jg.fft.rfftfreq(2, **kw),
}


def test_device_calls_cover_every_function_with_device():
    with_device = {n for n, fn, _ in STANDARD if "device" in inspect.signature(fn).parameters}
    assert with_device == set(DEVICE_CALLS)


@pytest.mark.parametrize("name", sorted(DEVICE_CALLS))
def test_device_keyword_takes_the_cpu_and_refuses_others(name):
    call = DEVICE_CALLS[name]
    for cpu in (None, "cpu", jg.Device("cpu"), _x.device):
        assert call(device=cpu).device == "cpu"
    with pytest.raises(ValueError, match="'cuda'"):
        call(device="cuda")


@functools.cache
def _doctested(module: str) -> set[str]:
    """The names of the docstrings with examples that the suite's doctests run in
    ``module`` (``--doctest-modules`` collects what doctest's finder finds)."""
    found = doctest.DocTestFinder().find(sys.modules[module])
    return {test.name for test in found if test.examples}


@pytest.mark.parametrize(("name", "standard", "ours"), STANDARD, ids=[s[0] for s in STANDARD])
def test_docstring_example_runs_with_the_suite(name, standard, ours):
    fn = inspect.unwrap(ours)
    assert ">>>" in (fn.__doc__ or ""), f"{name}'s docstring has no example"
    assert f"{fn.__module__}.{fn.__name__}" in _doctested(fn.__module__), name
