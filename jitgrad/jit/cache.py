"""The one kernel cache: in memory by structural key, on disk by a hash of the source.

numba cannot cache a function created with ``exec`` (it has no file to key on), so every
generated kernel is written to a real module ``k_<hash>.py`` in the cache directory,
imported, and compiled with ``cache=True``: a fresh process finds numba's compiled code
next to the module and compiles nothing. The hash covers the source and the versions of
jitgrad, numba and llvmlite and the CPU, so a change in any of them is a new entry.

An entry is the module, its bytecode and numba's index and data files of its functions.
A damaged file there (a crash mid-write, a full disk, a bad sector) would crash numba or
LLVM, which trust what they read: every file but the module is sealed (its sha256 ahead
of its bytes, checked before anything parses it) and the module is compared with the
source it was generated from. A mismatch or any failure to load deletes the entry's
compiled files with a warning, and the kernel compiles again.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import importlib.util
import io
import logging
import marshal
import os
import pickle
import platform
import shutil
import sys
import tempfile
import threading
import time
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import llvmlite
import llvmlite.binding
import numba
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher

from .._config import config

log = logging.getLogger("jitgrad.jit")


@dataclass
class Kernel:
    """A generated module of compiled functions (``serial`` for an elementwise kernel,
    ``whole``, ``outer`` and ``inner`` for a reduction); ``.source`` shows the generated
    code."""

    key: str
    source: str
    module: object
    path: Path
    compile_seconds: float = 0.0
    calls: int = 0
    _warm: set = field(default_factory=set)
    _calls: dict = field(default_factory=dict)

    @property
    def computes_much(self) -> bool:
        """Whether its body calls ``vmath`` (exp, tanh...), not only arithmetic: such a
        kernel pays for parallel threads at a smaller size (``config.parallel_from``)."""
        return "vm." in self.source

    def call(self, variant: str) -> Call:
        """``variant`` as a callable, the one to record (``recording.run``)."""
        found = self._calls.get(variant)
        if found is None:
            found = self._calls[variant] = Call(self, variant)
        return found

    def index_path(self, variant: str) -> str:
        """Where numba's disk cache indexes the compiled code of ``variant``."""
        return getattr(self.module, variant)._cache._cache_file._index_path

    def compile(self, variant: str, args) -> None:
        """Compile ``variant`` for ``args``' types, or load it from disk, without a call."""
        _compile(getattr(self.module, variant), args)

    def run(self, variant: str, *args) -> None:
        if variant in self._warm:
            getattr(self.module, variant)(*args)
        else:
            start = time.perf_counter()
            _compile(getattr(self.module, variant), args)
            getattr(self.module, variant)(*args)
            seconds = time.perf_counter() - start
            self._warm.add(variant)
            self.compile_seconds += seconds
            stats.record_first_call(self, getattr(self.module, variant), seconds)
        self.calls += 1


class Call:
    """One variant of a kernel. Its first call compiles or loads it (``Kernel.run``); later
    ones call the compiled function directly: a replayed plan makes many calls."""

    __slots__ = ("kernel", "variant", "compiled")

    def __init__(self, kernel: Kernel, variant: str):
        self.kernel, self.variant, self.compiled = kernel, variant, None

    def __call__(self, *args) -> None:
        compiled = self.compiled
        if compiled is None:
            self.kernel.run(self.variant, *args)
            self.compiled = getattr(self.kernel.module, self.variant)
        else:
            compiled(*args)
            self.kernel.calls += 1

    def direct(self, args):
        """What to call with ``args`` from now on: the compiled code for their types as a
        plain callable, which skips the dispatcher's matching of every argument's type on
        every call (about 0.25 µs of a launch's 1 µs); this call itself before its first
        call compiled anything. Only for callers whose arguments keep their types: a
        jitted plan's or a remembered eager decision's, whose arrays are flat storages of
        fixed dtypes and whose numbers are ints and scalars of the kernel's own type."""
        compiled = self.compiled
        if compiled is None:
            return self
        overload = compiled.overloads.get(tuple(map(compiled.typeof_pyval, args)))
        if overload is None:
            return compiled
        _dispatchers[overload.entry_point] = compiled
        return overload.entry_point


# The dispatcher of each entry point ``Call.direct`` handed out (``dispatcher_of``).
_dispatchers: dict = {}


def dispatcher_of(fn):
    """The kernel dispatcher whose compiled code ``fn`` is (a ``Call.direct`` result),
    or None for any other callable."""
    if isinstance(fn, Dispatcher):
        return fn
    try:
        return _dispatchers.get(fn)
    except TypeError:  # unhashable: not an entry point
        return None


# LLVM's cost model interleaves a vectorised loop only when its body is small. A fused
# kernel's body (polynomial exp, tanh, a division...) is one long dependency chain per
# vector, so with one vector in flight the loop waits on latencies: four interleaved
# vectors run the chain forward 1.25x faster here (0.71 -> 0.56 ns per element on one
# core) and cost nothing measurable in compile time. The option is process-wide, so it is
# set only while jitgrad compiles its own kernels, under numba's compiler lock (which
# every numba compilation takes), and put back to the cost model's choice (0) after:
# users' own numba code compiles as it would without jitgrad.
VECTOR_INTERLEAVE = 4


@contextlib.contextmanager
def _interleaved():
    with global_compiler_lock:
        llvmlite.binding.set_option("jitgrad", f"-force-vector-interleave={VECTOR_INTERLEAVE}")
        try:
            yield
        finally:
            llvmlite.binding.set_option("jitgrad", "-force-vector-interleave=0")


class Taken(Exception):
    """A kernel the process beside this one is compiling (``compile_ahead``)."""


# While a plan's first replay compiles beside a child process: who compiles which kernel
# (``compile_ahead._Claims``).
claims = None


def _compile(function, args) -> None:
    """Compile ``function`` (a kernel module's dispatcher) for ``args``' types, or load it
    from numba's disk cache."""
    shared = claims
    if shared is not None and not shared.take(function):
        if shared.child is None:  # the child leaves it to the replay
            raise Taken(function.py_func.__qualname__)
        # (the child compiled it: loaded below)
    try:
        with _interleaved():
            function.compile(tuple(map(function.typeof_pyval, args)))
    finally:
        if shared is not None:
            shared.done(function)


@dataclass
class Stats:
    """Counters behind ``jg.jit.stats()``: what was compiled, what came from disk."""

    memory_hits: int = 0
    generated: int = 0
    compiled: int = 0
    disk_hits: int = 0
    compile_seconds: float = 0.0
    kernels: dict = field(default_factory=dict)

    def record_first_call(self, kernel: Kernel, function, seconds: float) -> None:
        if function.stats.cache_hits:
            self.disk_hits += 1
            log.debug("kernel %s loaded from the disk cache", kernel.key[:12])
        else:
            self.compiled += 1
            self.compile_seconds += seconds
            log.debug("kernel %s compiled in %.3f s", kernel.key[:12], seconds)

    def snapshot(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "kernels"}


stats = Stats()
_lock = threading.Lock()


def cache_dir() -> Path:
    """``JITGRAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/jitgrad`` (``~/.cache/jitgrad``)."""
    if config.cache_dir:
        return Path(config.cache_dir)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jitgrad"


_writable: dict[Path, Path] = {}  # kernel directory wanted -> the one used


def _kernel_directory() -> Path:
    """Where kernel modules go: the cache directory's ``kernels``, or, when that cannot be
    written (a read-only home, a path that is a file), a temporary directory of this
    process, with one warning: kernels still compile, they are just not kept."""
    wanted = cache_dir() / "kernels"
    directory = _writable.get(wanted)
    if directory is None:
        try:
            wanted.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=wanted).close()
            directory = wanted
        except OSError as e:
            directory = Path(tempfile.mkdtemp(prefix="jitgrad-kernels-"))
            atexit.register(shutil.rmtree, directory, ignore_errors=True)
            warnings.warn(
                f"jitgrad cannot write its kernel cache at {wanted} ({e.strerror or e}): "
                f"kernels compile into {directory} and are not kept after this process; "
                "set JITGRAD_CACHE_DIR to a writable directory",
                RuntimeWarning,
                stacklevel=1,  # (deep under the op that needed a kernel: no caller to name)
            )
        _writable[wanted] = directory
    return directory


@functools.cache
def _environment() -> str:
    from .. import __version__

    cpu = numba.config.CPU_NAME or llvmlite.binding.get_host_cpu_name()
    from ..storage import convert
    from .vmath import SOURCE_HASH  # inlined into kernels: numba would not notice a change

    # convert.py's loads and stores are inlined too.
    stores = hashlib.sha256(Path(convert.__file__).read_bytes()).hexdigest()[:16]
    versions = (
        f"jitgrad {__version__}; vmath {SOURCE_HASH}; stores {stores}; "
        f"interleave {VECTOR_INTERLEAVE}; files sealed by {_SEAL.decode().strip()}; "
        f"numba {numba.__version__}; llvmlite {llvmlite.__version__}"
    )
    return f"{versions}; {cpu}; {platform.machine()}"


def get(structural_key, build) -> Kernel:
    """The kernel for ``structural_key``, calling ``build() -> source`` on the first miss
    in this process."""
    kernel = stats.kernels.get(structural_key)
    if kernel is not None:
        stats.memory_hits += 1
        return kernel
    with _lock:
        kernel = stats.kernels.get(structural_key)
        if kernel is None:
            kernel = _load(build(), reason=structural_key)
            stats.kernels[structural_key] = kernel
    return kernel


def _load(source: str, reason) -> Kernel:
    digest = hashlib.sha256((_environment() + "\n" + source).encode()).hexdigest()
    path = _kernel_directory() / f"k_{digest[:32]}.py"
    stats.generated += 1
    if config.debug:
        what = "a fused group" if reason[0] == "fused" else reason
        log.info("kernel %s for %s", digest[:12], what)
        if config.debug >= 2:
            log.info("source of %s:\n%s", digest[:12], source)
    try:
        return Kernel(digest, source, _entry_module(path, source, digest), path)
    except Exception as e:  # a damaged entry: rebuilt once, a second failure is a bug
        _damaged(path, e)
        return Kernel(digest, source, _entry_module(path, source, digest), path)


def _entry_module(path: Path, source: str, digest: str):
    """The imported kernel module of the entry at ``path``, its module written first when
    it is missing or differs from ``source`` (then its compiled files are stale)."""
    try:
        written = path.read_bytes()
    except FileNotFoundError:
        written = None
    except OSError:
        written = b""  # unreadable: rewritten as a damaged module
    if written != source.encode():
        if written is None:
            _drop_compiled(path)  # those of a deleted module are stale
        else:
            _damaged(path, "the module differs from its source")
        _write_atomically(path, source.encode())
    return _import(path, f"jitgrad_kernels.k_{digest[:32]}")


class DamagedFile(Exception):
    """A cache file whose bytes are not those that were written."""


# A sealed file: this line, the sha256 of the payload, the payload.
_SEAL = b"jitgrad sha256\n"


def _seal(payload: bytes) -> bytes:
    return _SEAL + hashlib.sha256(payload).digest() + payload


def _unseal(data: bytes, path) -> bytes:
    """The payload of the sealed file ``path`` read as ``data``; DamagedFile unless its
    checksum matches."""
    start = len(_SEAL) + 32
    payload = data[start:]
    if data[: len(_SEAL)] != _SEAL or hashlib.sha256(payload).digest() != data[len(_SEAL) : start]:
        raise DamagedFile(f"{os.path.basename(path)} fails its checksum")
    return payload


def _damaged(path: Path, why) -> None:
    """Warn that the entry of the kernel module ``path`` is damaged, and delete its
    compiled files: what needs them compiles again."""
    warnings.warn(
        f"jitgrad's kernel cache entry {path.stem} in {path.parent} is damaged ({why}): "
        "its compiled code is deleted and compiled again",
        RuntimeWarning,
        stacklevel=1,  # (deep under the op that needed a kernel: no caller to name)
    )
    _drop_compiled(path)


_COMPILED_SUFFIXES = (".pyc", ".nbi", ".nbc")  # (a writer's temporary file is not one)


def _drop_compiled(path: Path) -> None:
    """Delete the bytecode and numba's compiled code of the kernel module at ``path`` (the
    other entries' stay)."""
    for stale in (path.parent / "__pycache__").glob(path.stem + ".*"):
        if stale.suffix in _COMPILED_SUFFIXES:
            stale.unlink(missing_ok=True)


_UMASK = os.umask(0o022)  # read once, at import: there is no way to read it without setting it
os.umask(_UMASK)


def _write_atomically(path: Path, data: bytes) -> None:
    # Concurrent processes may write the same entry: each writes a private temporary file
    # and renames it, so readers see a whole file or none.
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            # mkstemp's 0600 would keep a cache directory shared between users unreadable
            # to all but the writer.
            os.fchmod(f.fileno(), 0o666 & ~_UMASK)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _SealedCacheFile(IndexDataCacheFile):
    """numba's index and data files of one function, sealed: numba's formats inside."""

    @contextlib.contextmanager
    def _open_for_write(self, filepath):
        buffer = io.BytesIO()
        yield buffer
        _write_atomically(Path(filepath), _seal(buffer.getvalue()))

    def _load_index(self):
        try:
            data = Path(self._index_path).read_bytes()
        except FileNotFoundError:
            return {}
        stream = io.BytesIO(_unseal(data, self._index_path))
        if pickle.load(stream) != self._version:
            return {}
        stamp, overloads = pickle.loads(stream.read())
        return overloads if stamp == self._source_stamp else {}  # else stale: recompiled

    def _load_data(self, name):
        path = self._data_path(name)
        return pickle.loads(_unseal(Path(path).read_bytes(), path))


class _KernelFunctionCache(FunctionCache):
    """numba's cache of a kernel module's function, in sealed files; a damaged entry or
    any failure to load one is a miss (the function compiles and is saved again)."""

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _SealedCacheFile(
            self._cache_path, self._impl.filename_base, self._cache_file._source_stamp
        )
        self._module_path = Path(py_func.__code__.co_filename)

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as e:
            _damaged(self._module_path, e)
            return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except DamagedFile as e:  # the index, damaged since it was read: saved afresh
            _damaged(self._module_path, e)
            super().save_overload(sig, data)


def _import(path: Path, module_name: str):
    """Execute the kernel module at ``path`` from its sealed bytecode (written when missing,
    so a warm start compiles not even Python source) with numba's caches of its functions
    sealed too."""
    bytecode = Path(importlib.util.cache_from_source(str(path)))
    try:
        code = marshal.loads(_unseal(bytecode.read_bytes(), bytecode))
    except FileNotFoundError:
        code = None
    # Bytecode names its module's path, where numba looks for its files: a cache directory
    # moved elsewhere compiles it again.
    if code is None or code.co_filename != str(path):
        code = compile(path.read_bytes(), str(path), "exec")
        _write_atomically(bytecode, _seal(marshal.dumps(code)))
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    exec(code, module.__dict__)
    # Only the module's own functions: the ones it imports (jitgrad's converters) keep
    # numba's own cache, which other processes read in numba's format.
    for value in module.__dict__.values():
        if (
            isinstance(value, Dispatcher)
            and isinstance(value._cache, FunctionCache)
            and value.py_func.__module__ == module_name
        ):
            value._cache = _KernelFunctionCache(value.py_func)
    sys.modules[module_name] = module
    return module


def clear_cache() -> None:
    """Forget every kernel in memory and delete the disk cache."""
    with _lock:
        stats.kernels.clear()
        shutil.rmtree(cache_dir() / "kernels", ignore_errors=True)
