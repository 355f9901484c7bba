"""tilefuse: fused GPU kernels (softmax, norms, attention, GEMM...) on any framework's tensors.

Tensors travel through DLPack: CUDA tensors run on the GPU on the caller's stream
(stream=, or PyTorch's current stream), host arrays (NumPy) on tilefuse's CPU
interpreter. Outputs are allocated like the input (NumPy, PyTorch, CuPy) or passed
with out=. Bad input raises tilefuse.UserError (a ValueError) with the whole reason.
"""
from __future__ import annotations

from . import _tilefuse
from ._frameworks import empty_like as _empty_like, float32_like as _float32_like, stream_handle as _stream
from ._tilefuse import (
    UserError,
    autotune_mode,
    cache_dir,
    compiler_version,
    gpu_available,
    gpu_unavailable_reason,
    set_autotune_mode,
)

__all__ = [
    "UserError", "gpu_available", "gpu_unavailable_reason", "compiler_version", "autotune_mode",
    "set_autotune_mode", "cache_dir", "softmax", "rmsnorm", "layernorm", "bias_relu_log", "attention", "matmul",
]


def _out(x, out, shape=None, dtype=None):
    return _empty_like(x, tuple(x.shape) if shape is None else shape, dtype) if out is None else out


def softmax(x, *, out=None, stream=None):
    """Softmax over the last dimension."""
    out = _out(x, out)
    _tilefuse.softmax(out, x, _stream(x, stream))
    return out


def rmsnorm(x, weight, *, eps=1e-6, residual=None, out=None, residual_out=None, stream=None):
    """RMSNorm over the last dimension, times weight. With residual=, normalizes
    x + residual and returns (out, x + residual)."""
    out = _out(x, out)
    if residual is None:
        _tilefuse.rmsnorm(out, x, weight, eps, _stream(x, stream))
        return out
    residual_out = _out(x, residual_out)
    _tilefuse.add_rmsnorm(out, residual_out, x, residual, weight, eps, _stream(x, stream))
    return out, residual_out


def layernorm(x, weight, bias, *, eps=1e-5, out=None, stream=None):
    """LayerNorm over the last dimension: (x - mean) / sqrt(var + eps) * weight + bias."""
    out = _out(x, out)
    _tilefuse.layernorm(out, x, weight, bias, eps, _stream(x, stream))
    return out


def bias_relu_log(x, bias, *, out=None, stream=None):
    """log(relu(x + bias)) with bias broadcast over the rows (one value per column)."""
    out = _out(x, out)
    _tilefuse.bias_relu_log(out, x, bias, _stream(x, stream))
    return out


def attention(q, k, v, *, causal=False, scale=None, out=None, lse=None, return_lse=False, stream=None):
    """softmax(q k^T * scale [causal mask]) v for [..., seq_len, head_dim] tensors
    (float16/bfloat16); scale defaults to 1/sqrt(head_dim). With return_lse=True also
    returns the float32 row logsumexp [..., seq_len]."""
    out = _out(q, out)
    lse = _out(q, lse, tuple(q.shape)[:-1], _float32_like(q))
    _tilefuse.attention_fwd(out, lse, q, k, v, causal, 0.0 if scale is None else float(scale), _stream(q, stream))
    return (out, lse) if return_lse else out


def matmul(a, b, *, bias=None, activation="none", b_trans=False, out=None, stream=None):
    """activation(a @ b [+ bias]) for a [M, K] and b [K, N] ([N, K] with b_trans=True) in
    float16/bfloat16; activation: 'none', 'relu', 'gelu_tanh' or 'silu'."""
    m = a.shape[0]
    n = b.shape[0] if b_trans else b.shape[1]
    out = _out(a, out, (m, n))
    _tilefuse.matmul(out, a, b, bias, b_trans, activation, _stream(a, stream))
    return out
