"""On the card: the L1 data path's rate for warp loads that touch several 128-byte lines
(L1-resident data, 2-byte elements), for the timing model's per-line L1 cost (sim.SM._l1_path).

Each warp issues `ITERS` x 8 independent ld.global.ca.u16; lane l reads row (l / (32 / L)) of a
256-row buffer with rows `row_bytes` apart, so a request touches L distinct lines (L = 1: one
64-byte run).  8 warps a block, 4 blocks an SM (132 x 4 blocks); SM cycles from %clock64 around
each block's loop, per SM (smid): requests on that SM / (last end - first start).
Writes $OUT/l1_lines.json.  Run: python3 l1_lines.py (cupy)"""
import json, os
import cupy as cp

SRC = r'''
extern "C" __global__ void lines(const unsigned short* __restrict__ buf, int row_elems, int lpr, int iters,
                                 unsigned long long* t, unsigned int* out) {
    int lane = threadIdx.x & 31;
    int per = 32 / lpr;                         // lanes on one line
    int row = lane / per, col = lane % per;
    unsigned acc = 0;
    const unsigned short* p = buf + (size_t)row * row_elems + col + (threadIdx.x >> 5) * 32;
    __syncthreads();
    unsigned long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
        int r = (it * 8) & 255;                   // 8 independent loads, rows advance by lpr each
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
            acc += __ldca(p + (size_t)(((r + u * lpr) & 255)) * row_elems);
        }
    }
    __syncthreads();
    unsigned long long t1 = clock64();
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (threadIdx.x == 0) { t[3 * blockIdx.x] = t0; t[3 * blockIdx.x + 1] = t1; t[3 * blockIdx.x + 2] = smid; }
    if (acc == 0x12345678u) out[0] = acc;
}
'''
k = cp.RawKernel(SRC, "lines")
OUT = os.environ.get("OUT", "/tmp")
res = {"gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "method": __doc__, "cases": []}
ITERS, WARPS, BPS = 256, 8, 4
nsm = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
for row_bytes in (1024, 3000 // 2 * 2):
    rows = 256 + 32
    buf = cp.ones(rows * row_bytes // 2 + 4096, dtype=cp.uint16)
    for lpr in (1, 2, 4, 8, 16, 32):
        nb = nsm * BPS
        t = cp.zeros(3 * nb, dtype=cp.uint64)
        out = cp.zeros(1, dtype=cp.uint32)
        args = (buf, cp.int32(row_bytes // 2), cp.int32(lpr), cp.int32(ITERS), t, out)
        k((nb,), (32 * WARPS,), args)
        k((nb,), (32 * WARPS,), args)
        cp.cuda.runtime.deviceSynchronize()
        tt = t.get().reshape(nb, 3)
        per_sm = {}
        for t0, t1, sm in tt:
            a = per_sm.setdefault(int(sm), [t0, t1, 0])
            a[0], a[1], a[2] = min(a[0], t0), max(a[1], t1), a[2] + 1
        cyc = sorted(int(v[1] - v[0]) / (v[2] * WARPS * ITERS * 8) for v in per_sm.values())
        med = cyc[len(cyc) // 2]
        res["cases"].append({"row_bytes": row_bytes, "lines_per_request": lpr, "cycles_per_request_median": med,
                             "cycles_per_request_min": cyc[0], "cycles_per_request_max": cyc[-1],
                             "cycles_per_line": med / lpr, "sms": len(cyc)})
        print(row_bytes, lpr, f"{med:.2f} cycles/request, {med / lpr:.3f} per line", flush=True)
json.dump(res, open(os.path.join(OUT, "l1_lines.json"), "w"), indent=1)
