"""The training kernels (cross-entropy, softmax/norm backward, SwiGLU) on NumPy arrays
(tilefuse's CPU interpreter) against float64 references at odd shapes, in float32 and
float16 (bfloat16 through ml_dtypes), with every option and the errors' messages."""
import numpy as np
import pytest

import references as forward_ref
import training_references as ref
import tilefuse

TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float16: dict(rtol=1e-2, atol=3e-3)}
FLOATS = [np.float32, np.float16]
ROW_SHAPES = [(7, 45), (3, 5, 33), (1, 1), (2, 1000)]


def check(got, want, dtype, scale=1.0):
    assert got.dtype == dtype and got.shape == np.shape(want)
    tol = dict(TOL[dtype])
    tol["atol"] *= scale
    np.testing.assert_allclose(got.astype(np.float64), want, **tol)


def targets_for(rng, rows, v, ignore_index=-100, dtype=np.int64):
    t = rng.integers(0, v, size=rows).astype(dtype)
    if t.size > 2:
        t.flat[1] = ignore_index
    return t


# --- the references themselves, against central differences -----------------------------

def numeric_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp) - f(xm)) / (2 * h)
    return g


def test_references_match_finite_differences(rng):
    x, dy = rng.standard_normal((3, 6)), rng.standard_normal((3, 6))
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    t = np.array([2, -100, 5])
    loss = lambda x_: ref.cross_entropy(x_, t, label_smoothing=0.2, z_loss=0.1, reduction="mean")[0]
    np.testing.assert_allclose(ref.cross_entropy(x, t, label_smoothing=0.2, z_loss=0.1)[1], numeric_grad(loss, x),
                               atol=1e-7)
    rms = lambda x_, w_: x_ / np.sqrt((x_ * x_).mean(-1, keepdims=True) + 1e-3) * w_
    dx, dw = ref.rmsnorm_backward(dy, x, w, 1e-3)
    np.testing.assert_allclose(dx, numeric_grad(lambda x_: (rms(x_, w) * dy).sum(), x), atol=1e-6)
    np.testing.assert_allclose(dw, numeric_grad(lambda w_: (rms(x, w_) * dy).sum(), w), atol=1e-6)

    def ln(x_, w_, b_):
        m = x_.mean(-1, keepdims=True)
        return (x_ - m) / np.sqrt(((x_ - m) ** 2).mean(-1, keepdims=True) + 1e-3) * w_ + b_

    dx, dw, db = ref.layernorm_backward(dy, x, w, 1e-3)
    np.testing.assert_allclose(dx, numeric_grad(lambda x_: (ln(x_, w, b) * dy).sum(), x), atol=1e-6)
    np.testing.assert_allclose(dw, numeric_grad(lambda w_: (ln(x, w_, b) * dy).sum(), w), atol=1e-6)
    np.testing.assert_allclose(db, numeric_grad(lambda b_: (ln(x, w, b_) * dy).sum(), b), atol=1e-6)
    da, dbb = ref.swiglu_backward(dy, x, x * 0.5 + 1)
    np.testing.assert_allclose(da, numeric_grad(lambda a_: (ref.swiglu(a_, x * 0.5 + 1) * dy).sum(), x), atol=1e-6)
    np.testing.assert_allclose(dbb, numeric_grad(lambda b_: (ref.swiglu(x, b_) * dy).sum(), x * 0.5 + 1), atol=1e-6)
    y = ref.softmax_backward(dy, np.exp(x) / np.exp(x).sum(-1, keepdims=True))
    sm = lambda x_: np.exp(x_) / np.exp(x_).sum(-1, keepdims=True)
    np.testing.assert_allclose(y, numeric_grad(lambda x_: (sm(x_) * dy).sum(), x), atol=1e-6)


# --- cross-entropy -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("shape", [(7, 45), (2, 3, 129), (3, 1000)])
def test_cross_entropy(rng, dtype, reduction, shape):
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    t = targets_for(rng, shape[:-1], shape[-1])
    loss, dx = tilefuse.cross_entropy(x, t, reduction=reduction)
    want_loss, want_dx = ref.cross_entropy(x, t, reduction=reduction)
    assert loss.dtype == np.float32 and loss.shape == (shape[:-1] if reduction == "none" else ())
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=1e-5)
    check(dx, want_dx, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cross_entropy_options(rng, dtype):
    x = (rng.standard_normal((9, 77)) * 3).astype(dtype)
    t = targets_for(rng, 9, 77, ignore_index=5, dtype=np.int32)
    t[4] = 5
    opts = dict(ignore_index=5, label_smoothing=0.1, z_loss=1e-2)
    for reduction, grad_scale in [("none", 0.5), ("sum", 2.0), ("mean", 3.0)]:
        loss, dx = tilefuse.cross_entropy(x, t, reduction=reduction, grad_scale=grad_scale, **opts)
        want_loss, want_dx = ref.cross_entropy(x, t, reduction=reduction, grad_scale=grad_scale, **opts)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=1e-5)
        check(dx, want_dx, dtype, scale=grad_scale)
        assert not dx[1].any() and not dx[4].any()  # ignored rows


def test_cross_entropy_in_place_and_out(rng):
    x = rng.standard_normal((5, 300)).astype(np.float32)
    t = targets_for(rng, 5, 300)
    want_loss, want_dx = ref.cross_entropy(x, t, label_smoothing=0.3)
    buf = x.copy()
    loss, dx = tilefuse.cross_entropy(buf, t, label_smoothing=0.3, inplace=True)
    assert dx is buf
    check(dx, want_dx, np.float32)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    out_loss, out_dx = np.full(5, np.nan, np.float32), np.full_like(x, np.nan)
    got = tilefuse.cross_entropy(x, t, reduction="none", loss=out_loss, dlogits=out_dx)
    assert got[0] is out_loss and got[1] is out_dx
    np.testing.assert_allclose(out_loss, ref.cross_entropy(x, t, reduction="none")[0], rtol=1e-5, atol=1e-6)


def test_cross_entropy_of_no_rows_is_like_torch():
    x, t = np.zeros((0, 7), np.float32), np.zeros(0, np.int64)
    assert np.isnan(tilefuse.cross_entropy(x, t)[0])
    assert tilefuse.cross_entropy(x, t, reduction="sum")[0] == 0
    assert tilefuse.cross_entropy(x, t, reduction="none")[0].shape == (0,)


def test_cross_entropy_errors():
    x, t = np.zeros((4, 6), np.float32), np.array([0, 1, 2, 3])
    with pytest.raises(tilefuse.UserError, match=r"targets is i64\[3\] on cpu, expected shape \[4\]"):
        tilefuse.cross_entropy(x, t[:3])
    with pytest.raises(tilefuse.UserError, match=r"targets has dtype f32, expected i64 or i32.*int64"):
        tilefuse.cross_entropy(x, t.astype(np.float32))
    with pytest.raises(tilefuse.UserError, match=r"unknown reduction 'avg'.*none, sum or mean"):
        tilefuse.cross_entropy(x, t, reduction="avg")
    with pytest.raises(tilefuse.UserError, match=r"targets\[2\] \(the target of row 2\) is 6, outside the V = 6"):
        tilefuse.cross_entropy(x, np.array([0, 1, 6, 3]))
    with pytest.raises(tilefuse.UserError, match=r"label_smoothing is 1\.0+, outside \[0, 1\)"):
        tilefuse.cross_entropy(x, t, label_smoothing=1.0)
    with pytest.raises(tilefuse.UserError, match=r"z_loss is -0\.10+, expected >= 0"):
        tilefuse.cross_entropy(x, t, z_loss=-0.1)
    with pytest.raises(tilefuse.UserError, match=r"loss is f32\[2\] on cpu; reduction mean writes one value"):
        tilefuse.cross_entropy(x, t, loss=np.zeros(2, np.float32))
    with pytest.raises(tilefuse.UserError, match=r"loss has dtype f16, expected f32"):
        tilefuse.cross_entropy(x, t, reduction="none", loss=np.zeros(4, np.float16))
    with pytest.raises(tilefuse.UserError, match=r"dlogits has dtype f16, expected f32"):
        tilefuse.cross_entropy(x, t, dlogits=np.zeros((4, 6), np.float16))
    with pytest.raises(tilefuse.UserError, match=r"inplace=True or dlogits=, not both"):
        tilefuse.cross_entropy(x, t, inplace=True, dlogits=x)
    with pytest.raises(tilefuse.UserError, match=r"logits is f32\[4, 0\] on cpu; expected at least one class"):
        tilefuse.cross_entropy(np.zeros((4, 0), np.float32), t)
    ro = x.copy()
    ro.setflags(write=False)
    with pytest.raises(tilefuse.UserError, match=r"logits \(inplace=True\) is a read-only array"):
        tilefuse.cross_entropy(ro, t, inplace=True)


# --- softmax and norm backward -------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_softmax_backward(rng, dtype, shape):
    x = rng.standard_normal(shape) * 2
    y = (np.exp(x) / np.exp(x).sum(-1, keepdims=True)).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    check(tilefuse.softmax_backward(dy, y), ref.softmax_backward(dy, y), dtype)


def test_softmax_backward_in_place(rng):
    y = tilefuse.softmax(rng.standard_normal((6, 70)).astype(np.float32))
    dy = rng.standard_normal((6, 70)).astype(np.float32)
    want = ref.softmax_backward(dy, y)
    assert tilefuse.softmax_backward(dy, y, out=dy) is dy
    check(dy, want, np.float32)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_rmsnorm_backward(rng, dtype, shape):
    x, dy = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    w = rng.standard_normal(shape[-1]).astype(dtype)
    dx, dw = tilefuse.rmsnorm_backward(dy, x, w, eps=1e-5)
    want_dx, want_dw = ref.rmsnorm_backward(dy, x, w, 1e-5)
    check(dx, want_dx, dtype, scale=10)
    check(dw, want_dw, dtype, scale=10)


@pytest.mark.parametrize("dtype", FLOATS)
def test_add_rmsnorm_backward(rng, dtype):
    x, r, dy, dres = (rng.standard_normal((9, 130)).astype(dtype) for _ in range(4))
    w = rng.standard_normal(130).astype(dtype)
    _, h = tilefuse.rmsnorm(x, w, residual=r)
    dh, dw = tilefuse.add_rmsnorm_backward(dy, dres, h, w)
    want_dx, want_dw = ref.rmsnorm_backward(dy, h, w, 1e-6)
    check(dh, want_dx + dres.astype(np.float64), dtype, scale=10)
    check(dw, want_dw, dtype, scale=10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_layernorm_backward(rng, dtype, shape):
    x = (rng.standard_normal(shape) + 2).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[-1]).astype(dtype)
    got = tilefuse.layernorm_backward(dy, x, w)
    for g, want in zip(got, ref.layernorm_backward(dy, x, w, 1e-5)):
        check(g, want, dtype, scale=30)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(7, 45), (3, 5, 333), (1, 1)])
def test_layernorm_saved_stats(rng, dtype, shape):
    # The training pair: the forward saves each row's mean and rstd, the backward reads them.
    x = (rng.standard_normal(shape) + 2).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[-1]).astype(dtype)
    b = rng.standard_normal(shape[-1]).astype(dtype)
    y, mean, rstd = tilefuse.layernorm(x, w, b, save_stats=True)
    assert mean.dtype == np.float32 and mean.shape == shape[:-1] and rstd.shape == shape[:-1]
    check(y, forward_ref.layernorm(x.astype(np.float64), w, b, 1e-5), dtype, scale=3)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(mean, x64.mean(-1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x64.var(-1) + 1e-5), rtol=1e-4)
    got = tilefuse.layernorm_backward(dy, x, w, mean=mean, rstd=rstd)
    for g, want in zip(got, ref.layernorm_backward(dy, x, w, 1e-5)):
        check(g, want, dtype, scale=30)


def test_layernorm_saved_stats_errors(rng):
    x = rng.standard_normal((4, 9)).astype(np.float32)
    w = np.ones(9, np.float32)
    with pytest.raises(tilefuse.UserError, match="mean and rstd go together"):
        tilefuse.layernorm_backward(x, x, w, mean=np.zeros(4, np.float32))
    with pytest.raises(tilefuse.UserError, match="rstd"):
        tilefuse.layernorm(x, w, w, mean=np.zeros(4, np.float32), rstd=np.zeros(3, np.float32))
    with pytest.raises(tilefuse.UserError, match="mean"):
        tilefuse.layernorm_backward(x, x, w, mean=np.zeros(4, np.float16), rstd=np.ones(4, np.float32))


def test_norm_backward_out_and_no_rows(rng):
    x, dy = (rng.standard_normal((4, 17)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal(17).astype(np.float32)
    outs = [np.full_like(x, np.nan), np.full_like(w, np.nan), np.full_like(w, np.nan)]
    got = tilefuse.layernorm_backward(dy, x, w, dx=outs[0], dweight=outs[1], dbias=outs[2])
    assert all(g is o for g, o in zip(got, outs))
    check(outs[2], dy.astype(np.float64).sum(0), np.float32)
    empty = np.zeros((0, 17), np.float32)
    dx, dw = tilefuse.rmsnorm_backward(empty, empty, w)
    assert dx.shape == (0, 17) and not dw.any()
    _, dw, db = tilefuse.layernorm_backward(empty, empty, w, dweight=np.full_like(w, np.nan))
    assert not dw.any() and not db.any()


def test_norm_backward_errors():
    x, w = np.zeros((3, 5), np.float32), np.ones(5, np.float32)
    with pytest.raises(tilefuse.UserError, match=r"x is f32\[3, 4\] on cpu, expected shape \[3, 5\]"):
        tilefuse.rmsnorm_backward(x, x[:, :4].copy(), w)
    with pytest.raises(tilefuse.UserError, match=r"weight is f32\[4\] on cpu, expected shape \[5\]"):
        tilefuse.layernorm_backward(x, x, w[:4].copy())
    with pytest.raises(tilefuse.UserError, match=r"dweight has dtype f16, expected f32"):
        tilefuse.rmsnorm_backward(x, x, w, dweight=np.zeros(5, np.float16))
    with pytest.raises(tilefuse.UserError, match=r"dresidual_out is f32\[3, 6\] on cpu, expected shape \[3, 5\]"):
        tilefuse.add_rmsnorm_backward(x, np.zeros((3, 6), np.float32), x, w)
    with pytest.raises(tilefuse.UserError, match=r"residual_out has dtype f16, expected f32"):
        tilefuse.add_rmsnorm_backward(x, x, x.astype(np.float16), w)
    with pytest.raises(tilefuse.UserError, match=r"y is f32\[3, 4\] on cpu, expected shape \[3, 5\]"):
        tilefuse.softmax_backward(x, np.zeros((3, 4), np.float32))
    with pytest.raises(tilefuse.UserError, match=r"softmax_backward: dtype f64 is not supported"):
        tilefuse.softmax_backward(x.astype(np.float64), x.astype(np.float64))


# --- SwiGLU --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(7, 45), (3, 5, 33), (1, 1), (2, 700)])
def test_swiglu_forward_and_backward(rng, dtype, shape):
    a, b, dy = ((rng.standard_normal(shape) * 3).astype(dtype) for _ in range(3))
    check(tilefuse.swiglu(a, b), ref.swiglu(a, b), dtype, scale=5)
    da, db = tilefuse.swiglu_backward(dy, a, b)
    want_da, want_db = ref.swiglu_backward(dy, a, b)
    check(da, want_da, dtype, scale=10)
    check(db, want_db, dtype, scale=10)


@pytest.mark.parametrize("dtype", FLOATS)
def test_swiglu_packed(rng, dtype):
    ab = (rng.standard_normal((2, 5, 2 * 37)) * 3).astype(dtype)
    dy = rng.standard_normal((2, 5, 37)).astype(dtype)
    a, b = ab[..., :37], ab[..., 37:]
    y = tilefuse.swiglu(ab)
    assert y.shape == (2, 5, 37)
    check(y, ref.swiglu(a, b), dtype, scale=5)
    dab = tilefuse.swiglu_backward(dy, ab)
    assert dab.shape == ab.shape
    want_da, want_db = ref.swiglu_backward(dy, a, b)
    check(dab, np.concatenate([want_da, want_db], axis=-1), dtype, scale=10)


def test_swiglu_out_and_errors(rng):
    a = rng.standard_normal((3, 8)).astype(np.float32)
    out = np.empty_like(a)
    assert tilefuse.swiglu(a, a, out=out) is out
    with pytest.raises(tilefuse.UserError, match=r"b is f32\[3, 7\] on cpu, expected shape \[3, 8\]"):
        tilefuse.swiglu(a, a[:, :7].copy())
    with pytest.raises(tilefuse.UserError, match=r"ab is f32\[3, 7\] on cpu; its last dimension must be even"):
        tilefuse.swiglu(a[:, :7].copy())
    with pytest.raises(tilefuse.UserError, match=r"dy is f32\[3, 8\] on cpu, expected shape \[3, 4\]"):
        tilefuse.swiglu_backward(a, a)
    with pytest.raises(tilefuse.UserError, match=r"db has dtype f16, expected f32"):
        tilefuse.swiglu_backward(a, a, a, db=np.zeros((3, 8), np.float16))


# --- bfloat16 ------------------------------------------------------------------------------

def test_training_kernels_in_bfloat16(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    tol = dict(rtol=3e-2, atol=3e-2)
    x = rng.standard_normal((6, 129)).astype(bf16)
    dy = rng.standard_normal((6, 129)).astype(bf16)
    w = rng.standard_normal(129).astype(bf16)
    f = lambda t: t.astype(np.float32)
    t = targets_for(rng, 6, 129)
    loss, dx = tilefuse.cross_entropy(x, t, label_smoothing=0.1)
    want_loss, want_dx = ref.cross_entropy(f(x), t, label_smoothing=0.1)
    assert dx.dtype == bf16
    np.testing.assert_allclose(loss, want_loss, rtol=1e-4)
    np.testing.assert_allclose(f(dx), want_dx, rtol=3e-2, atol=1e-3)
    for g, want in zip(tilefuse.rmsnorm_backward(dy, x, w), ref.rmsnorm_backward(f(dy), f(x), f(w), 1e-6)):
        np.testing.assert_allclose(f(g), want, **tol)
    for g, want in zip(tilefuse.layernorm_backward(dy, x, w), ref.layernorm_backward(f(dy), f(x), f(w), 1e-5)):
        np.testing.assert_allclose(f(g), want, rtol=3e-2, atol=1e-1)
    np.testing.assert_allclose(f(tilefuse.swiglu(x, dy)), ref.swiglu(f(x), f(dy)), **tol)
