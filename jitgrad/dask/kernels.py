"""Warm workers: every process of a Dask cluster finds the kernels any of them compiled.

Workers that share the client's file system share its kernel cache directory (found as
jitgrad always finds it: ``JITGRAD_CACHE_DIR``, else the user's cache directory) and
find its entries there. Any other process receives the entries it lacks as bytes (each
kernel's module and the compiled code numba and Python keep beside it), written into its
own cache directory with their modification times, which numba's and Python's caches
check: the kernels load there as they would where they were compiled.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from ..jit import cache

# A kernel module and its bytecode and numba's compiled code (jit/cache.py names them).
_ENTRY = re.compile(r"(__pycache__/)?k_[0-9a-f]{32}(\.[A-Za-z0-9_.\-]+)?")


def _kernel_directory() -> Path:
    return cache._kernel_directory()


def entry_names() -> set[str]:
    """The cache entries of this process's kernel directory, as paths relative to it."""
    directory = _kernel_directory()
    names = {p.name for p in directory.glob("k_*")}
    names |= {f"__pycache__/{p.name}" for p in (directory / "__pycache__").glob("k_*")}
    return {n for n in names if _ENTRY.fullmatch(n) and not n.endswith(".tmp")}


def read_entries(names) -> dict[str, tuple[bytes, int]]:
    """Entry -> (its bytes, its modification time in ns), for ``names`` found here."""
    directory = _kernel_directory()
    found = {}
    for name in names:
        path = directory / name
        try:
            found[name] = (path.read_bytes(), path.stat().st_mtime_ns)
        except FileNotFoundError:  # (replaced or dropped meanwhile: the other side compiles)
            continue
    return found


def write_entries(entries: dict[str, tuple[bytes, int]]) -> int:
    """Write received entries into this process's kernel directory, each atomically and
    with its original modification time; the number written."""
    directory = _kernel_directory()
    for name, (data, mtime_ns) in entries.items():
        if not _ENTRY.fullmatch(name):
            raise ValueError(f"{name!r} is not a jitgrad kernel cache entry")
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return len(entries)


def share_kernels(client) -> dict[str, int]:
    """Give the client and every worker of ``client``'s cluster the kernel cache entries any
    of them has; the number of entries written, by receiver ("client" or a worker's
    address). Processes that share a cache directory receive nothing."""
    here = entry_names()
    listed = client.run(entry_names)
    written = {}
    fetched = set()
    for address, names in listed.items():
        missing = names - here - fetched
        if missing:
            entries = client.run(read_entries, sorted(missing), workers=[address])[address]
            written["client"] = written.get("client", 0) + write_entries(entries)
            fetched |= missing
    everything = here | fetched
    for address in listed:
        # Listed again: a worker sharing a directory with one just written to lacks nothing.
        (names,) = client.run(entry_names, workers=[address]).values()
        lacking = everything - names
        if lacking:
            entries = read_entries(sorted(lacking))
            written[address] = client.run(write_entries, entries, workers=[address])[address]
    return written
