"""The gallery on NumPy arrays (tilefuse's CPU interpreter) against NumPy references,
at odd shapes, in float32 and float16, with allocated and out= outputs."""
import numpy as np
import pytest

import references as ref
import tilefuse

# Tolerances: the kernels accumulate in float32; float16 results are rounded once more.
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float16: dict(rtol=1e-2, atol=2e-3)}
FLOATS = [np.float32, np.float16]
ROW_SHAPES = [(7, 45), (3, 5, 33), (1, 1), (2, 1000)]


def check(got, want, dtype):
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float64), want, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_softmax(rng, dtype, shape):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    check(tilefuse.softmax(x), ref.softmax(x), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_rmsnorm(rng, dtype, shape):
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[-1]).astype(dtype)
    check(tilefuse.rmsnorm(x, w, eps=1e-5), ref.rmsnorm(x, w, 1e-5), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rmsnorm_with_residual_returns_the_sum_too(rng, dtype):
    x = rng.standard_normal((9, 130)).astype(dtype)
    r = rng.standard_normal((9, 130)).astype(dtype)
    w = rng.standard_normal(130).astype(dtype)
    out, res_out = tilefuse.rmsnorm(x, w, residual=r)
    total = x.astype(np.float64) + r.astype(np.float64)
    check(res_out, total, dtype)
    check(out, ref.rmsnorm(res_out, w, 1e-6), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_layernorm(rng, dtype, shape):
    x = (rng.standard_normal(shape) + 2).astype(dtype)
    w = rng.standard_normal(shape[-1]).astype(dtype)
    b = rng.standard_normal(shape[-1]).astype(dtype)
    check(tilefuse.layernorm(x, w, b), ref.layernorm(x, w, b, 1e-5), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_bias_relu_log(rng, dtype):
    x = rng.standard_normal((11, 77)).astype(dtype)
    b = rng.standard_normal(77).astype(dtype)
    got = tilefuse.bias_relu_log(x, b)
    want = ref.bias_relu_log(x, b)
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite].astype(np.float64), want[finite], **TOL[dtype])


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 20, 16), (1, 37, 32), (2, 29, 96), (1, 18, 40)])
def test_attention(rng, causal, shape):
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    out, lse = tilefuse.attention(q, k, v, causal=causal, return_lse=True)
    want, want_lse = ref.attention(q, k, v, causal, 1 / np.sqrt(shape[-1]))
    check(out, want, np.float16)
    assert lse.dtype == np.float32 and lse.shape == shape[:-1]
    np.testing.assert_allclose(lse, want_lse, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_grouped_query_heads(rng, causal):
    q = rng.standard_normal((2, 6, 21, 40)).astype(np.float16)
    k, v = (rng.standard_normal((2, 2, 21, 40)).astype(np.float16) for _ in range(2))
    out, lse = tilefuse.attention(q, k, v, causal=causal, return_lse=True)
    kq, vq = (np.repeat(t, 3, axis=1) for t in (k, v))  # query head h reads k head h // 3
    want, want_lse = ref.attention(q, kq, vq, causal, 1 / np.sqrt(40))
    check(out, want, np.float16)
    np.testing.assert_allclose(lse, want_lse, rtol=2e-3, atol=2e-3)


def test_attention_explicit_scale(rng):
    q, k, v = (rng.standard_normal((2, 24, 16)).astype(np.float16) for _ in range(3))
    want, _ = ref.attention(q, k, v, False, 0.3)
    check(tilefuse.attention(q, k, v, scale=0.3), want, np.float16)


@pytest.mark.parametrize("activation", ["none", "relu", "silu", "gelu_tanh"])
def test_matmul_with_bias_and_activation(rng, activation):
    a = rng.standard_normal((33, 40)).astype(np.float16)
    b = rng.standard_normal((40, 24)).astype(np.float16)
    bias = rng.standard_normal(24).astype(np.float16)
    got = tilefuse.matmul(a, b, bias=bias, activation=activation)
    np.testing.assert_allclose(got.astype(np.float64), ref.matmul(a, b, bias, activation), rtol=1e-2, atol=2e-2)


def test_matmul_b_transposed(rng):
    a = rng.standard_normal((17, 48)).astype(np.float16)
    bt = rng.standard_normal((29, 48)).astype(np.float16)
    got = tilefuse.matmul(a, bt, b_trans=True)
    assert got.shape == (17, 29)
    np.testing.assert_allclose(got.astype(np.float64), ref.matmul(a, bt.T), rtol=1e-2, atol=2e-2)


def test_out_is_written_and_returned(rng):
    x = rng.standard_normal((5, 19)).astype(np.float32)
    out = np.full_like(x, np.nan)
    assert tilefuse.softmax(x, out=out) is out
    check(out, ref.softmax(x), np.float32)
    w = np.ones(19, np.float32)
    out2, res2 = np.empty_like(x), np.empty_like(x)
    got = tilefuse.rmsnorm(x, w, residual=x, out=out2, residual_out=res2)
    assert got[0] is out2 and got[1] is res2
    check(res2, 2.0 * x, np.float32)


def test_empty_rows_are_a_no_op():
    x = np.empty((0, 8), np.float32)
    assert tilefuse.softmax(x).shape == (0, 8)

