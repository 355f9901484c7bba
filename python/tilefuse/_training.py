"""The training kernels: fused cross-entropy (loss and dlogits in one pass), the backward
passes of softmax and the norms, and SwiGLU forward and backward. Outputs are allocated
like the first tensor argument or passed by keyword; tilefuse/__init__.py exports them."""
from __future__ import annotations

import math

from . import _tilefuse
from ._frameworks import check_writable as _check_writable
from ._frameworks import dlpack_ready as _dl
from ._frameworks import empty_like as _empty_like
from ._frameworks import float32_like as _float32_like
from ._frameworks import stream_handle as _stream

__all__ = [
    "cross_entropy", "softmax_backward", "rmsnorm_backward", "add_rmsnorm_backward", "layernorm_backward",
    "swiglu", "swiglu_backward",
]


def _alloc(x, out, name, shape=None, dtype=None):
    if out is None:
        return _empty_like(x, tuple(x.shape) if shape is None else shape, dtype)
    _check_writable(out, name)
    return out


def _no_rows(x):
    return len(x.shape) > 0 and math.prod(tuple(x.shape)[:-1]) == 0


def cross_entropy(logits, targets, *, ignore_index=-100, label_smoothing=0.0, z_loss=0.0, reduction="mean",
                  grad_scale=1.0, inplace=False, loss=None, dlogits=None, stream=None):
    """Softmax cross-entropy over the last dimension of logits [..., V] with targets [...]
    (int64 or int32 class indices), and its gradient, in one pass. Returns (loss, dlogits):
    loss is float32, [...] with reduction='none', a scalar with 'sum' or 'mean' (over the
    rows whose target is not ignore_index); dlogits = grad_scale * d(loss)/d(logits), in
    the logits' dtype, written over the logits with inplace=True.
    Per row: (1 - label_smoothing) (lse - x_target) + label_smoothing (lse - mean(x)) + z_loss lse^2."""
    rows = tuple(logits.shape)[:-1]
    loss = _alloc(logits, loss, "loss", rows if reduction == "none" else (), _float32_like(logits))
    if inplace:
        if dlogits is not None:
            raise _tilefuse.UserError("cross_entropy: pass inplace=True or dlogits=, not both")
        _check_writable(logits, "logits (inplace=True)")
        dlogits = logits
    else:
        dlogits = _alloc(logits, dlogits, "dlogits")
    _tilefuse.cross_entropy(_dl(loss), _dl(dlogits), _dl(logits), _dl(targets), int(ignore_index),
                            float(label_smoothing), float(z_loss), reduction, float(grad_scale), _stream(logits, stream))
    if reduction != "none" and _no_rows(logits):
        loss[...] = float("nan") if reduction == "mean" else 0.0  # as torch: the mean of no rows
    return loss, dlogits


def softmax_backward(dy, y, *, out=None, stream=None):
    """dx = y * (dy - sum(dy * y)) over the last dimension, for y = softmax(x). out may be dy."""
    out = _alloc(dy, out, "out")
    _tilefuse.softmax_backward(_dl(out), _dl(dy), _dl(y), _stream(dy, stream))
    return out


def _zero_if_no_rows(dy, *grads):
    if _no_rows(dy):  # a sum over no rows; the kernels need at least one
        for g in grads:
            g[...] = 0


def rmsnorm_backward(dy, x, weight, *, eps=1e-6, dx=None, dweight=None, stream=None):
    """Gradients (dx, dweight) of rmsnorm(x, weight, eps=eps) for the upstream gradient dy."""
    dx = _alloc(dy, dx, "dx")
    dweight = _alloc(weight, dweight, "dweight")
    _tilefuse.rmsnorm_backward(_dl(dx), _dl(dweight), _dl(dy), None, _dl(x), _dl(weight), eps, _stream(dy, stream))
    _zero_if_no_rows(dy, dweight)
    return dx, dweight


def add_rmsnorm_backward(dy, dresidual_out, residual_out, weight, *, eps=1e-6, dx=None, dweight=None, stream=None):
    """Gradients of (out, residual_out) = rmsnorm(x, weight, residual=residual): dy reaches
    out, dresidual_out reaches residual_out (= x + residual). Returns (dx, dweight); dx is
    the gradient of both x and residual."""
    dx = _alloc(dy, dx, "dx")
    dweight = _alloc(weight, dweight, "dweight")
    _tilefuse.rmsnorm_backward(_dl(dx), _dl(dweight), _dl(dy), _dl(dresidual_out), _dl(residual_out), _dl(weight),
                               eps, _stream(dy, stream))
    _zero_if_no_rows(dy, dweight)
    return dx, dweight


def layernorm_backward(dy, x, weight, *, eps=1e-5, mean=None, rstd=None, dx=None, dweight=None, dbias=None,
                       stream=None):
    """Gradients (dx, dweight, dbias) of layernorm(x, weight, bias, eps=eps) for the upstream
    gradient dy (the bias itself is not needed). With mean= and rstd= (the forward's, from
    layernorm(..., save_stats=True)) the row statistics are read instead of recomputed:
    two row sums instead of four, faster (eps is then unused)."""
    dx = _alloc(dy, dx, "dx")
    dweight = _alloc(weight, dweight, "dweight")
    dbias = _alloc(weight, dbias, "dbias")
    _tilefuse.layernorm_backward(_dl(dx), _dl(dweight), _dl(dbias), _dl(dy), _dl(x), _dl(weight),
                                 None if mean is None else _dl(mean), None if rstd is None else _dl(rstd), eps,
                                 _stream(dy, stream))
    _zero_if_no_rows(dy, dweight, dbias)
    return dx, dweight, dbias


def _half_last(shape):
    shape = tuple(shape)
    return shape[:-1] + (shape[-1] // 2,) if shape else shape


def swiglu(a, b=None, *, out=None, stream=None):
    """silu(a) * b. With one tensor, a is packed as [..., 2N] rows of [gate (N), up (N)] and
    the result is silu(gate) * up, [..., N]."""
    if b is None:
        out = _alloc(a, out, "out", _half_last(a.shape))
        _tilefuse.swiglu_packed(_dl(out), _dl(a), _stream(a, stream))
    else:
        out = _alloc(a, out, "out")
        _tilefuse.swiglu(_dl(out), _dl(a), _dl(b), _stream(a, stream))
    return out


def swiglu_backward(dy, a, b=None, *, da=None, db=None, dab=None, stream=None):
    """Gradients of swiglu(a, b) for the upstream gradient dy: (da, db). With a packed
    [..., 2N] input (b=None), the packed gradient dab [..., 2N] (rows [dgate, dup])."""
    if b is None:
        dab = _alloc(a, dab, "dab")
        _tilefuse.swiglu_backward_packed(_dl(dab), _dl(dy), _dl(a), _stream(dy, stream))
        return dab
    da = _alloc(dy, da, "da")
    db = _alloc(dy, db, "db")
    _tilefuse.swiglu_backward(_dl(da), _dl(db), _dl(dy), _dl(a), _dl(b), _stream(dy, stream))
    return da, db
