"""tilefuse: fused GPU kernels (softmax, norms, attention, GEMM...) on any framework's tensors.

Tensors travel through DLPack: CUDA tensors run on the GPU on the caller's stream
(stream=, or PyTorch's current stream), host arrays (NumPy) on tilefuse's CPU
interpreter. Outputs are allocated like the input (NumPy, PyTorch, CuPy) or passed
with out=. Bad input raises tilefuse.UserError (a ValueError) with the whole reason.
"""
from __future__ import annotations

import os as _os

from . import _tilefuse
from ._frameworks import check_writable as _check_writable
from ._frameworks import dlpack_ready as _dl
from ._frameworks import empty_like as _empty_like
from ._frameworks import float32_like as _float32_like
from ._frameworks import stream_handle as _stream
from ._tilefuse import (
    UserError,
    autotune_mode,
    cache_dir,
    compiler_version,
    gpu_available,
    gpu_unavailable_reason,
    set_autotune_mode,
)
from ._training import (
    add_rmsnorm_backward,
    cross_entropy,
    layernorm_backward,
    rmsnorm_backward,
    softmax_backward,
    swiglu,
    swiglu_backward,
)

__all__ = [
    "UserError", "gpu_available", "gpu_unavailable_reason", "compiler_version", "autotune_mode",
    "set_autotune_mode", "cache_dir", "set_cache_dir", "softmax", "rmsnorm", "layernorm", "bias_relu_log", "attention", "matmul",
    "scaled_matmul",
    "cross_entropy", "softmax_backward", "rmsnorm_backward", "add_rmsnorm_backward", "layernorm_backward",
    "swiglu", "swiglu_backward",
]


def set_cache_dir(path):
    """Puts the kernel and tuning caches in `path` (TILEFUSE_CACHE_DIR). The caches take
    their directory when first used; after that a different path is a UserError."""
    path = _os.fspath(path)
    _os.environ["TILEFUSE_CACHE_DIR"] = path
    used = cache_dir()
    if _os.path.abspath(used) != _os.path.abspath(path):
        raise UserError(f"the caches are already in use in {used}; call set_cache_dir before the first kernel runs")


def _out(x, out, shape=None, dtype=None, name="out"):
    if out is None:
        return _empty_like(x, tuple(x.shape) if shape is None else shape, dtype)
    _check_writable(out, name)
    return out


def softmax(x, *, out=None, stream=None):
    """Softmax over the last dimension."""
    out = _out(x, out)
    _tilefuse.softmax(_dl(out), _dl(x), _stream(x, stream))
    return out


def rmsnorm(x, weight, *, eps=1e-6, residual=None, out=None, residual_out=None, stream=None):
    """RMSNorm over the last dimension, times weight. With residual=, normalizes
    x + residual and returns (out, x + residual)."""
    out = _out(x, out)
    if residual is None:
        _tilefuse.rmsnorm(_dl(out), _dl(x), _dl(weight), eps, _stream(x, stream))
        return out
    residual_out = _out(x, residual_out, name="residual_out")
    _tilefuse.add_rmsnorm(_dl(out), _dl(residual_out), _dl(x), _dl(residual), _dl(weight), eps, _stream(x, stream))
    return out, residual_out


def layernorm(x, weight, bias, *, eps=1e-5, out=None, save_stats=False, mean=None, rstd=None, stream=None):
    """LayerNorm over the last dimension: (x - mean) / sqrt(var + eps) * weight + bias.
    With save_stats=True (or mean=/rstd= given) also each row's mean and rstd =
    1/sqrt(var + eps), float32 of x.shape[:-1]: returns (out, mean, rstd), which
    layernorm_backward(..., mean=, rstd=) reads instead of recomputing them."""
    out = _out(x, out)
    if not (save_stats or mean is not None or rstd is not None):
        _tilefuse.layernorm(_dl(out), _dl(x), _dl(weight), _dl(bias), None, None, eps, _stream(x, stream))
        return out
    rows = tuple(x.shape)[:-1]
    mean = _out(x, mean, rows, _float32_like(x), name="mean")
    rstd = _out(x, rstd, rows, _float32_like(x), name="rstd")
    _tilefuse.layernorm(_dl(out), _dl(x), _dl(weight), _dl(bias), _dl(mean), _dl(rstd), eps, _stream(x, stream))
    return out, mean, rstd


def bias_relu_log(x, bias, *, out=None, stream=None):
    """log(relu(x + bias)) with bias broadcast over the rows (one value per column)."""
    out = _out(x, out)
    _tilefuse.bias_relu_log(_dl(out), _dl(x), _dl(bias), _stream(x, stream))
    return out


def attention(q, k, v, *, causal=False, scale=None, out=None, lse=None, return_lse=False, stream=None):
    """softmax(q k^T * scale [causal mask]) v for [..., seq_len, head_dim] tensors
    (float16/bfloat16, head_dim up to 256); scale defaults to 1/sqrt(head_dim). k and v
    may have fewer heads (dimension -3, dividing q's: grouped-query attention, query head
    h reading key/value head h // (q heads / k heads)). With return_lse=True also returns
    the float32 row logsumexp [..., seq_len]."""
    out = _out(q, out)
    lse = _out(q, lse, tuple(q.shape)[:-1], _float32_like(q), name="lse")
    scale = 0.0 if scale is None else float(scale)  # 0: the kernel's 1/sqrt(head_dim)
    _tilefuse.attention_fwd(_dl(out), _dl(lse), _dl(q), _dl(k), _dl(v), causal, scale, _stream(q, stream))
    return (out, lse) if return_lse else out


def scaled_matmul(a, b, scale_a, scale_b, *, bias=None, activation="none", b_trans=True,
                  precise_accumulation=False, out=None, stream=None):
    """activation(scale_a * scale_b * (a @ b) [+ bias]) for 8-bit float a [M, K] and b [N, K]
    ([K, N] with b_trans=False), float8_e4m3fn or float8_e5m2 each, like torch._scaled_mm;
    scale_a, scale_b: one float32 each. The result is float32 unless out= says otherwise
    (float16, bfloat16); bias has out's dtype. precise_accumulation: each K block's product
    added in f32 (Hopper's 8-bit MMAs keep fewer bits), slower."""
    if out is not None:
        _check_writable(out, "out")
    elif len(a.shape) == 2 and len(b.shape) == 2:
        out = _empty_like(a, (a.shape[0], b.shape[0] if b_trans else b.shape[1]), _float32_like(a))
    else:
        out = a  # never written: the extension rejects the shapes and names them
    _tilefuse.scaled_matmul(_dl(out), _dl(a), _dl(b), _dl(scale_a), _dl(scale_b), _dl(bias), b_trans, activation,
                            precise_accumulation, _stream(a, stream))
    return out


def matmul(a, b, *, bias=None, activation="none", b_trans=False, out=None, stream=None):
    """activation(a @ b [+ bias]) for a [M, K] and b [K, N] ([N, K] with b_trans=True) in
    float16/bfloat16; activation: 'none', 'relu', 'gelu_tanh' or 'silu'."""
    if out is not None:
        _check_writable(out, "out")
    else:
        if len(a.shape) == 2 and len(b.shape) == 2:
            out = _empty_like(a, (a.shape[0], b.shape[0] if b_trans else b.shape[1]))
        else:
            out = a  # never written: the extension rejects the shapes and names them
    _tilefuse.matmul(_dl(out), _dl(a), _dl(b), _dl(bias), b_trans, activation, _stream(a, stream))
    return out
