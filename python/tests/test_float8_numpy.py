"""8-bit float NumPy arrays (ml_dtypes float8_e4m3fn / float8_e5m2) through the
interpreter: the 8-bit GEMM against a float64 reference, and its errors."""
import numpy as np
import pytest

import references as ref
import tilefuse


ml_dtypes = pytest.importorskip("ml_dtypes")
E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)
E5M2 = np.dtype(ml_dtypes.float8_e5m2)


@pytest.mark.parametrize("b_dtype", [E4M3, E5M2])
@pytest.mark.parametrize("b_trans", [True, False])
def test_scaled_matmul(rng, b_dtype, b_trans):
    a = (rng.standard_normal((19, 70)) * 4).astype(E4M3)
    b = (rng.standard_normal((27, 70) if b_trans else (70, 27)) * 4).astype(b_dtype)
    sa, sb = np.array([0.25], np.float32), np.array([1.5], np.float32)
    got = tilefuse.scaled_matmul(a, b, sa, sb, b_trans=b_trans)
    assert got.dtype == np.float32 and got.shape == (19, 27)
    b64 = b.astype(np.float64)
    want = 0.375 * (a.astype(np.float64) @ (b64.T if b_trans else b64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_scaled_matmul_bias_activation_and_precise_accumulation(rng):
    a = (rng.standard_normal((40, 64)) * 2).astype(E5M2)
    b = (rng.standard_normal((33, 64)) * 2).astype(E4M3)
    bias = rng.standard_normal(33).astype(np.float16)
    one = np.ones(1, np.float32)
    out = np.empty((40, 33), np.float16)
    got = tilefuse.scaled_matmul(a, b, one, one, bias=bias, activation="relu", precise_accumulation=True, out=out)
    assert got is out
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64).T + bias.astype(np.float64), 0)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(tilefuse.matmul(a.astype(np.float16), b.astype(np.float16), b_trans=True)
                               .astype(np.float64), ref.matmul(a.astype(np.float16), b.astype(np.float16).T),
                               rtol=1e-2, atol=2e-2)


def test_scaled_matmul_errors():
    a = np.zeros((4, 32), E4M3)
    b = np.zeros((8, 32), E4M3)
    one = np.ones(1, np.float32)
    with pytest.raises(tilefuse.UserError, match=r"scaled_matmul: a is f16; it takes 8-bit floats.*float8_e4m3fn"):
        tilefuse.scaled_matmul(np.zeros((4, 32), np.float16), b, one, one)
    with pytest.raises(tilefuse.UserError, match=r"b is f8e4m3\[8, 31\] on cpu, expected shape \[8, 32\]"):
        tilefuse.scaled_matmul(a, np.zeros((8, 31), E4M3), one, one)
    with pytest.raises(tilefuse.UserError, match=r"scale_a is f32\[2\] on cpu; expected one float32"):
        tilefuse.scaled_matmul(a, b, np.ones(2, np.float32), one)
    with pytest.raises(tilefuse.UserError, match=r"bias is f16\[8\] on cpu but out is f32"):
        tilefuse.scaled_matmul(a, b, one, one, bias=np.zeros(8, np.float16))
