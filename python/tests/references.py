"""NumPy references (float64) for the gallery, independent of tilefuse."""
import numpy as np


def softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def rmsnorm(x, w, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w.astype(np.float64)


def layernorm(x, w, b, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w.astype(np.float64) + b.astype(np.float64)


def bias_relu_log(x, b):
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(x.astype(np.float64) + b.astype(np.float64), 0.0))


def attention(q, k, v, causal, scale):
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        n = q.shape[-2]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    return (p / l) @ v, (m + np.log(l))[..., 0]


def matmul(a, b, bias=None, activation="none"):
    c = a.astype(np.float64) @ b.astype(np.float64)
    if bias is not None:
        c = c + bias.astype(np.float64)
    if activation == "relu":
        c = np.maximum(c, 0)
    elif activation == "silu":
        c = c / (1 + np.exp(-c))
    elif activation == "gelu_tanh":
        c = 0.5 * c * (1 + np.tanh(0.7978845608028654 * (c + 0.044715 * c**3)))
    return c
