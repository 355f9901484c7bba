"""tilefuse on PyTorch CUDA tensors: the gallery against torch references, streams,
out=, device errors, and the tilefuse.torch custom ops inside torch.compile.
Skips without torch, CUDA or a GPU tilefuse can use.

    PYTHONPATH=<build>/python python3 -m pytest -q python/tests/test_torch_gpu.py
"""
import math

import pytest

torch = pytest.importorskip("torch")
import tilefuse  # noqa: E402

if not (torch.cuda.is_available() and tilefuse.gpu_available()):
    pytest.skip("needs a CUDA GPU for torch and tilefuse", allow_module_level=True)

import tilefuse.torch  # noqa: E402,F401  (registers torch.ops.tilefuse.*)

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float16: dict(rtol=1e-2, atol=2e-3),
       torch.bfloat16: dict(rtol=4e-2, atol=2e-2)}
ROW_SHAPES = [(7, 45), (3, 5, 333), (64, 4096), (2, 20000)]


def check(got, want, dtype):
    assert got.dtype == dtype and got.device == want.device
    torch.testing.assert_close(got.float(), want.float(), **TOL[dtype])


def randn(*shape, dtype=torch.float32, scale=1.0):
    return (torch.randn(*shape, device="cuda", dtype=torch.float32) * scale).to(dtype)


@pytest.fixture(autouse=True)
def seed():
    torch.manual_seed(0)


@pytest.fixture(autouse=True, scope="module")
def heuristic_configs():
    # Correctness, not tuning: tuning every new shape would take minutes.
    tilefuse.set_autotune_mode("off")
    yield
    tilefuse.set_autotune_mode(None)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_softmax(dtype, shape):
    x = randn(*shape, dtype=dtype, scale=3)
    check(tilefuse.softmax(x), torch.softmax(x.float(), -1).to(dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_rmsnorm_and_residual(dtype, shape):
    x, r = randn(*shape, dtype=dtype), randn(*shape, dtype=dtype)
    w = randn(shape[-1], dtype=dtype)

    def ref(t):
        t = t.float()
        return (t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(dtype)

    check(tilefuse.rmsnorm(x, w), ref(x), dtype)
    out, total = tilefuse.rmsnorm(x, w, residual=r)
    check(total, (x.float() + r.float()).to(dtype), dtype)
    check(out, ref(total), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_layernorm(dtype, shape):
    x = randn(*shape, dtype=dtype) + 1
    w, b = randn(shape[-1], dtype=dtype), randn(shape[-1], dtype=dtype)
    want = torch.nn.functional.layer_norm(x.float(), (shape[-1],), w.float(), b.float(), 1e-5).to(dtype)
    check(tilefuse.layernorm(x, w, b), want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_relu_log(dtype):
    x, b = randn(300, 1001, dtype=dtype), randn(1001, dtype=dtype)
    want = torch.log(torch.relu(x.float() + b.float())).to(dtype)
    got = tilefuse.bias_relu_log(x, b)
    assert torch.equal(torch.isneginf(got), torch.isneginf(want))
    fin = torch.isfinite(want)
    check(got[fin], want[fin], dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 257, 64), (1, 4, 1000, 128), (2, 2, 333, 96), (1, 3, 300, 256)])
def test_attention(dtype, causal, shape):
    q, k, v = (randn(*shape, dtype=dtype) for _ in range(3))
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    out, lse = tilefuse.attention(q, k, v, causal=causal, return_lse=True)
    check(out, want.to(dtype), dtype)
    s = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(shape[-1])
    if causal:
        s = s.masked_fill(~torch.ones(shape[-2], shape[-2], dtype=torch.bool, device="cuda").tril(), -math.inf)
    torch.testing.assert_close(lse, torch.logsumexp(s, -1), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_grouped_query_heads(causal):
    q = randn(2, 8, 300, 128, dtype=torch.bfloat16)
    k, v = (randn(2, 2, 300, 128, dtype=torch.bfloat16) for _ in range(2))
    want = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float().repeat_interleave(4, 1), v.float().repeat_interleave(4, 1), is_causal=causal)
    check(tilefuse.attention(q, k, v, causal=causal), want.to(torch.bfloat16), torch.bfloat16)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mnk", [(333, 257, 190), (1024, 1024, 512)])
def test_matmul(dtype, mnk):
    m, n, k = mnk
    a, b, bias = randn(m, k, dtype=dtype), randn(k, n, dtype=dtype), randn(n, dtype=dtype)
    check(tilefuse.matmul(a, b), (a.float() @ b.float()).to(dtype), dtype)
    want = torch.relu(a.float() @ b.float() + bias.float()).to(dtype)
    check(tilefuse.matmul(a, b, bias=bias, activation="relu"), want, dtype)
    check(tilefuse.matmul(a, b.t().contiguous(), b_trans=True), (a.float() @ b.float()).to(dtype), dtype)


def _fp8_operands(m, n, k):
    a = (randn(m, k) * 4).to(torch.float8_e4m3fn)
    b = (randn(n, k) * 4).to(torch.float8_e4m3fn)
    sa, sb = torch.tensor([0.5], device="cuda"), torch.tensor([0.25], device="cuda")
    return a, b, sa, sb, (a.double() @ b.double().t()) * 0.125


def _max_err(x, exact):
    return (x.double() - exact).abs().max().item()


@pytest.mark.parametrize("mnk", [(336, 272, 192), (1024, 2048, 512)])
def test_scaled_matmul_as_accurate_as_torch_scaled_mm(mnk):
    a, b, sa, sb, exact = _fp8_operands(*mnk)
    out = torch.empty(mnk[0], mnk[1], dtype=torch.bfloat16, device="cuda")
    got = tilefuse.scaled_matmul(a, b, sa, sb, out=out, precise_accumulation=True)
    assert got is out
    # Each rounds a slightly different f32 sum: compare both with the exact product, for
    # torch's default (bf16 out) and fast-accumulation (f32 out) modes.
    want = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    assert _max_err(got, exact) <= 1.25 * _max_err(want, exact) + 1e-3
    fast = tilefuse.scaled_matmul(a, b, sa, sb)
    assert fast.dtype == torch.float32
    want_fast = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32, use_fast_accum=True)
    assert _max_err(fast, exact) <= 1.5 * _max_err(want_fast, exact) + 1e-3


def test_scaled_matmul_at_sizes_torch_refuses():
    # torch._scaled_mm needs every size divisible by 16; tilefuse masks the edges.
    a, b, sa, sb, exact = _fp8_operands(333, 257, 190)
    got = tilefuse.scaled_matmul(a, b, sa, sb, precise_accumulation=True)
    torch.testing.assert_close(got.double(), exact, rtol=1e-4, atol=1e-3 * exact.abs().max().item())


def test_runs_on_the_current_and_on_an_explicit_stream():
    x = randn(4096, 4096, scale=3)
    want = torch.softmax(x, -1)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # keeps s busy: a launch on another stream would finish first
        got = tilefuse.softmax(x)
    s.synchronize()
    check(got, want, torch.float32)

    s2 = torch.cuda.Stream()
    s2.wait_stream(torch.cuda.current_stream())
    out = torch.empty_like(x)
    with torch.cuda.stream(s2):
        torch.cuda._sleep(50_000_000)
        y = x * 2  # queued behind the sleep on s2
    tilefuse.softmax(y, out=out, stream=s2)
    s2.synchronize()
    check(out, torch.softmax(x * 2, -1), torch.float32)


def test_out_is_written_and_returned():
    x = randn(33, 1000)
    out = torch.full_like(x, float("nan"))
    assert tilefuse.softmax(x, out=out) is out
    check(out, torch.softmax(x, -1), torch.float32)


def test_mixed_devices_and_layouts_raise_user_errors():
    x = randn(8, 16)
    with pytest.raises(tilefuse.UserError, match=r"out is f32\[8, 16\] on cpu but x is f32\[8, 16\] on cuda:0"):
        tilefuse.softmax(x, out=torch.empty(8, 16))
    with pytest.raises(tilefuse.UserError, match=r"is not contiguous"):
        tilefuse.softmax(x.t())
    with pytest.raises(tilefuse.UserError, match=r"out has dtype f16, expected f32"):
        tilefuse.softmax(x, out=torch.empty(8, 16, device="cuda", dtype=torch.float16))


def test_tensors_that_require_grad_are_refused_with_a_reason():
    x = randn(4, 8).requires_grad_()
    with pytest.raises(tilefuse.UserError, match=r"requires grad: tilefuse functions have no backward"):
        tilefuse.softmax(x)
    check(tilefuse.softmax(x.detach()), torch.softmax(x.detach(), -1), torch.float32)
    with torch.no_grad():
        check(tilefuse.softmax(x), torch.softmax(x, -1), torch.float32)


def test_custom_ops_pass_opcheck():
    x = randn(17, 300)
    w, b = randn(300), randn(300)
    q = randn(2, 2, 64, 64, dtype=torch.float16)
    a, m = randn(64, 96, dtype=torch.float16), randn(96, 80, dtype=torch.float16)
    for op, args in [(torch.ops.tilefuse.softmax, (x,)), (torch.ops.tilefuse.rmsnorm, (x, w, 1e-6)),
                     (torch.ops.tilefuse.add_rmsnorm, (x, x, w, 1e-6)), (torch.ops.tilefuse.layernorm, (x, w, b, 1e-5)),
                     (torch.ops.tilefuse.bias_relu_log, (x, b)), (torch.ops.tilefuse.attention, (q, q, q, True, None)),
                     (torch.ops.tilefuse.matmul, (a, m, None, "none"))]:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor"))


def test_torch_compile_graph_with_tilefuse_ops():
    x, r = randn(64, 1000), randn(64, 1000)
    w = randn(1000)

    def block(x, r, w):
        h, total = torch.ops.tilefuse.add_rmsnorm(x * 0.5, r, w, 1e-6)
        return torch.ops.tilefuse.softmax(torch.relu(h) + 1) + total.sum()

    compiled = torch.compile(block, fullgraph=True)
    got = compiled(x, r, w)
    t = x * 0.5 + r
    h = t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    want = torch.softmax(torch.relu(h) + 1, -1) + t.sum()
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-3)


# --- training kernels: cross-entropy, backward passes, SwiGLU, and autograd through the ops ---

F = torch.nn.functional
GRAD_TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float16: dict(rtol=1e-2, atol=1e-2),
            torch.bfloat16: dict(rtol=4e-2, atol=5e-2)}


def check_grad(got, want, dtype):
    assert got.dtype == dtype and got.shape == want.shape
    torch.testing.assert_close(got.float(), want.float(), **GRAD_TOL[dtype])


def ref_grads(f, *inputs, dy):
    """Autograd of f on float32 copies of inputs, for the upstream gradient dy."""
    xs = [t.detach().float().requires_grad_() for t in inputs]
    y = f(*xs)
    y.backward(dy.float())
    return y.detach(), [t.grad for t in xs]


def with_ignored(targets, ignore_index):
    t = targets.clone()
    t[::7] = ignore_index
    return t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("mv", [(7, 45), (333, 1001), (64, 32000), (9, 50257)])
def test_cross_entropy_matches_torch(dtype, reduction, mv):
    m, v = mv
    x = randn(m, v, dtype=dtype, scale=2)
    t = with_ignored(torch.randint(0, v, (m,), device="cuda"), -100)
    loss, dx = tilefuse.cross_entropy(x, t, label_smoothing=0.1, reduction=reduction, grad_scale=0.5)
    xf = x.float().requires_grad_()
    want = F.cross_entropy(xf, t, ignore_index=-100, label_smoothing=0.1, reduction=reduction)
    (want.sum() * 0.5).backward()
    torch.testing.assert_close(loss, want.detach(), rtol=1e-4, atol=1e-4)
    check_grad(dx, xf.grad, dtype)


@pytest.mark.parametrize("targets_dtype", [torch.int64, torch.int32])
def test_cross_entropy_z_loss_other_ignore_index_and_in_place(targets_dtype):
    m, v = 100, 4099
    x = randn(m, v, dtype=torch.bfloat16, scale=3)
    t = with_ignored(torch.randint(0, v, (m,), device="cuda"), 3).to(targets_dtype)
    xf = x.float().requires_grad_()
    lse = torch.logsumexp(xf, -1)
    rows = F.cross_entropy(xf, t.long(), ignore_index=3, reduction="none") + 1e-3 * lse**2 * (t != 3)
    want = rows.sum() / (t != 3).sum()
    want.backward()
    buf = x.clone()
    loss, dx = tilefuse.cross_entropy(buf, t, ignore_index=3, z_loss=1e-3, inplace=True)
    assert dx is buf
    torch.testing.assert_close(loss, want.detach(), rtol=1e-4, atol=1e-4)
    check_grad(dx, xf.grad, torch.bfloat16)


def test_cross_entropy_loss_op_backward_scales_by_the_upstream_gradient():
    x = randn(3, 17, 1000).requires_grad_()
    t = with_ignored(torch.randint(0, 1000, (3, 17), device="cuda"), -100)
    up = torch.rand(3, 17, device="cuda")
    (tilefuse.torch.cross_entropy_loss(x, t, label_smoothing=0.2, reduction="none") * up).sum().backward()
    xr = x.detach().clone().requires_grad_()
    (F.cross_entropy(xr.transpose(1, 2), t, label_smoothing=0.2, reduction="none") * up).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_softmax_backward(dtype, shape):
    y = torch.softmax(randn(*shape, scale=2), -1).to(dtype)
    dy = randn(*shape, dtype=dtype)
    want = y.float() * (dy.float() - (dy.float() * y.float()).sum(-1, keepdim=True))
    check_grad(tilefuse.softmax_backward(dy, y), want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_norm_backward_matches_autograd(dtype, shape):
    x, dy, r, dres = (randn(*shape, dtype=dtype) for _ in range(4))
    w, b = randn(shape[-1], dtype=dtype), randn(shape[-1], dtype=dtype)

    def rms(t, w):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    _, (want_dx, want_dw) = ref_grads(rms, x, w, dy=dy)
    for got, want in zip(tilefuse.rmsnorm_backward(dy, x, w), (want_dx, want_dw)):
        check_grad(got, want, dtype)
    _, h = tilefuse.rmsnorm(x, w, residual=r)
    _, (want_dh, want_dw) = ref_grads(rms, h, w, dy=dy)
    dh, dw = tilefuse.add_rmsnorm_backward(dy, dres, h, w)
    check_grad(dh, want_dh + dres.float(), dtype)
    check_grad(dw, want_dw, dtype)
    ln = lambda t, w, b: F.layer_norm(t, (shape[-1],), w, b, 1e-5)  # noqa: E731
    _, want = ref_grads(ln, x + 1, w, b, dy=dy)
    for got, w_ in zip(tilefuse.layernorm_backward(dy, x + 1, w), want):
        check_grad(got, w_, dtype)


def layer_norm_with(eps, cols):
    return lambda t, w, b: F.layer_norm(t, (cols,), w, b, eps)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", [(7, 45), (3, 5, 333)])
def test_layernorm_autograd_reads_the_forward_statistics(dtype, shape):
    x, dy = randn(*shape, dtype=dtype) + 1, randn(*shape, dtype=dtype)
    w, b = randn(shape[-1], dtype=dtype), randn(shape[-1], dtype=dtype)
    want_y, want_grads = ref_grads(layer_norm_with(1e-5, shape[-1]), x, w, b, dy=dy)
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]
    y = tilefuse.torch.layernorm(*leaves)
    # Recorded as layernorm_stats: the node holds (x, weight, mean, rstd), the statistics float32.
    _, _, mean, rstd = y.grad_fn.saved_tensors
    xf = x.float()
    torch.testing.assert_close(mean, xf.mean(-1), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(rstd, torch.rsqrt(xf.var(-1, unbiased=False) + 1e-5), rtol=1e-4, atol=1e-5)
    y.backward(dy)
    check(y.detach(), want_y.to(dtype), dtype)
    for leaf, want in zip(leaves, want_grads):
        check_grad(leaf.grad, want, dtype)
    with torch.no_grad():  # nothing to record: the op that writes no statistics
        check(tilefuse.torch.layernorm(*leaves), want_y.to(dtype), dtype)
    bare = [t.clone().requires_grad_() for t in (x, w, b)]
    torch.ops.tilefuse.layernorm(*bare, 1e-5).backward(dy)  # saved no statistics: recomputes them
    for leaf, want in zip(bare, want_grads):
        check_grad(leaf.grad, want, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", [(7, 45), (3, 5, 333)])
def test_layernorm_backward_op_reads_the_given_statistics(dtype, shape):
    # Statistics of eps=0.5 with eps=1e-5 passed: the gradients are layer_norm's at eps=0.5
    # only if the op reads mean and rstd rather than recomputing them.
    x, dy = randn(*shape, dtype=dtype) + 1, randn(*shape, dtype=dtype)
    w, b = randn(shape[-1], dtype=dtype), randn(shape[-1], dtype=dtype)
    y, mean, rstd = tilefuse.torch.layernorm_stats(x, w, b, 0.5)
    want_y, want_grads = ref_grads(layer_norm_with(0.5, shape[-1]), x, w, b, dy=dy)
    check(y, want_y.to(dtype), dtype)
    assert mean.dtype == rstd.dtype == torch.float32 and mean.shape == rstd.shape == shape[:-1]
    for got, want in zip(tilefuse.torch.layernorm_backward(dy, x, w, 1e-5, mean, rstd), want_grads):
        check_grad(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 45), (3, 5, 333), (512, 5000)])
def test_swiglu_and_backward_match_autograd(dtype, shape):
    a, b, dy = (randn(*shape, dtype=dtype, scale=2) for _ in range(3))
    y, (want_da, want_db) = ref_grads(lambda a, b: F.silu(a) * b, a, b, dy=dy)
    check(tilefuse.swiglu(a, b), y.to(dtype), dtype)
    da, db = tilefuse.swiglu_backward(dy, a, b)
    check_grad(da, want_da, dtype)
    check_grad(db, want_db, dtype)
    ab = torch.cat([a, b], -1)
    check(tilefuse.swiglu(ab), y.to(dtype), dtype)
    check_grad(tilefuse.swiglu_backward(dy, ab), torch.cat([want_da, want_db], -1), dtype)


def test_forward_ops_have_autograd_through_the_backward_kernels():
    x, r = randn(33, 1000).requires_grad_(), randn(33, 1000).requires_grad_()
    w, b = randn(1000).requires_grad_(), randn(1000).requires_grad_()
    ab = randn(33, 2000).requires_grad_()

    def model(ops, x, r, w, b, ab):
        h, total = ops["add_rmsnorm"](x, r, w)
        g = ops["layernorm"](h, w, b) * ops["swiglu_packed"](ab)
        return (ops["softmax"](g) * ops["rmsnorm"](g + total, w)).sum()

    tf_ops = dict(add_rmsnorm=lambda x, r, w: torch.ops.tilefuse.add_rmsnorm(x, r, w, 1e-6),
                  layernorm=tilefuse.torch.layernorm,
                  swiglu_packed=torch.ops.tilefuse.swiglu_packed, softmax=torch.ops.tilefuse.softmax,
                  rmsnorm=lambda t, w: torch.ops.tilefuse.rmsnorm(t, w, 1e-6))

    def rms(t, w):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    torch_ops = dict(add_rmsnorm=lambda x, r, w: (rms(x + r, w), x + r),
                     layernorm=lambda h, w, b: F.layer_norm(h, (1000,), w, b, 1e-5),
                     swiglu_packed=lambda t: F.silu(t[:, :1000]) * t[:, 1000:],
                     softmax=lambda t: torch.softmax(t, -1), rmsnorm=rms)
    leaves = (x, r, w, b, ab)
    got = torch.autograd.grad(model(tf_ops, *leaves), leaves)
    want = torch.autograd.grad(model(torch_ops, *leaves), leaves)
    for g, w_ in zip(got, want):
        torch.testing.assert_close(g, w_, rtol=1e-3, atol=1e-3)
    compiled = torch.compile(lambda *t: model(tf_ops, *t), fullgraph=True)
    for g, w_ in zip(torch.autograd.grad(compiled(*leaves), leaves), want):
        torch.testing.assert_close(g, w_, rtol=1e-3, atol=1e-3)


def test_training_custom_ops_pass_opcheck():
    x, dy = randn(17, 300), randn(17, 300)
    w = randn(300)
    t = torch.randint(0, 300, (17,), device="cuda")
    ab = randn(17, 600)
    for op, args in [(torch.ops.tilefuse.cross_entropy, (x, t, -100, 0.1, 1e-4, "mean", 1.0)),
                     (torch.ops.tilefuse.cross_entropy, (x, t, -100, 0.0, 0.0, "none", 2.0)),
                     (torch.ops.tilefuse.softmax_backward, (dy, torch.softmax(x, -1))),
                     (torch.ops.tilefuse.rmsnorm_backward, (dy, x, w, 1e-6)),
                     (torch.ops.tilefuse.add_rmsnorm_backward, (dy, dy, x, w, 1e-6)),
                     (torch.ops.tilefuse.layernorm_backward, (dy, x, w, 1e-5)),
                     (torch.ops.tilefuse.layernorm_stats, (x, w, w, 1e-5)),
                     (torch.ops.tilefuse.layernorm_backward,
                      (dy, x, w, 1e-5, x.mean(-1), torch.rsqrt(x.var(-1, unbiased=False) + 1e-5))),
                     (torch.ops.tilefuse.swiglu, (x, dy)), (torch.ops.tilefuse.swiglu_packed, (ab,)),
                     (torch.ops.tilefuse.swiglu_backward, (dy, x, x)),
                     (torch.ops.tilefuse.swiglu_backward_packed, (dy, ab))]:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor"))
