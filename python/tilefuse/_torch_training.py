"""The training kernels as PyTorch custom ops (torch.ops.tilefuse.*) with fake
implementations, and the autograd formulas that pair the forward ops (softmax, rmsnorm,
add_rmsnorm, layernorm, layernorm_stats, swiglu, swiglu_packed, cross_entropy) with the
backward kernels. Imported by tilefuse.torch, whose ops it registers backward formulas for."""

from typing import Optional, Tuple

import torch

import tilefuse as _tf

__all__ = [
    "cross_entropy", "cross_entropy_loss", "softmax_backward", "rmsnorm_backward", "add_rmsnorm_backward",
    "layernorm_backward", "swiglu", "swiglu_packed", "swiglu_backward", "swiglu_backward_packed",
]

_ops = torch.ops.tilefuse


def _c(t):
    return t.detach().contiguous()


def _like(t):
    return torch.empty_like(t, memory_format=torch.contiguous_format)


# --- cross-entropy -------------------------------------------------------------------------

@torch.library.custom_op("tilefuse::cross_entropy", mutates_args=())
def cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100, label_smoothing: float = 0.0,
    z_loss: float = 0.0, reduction: str = "mean", grad_scale: float = 1.0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(loss, dlogits) of tilefuse.cross_entropy: float32 loss ([...] with reduction 'none',
    else a scalar) and grad_scale * d(loss)/d(logits) in the logits' dtype."""
    return _tf.cross_entropy(_c(logits), _c(targets), ignore_index=ignore_index, label_smoothing=label_smoothing,
                             z_loss=z_loss, reduction=reduction, grad_scale=grad_scale)


@cross_entropy.register_fake
def _(logits, targets, ignore_index=-100, label_smoothing=0.0, z_loss=0.0, reduction="mean", grad_scale=1.0):
    shape = targets.shape if reduction == "none" else ()
    return logits.new_empty(shape, dtype=torch.float32), _like(logits)


def _ce_setup(ctx, inputs, output):
    ctx.reduction = inputs[5]
    ctx.save_for_backward(output[1])
    ctx.mark_non_differentiable(output[1])


def _ce_backward(ctx, dloss, _ddlogits):
    # The forward already computed the gradient: scale it by the loss's upstream gradient.
    (dlogits,) = ctx.saved_tensors
    g = dloss.unsqueeze(-1) if ctx.reduction == "none" else dloss
    return dlogits * g.to(dlogits.dtype), None, None, None, None, None, None


cross_entropy.register_autograd(_ce_backward, setup_context=_ce_setup)


def cross_entropy_loss(logits, targets, ignore_index=-100, label_smoothing=0.0, z_loss=0.0, reduction="mean"):
    """The loss alone, differentiable with respect to logits (like F.cross_entropy, plus z_loss)."""
    return _ops.cross_entropy(logits, targets, ignore_index, label_smoothing, z_loss, reduction, 1.0)[0]


# --- backward kernels ----------------------------------------------------------------------

@torch.library.custom_op("tilefuse::softmax_backward", mutates_args=())
def softmax_backward(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return _tf.softmax_backward(_c(dy), _c(y))


@softmax_backward.register_fake
def _(dy, y):
    return _like(dy)


@torch.library.custom_op("tilefuse::rmsnorm_backward", mutates_args=())
def rmsnorm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> Tuple[torch.Tensor, torch.Tensor]:
    return _tf.rmsnorm_backward(_c(dy), _c(x), _c(weight), eps=eps)


@rmsnorm_backward.register_fake
def _(dy, x, weight, eps=1e-6):
    return _like(dy), _like(weight)


@torch.library.custom_op("tilefuse::add_rmsnorm_backward", mutates_args=())
def add_rmsnorm_backward(
    dy: torch.Tensor, dresidual_out: torch.Tensor, residual_out: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(d(x) = d(residual), dweight) of add_rmsnorm."""
    return _tf.add_rmsnorm_backward(_c(dy), _c(dresidual_out), _c(residual_out), _c(weight), eps=eps)


@add_rmsnorm_backward.register_fake
def _(dy, dresidual_out, residual_out, weight, eps=1e-6):
    return _like(dy), _like(weight)


@torch.library.custom_op("tilefuse::layernorm_backward", mutates_args=())
def layernorm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5,
    mean: Optional[torch.Tensor] = None, rstd: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dweight, dbias). With mean and rstd (layernorm_stats's) the row statistics are
    read instead of recomputed, and eps is unused."""
    return _tf.layernorm_backward(_c(dy), _c(x), _c(weight), eps=eps, mean=None if mean is None else _c(mean),
                                  rstd=None if rstd is None else _c(rstd))


@layernorm_backward.register_fake
def _(dy, x, weight, eps=1e-5, mean=None, rstd=None):
    return _like(dy), _like(weight), _like(weight)


# --- SwiGLU --------------------------------------------------------------------------------

@torch.library.custom_op("tilefuse::swiglu", mutates_args=())
def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _tf.swiglu(_c(a), _c(b))


@swiglu.register_fake
def _(a, b):
    return _like(a)


@torch.library.custom_op("tilefuse::swiglu_packed", mutates_args=())
def swiglu_packed(ab: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up for ab [..., 2N] with rows [gate, up]."""
    return _tf.swiglu(_c(ab))


@swiglu_packed.register_fake
def _(ab):
    return ab.new_empty(ab.shape[:-1] + (ab.shape[-1] // 2,))


@torch.library.custom_op("tilefuse::swiglu_backward", mutates_args=())
def swiglu_backward(dy: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    return _tf.swiglu_backward(_c(dy), _c(a), _c(b))


@swiglu_backward.register_fake
def _(dy, a, b):
    return _like(dy), _like(dy)


@torch.library.custom_op("tilefuse::swiglu_backward_packed", mutates_args=())
def swiglu_backward_packed(dy: torch.Tensor, ab: torch.Tensor) -> torch.Tensor:
    return _tf.swiglu_backward(_c(dy), _c(ab))


@swiglu_backward_packed.register_fake
def _(dy, ab):
    return _like(ab)


# --- autograd of the forward ops -----------------------------------------------------------

def _save(*names):
    """setup_context saving the inputs at `names` (indices) or, for 'out', the output; and
    eps, the norms' last argument."""
    def setup(ctx, inputs, output):
        ctx.save_for_backward(*(output if n == "out" else inputs[n] for n in names))
        ctx.eps = None if isinstance(inputs[-1], torch.Tensor) else inputs[-1]
    return setup


def _softmax_bwd(ctx, dy):
    (y,) = ctx.saved_tensors
    return _ops.softmax_backward(dy, y)


def _rmsnorm_bwd(ctx, dy):
    x, w = ctx.saved_tensors
    dx, dw = _ops.rmsnorm_backward(dy, x, w, ctx.eps)
    return dx, dw, None


def _add_rmsnorm_setup(ctx, inputs, output):
    ctx.save_for_backward(output[1], inputs[2])
    ctx.eps = inputs[3]


def _add_rmsnorm_bwd(ctx, dout, dtotal):
    total, w = ctx.saved_tensors
    dout = torch.zeros_like(total) if dout is None else dout
    dtotal = torch.zeros_like(total) if dtotal is None else dtotal
    dh, dw = _ops.add_rmsnorm_backward(dout, dtotal, total, w, ctx.eps)
    return dh, dh, dw, None


def _layernorm_bwd(ctx, dy):
    # The bare op wrote no statistics: recompute them (tilefuse.torch.layernorm avoids this).
    x, w = ctx.saved_tensors
    dx, dw, db = _ops.layernorm_backward(dy, x, w, ctx.eps)
    return dx, dw, db, None


def _layernorm_stats_setup(ctx, inputs, output):
    _, mean, rstd = output
    ctx.save_for_backward(inputs[0], inputs[1], mean, rstd)
    ctx.mark_non_differentiable(mean, rstd)
    ctx.eps = inputs[3]


def _layernorm_stats_bwd(ctx, dy, _dmean, _drstd):
    x, w, mean, rstd = ctx.saved_tensors
    dx, dw, db = _ops.layernorm_backward(dy, x, w, ctx.eps, mean, rstd)
    return dx, dw, db, None


def _swiglu_bwd(ctx, dy):
    a, b = ctx.saved_tensors
    return _ops.swiglu_backward(dy, a, b)


def _swiglu_packed_bwd(ctx, dy):
    (ab,) = ctx.saved_tensors
    return _ops.swiglu_backward_packed(dy, ab)


torch.library.register_autograd("tilefuse::softmax", _softmax_bwd, setup_context=_save("out"))
torch.library.register_autograd("tilefuse::rmsnorm", _rmsnorm_bwd, setup_context=_save(0, 1))
torch.library.register_autograd("tilefuse::add_rmsnorm", _add_rmsnorm_bwd, setup_context=_add_rmsnorm_setup)
torch.library.register_autograd("tilefuse::layernorm", _layernorm_bwd, setup_context=_save(0, 1))
torch.library.register_autograd("tilefuse::layernorm_stats", _layernorm_stats_bwd, setup_context=_layernorm_stats_setup)
swiglu.register_autograd(_swiglu_bwd, setup_context=_save(0, 1))
swiglu_packed.register_autograd(_swiglu_packed_bwd, setup_context=_save(0))
