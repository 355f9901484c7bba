"""The gallery as PyTorch custom ops (torch.ops.tilefuse.*), with fake implementations
so torch.compile traces them into graphs without running them.

    import tilefuse.torch  # registers the ops
    y = torch.ops.tilefuse.softmax(x)          # or tilefuse.torch.softmax(x)

The ops run on the tensor's device: CUDA tensors on the GPU on PyTorch's current
stream, CPU tensors on tilefuse's interpreter. Non-contiguous inputs are made
contiguous first. Needs torch >= 2.4 (torch.library.custom_op).

tilefuse.torch.layernorm is a function, not the op itself: under autograd it runs
layernorm_stats, whose backward reads the forward's row statistics; the bare
torch.ops.tilefuse.layernorm saves none, so its backward recomputes them.
"""

from typing import Optional, Tuple

import torch

import tilefuse as _tf

__all__ = [
    "softmax", "rmsnorm", "add_rmsnorm", "layernorm", "layernorm_stats", "bias_relu_log", "attention", "matmul",
]


def _c(t):
    # The op's autograd (formulas in _torch_training.py) is the dispatcher's business; the
    # kernel only reads the data, contiguous.
    return t.detach().contiguous()


@torch.library.custom_op("tilefuse::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    return _tf.softmax(_c(x))


@softmax.register_fake
def _(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("tilefuse::rmsnorm", mutates_args=())
def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return _tf.rmsnorm(_c(x), _c(weight), eps=eps)


@rmsnorm.register_fake
def _(x, weight, eps=1e-6):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("tilefuse::add_rmsnorm", mutates_args=())
def add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(rmsnorm(x + residual) * weight, x + residual)."""
    return _tf.rmsnorm(_c(x), _c(weight), eps=eps, residual=_c(residual))


@add_rmsnorm.register_fake
def _(x, residual, weight, eps=1e-6):
    return (torch.empty_like(x, memory_format=torch.contiguous_format),
            torch.empty_like(x, memory_format=torch.contiguous_format))


@torch.library.custom_op("tilefuse::layernorm", mutates_args=())
def _layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return _tf.layernorm(_c(x), _c(weight), _c(bias), eps=eps)


@_layernorm.register_fake
def _(x, weight, bias, eps=1e-5):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("tilefuse::layernorm_stats", mutates_args=())
def layernorm_stats(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(out, mean, rstd): layernorm and each row's float32 mean and 1/sqrt(var + eps),
    x.shape[:-1], which layernorm_backward(..., mean, rstd) reads. Differentiable with
    respect to out only: mean and rstd carry no gradient."""
    return _tf.layernorm(_c(x), _c(weight), _c(bias), eps=eps, save_stats=True)


@layernorm_stats.register_fake
def _(x, weight, bias, eps=1e-5):
    def stats():
        return x.new_empty(x.shape[:-1], dtype=torch.float32)
    return torch.empty_like(x, memory_format=torch.contiguous_format), stats(), stats()


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm over the last dimension. When autograd records it, this runs
    layernorm_stats so that the backward reads the forward's row statistics instead of
    recomputing them; otherwise torch.ops.tilefuse.layernorm, which writes none."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in (x, weight, bias)):
        return torch.ops.tilefuse.layernorm_stats(x, weight, bias, eps)[0]
    return torch.ops.tilefuse.layernorm(x, weight, bias, eps)


@torch.library.custom_op("tilefuse::bias_relu_log", mutates_args=())
def bias_relu_log(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return _tf.bias_relu_log(_c(x), _c(bias))


@bias_relu_log.register_fake
def _(x, bias):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("tilefuse::attention", mutates_args=())
def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, scale: Optional[float] = None
) -> torch.Tensor:
    return _tf.attention(_c(q), _c(k), _c(v), causal=causal, scale=scale)


@attention.register_fake
def _(q, k, v, causal=False, scale=None):
    return torch.empty_like(q, memory_format=torch.contiguous_format)


@torch.library.custom_op("tilefuse::matmul", mutates_args=())
def matmul(
    a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor] = None, activation: str = "none"
) -> torch.Tensor:
    return _tf.matmul(_c(a), _c(b), bias=None if bias is None else _c(bias),
                      activation=activation)


@matmul.register_fake
def _(a, b, bias=None, activation="none"):
    return a.new_empty((a.shape[0], b.shape[1]))


# The training ops (cross_entropy, the backward kernels, swiglu) and the autograd formulas
# of the forward ops above.
from ._torch_training import *  # noqa: E402,F401,F403
from ._torch_training import __all__ as _training_all  # noqa: E402

__all__ += _training_all
