"""``python -m jitgrad``: a short tour of storages, views and strides.

Every line printed is computed by jitgrad as you watch; nothing is canned.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

import jitgrad as jg


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def show(label: str, value) -> None:
    text = str(value)
    if "\n" in text:
        print(f"{label}:\n{text}")
    else:
        print(f"{label:<44} {text}")


def tour_storages() -> None:
    section("Storages: flat, typed, one-dimensional buffers")
    x = jg.DoubleStorage(10).fill_(0)
    y = jg.DoubleStorage(x, 2, 5).fill_(1)  # a view: elements 2..6 of x
    show("x after y = DoubleStorage(x, 2, 5).fill_(1)", x.tolist())
    show("y shares x's bytes (address difference)", f"{y.data_ptr() - x.data_ptr()} bytes")
    show("IntStorage([1, 2, 3]).double()", jg.IntStorage([1, 2, 3]).double().tolist())

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "hello.txt")
        with open(path, "wb") as f:
            f.write(b"Hello World\n")
        private = jg.CharStorage.from_file(path, shared=False)
        private.fill_(42)
        show("private mapping after fill_(42)", repr(private.string()))
        show("the file is untouched", repr(open(path, "rb").read()))
        shared = jg.CharStorage.from_file(path, shared=True)
        shared.fill_(ord("!"))
        del shared
        show("shared mapping after fill_('!'): the file", repr(open(path, "rb").read()))


def tour_views() -> None:
    section("Tensors: storage + shape + strides + offset")
    points = jg.arange(9).reshape(3, 3)
    show("points", points)
    show("points.stride()", points.stride())
    sub = points[1:3, 1:3]
    show("sub = points[1:3, 1:3]", sub)
    show("sub.storage_offset(), sub.stride()", (sub.storage_offset(), sub.stride()))
    show("sub.is_contiguous()", sub.is_contiguous())
    show("sub shares points' storage", sub.storage() is points.storage())
    dense = sub.contiguous()
    show("sub.contiguous().storage()", dense.storage().tolist())

    section("Views never copy")
    t = points.T
    show("points.T.stride()", t.stride())
    e = jg.arange(3).view(3, 1).expand(3, 4)
    show("arange(3).view(3, 1).expand(3, 4).stride()", e.stride())
    flipped = points.flip(0)
    show("points.flip(0).stride(), offset", (flipped.stride(), flipped.storage_offset()))
    show("points.diagonal()", points.diagonal().tolist())
    points.diagonal().fill_(-1)
    show("after points.diagonal().fill_(-1)", points)


def tour_numpy() -> None:
    section("numpy interop is zero-copy both ways")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = jg.from_numpy(a)
    show("t.data_ptr() == a.ctypes.data", t.data_ptr() == a.ctypes.data)
    t[0, 0] = 100
    show("a after t[0, 0] = 100", a.tolist())
    back = np.asarray(t.T)
    show("np.asarray(t.T).strides (bytes)", back.strides)


def tour_kernels() -> None:
    section("Copies run in numba kernels")
    m = jg.random.default_rng(0).standard_normal((2048, 2048), dtype=jg.float32)
    m.T.contiguous()  # first call compiles (or loads the kernel from the disk cache)
    start = time.perf_counter()
    dense = m.T.contiguous()
    elapsed = time.perf_counter() - start
    a = m.numpy()
    start = time.perf_counter()
    expected = np.ascontiguousarray(a.T)
    numpy_elapsed = time.perf_counter() - start
    show("2048x2048 float32 transpose into contiguous", f"{elapsed * 1e3:.1f} ms")
    show("numpy np.ascontiguousarray(a.T)", f"{numpy_elapsed * 1e3:.1f} ms")
    show("identical results", np.array_equal(dense.numpy(), expected))


def main() -> None:
    print("jitgrad", jg.__version__, "- a tour of storages, views and strides")
    tour_storages()
    tour_views()
    tour_numpy()
    tour_kernels()


if __name__ == "__main__":
    main()
