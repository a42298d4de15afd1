"""jg.data: TensorDataset and DataLoader batching, seeded shuffling, drop_last."""

import collections

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.data import DataLoader, TensorDataset, collate, random_split


def dataset(n=10):
    return TensorDataset(jg.arange(n * 2.0).reshape(n, 2), jg.arange(n))


def labels(loader):
    return [y.tolist() for _, y in loader]


def test_tensor_dataset_items_and_errors():
    ds = dataset()
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3
    with pytest.raises(ValueError, match=r"first dimension: \(3,\), \(4,\)"):
        TensorDataset(jg.zeros(3), jg.zeros(4))
    with pytest.raises(ValueError, match="0-d"):
        TensorDataset(jg.tensor(1.0))
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()


def test_sequential_batches_are_stacked_copies():
    ds = dataset()
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [x.shape for x, _ in batches] == [(4, 2), (4, 2), (2, 2)]
    assert labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    x0 = batches[0][0]
    assert x0.dtype is jg.float64 and batches[0][1].dtype is jg.int64
    assert x0.storage() is not ds.tensors[0].storage()  # never a view of the data
    assert not x0.requires_grad


def test_drop_last():
    loader = DataLoader(dataset(), batch_size=4, drop_last=True)
    assert len(loader) == 2 and labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(DataLoader(dataset(8), batch_size=4, drop_last=True)) == 2
    assert len(DataLoader(dataset(3), batch_size=4, drop_last=True)) == 0


def test_shuffle_is_seeded_reproducible_and_changes_per_epoch():
    a = DataLoader(dataset(), batch_size=3, shuffle=True, generator=42)
    b = DataLoader(dataset(), batch_size=3, shuffle=True, generator=jg.random.default_rng(42))
    epochs_a = [labels(a) for _ in range(3)]
    epochs_b = [labels(b) for _ in range(3)]
    assert epochs_a == epochs_b  # same seed, same sequence of epochs
    assert epochs_a[0] != epochs_a[1]  # each epoch a new order
    for epoch in epochs_a:
        assert sorted(sum(epoch, [])) == list(range(10))  # a permutation
    c = DataLoader(dataset(), batch_size=3, shuffle=True, generator=43)
    assert labels(c) != epochs_a[0]


def test_shuffled_batches_pair_inputs_with_their_labels():
    ds = dataset()
    for x, y in DataLoader(ds, batch_size=4, shuffle=True, generator=0):
        np.testing.assert_array_equal(x.numpy(), ds.tensors[0].numpy()[y.numpy()])


def test_generic_dataset_is_collated():
    class Squares:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": jg.tensor([float(i), float(i * i)]), "y": i}

    batches = list(DataLoader(Squares(), batch_size=2))
    assert [b["x"].shape for b in batches] == [(2, 2), (2, 2), (1, 2)]
    assert batches[1]["y"].tolist() == [2, 3] and batches[1]["x"].tolist()[1] == [3.0, 9.0]


def test_strings_stay_lists_and_other_objects_are_named():
    class Named:
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return jg.tensor([float(i)]), f"sample-{i}", i

    x, names, labels = next(iter(DataLoader(Named(), batch_size=2)))
    assert x.shape == (2, 1) and names == ["sample-0", "sample-1"] and labels.tolist() == [0, 1]
    with pytest.raises(TypeError, match="collate: .* got NoneType"):
        collate([None, None])


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch_size must be a positive"):
        DataLoader(dataset(), batch_size=0)
    with pytest.raises(TypeError, match="generator"):
        DataLoader(dataset(), shuffle=True, generator="seed")
    # bools are ints to operator.index; PyTorch refuses batch_size=True
    with pytest.raises(TypeError, match="batch_size must be a positive integer, got True"):
        DataLoader(dataset(), batch_size=True)
    with pytest.raises(TypeError, match="generator must be .* got bool"):
        DataLoader(dataset(), shuffle=True, generator=True)


def test_tensor_dataset_subclass_getitem_is_used():
    class Shifted(TensorDataset):  # a transform applied per sample, as in PyTorch
        def __getitem__(self, index):
            x, y = super().__getitem__(index)
            return x + 100, y

    ds = Shifted(jg.arange(6.0).reshape(3, 2), jg.arange(3))
    [(x, y)] = DataLoader(ds, batch_size=3)
    assert x.tolist() == [[100.0, 101.0], [102.0, 103.0], [104.0, 105.0]]
    assert y.tolist() == [0, 1, 2]


def test_collate_namedtuples_and_refuses_samples_of_unequal_size():
    Pair = collections.namedtuple("Pair", "x y")
    batch = collate([Pair(jg.ones(2), 0), Pair(jg.zeros(2), 1)])
    assert type(batch) is Pair
    assert batch.x.tolist() == [[1.0, 1.0], [0.0, 0.0]] and batch.y.tolist() == [0, 1]
    loader = DataLoader([Pair(1.0, 2), Pair(3.0, 4)], batch_size=2)
    assert [(b.x.tolist(), b.y.tolist()) for b in loader] == [([1.0, 3.0], [2, 4])]
    # PyTorch refuses these too; a shorter first sample used to drop the others' fields
    for samples in ([(1,), (3, 4)], [(1, 2), (3,)]):
        with pytest.raises(ValueError, match="same number of fields"):
            collate(samples)


# fractions: PyTorch's floors, the remainder one at a time to the first subsets
@pytest.mark.parametrize(
    "lengths, sizes",
    [([6, 3, 1], [6, 3, 1]), ([0.5, 0.3, 0.2], [5, 3, 2]), ([0.34, 0.33, 0.33], [4, 3, 3])],
)
def test_random_split_covers_the_dataset_once_in_a_seeded_order(lengths, sizes):
    ds = TensorDataset(jg.arange(20.0).reshape(10, 2), jg.arange(10))
    parts = random_split(ds, lengths, generator=jg.Generator().manual_seed(4))
    again = random_split(ds, lengths, generator=jg.Generator().manual_seed(4))
    assert [len(p) for p in parts] == sizes
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    assert [p.indices for p in parts] == [p.indices for p in again]
    first = parts[0]
    x, y = first[1]
    assert y.item() == first.indices[1] and x.tolist() == [2.0 * y.item(), 2.0 * y.item() + 1]
    # a loader over a subset gathers its batches at once, the same samples as one by one
    batches = list(DataLoader(first, batch_size=4))
    assert [y.tolist() for _, y in batches] == [
        first.indices[k : k + 4] for k in range(0, len(first), 4)
    ]
    assert batches[0][0].tolist() == [first[i][0].tolist() for i in range(len(batches[0][1]))]


def test_random_split_refuses_lengths_that_do_not_cover_the_dataset():
    with pytest.raises(ValueError, match="must be non-negative and sum to the dataset's length 5"):
        random_split(range(5), [2, 2])
    with pytest.raises(ValueError, match="fractions must sum to 1"):
        random_split(range(5), [0.5, 0.3])
    with pytest.raises(TypeError, match="generator must be a jg.Generator"):
        random_split(range(5), [3, 2], generator="0")
