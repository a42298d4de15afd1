"""Feeding training loops: ``TensorDataset``, ``Subset``, ``random_split`` and
``DataLoader`` (PyTorch's spelling).

A ``DataLoader`` yields batches as stacked tensors. Shuffling draws one permutation per
epoch from its ``generator`` (a ``jg.random.Generator`` or an int seed), so a seeded loader
gives the same sequence of epochs in every run, and each epoch a different order.

>>> import jitgrad as jg
>>> from jitgrad.data import DataLoader, TensorDataset
>>> ds = TensorDataset(jg.arange(10.0).reshape(5, 2), jg.arange(5))
>>> loader = DataLoader(ds, batch_size=2, shuffle=True, generator=0)
>>> len(loader), [y.tolist() for _, y in loader]
(3, [[2, 4], [3, 0], [1]])
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .autograd.tensor import Tensor, as_tensor
from .creation import from_numpy
from .random import Generator, default_rng
from .tensor import TensorBase


class TensorDataset:
    """Samples are the rows of equally long tensors: ``ds[i] == (t0[i], t1[i], ...)``."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        self.tensors = tuple(as_tensor(t) for t in tensors)
        for k, t in enumerate(self.tensors):
            if t.ndim == 0:
                raise ValueError(f"tensor {k} of TensorDataset is 0-d: it has no samples")
        n = {t.shape[0] for t in self.tensors}
        if len(n) != 1:
            shapes = ", ".join(str(t.shape) for t in self.tensors)
            raise ValueError(f"TensorDataset tensors differ in their first dimension: {shapes}")

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def take(self, indices: np.ndarray) -> tuple[Tensor, ...]:
        """The samples at ``indices``, each tensor gathered at once (one copy, no graph)."""
        return tuple(from_numpy(np.ascontiguousarray(t.numpy()[indices])) for t in self.tensors)


class Subset:
    """The samples of ``dataset`` at ``indices``, in that order (PyTorch's ``Subset``)."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, [operator.index(i) for i in indices]

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def take(self, indices: np.ndarray) -> tuple[Tensor, ...]:
        """The samples at ``indices`` of a subset of a dataset that gathers batches."""
        return self.dataset.take(np.asarray(self.indices, dtype=np.int64)[indices])


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """``dataset`` cut into non-overlapping ``Subset``s of ``lengths`` (counts summing to
    its length, or fractions summing to 1, whose remainder goes one sample at a time to
    the first subsets) in an order drawn from ``generator`` (``jg.default_generator`` for
    None), as PyTorch's ``random_split``.

    >>> import jitgrad as jg
    >>> train, test = random_split(range(10), [0.8, 0.2], generator=jg.Generator().manual_seed(0))
    >>> len(train), len(test), sorted(list(train) + list(test)) == list(range(10))
    (8, 2, True)
    """
    from .random.default import resolve

    n, lengths = len(dataset), list(lengths)
    if lengths and all(isinstance(f, float) and 0 <= f <= 1 for f in lengths):
        if not math.isclose(sum(lengths), 1.0, abs_tol=1e-9):
            raise ValueError(f"random_split: fractions must sum to 1, got {sum(lengths)}")
        counts = [math.floor(n * f) for f in lengths]
        for k in range(n - sum(counts)):
            counts[k % len(counts)] += 1
    else:
        counts = [operator.index(k) for k in lengths]
        if any(k < 0 for k in counts) or sum(counts) != n:
            raise ValueError(
                f"random_split: lengths {counts} must be non-negative and sum to the "
                f"dataset's length {n}"
            )
    order = resolve(generator).permutation(n).numpy().tolist()
    bounds = np.cumsum([0, *counts]).tolist()
    return [Subset(dataset, order[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]


def _gathers_batches(dataset) -> bool:
    """Whether a batch of ``dataset`` is gathered at once (``take``): what indexing it
    sample by sample would give, with no ``__getitem__`` of a subclass (a transform)."""
    if isinstance(dataset, Subset):
        return type(dataset).__getitem__ is Subset.__getitem__ and _gathers_batches(dataset.dataset)
    return (
        isinstance(dataset, TensorDataset)
        and type(dataset).__getitem__ is TensorDataset.__getitem__
    )


def collate(samples: list):
    """Stack a list of samples into a batch: tensors and numbers are stacked along a new
    first axis; tuples, lists and dicts are collated field by field; strings (file names,
    text labels) stay a list, as in PyTorch.

    >>> import jitgrad as jg
    >>> batch = collate([(jg.ones(2), "cat", 0), (jg.zeros(2), "dog", 1)])
    >>> batch[0].shape, batch[1], batch[2].tolist()
    ((2, 2), ['cat', 'dog'], [0, 1])
    """
    first = samples[0]
    if isinstance(first, (str, bytes)):
        return list(samples)
    if isinstance(first, (tuple, list)):
        if any(len(s) != len(first) for s in samples):
            sizes = sorted({len(s) for s in samples})
            raise ValueError(
                f"collate: every sample of a batch must have the same number of fields, "
                f"got samples with {sizes} fields"
            )
        fields = [collate([s[k] for s in samples]) for k in range(len(first))]
        if hasattr(first, "_fields"):  # a namedtuple takes its fields as arguments
            return type(first)(*fields)
        return type(first)(fields)
    if isinstance(first, dict):
        return {key: collate([s[key] for s in samples]) for key in first}
    if isinstance(first, TensorBase):
        return from_numpy(np.stack([np.asarray(s.numpy()) for s in samples]))
    stacked = np.asarray(samples)
    if stacked.dtype.kind not in "biufc":
        raise TypeError(
            f"collate: samples must hold tensors, numbers, strings, or tuples, lists and "
            f"dicts of them; got {type(first).__name__} (pass collate_fn= for other kinds)"
        )
    return from_numpy(stacked)


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size``.

    ``shuffle`` draws a new order every epoch from ``generator`` (an int seed, a
    ``jg.Generator`` or ``jg.random.Generator``, or None for fresh entropy); ``drop_last``
    skips a final batch shorter than ``batch_size``. Batches are new tensors (never views
    of the data) and carry no gradient history.
    """

    def __init__(
        self,
        dataset,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        generator=None,
        collate_fn=None,
    ):
        if isinstance(batch_size, bool):  # an int to operator.index, but never meant as one
            raise TypeError(f"batch_size must be a positive integer, got {batch_size}")
        batch_size = operator.index(batch_size)
        if batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        if generator is None or (
            hasattr(generator, "__index__") and not isinstance(generator, bool)
        ):
            generator = default_rng(None if generator is None else operator.index(generator))
        elif not isinstance(generator, Generator):
            raise TypeError(
                "generator must be a jg.Generator (or a jg.random.Generator), an int seed "
                "or None, "
                f"got {type(generator).__name__}"
            )
        self.generator = generator
        self.collate_fn = collate if collate_fn is None else collate_fn

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self) -> np.ndarray:
        n = len(self.dataset)
        if self.shuffle:
            return self.generator.permutation(n).numpy()
        return np.arange(n)

    def __iter__(self):
        order = self._order()
        fast = self.collate_fn is collate and _gathers_batches(self.dataset)
        for k in range(len(self)):
            indices = order[k * self.batch_size : (k + 1) * self.batch_size]
            if fast:
                yield self.dataset.take(indices)
            else:
                yield self.collate_fn([self.dataset[int(i)] for i in indices])


__all__ = ["TensorDataset", "Subset", "random_split", "DataLoader", "collate"]
