"""Writes bench.cu: tensor-pipe microbenchmarks for the H200 (mma.sync m16n8k16 and wgmma
m64nNk16, f16 -> f32), issue rates and latencies in SM cycles from %clock64 inside the kernels.
python gen.py > bench.cu; nvcc -arch=sm_90a -O3 -o bench bench.cu; ./bench > h200.json"""

INCLUDES = r'''#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("{\"error\": \"%s line %d\"}\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)
'''

HMMA = r'''
// mma.sync.m16n8k16 f16 -> f32: CH independent accumulator chains per warp
extern "C" __global__ void hmma_ch{CH}(float *out, unsigned long long *span, int iters) {
    const int CH = {CH};
    unsigned a0 = 0x3C003C00u, a1 = 0x3C003C00u, a2 = 0x3C003C00u, a3 = 0x3C003C00u, b0 = 0x3C003C00u, b1 = 0u;
    float d[CH][4];
    for (int c = 0; c < CH; c++) for (int j = 0; j < 4; j++) d[c][j] = 0.f;
    __syncthreads();
    unsigned long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < CH; c++)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    __syncthreads();
    unsigned long long t1 = clock64();
    if (threadIdx.x == 0) span[blockIdx.x] = t1 - t0;
    float s = 0.f;
    for (int c = 0; c < CH; c++) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
'''

WG = r'''
// wgmma.m64n{N}k16 f16 -> f32, A from registers, B (N x 16) from shared memory (K-major, no
// swizzle); PER wgmmas chained into one accumulator per commit group, then wait_group 0
extern "C" __global__ void wgmma_n{N}_p{PER}(float *out, unsigned long long *span, int iters) {
    __shared__ alignas(1024) unsigned short sb[{N} * 16];
    for (int i = threadIdx.x; i < {N} * 16; i += blockDim.x) sb[i] = 0x3C00;
    __syncthreads();
    unsigned a0 = 0x3C003C00u, a1 = 0x3C003C00u, a2 = 0x3C003C00u, a3 = 0x3C003C00u;
    unsigned long long addr = (unsigned long long)__cvta_generic_to_shared(sb);
    unsigned long long desc = ((addr & 0x3FFFF) >> 4) | ((128ull >> 4) << 16) | ((256ull >> 4) << 32);
    float d[{R}];
    for (int j = 0; j < {R}; j++) d[j] = 0.f;
    unsigned long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int p = 0; p < {PER}; p++)
            asm volatile("wgmma.mma_async.sync.aligned.m64n{N}k16.f32.f16.f16 {{{DREGS}}}, {{%{A0},%{A1},%{A2},%{A3}}}, %{DESC}, 1, 1, 1, 0;\n"
                         : {DOUT}
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc));
        asm volatile("wgmma.commit_group.sync.aligned;\n" "wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }
    __syncthreads();
    unsigned long long t1 = clock64();
    if (threadIdx.x == 0) span[blockIdx.x] = t1 - t0;
    float s = 0.f;
    for (int j = 0; j < {R}; j++) s += d[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
'''

MAIN = r'''
__device__ unsigned long long span_dev[4096];
template <typename K>
int run(const char *name, K kern, int blocks, int threads, int iters, double per_block_instr, double flop_per_instr,
        bool last) {
    float *out; CK(cudaMalloc(&out, (size_t)blocks * threads * 4));
    unsigned long long *span; CK(cudaGetSymbolAddress((void **)&span, span_dev));
    kern<<<blocks, threads>>>(out, span, 8); CK(cudaDeviceSynchronize());          // warm up
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    cudaEventRecord(e0);
    kern<<<blocks, threads>>>(out, span, iters);
    cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    unsigned long long h[4096]; CK(cudaMemcpyFromSymbol(h, span_dev, sizeof(unsigned long long) * blocks));
    double mx = 0, sum = 0;
    for (int b = 0; b < blocks; b++) { mx = h[b] > mx ? h[b] : mx; sum += h[b]; }
    double instr = per_block_instr * iters;
    printf("  \"%s\": {\"blocks\": %d, \"threads\": %d, \"iters\": %d, \"ms\": %.4f, \"span_cycles_max\": %.0f, "
           "\"span_cycles_mean\": %.1f, \"instr_per_block\": %.0f, \"flop_per_instr\": %.0f, "
           "\"tflops\": %.2f, \"clock_mhz_est\": %.1f}%s\n",
           name, blocks, threads, iters, ms, mx, sum / blocks, instr, flop_per_instr,
           instr * blocks * flop_per_instr / (ms * 1e-3) / 1e12, mx / (ms * 1e3), last ? "" : ",");
    cudaFree(out);
    return 0;
}

int main() {
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    int drv; cudaDriverGetVersion(&drv);
    printf("{\"device\": \"%s\", \"sms\": %d, \"driver\": %d, \"results\": {\n", p.name, p.multiProcessorCount, drv);
    const int S = p.multiProcessorCount;
    // latency: one warp, one chain; throughput: 8 blocks x 4 warps per SM, 4 / 8 chains
    run("hmma_latency", hmma_ch1, 1, 32, 4096, 1, 4096, false);
    run("hmma_tput_4warps_sm_ch4", hmma_ch4, S, 128, 4096, 4 * 4, 4096, false);
    run("hmma_tput_32warps_sm_ch4", hmma_ch4, 8 * S, 128, 4096, 4 * 4, 4096, false);
    run("hmma_tput_32warps_sm_ch8", hmma_ch8, 8 * S, 128, 2048, 4 * 8, 4096, false);
{WGRUNS}
    printf("}}\n");
    return 0;
}
'''


def wg_kernel(N, PER):
    R = N // 2
    dregs = ",".join(f"%{i}" for i in range(R))
    dout = ", ".join(f'"+f"(d[{i}])' for i in range(R))
    return (WG.replace("{N}", str(N)).replace("{PER}", str(PER)).replace("{R}", str(R))
            .replace("{DREGS}", dregs).replace("{DOUT}", dout)
            .replace("{A0}", str(R)).replace("{A1}", str(R + 1)).replace("{A2}", str(R + 2))
            .replace("{A3}", str(R + 3)).replace("{DESC}", str(R + 4))
            .replace("{{{", "{").replace("}}}", "}").replace("{{", "{").replace("}}", "}"))


CASES = [(64, 1), (64, 4), (128, 1), (128, 4), (256, 4)]
runs = []
for N, PER in CASES:
    f = 2 * 64 * N * 16
    runs.append(f'    run("wgmma_n{N}_p{PER}_1wg_sm", wgmma_n{N}_p{PER}, S, 128, 2048, {PER}, {f}, false);')
    runs.append(f'    run("wgmma_n{N}_p{PER}_2wg_sm", wgmma_n{N}_p{PER}, 2 * S, 128, 2048, {PER}, {f}, '
                f'{"true" if (N, PER) == CASES[-1] else "false"});')


def device_source():
    """The kernels alone (what simgpu.cuda_source compiles with NVRTC)."""
    return ("".join(HMMA.replace("{CH}", str(c)) for c in (1, 4, 8))
            + "".join(wg_kernel(N, P) for N, P in CASES))


if __name__ == "__main__":
    print(INCLUDES + device_source() + MAIN.replace("{WGRUNS}", "\n".join(runs)))
