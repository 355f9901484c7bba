"""NumPy references (float64) for the training kernels, independent of tilefuse;
test_training_numpy.py checks them against central differences of the forward."""
import numpy as np


def _f64(*ts):
    return [t.astype(np.float64) for t in ts]


def cross_entropy_rows(x, t, ignore_index=-100, label_smoothing=0.0, z_loss=0.0):
    """Per-row loss (0 where ignored) and d(loss_r)/d(x_r), and the mask of counted rows."""
    (x,) = _f64(x)
    valid = t != ignore_index
    m = x.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
    p = np.exp(x - lse)
    safe_t = np.where(valid, t, 0).astype(np.int64)
    x_t = np.take_along_axis(x, safe_t[..., None], axis=-1)
    eps, v = label_smoothing, x.shape[-1]
    loss = (1 - eps) * (lse - x_t) + eps * (lse - x.mean(axis=-1, keepdims=True)) + z_loss * lse**2
    onehot = np.zeros_like(x)
    np.put_along_axis(onehot, safe_t[..., None], 1.0, axis=-1)
    grad = (1 + 2 * z_loss * lse) * p - (1 - eps) * onehot - eps / v
    return np.where(valid, loss[..., 0], 0.0), np.where(valid[..., None], grad, 0.0), valid


def cross_entropy(x, t, ignore_index=-100, label_smoothing=0.0, z_loss=0.0, reduction="mean", grad_scale=1.0):
    loss, grad, valid = cross_entropy_rows(x, t, ignore_index, label_smoothing, z_loss)
    if reduction == "none":
        return loss, grad * grad_scale
    if reduction == "sum":
        return loss.sum(), grad * grad_scale
    count = valid.sum()
    return loss.sum() / count, grad * grad_scale / count


def softmax_backward(dy, y):
    dy, y = _f64(dy, y)
    return y * (dy - (dy * y).sum(axis=-1, keepdims=True))


def _sum_rows(t):
    return t.reshape(-1, t.shape[-1]).sum(axis=0)


def rmsnorm_backward(dy, x, w, eps):
    dy, x, w = _f64(dy, x, w)
    n = x.shape[-1]
    r = 1 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    g = dy * w
    dx = r * g - x * r**3 * (g * x).sum(axis=-1, keepdims=True) / n
    return dx, _sum_rows(dy * x * r)


def layernorm_backward(dy, x, w, eps):
    dy, x, w = _f64(dy, x, w)
    mean = x.mean(axis=-1, keepdims=True)
    r = 1 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) * r
    g = dy * w
    dx = r * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
    return dx, _sum_rows(dy * xhat), _sum_rows(dy)


def swiglu(a, b):
    a, b = _f64(a, b)
    return a / (1 + np.exp(-a)) * b


def swiglu_backward(dy, a, b):
    dy, a, b = _f64(dy, a, b)
    s = 1 / (1 + np.exp(-a))
    return dy * b * s * (1 + a * (1 - s)), dy * a * s
