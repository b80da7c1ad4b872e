"""CUDA C kernels for issue 27's targets ("at least two CUDA C kernels: one with mma.sync, one with
wgmma + TMA"), numpy only: imported by ../targets_device.py on the card (compiled there with
NVRTC through cupy) and by compare.py here (simgpu.cuda_source).

* ``MMA_SYNC_CU``: ``mma_sync_gemm(A, Bt, C, M, N, K)``, C (M x N, f32) = A (M x K, f16, row
  major) @ Bt^T (Bt: N x K, f16, row major); one warp a 16 x 8 tile of C, four warps a block
  (16 x 32), K in steps of 16 with one ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``
  each; fragments loaded from global memory as the PTX ISA lays them out (g = lane >> 2,
  t = lane % 4: A register j holds row g + 8 (j & 1), columns (j >> 1) 8 + 2t, +1; B register j
  column g, rows 8j + 2t, +1; D register j row g + 8 (j >> 1), column 2t + (j & 1)).  M % 16,
  N % 32 and K % 16 must be 0.
* The wgmma + TMA kernel is not here: simgpu.cuda_source refuses a struct passed by value, so a
  ``const __grid_constant__ CUtensorMap`` parameter (what TMA from CUDA C takes) cannot be
  launched through the CUDA C front door yet (docs/cuda_c.md)."""
import numpy as np

MMA_SYNC_CU = r'''
#include <cuda_fp16.h>
extern "C" __global__ void mma_sync_gemm(const __half* __restrict__ A, const __half* __restrict__ Bt,
                                         float* __restrict__ C, int M, int N, int K)
{
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    int m0 = blockIdx.y * 16, n0 = (blockIdx.x * 4 + warp) * 8;
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < K; k0 += 16) {
        unsigned a[4], b[2];
        for (int j = 0; j < 4; j++)
            a[j] = *(const unsigned*)(A + (size_t)(m0 + g + 8 * (j & 1)) * K + k0 + (j >> 1) * 8 + 2 * t);
        for (int j = 0; j < 2; j++)
            b[j] = *(const unsigned*)(Bt + (size_t)(n0 + g) * K + k0 + j * 8 + 2 * t);
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    for (int j = 0; j < 4; j++)
        C[(size_t)(m0 + g + 8 * (j >> 1)) * N + n0 + 2 * t + (j & 1)] = d[j];
}
'''

# (name, M, N, K): one wave and under (128 blocks), and four waves
MMA_SYNC_CASES = [("mma_sync_256x256x256", 256, 256, 256), ("mma_sync_512x1024x512", 512, 1024, 512)]


def grid(M, N):
    return (N // 32, M // 16)


def inputs(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
    bt = (rng.standard_normal((N, K)) * 0.5).astype(np.float16)
    return a, bt
