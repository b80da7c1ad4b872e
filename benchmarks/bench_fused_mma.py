"""The bit-exact tensor-core sum (simgpu/ptx/ops_mma.fused_mma) for one wgmma m64n256k16 of 4
warpgroups, the Triton matmul's hot call: its time per call and its ratio to numpy's float64
matmul of the same shapes (the peer, measured in the same run).

    python benchmarks/bench_fused_mma.py"""
import time

import numpy as np

from simgpu.ptx import ops_mma


def best(f, n=30, rounds=5):
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        ts.append(time.perf_counter() - t0)
    return min(ts) / n


def main():
    rng = np.random.default_rng(0)
    G = 4
    A = rng.standard_normal((G, 64, 16)).astype(np.float16).astype(np.float64)
    B = rng.standard_normal((G, 16, 256)).astype(np.float16).astype(np.float64)
    C = rng.standard_normal((G, 64, 256)).astype(np.float32).astype(np.float64)
    ops_mma.fused_mma(A, B, C, "f16", "f16")
    t = best(lambda: ops_mma.fused_mma(A, B, C, "f16", "f16"))
    p = best(lambda: np.matmul(A, B) + C)
    print(f"fused_mma {t * 1e3:.3f} ms per call ({G * 64 * 256 * 16 / t / 1e6:.0f} M products/s); "
          f"numpy matmul {p * 1e3:.3f} ms; ratio {t / p:.1f}")


if __name__ == "__main__":
    main()
