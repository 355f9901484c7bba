#!/usr/bin/env python3
"""The FP8 GEMM peer: torch._scaled_mm (cuBLASLt) on the shapes given, e4m3 A [M, K] and
B [N, K] (passed column-major, as it requires), per-tensor f32 scales, bf16 out. Timing
like tilefuse-bench: L2 flushed before each launch, CUDA events, median of 15 after 3
warm-ups. Usage: fp8_gemm_peer.py [--b-kn] 4096x4096x4096 [MxNxK ...]
--b-kn: B given row-major [K, N], so each call first makes the column-major copy
torch._scaled_mm requires (b.t().contiguous().t()), timed with the GEMM."""
import statistics
import sys

import torch


def bench(fn, reps=15, warmup=3):
    flush = torch.empty(int(2 * 60e6) // 4, dtype=torch.int32, device="cuda")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    args = sys.argv[1:]
    b_kn = "--b-kn" in args
    for shape in (a for a in args if a != "--b-kn"):
        m, n, k = (int(x) for x in shape.split("x"))
        a = (torch.rand(m, k, device="cuda") * 8 - 4).to(torch.float8_e4m3fn)
        b = (torch.rand(n, k, device="cuda") * 8 - 4).to(torch.float8_e4m3fn)
        sa = torch.tensor(0.5, device="cuda")
        sb = torch.tensor(0.125, device="cuda")
        ref = (a.float() @ b.float().t()) * 0.0625
        b_rows = b.t().contiguous()  # [K, N] row-major, for --b-kn
        for fast in (False, True):
            fn = lambda: torch._scaled_mm(a, b_rows.t().contiguous().t() if b_kn else b.t(), scale_a=sa, scale_b=sb,
                                          out_dtype=torch.bfloat16, use_fast_accum=fast)
            ms = bench(fn)
            err = (fn().float() - ref).abs().max().item()
            print(f"scaled_mm{' B [K, N]' if b_kn else ''} use_fast_accum={fast} {shape}: {ms * 1e3:.1f} us  {2 * m * n * k / ms / 1e9:.1f} TFLOP/s"
                  f"  max|err| {err:.3g}")


if __name__ == "__main__":
    main()
