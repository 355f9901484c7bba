"""bfloat16 NumPy arrays (ml_dtypes) through the interpreter against float32 references."""
import numpy as np
import pytest

import references as ref
import tilefuse


ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
BF16_TOL = dict(rtol=2e-2, atol=1e-2)


def test_bfloat16_numpy_arrays_through_ml_dtypes(rng):
    x = rng.standard_normal((6, 129)).astype(BF16)
    w = rng.standard_normal(129).astype(BF16)
    b = rng.standard_normal(129).astype(BF16)
    y = tilefuse.softmax(x)
    assert y.dtype == BF16
    np.testing.assert_allclose(y.astype(np.float64), ref.softmax(x.astype(np.float32)), **BF16_TOL)
    np.testing.assert_allclose(tilefuse.rmsnorm(x, w).astype(np.float64),
                               ref.rmsnorm(x.astype(np.float32), w.astype(np.float32), 1e-6), **BF16_TOL)
    np.testing.assert_allclose(tilefuse.layernorm(x, w, b).astype(np.float64),
                               ref.layernorm(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32), 1e-5),
                               rtol=3e-2, atol=3e-2)
    with pytest.raises(tilefuse.UserError, match=r"weight has dtype f32, expected bf16"):
        tilefuse.rmsnorm(x, w.astype(np.float32))


def test_bfloat16_attention_and_matmul(rng):
    q, k, v = (rng.standard_normal((2, 19, 32)).astype(BF16) for _ in range(3))
    want, _ = ref.attention(*(t.astype(np.float32) for t in (q, k, v)), True, 1 / np.sqrt(32))
    np.testing.assert_allclose(tilefuse.attention(q, k, v, causal=True).astype(np.float64), want, rtol=3e-2,
                               atol=3e-2)
    a, bm = rng.standard_normal((21, 40)).astype(BF16), rng.standard_normal((40, 13)).astype(BF16)
    np.testing.assert_allclose(tilefuse.matmul(a, bm).astype(np.float64),
                               ref.matmul(a.astype(np.float32), bm.astype(np.float32)), rtol=3e-2, atol=5e-2)
