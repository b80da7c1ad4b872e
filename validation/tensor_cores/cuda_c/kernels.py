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
* ``WGMMA_TMA_CU``: ``wgmma_tma_gemm(tmA, tmB, C, M, N, K)``, the same product, one warpgroup
  (128 threads) a 64 x 64 tile of C; tmA / tmB: tensor maps of A (M x K) and Bt (N x K), box
  64 x 64, 128-byte swizzle (``simgpu.tensor_map(a, (64, 64), swizzle=128)``; on the card
  ``cuTensorMapEncodeTiled`` with CU_TENSOR_MAP_SWIZZLE_128B).  Per 64-wide K step thread 0
  arms an mbarrier with ``arrive.expect_tx`` (16 KiB) and issues the two TMA copies; every
  thread waits on the barrier's phase, then ``wgmma.fence``, four
  ``wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16`` (A and B K-major from shared-memory
  descriptors: the canonical 128B-swizzle layout, 128-byte rows of 64 halves, 8-row groups
  1024 bytes apart = SBO, the k16 step's start address 32 bytes on; tiles 1024-byte aligned),
  ``commit_group``, ``wait_group 0``.  D register 4i + j of warp w: row 16w + g + 8 (j >> 1),
  column 8i + 2t + (j & 1).  M % 64, N % 64 and K % 64 must be 0."""
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

WGMMA_TMA_CU = r'''
#include <cuda_fp16.h>
struct alignas(64) CUtensorMap { unsigned long long opaque[16]; };   // cuda.h's, without the header

__device__ __forceinline__ unsigned long long smem_desc(unsigned addr)
{   // PTX ISA "Matrix Descriptor Format": start >> 4 (bits 0-13), LBO >> 4 (16-29; unused by the
    // swizzled K-major layout, 1 by convention), SBO >> 4 (32-45): 8 rows x 128 B, swizzle 1 = 128B (62-63)
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32)
           | (1ull << 62);
}

extern "C" __global__ void __launch_bounds__(128) wgmma_tma_gemm(const __grid_constant__ CUtensorMap tmA,
        const __grid_constant__ CUtensorMap tmB, float* __restrict__ C, int M, int N, int K)
{
    __shared__ alignas(1024) __half sA[64 * 64];
    __shared__ alignas(1024) __half sB[64 * 64];
    __shared__ alignas(8) unsigned long long bar;
    int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned a_s = (unsigned)__cvta_generic_to_shared(sA), b_s = (unsigned)__cvta_generic_to_shared(sB);
    float d[32];
    for (int r = 0; r < 32; r++)
        d[r] = 0.f;
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    for (int k0 = 0, phase = 0; k0 < K; k0 += 64, phase ^= 1) {
        if (tid == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(2 * 64 * 64 * 2));
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                :: "r"(a_s), "l"(&tmA), "r"(k0), "r"(m0), "r"(b) : "memory");
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                :: "r"(b_s), "l"(&tmB), "r"(k0), "r"(n0), "r"(b) : "memory");
        }
        asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
            :: "r"(b), "r"(phase) : "memory");
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        for (int kk = 0; kk < 4; kk++) {
            unsigned long long da = smem_desc(a_s + 32 * kk), db = smem_desc(b_s + 32 * kk);
            asm volatile("{\n .reg .pred sd;\n setp.ne.b32 sd, %34, 0;\n"
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, sd, 1, 1, 0, 0;\n}"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                : "l"(da), "l"(db), "r"(1));   // scale-d: accumulate on D
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        __syncthreads();            // every warp's wgmma has read the tiles before the next copy lands
    }
    for (int r = 0; r < 32; r++) {
        int i = r >> 2, j = r & 3;
        C[(size_t)(m0 + 16 * warp + g + 8 * (j >> 1)) * N + n0 + 8 * i + 2 * t + (j & 1)] = d[r];
    }
}
'''


def wgmma_grid(M, N):
    return (N // 64, M // 64)


# (name, M, N, K): 16 blocks, one wave of 128 blocks, two waves (256 blocks)
WGMMA_TMA_CASES = [("wgmma_tma_256x256x256", 256, 256, 256), ("wgmma_tma_512x1024x512", 512, 1024, 512),
                   ("wgmma_tma_1024x1024x1024", 1024, 1024, 1024)]


def tiled_map_args(shape, itemsize, box, swizzle):
    """cuTensorMapEncodeTiled's arguments for a C-order tensor of ``shape`` (numpy order) and
    ``box`` (numpy order), as simgpu.tensor_map encodes them: globalDim, globalStrides (bytes, of
    dimensions 1..rank-1), boxDim and elementStrides innermost first; the swizzle's enum
    (CU_TENSOR_MAP_SWIZZLE_NONE/32B/64B/128B = 0..3); interleave none, L2 promotion none, OOB fill
    zero (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)."""
    shape, box = tuple(int(x) for x in shape), tuple(int(b) for b in box)
    strides = [itemsize * int(np.prod(shape[i + 1:])) for i in range(len(shape))]   # C order, bytes
    return {"globalDim": list(shape[::-1]), "globalStrides": strides[:-1][::-1], "boxDim": list(box[::-1]),
            "elementStrides": [1] * len(shape), "swizzle": {0: 0, 32: 1, 64: 2, 128: 3}[swizzle]}


# (name, M, N, K): one wave and under (128 blocks), and four waves
MMA_SYNC_CASES = [("mma_sync_256x256x256", 256, 256, 256), ("mma_sync_512x1024x512", 512, 1024, 512)]


def grid(M, N):
    return (N // 32, M // 16)


def inputs(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
    bt = (rng.standard_normal((N, K)) * 0.5).astype(np.float16)
    return a, bt
