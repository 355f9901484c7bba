# cuDNN attention through torch's SDPA at peers.py's attention shapes (32768 tokens, 16
# heads), timed with peers.py's own median_ms and flop count; cuDNN only (peers.py also
# autotunes Triton, which takes minutes). Run from a folder holding peers.py.
import sys, torch
import peers
from torch.nn.attention import sdpa_kernel, SDPBackend
for dtype in ('bf16', 'fp16'):
    for D in (64, 128):
        for N in (1024, 4096, 16384):
            B, H = 32768 // N, 16
            q, k, v = (torch.randn(B, H, N, D, device='cuda', dtype=peers.DT[dtype]) for _ in range(3))
            for causal in (False, True):
                flops = 4 * B * H * N * N * D * (0.5 if causal else 1.0)
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    fn = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    fn()
                    t = flops / peers.median_ms(fn, 100) / 1e9
                print(f"cudnn {dtype} d{D} n{N}{' causal' if causal else ''} {t:.1f} TFLOP/s", flush=True)
