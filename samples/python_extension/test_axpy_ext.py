"""The sample extension: built by CMake, imported, checked against NumPy."""
import numpy as np
import pytest

import axpy_ext
import tilefuse


@pytest.mark.parametrize("n", [1, 1000, 10007])
def test_axpy_matches_numpy(n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.empty_like(x)
    axpy_ext.axpy(out, x, y, alpha=-2.5)
    np.testing.assert_allclose(out, -2.5 * x.astype(np.float64) + y, rtol=1e-6, atol=1e-6)


def test_axpy_works_on_any_shape():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.empty_like(x)
    axpy_ext.axpy(out, x, x)
    np.testing.assert_array_equal(out, 2 * x)


def test_bad_input_raises_tilefuse_user_error():
    x = np.zeros(5, np.float32)
    with pytest.raises(tilefuse.UserError, match=r"x has dtype f16, expected f32"):
        axpy_ext.axpy(np.empty_like(x), x.astype(np.float16), x)
    with pytest.raises(tilefuse.UserError, match=r"y is f32\[4\] on cpu, expected shape \[5\]"):
        axpy_ext.axpy(np.empty_like(x), x, np.zeros(4, np.float32))


def test_read_only_inputs_are_accepted():
    x = np.ones(7, np.float32)
    x.setflags(write=False)
    out = np.empty_like(x)
    axpy_ext.axpy(out, x, x, alpha=3.0)
    np.testing.assert_array_equal(out, np.full(7, 4.0, np.float32))
