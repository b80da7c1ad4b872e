"""The lecture's six tricks, measured on the modelled H200 by simulating real kernels.

Each trick is a pair (or group) of numba.cuda kernels run through simgpu: the table shows
what the model counts for each — SIMT efficiency, bytes moved to and from HBM, global
requests and sectors, bank conflicts — and the predicted time.  (docs/model.md has the same
tricks as closed-form numbers; this file shows them emerging from simulation.)

    python examples/lecture_tricks_simulated.py [--n 1048576] [--gpu H200]
"""
import argparse
import math

import numpy as np

import simgpu
from simgpu import cuda
from simgpu.kernels import cos_k, matmul_coalesced, relu_branch, sin_k, vadd
from numba import float32

TPB = 256


# trick 1: control divergence (with simgpu.kernels.relu_branch) ------------------------
def relu_mask(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = v * (v > 0)


# trick 3: fusion (with simgpu.kernels.sin_k, cos_k, vadd) --------------------------------
def k_square(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i]


def k_fused(x, out):
    i = cuda.grid(1)
    if i < x.size:
        s = math.sin(x[i])
        c = math.cos(x[i])
        out[i] = s * s + c * c


# trick 5: coalescing -------------------------------------------------------------------------
def copy_strided(src, dst, stride):
    i = cuda.grid(1)
    if i * stride < src.size:
        dst[i * stride] = src[i * stride]


# trick 6: tiling (naive: simgpu.kernels.matmul_coalesced) -------------------------------------
TILE = 16


def mm_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    col, row = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    acc = float32(0)
    for t in range(A.shape[1] // TILE):
        sA[ty, tx] = A[row, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[row, col] = acc


def row(name, rep, extra=""):
    m = rep.metrics
    dram = m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0) \
        + m.get("simgpu__l2_dirty_bytes_at_end.sum", 0)
    req = m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 0) + \
        m.get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 0)
    sec = m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0) + \
        m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0)
    t = m.get("gpu__time_duration.sum", float("nan")) / 1e3
    print(f"  {name:34s} {m.get('simgpu__simt_efficiency.pct', 0):6.1f}% {dram / 1e6:10.2f} "
          f"{sec / max(req, 1):9.2f} {m.get('smsp__inst_executed.sum', 0) / 1e6:9.2f} {t:10.2f}  {extra}")
    return rep


def header(title):
    print(f"\n{title}")
    print(f"  {'kernel':34s} {'SIMT':>7s} {'HBM MB':>10s} {'sect/req':>9s} {'Minst':>9s} {'time us':>10s}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--gpu", default="H200")
    a = ap.parse_args(argv)
    n, g = a.n, a.gpu
    rng = np.random.default_rng(0)
    x32 = rng.standard_normal(n).astype(np.float32)
    grid = -(-n // TPB)
    L = lambda k, args, grid=grid, block=TPB: simgpu.launch(k, grid, block, args, gpu=g)
    results = {}

    header("Trick 1 - avoid control divergence: ReLU with an if vs a multiply by a mask")
    results["relu_if_as_written"] = row("relu with if, as written (IR)", simgpu.launch(
        relu_branch, grid, TPB, (x32, np.zeros_like(x32)), gpu=g, executor="ir"), "both sides run")
    results["relu_if"] = row("relu with if, compiled", L(relu_branch, (x32, np.zeros_like(x32))),
                             "the compiler predicates a short branch")
    results["relu_mask"] = row("relu as v * (v > 0)", L(relu_mask, (x32, np.zeros_like(x32))))

    header("Trick 2 - low precision: the same ReLU in float32 and float16")
    x16 = x32.astype(np.float16)
    results["relu16"] = row("relu float16", L(relu_mask, (x16, np.zeros_like(x16))), "half the bytes")

    header("Trick 3 - fusion: sin^2 + cos^2 as 5 kernels vs 1")
    s, c, s2, c2, o = (np.zeros_like(x32) for _ in range(5))
    unfused = [L(sin_k, (x32, s)), L(cos_k, (x32, c)), L(k_square, (s, s2)), L(k_square, (c, c2)),
               L(vadd, (s2, c2, o))]
    tot_b = sum(r.metrics["dram__bytes_read.sum"] + r.metrics["dram__bytes_write.sum"] +
                r.metrics.get("simgpu__l2_dirty_bytes_at_end.sum", 0) for r in unfused)
    tot_t = sum(r.metrics["gpu__time_duration.sum"] for r in unfused)
    print(f"  {'unfused: 5 launches (sum)':34s} {'':7s} {tot_b / 1e6:10.2f} {'':9s} {'':9s} {tot_t / 1e3:10.2f}")
    fused = row("fused: 1 launch", L(k_fused, (x32, np.zeros_like(x32))))
    results["fusion_bytes_ratio"] = tot_b / (fused.metrics["dram__bytes_read.sum"] + fused.metrics["dram__bytes_write.sum"]
                                             + fused.metrics.get("simgpu__l2_dirty_bytes_at_end.sum", 0))
    assert np.allclose(o, 1.0, atol=1e-5)

    print("\nTrick 4 - recomputation: an accounting of stored vs recomputed activations; see\n"
          "  examples/lecture_six_tricks.py (simgpu.model.tricks.recomputation_ledgers)")

    header("Trick 5 - coalescing: a copy with stride s (32 B sectors per warp request)")
    big = rng.random(n * 8, dtype=np.float32)
    for stride in (1, 2, 8, 32):
        nthreads = big.size // stride
        results[f"stride{stride}"] = row(f"copy, stride {stride}", simgpu.launch(
            copy_strided, -(-nthreads // TPB), TPB, (big, np.zeros_like(big), np.int64(stride)), gpu=g))

    header("Trick 6 - tiling: 256x256 matmul, naive vs 16x16 shared-memory tiles")
    m = 256
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    for name, k in (("naive", matmul_coalesced), ("tiled", mm_tiled)):
        C = np.zeros((m, m), np.float32)
        rep = simgpu.launch(k, (m // TILE, m // TILE), (TILE, TILE), (A, B, C), gpu=g)
        reqb = rep.metrics.get("simgpu__global_ld_bytes_requested.sum", 0)
        results[name] = row(f"matmul {name}", rep, f"global load bytes requested {reqb / 1e6:.1f} MB")
        assert np.allclose(C, A @ B, rtol=1e-4)
    return results


if __name__ == "__main__":
    main()
