"""A servable's signature: the names, dtypes and shapes of its inputs and outputs.

Shapes carry the batch dimension first as ``-1`` (the manifest's spelling, and
TensorFlow's). ``Signature.check`` is the one place a request's arrays are held against
the signature: every refusal is a ``SignatureError`` (a ``ValueError``) that names the
input, what was expected and what came, so the HTTP layer can answer 400 with it.

>>> import numpy as np
>>> sig = Signature.from_manifest({"inputs": {"x": {"dtype": "float32", "shape": [-1, 2]}},
...                                "outputs": {"y": {"dtype": "float32", "shape": [-1]}}})
>>> sig.check({"x": [[1, 2], [3, 4]]})["x"].dtype
dtype('float32')
>>> sig.check({"x": [[1, 2, 3]]})
Traceback (most recent call last):
...
jitgrad.serving.signature.SignatureError: input 'x': expected shape (batch, 2), got (1, 3)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

# TensorFlow's DataType names, so metadata reads as TF Serving's does.
TF_DTYPES = {
    "bool": "DT_BOOL",
    "uint8": "DT_UINT8",
    "uint16": "DT_UINT16",
    "uint32": "DT_UINT32",
    "uint64": "DT_UINT64",
    "int8": "DT_INT8",
    "int16": "DT_INT16",
    "int32": "DT_INT32",
    "int64": "DT_INT64",
    "float16": "DT_HALF",
    "float32": "DT_FLOAT",
    "float64": "DT_DOUBLE",
    "complex64": "DT_COMPLEX64",
    "complex128": "DT_COMPLEX128",
}


# TF Serving's method names: which of :predict, :classify and :regress a signature answers.
PREDICT = "tensorflow/serving/predict"
CLASSIFY = "tensorflow/serving/classify"
REGRESS = "tensorflow/serving/regress"


class SignatureError(ValueError):
    """A request's inputs do not fit the signature (names, shapes or dtypes)."""


@dataclass(frozen=True)
class TensorSpec:
    """One named tensor: its dtype name and its shape, ``-1`` for the batch dimension."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def sample_shape(self) -> tuple[int, ...]:
        """The shape of one instance (the shape without its batch dimension)."""
        return self.shape[1:]

    def describe(self) -> str:
        return "(" + ", ".join("batch" if n == -1 else str(n) for n in self.shape) + ")"


@dataclass(frozen=True)
class Signature:
    """Inputs and outputs, each in declaration order."""

    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]

    @classmethod
    def from_manifest(cls, signature: Mapping) -> Signature:
        """From the ``signature`` entry of a model directory's manifest."""

        def specs(entries: Mapping) -> tuple[TensorSpec, ...]:
            out = []
            for name, spec in entries.items():
                shape = tuple(int(n) for n in spec["shape"])
                if not shape or shape[0] != -1 or any(n < 0 for n in shape[1:]):
                    raise ValueError(
                        f"tensor {name!r}: shape {list(shape)} must be batched: "
                        "-1 first, then non-negative sizes"
                    )
                np.dtype(spec["dtype"])  # a dtype numpy knows
                out.append(TensorSpec(str(name), str(spec["dtype"]), shape))
            return tuple(out)

        return cls(specs(signature["inputs"]), specs(signature["outputs"]))

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.inputs)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.outputs)

    @property
    def method_names(self) -> frozenset[str]:
        """Every signature answers predict; one output of shape (batch, classes) with
        two or more classes also classify (its values are the classes' scores), one of
        shape (batch,) or (batch, 1) also regress."""
        methods = {PREDICT}
        if len(self.outputs) == 1:
            shape = self.outputs[0].shape
            if len(shape) == 2 and shape[1] >= 2:
                methods.add(CLASSIFY)
            if shape in ((-1,), (-1, 1)):
                methods.add(REGRESS)
        return frozenset(methods)

    def describe_outputs(self) -> str:
        return ", ".join(f"{s.name} {s.describe()}" for s in self.outputs)

    def to_json(self) -> dict:
        """The manifest's spelling: ``{"inputs": {name: {"dtype", "shape"}}, "outputs": …}``."""
        return {
            "inputs": {s.name: {"dtype": s.dtype, "shape": list(s.shape)} for s in self.inputs},
            "outputs": {s.name: {"dtype": s.dtype, "shape": list(s.shape)} for s in self.outputs},
        }

    def check(self, inputs: Mapping) -> dict[str, np.ndarray]:
        """``inputs`` as C-contiguous arrays of the declared dtypes, with one batch size.

        Values are cast only within their kind or up it (``same_kind``: ints to floats,
        float64 to float32), never from float to int, bool to number or anything from a
        string; a name missing or unexpected, a ragged list, a wrong sample shape or an
        empty batch is refused.
        """
        if not isinstance(inputs, Mapping):
            raise SignatureError(
                f"inputs must map input names to values, got {type(inputs).__name__}"
            )
        missing = [n for n in self.input_names if n not in inputs]
        unexpected = [n for n in inputs if n not in self.input_names]
        if missing or unexpected:
            raise SignatureError(
                f"the model takes inputs {list(self.input_names)}; "
                + (f"missing {missing}" if missing else "")
                + ("; " if missing and unexpected else "")
                + (f"unexpected {unexpected}" if unexpected else "")
            )
        arrays, batch = {}, None
        for spec in self.inputs:
            array = _as_array(spec, inputs[spec.name])
            if array.ndim != len(spec.shape) or array.shape[1:] != spec.sample_shape:
                raise SignatureError(
                    f"input {spec.name!r}: expected shape {spec.describe()}, "
                    f"got {_shape_text(array.shape)}"
                )
            if array.shape[0] == 0:
                raise SignatureError(f"input {spec.name!r}: the batch is empty")
            if batch is not None and array.shape[0] != batch:
                raise SignatureError(
                    f"inputs disagree on the batch size: {batch} and "
                    f"{array.shape[0]} ({spec.name!r})"
                )
            batch = array.shape[0]
            arrays[spec.name] = array
        return arrays


def _as_array(spec: TensorSpec, value) -> np.ndarray:
    target = np.dtype(spec.dtype)
    try:
        array = np.asarray(value)
    except ValueError as e:  # ragged nesting
        raise SignatureError(f"input {spec.name!r}: not a rectangular array ({e})") from None
    if array.dtype == object:
        array = _wide_integers(spec, array, target)
    kind_ok = np.can_cast(array.dtype, target, casting="same_kind")
    if not kind_ok or (array.dtype.kind == "b" and target.kind != "b"):
        raise SignatureError(
            f"input {spec.name!r}: expected dtype {spec.dtype}, got values "
            f"of dtype {array.dtype} that do not cast to it safely"
        )
    _check_range(spec, array, target)
    return np.ascontiguousarray(array, dtype=target)


def _wide_integers(spec: TensorSpec, array: np.ndarray, target: np.dtype) -> np.ndarray:
    """Numbers numpy holds only as objects: integers beyond int64 and uint64 (JSON has no
    limit). For a float input they are floats, as numpy's float conversion reads them
    (10**30 is 1e30); no integer dtype holds them."""
    values = array.ravel().tolist()
    if not values or not all(type(v) in (int, float) for v in values):
        raise SignatureError(f"input {spec.name!r}: not a rectangular array of numbers")
    if target.kind in "fc":
        try:
            return np.array(array.tolist(), dtype=np.float64)
        except OverflowError:  # an int beyond float64 (so beyond every float dtype)
            digits = len(str(max(abs(v) for v in values)))
            raise SignatureError(
                f"input {spec.name!r}: a value of about 10**{digits - 1} "
                f"overflows dtype {spec.dtype}"
            ) from None
    if target.kind in "iu":
        low, high, info = min(values), max(values), np.iinfo(target)
        raise SignatureError(
            f"input {spec.name!r}: values from {low} to {high} do not fit "
            f"dtype {spec.dtype} ({info.min} to {info.max})"
        )
    raise SignatureError(f"input {spec.name!r}: expected dtype {spec.dtype}, got numbers")


def _check_range(spec: TensorSpec, array: np.ndarray, target: np.dtype) -> None:
    """Refuse values the cast would wrap (2**32 + 3 into int32 is 3) or overflow to inf:
    a request with them is wrong, never a different question."""
    if not array.size or target.kind not in "iuf" or array.dtype.kind not in "iuf":
        return
    if target.kind == "f":
        finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
        if not finite.size:
            return
        # The extremes, not np.abs: the absolute value of int64's minimum wraps to itself.
        low, high = finite.min().item(), finite.max().item()
        limit = float(np.finfo(target).max)
        if high > limit or low < -limit:
            raise SignatureError(
                f"input {spec.name!r}: a value of magnitude "
                f"{max(-low, high)} overflows dtype {spec.dtype}"
            )
        return
    low, high, info = array.min(), array.max(), np.iinfo(target)
    if low < info.min or high > info.max:
        raise SignatureError(
            f"input {spec.name!r}: values from {low} to {high} do not fit "
            f"dtype {spec.dtype} ({info.min} to {info.max})"
        )


def _shape_text(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


__all__ = [
    "Signature",
    "SignatureError",
    "TensorSpec",
    "TF_DTYPES",
    "PREDICT",
    "CLASSIFY",
    "REGRESS",
]
