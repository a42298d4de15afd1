"""Dask arrays of jitgrad tensors, against the same Dask graph over numpy chunks: every
chunk computed is a tensor, and results come back as tensors."""

import os
import pickle

import dask.array as da
import numpy as np
import pytest
from dask.callbacks import Callback
from dask.sizeof import sizeof

import jitgrad as jg
import jitgrad.dask as jgd
from jitgrad.jit import numpy_launch

VALUES = np.random.default_rng(0).standard_normal((6, 8))
CHUNKS = (4, 3)


class ChunkTypes(Callback):
    """The type of every array (or array inside a tuple, list or dict) a task returned."""

    def __init__(self):
        super().__init__()
        self.types = set()

    def _posttask(self, key, result, dsk, state, worker_id):
        stack = [result]
        while stack:
            r = stack.pop()
            if isinstance(r, dict):
                stack.extend(r.values())
            elif isinstance(r, (tuple, list)):
                stack.extend(r)
            elif isinstance(r, (np.ndarray, jg.Tensor)):
                self.types.add(type(r))


OPS = {
    "add": lambda x: x + 1.5 * x,
    "exp": lambda x: np.exp(x) - 1,
    "compare": lambda x: da.where(x > 0, x, 0),
    "astype": lambda x: x.astype(np.float32) * 2,
    "sum": lambda x: x.sum(),
    "sum axis 0": lambda x: x.sum(axis=0),
    "mean": lambda x: x.mean(),
    "mean axis 1": lambda x: x.mean(axis=1),
    "max": lambda x: x.max(),
    "max axis 0": lambda x: x.max(axis=0),
    "min axis 1": lambda x: x.min(axis=1),
    "var": lambda x: x.var(axis=0),
    "argmax": lambda x: x.argmax(axis=1),
    "matmul": lambda x: x @ x.T,
    "tensordot": lambda x: da.tensordot(x, x, axes=([0], [0])),
    "slice": lambda x: x[1:5, ::2],
    "negative step": lambda x: x[::-1, 2:7],
    "transpose": lambda x: x.T + 0,
    "rechunk": lambda x: x.rechunk((3, 8)),
    "concatenate": lambda x: da.concatenate([x, x[:2]], axis=0),
    "cumsum": lambda x: x.cumsum(axis=1),
}


@pytest.mark.parametrize("name", OPS)
def test_ops_on_tensor_chunks_match_numpy_chunks(name):
    op = OPS[name]
    x = op(jgd.from_tensor(jg.tensor(VALUES), chunks=CHUNKS))
    expected = op(da.from_array(VALUES, chunks=CHUNKS)).compute(scheduler="sync")
    assert isinstance(x._meta, jg.Tensor)
    with ChunkTypes() as seen:
        got = x.compute(scheduler="sync")
    assert seen.types == {jg.Tensor}
    assert isinstance(got, jg.Tensor)
    assert got.dtype.name == expected.dtype.name and got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_map_blocks_runs_a_fused_function_on_every_chunk(monkeypatch):
    @jg.function
    def chain(b):
        return jg.tanh(b) * 2.0 + b * b

    launched = []

    def counted(launch):
        launched.append(launch.kernel)
        return run(launch)

    run = numpy_launch.run  # (every kernel step of an eager call runs through it)
    monkeypatch.setattr(numpy_launch, "run", counted)
    x = jgd.from_tensor(jg.tensor(VALUES), chunks=CHUNKS)
    y = x.map_blocks(chain, meta=jg.empty((0, 0), dtype=jg.float64))
    got = y.compute(scheduler="sync")
    assert len(launched) == x.npartitions == 6
    assert len({k.key for k in launched}) == 1 and "tanh" in launched[0].source
    assert isinstance(got, jg.Tensor)
    np.testing.assert_allclose(got.numpy(), np.tanh(VALUES) * 2 + VALUES**2, rtol=1e-12)


def test_from_file_maps_chunks_without_reading_the_file(tmp_path):
    values = np.arange(200 * 300, dtype=np.float32).reshape(200, 300)
    path = str(tmp_path / "state.jg")
    jg.save({"weight": jg.tensor(values), "bias": jg.zeros(3)}, path)
    x = jgd.from_file(path, chunks=(64, 100), key="weight")
    assert x.dtype == np.float32 and x.shape == (200, 300) and isinstance(x._meta, jg.Tensor)
    # The graph names the file; it holds none of its 240 kB.
    assert len(pickle.dumps(dict(x.__dask_graph__()))) < 10_000
    block = x.to_delayed()[1, 2].compute(scheduler="sync")  # (the chunk itself)
    assert block.untyped_storage().filename == os.path.abspath(path)
    np.testing.assert_array_equal(block.numpy(), values[64:128, 200:300])
    total = x.sum(axis=0).compute(scheduler="sync")
    assert isinstance(total, jg.Tensor)
    np.testing.assert_allclose(total.numpy(), values.sum(axis=0), rtol=1e-6)


def test_from_file_names_what_is_missing(tmp_path):
    path = tmp_path / "state.jg"
    jg.save({"weight": jg.ones(4), "step": 3}, path)
    with pytest.raises(ValueError, match="pass key="):
        jgd.from_file(path)
    with pytest.raises(KeyError, match="no tensor at key 'bias'"):
        jgd.from_file(path, key="bias")
    with pytest.raises(ValueError, match="holds a int at key 'step'"):
        jgd.from_file(path, key="step")
    with pytest.raises(TypeError, match="expects a jitgrad tensor"):
        jgd.from_tensor(VALUES)


def test_tokens_sizes_and_creation_like_a_tensor():
    a = jg.tensor(VALUES)
    assert jgd.from_tensor(a, 3).name == jgd.from_tensor(a.clone(), 3).name
    assert jgd.from_tensor(a, 3).name != jgd.from_tensor(a + 1, 3).name
    assert sizeof(a) == VALUES.nbytes
    # numpy's creation functions with like= a tensor (NEP 35), as Dask makes chunks.
    empty = np.empty((0, 2), dtype=np.float32, like=a)
    assert isinstance(empty, jg.Tensor) and empty.dtype == jg.float32 and empty.shape == (0, 2)
    made = np.array([1.0, 2.0], ndmin=2, like=a)
    assert isinstance(made, jg.Tensor) and made.tolist() == [[1.0, 2.0]]
    assert isinstance(np.asarray([1, 2], like=a), jg.Tensor)
