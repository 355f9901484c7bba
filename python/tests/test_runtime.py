"""Runtime switches from Python: GPU presence, autotune mode, cache directory, and the
GIL being released while a kernel runs."""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tilefuse


def test_gpu_available_is_a_bool_with_a_reason_when_false():
    ok = tilefuse.gpu_available()
    assert isinstance(ok, bool)
    assert (tilefuse.gpu_unavailable_reason() == "") == ok


def test_autotune_mode_round_trips_and_rejects_junk():
    before = tilefuse.autotune_mode()
    try:
        for mode in ("off", "cached", "always"):
            tilefuse.set_autotune_mode(mode)
            assert tilefuse.autotune_mode() == mode
        with pytest.raises(tilefuse.UserError, match="sometimes"):
            tilefuse.set_autotune_mode("sometimes")
    finally:
        tilefuse.set_autotune_mode(None)
    assert tilefuse.autotune_mode() == before


def run_python(code, env=None):
    """Runs code in a fresh interpreter (the caches fix their directory once per process)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_cache_dir_comes_from_the_environment(tmp_path):
    assert run_python("import tilefuse; print(tilefuse.cache_dir())", {"TILEFUSE_CACHE_DIR": str(tmp_path)}) == \
        str(tmp_path)


def test_set_cache_dir_before_first_use_and_not_after(tmp_path):
    code = f"""
import tilefuse
tilefuse.set_cache_dir({str(tmp_path / "a")!r})
print(tilefuse.cache_dir())
tilefuse.set_cache_dir({str(tmp_path / "a")!r})  # the same directory again is fine
try:
    tilefuse.set_cache_dir({str(tmp_path / "b")!r})
except tilefuse.UserError as e:
    print(e)
"""
    lines = run_python(code).splitlines()
    assert lines[0] == str(tmp_path / "a")
    assert lines[1] == f"the caches are already in use in {tmp_path / 'a'}; call set_cache_dir before the first kernel runs"


def test_compiler_version_names_tilefuse():
    assert tilefuse.compiler_version().startswith("tilefuse ")


def test_the_gil_is_released_while_a_kernel_runs():
    q = np.random.default_rng(0).standard_normal((16, 512, 64)).astype(np.float16)
    done = threading.Event()
    took = []

    def work():
        t = time.perf_counter()
        tilefuse.attention(q, q, q)
        took.append(time.perf_counter() - t)
        done.set()

    worker = threading.Thread(target=work)
    spins = 0
    worker.start()
    while not done.is_set():
        spins += 1
    worker.join()
    # With the GIL held for the whole call this thread would stall until it ended.
    assert took[0] > 0.05, "the call is too short to tell"
    assert spins > 10000
