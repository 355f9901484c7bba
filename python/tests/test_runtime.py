"""Runtime switches from Python: GPU presence, autotune mode, cache directory, and the
GIL being released while a kernel runs."""
import os
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


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEFUSE_CACHE_DIR", str(tmp_path))
    assert tilefuse.cache_dir() == str(tmp_path)


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
