"""Suite-wide setup: generated kernels go to a fresh cache directory for this run, so the
suite never reads or writes the user's cache and compiled kernels are shared by all tests."""

import atexit
import os
import shutil
import tempfile

if "JITGRAD_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="jitgrad-test-kernels-")
    os.environ["JITGRAD_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
