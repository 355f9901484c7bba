"""Output allocation and stream choice for the tensors of any DLPack framework."""
from __future__ import annotations

from . import _tilefuse


def _framework(x) -> str:
    return type(x).__module__.split(".")[0]


def empty_like(x, shape, dtype=None):
    """A new uninitialized tensor of the framework, device and (by default) dtype of x."""
    fw = _framework(x)
    if fw == "numpy":
        import numpy as np

        return np.empty(shape, dtype=x.dtype if dtype is None else dtype)
    if fw == "torch":
        import torch

        return torch.empty(shape, dtype=x.dtype if dtype is None else dtype, device=x.device)
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(x.device.id):
            return cupy.empty(shape, dtype=x.dtype if dtype is None else dtype)
    raise _tilefuse.UserError(
        f"cannot allocate an output like a {type(x).__module__}.{type(x).__name__}; pass out= "
        "(tilefuse allocates NumPy, PyTorch and CuPy outputs itself)"
    )


# ml_dtypes' NumPy dtypes NumPy cannot export: (unsigned view of the same width, DLPack code).
_RELABELLED = {"bfloat16": ("uint16", 4), "float8_e4m3fn": ("uint8", 10), "float8_e5m2": ("uint8", 12)}
# torch's 8-bit floats, passed the same way (its DLPack export of them depends on the version).
_TORCH_FLOAT8 = {"torch.float8_e4m3fn": 10, "torch.float8_e5m2": 12}


def dlpack_ready(t):
    """t as the extension takes it: NumPy bfloat16 and 8-bit float arrays (ml_dtypes)
    become unsigned views relabelled with their DLPack type, since NumPy cannot export
    those dtypes; anything else as is."""
    if t is not None and _framework(t) == "numpy" and getattr(t, "dtype", None) is not None \
            and t.dtype.name in _RELABELLED:
        view, code = _RELABELLED[t.dtype.name]
        return _tilefuse._relabel(t.view(view), code)
    if t is not None and _framework(t) == "torch" and str(t.dtype) in _TORCH_FLOAT8:
        import torch

        return _tilefuse._relabel(t.view(torch.uint8), _TORCH_FLOAT8[str(t.dtype)])
    if t is not None and _framework(t) == "torch" and t.requires_grad:
        import torch

        if not torch.is_grad_enabled():  # no graph is being recorded: nothing is lost
            return t.detach()
        # torch refuses to export such a tensor through DLPack; say why instead.
        raise _tilefuse.UserError(
            f"a {tuple(t.shape)} tensor that requires grad: tilefuse functions have no backward. "
            "Pass tensor.detach(), or call them under torch.no_grad()"
        )
    return t


def check_writable(t, name):
    """A read-only NumPy array cannot be an output."""
    flags = getattr(t, "flags", None)
    if _framework(t) == "numpy" and flags is not None and not flags.writeable:
        raise _tilefuse.UserError(f"{name} is a read-only array; outputs must be writable (pass a writable out=)")


def float32_like(x):
    """The float32 dtype object of x's framework (for logsumexp outputs)."""
    fw = _framework(x)
    if fw == "torch":
        import torch

        return torch.float32
    import numpy as np  # NumPy and CuPy share NumPy's dtypes

    return np.float32


def stream_handle(x, stream) -> int:
    """The CUstream to launch on, as an integer: an explicit stream= (an int, a
    torch.cuda.Stream or a CuPy stream), else PyTorch's current stream for a CUDA torch
    tensor, CuPy's current stream for a CuPy array, else 0 (the legacy default stream;
    host arrays ignore it)."""
    if stream is not None:
        if isinstance(stream, int):
            return stream
        for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        raise _tilefuse.UserError(f"stream= must be an int, a torch.cuda.Stream or a CuPy stream, not {type(stream)}")
    if _framework(x) == "torch" and x.is_cuda:
        import torch

        return torch.cuda.current_stream(x.device).cuda_stream
    if _framework(x) == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return 0
