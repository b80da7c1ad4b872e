"""The GEMM/attention model's H200 parameters from the lecture microbenchmarks (no check sweep).

    python validation/lecture/derive.py        # prints them and writes data/lecture_h200_params.json

Inputs: the "micro" sections of data/lecture_h200.json (call 1) and data/lecture_h200_holdout.json
(call 2).  Every number below is one microbenchmark, or a microbenchmark with the work the kernel
wasted on padded tiles and the idle part of its last wave added back (the tile comes from the
kernel name the profiler reported), so that the rate is what an SM sustains while busy:

    chip rate = ceil(tiles / 132) x 132 x (2 BM BN Kp) / measured seconds

Used by simgpu/hardware/presets.py (H200_GEMM); the check sweeps are never read here.
"""
from __future__ import annotations

import json
import math
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
SMS = 132


def tile_of(kernels):
    """(BM, BN, BK) of the GEMM kernel in a profiler kernel list (cuBLAS's own orientation)."""
    for name in kernels:
        m = re.search(r"_(\d+)x(\d+)_(\d+)x\d+_\dx\d_", name)          # nvjet_sm90_tst_192x192_64x3_2x1
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
        m = re.search(r"tilesize(\d+)x(\d+)x(\d+)", name)               # sm90_xmma ... tilesize128x256x32
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
        m = re.search(r"gemm_\w+?_(\d+)x(\d+)_(\d+)x\d+_", name)        # cutlass_80_..._128x256_64x3_nn
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
        m = re.search(r"_(\d+)x(\d+)_(\d+)x\d+_nn", name)               # cutlass_80_simt_sgemm_256x128_8x4_nn
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
        m = re.search(r"_(\d+)x(\d+)_nn_align", name)                    # cutlass_75_..._256x128_nn_align1
        if m:
            return int(m.group(1)), int(m.group(2)), 32
    raise ValueError(f"no tile in {kernels}")


def busy_rate(m, n, k, seconds, tile):
    """Chip FLOP/s while every SM is busy: padded tiles and the idle tail of the last wave added."""
    bm, bn, bk = tile
    tiles = math.ceil(n / bm) * math.ceil(m / bn)        # cuBLAS's M is torch's N (column-major)
    kp = math.ceil(k / bk) * bk
    return math.ceil(tiles / SMS) * SMS * 2.0 * bm * bn * kp / seconds


def main():
    one = json.load(open(os.path.join(DATA, "lecture_h200.json")))["micro"]
    two = json.load(open(os.path.join(DATA, "lecture_h200_holdout.json")))["micro"]
    out = {"source": "validation/data/lecture_h200.json (micro) and lecture_h200_holdout.json (micro)",
           "tensor_flops": {}, "fallback_flops": {}}
    for dt, r in one["peak"].items():
        if "seconds" not in r:
            continue
        tile = tile_of(r["kernels"])
        key = "fp32_simt" if dt == "fp32" else dt
        out["tensor_flops"][key] = {"flops": busy_rate(r["m"], r["n"], r["k"], r["seconds"], tile),
                                    "measured_tflops": r["tflops"], "tile": tile, "shape": [r["m"], r["n"], r["k"]],
                                    "kernel": r["kernels"][-1]}
    for r in two["family"]:
        tile = tile_of(r["kernels"])
        name = r["kernels"][-1]
        fam = ("sm75_align1" if "align1" in name and "simt" not in name else
               "simt_align1" if "simt" in name else
               "sm80_align" if "s16816" in name else
               "tf32_fallback" if r["dtype"] == "tf32" else name)
        out["fallback_flops"][f"{r['dtype']}:{r['n']}"] = {
            "family": fam, "flops": busy_rate(r["m"], r["n"], r["k"], r["seconds"], tile),
            "measured_tflops": r["tflops"], "tile": tile, "kernel": name}
    # streaming: GEMV at batch 1 (read the weight once), copies against working set, L2 reads
    g = one["gemv"]["8192x28672"]
    out["gemv_bytes_per_s"] = g["nn_bw"]
    out["copy_large_bytes_per_s"] = one["copy"][-1]["bw_rw"]          # 4 GiB buffers, read + write
    out["copy_curve"] = [(c["bytes_per_buffer"], c["bw_rw_graph"]) for c in one["copy"]]
    out["l2_read_bytes_per_s"] = max(r["bw"] for r in one["l2_read"])
    out["exp2_per_s"] = one["exp2"]["rate"]
    fl = two["floor"]
    out["host_floor_s"] = statistics.median(fl[t]["matmul64_loop_s"] for t in ("start", "middle", "end"))
    out["kernel_floor_s"] = statistics.median(fl[t]["matmul64_graph_s"] for t in ("start", "middle", "end"))
    out["elementwise_host_floor_s"] = statistics.median(fl[t]["add1k_loop_s"] for t in ("start", "middle", "end"))
    out["elementwise_kernel_floor_s"] = one["launch"]["add1_graph_s"]
    # call 3: elementwise kernel classes (graph-replayed, counted bytes over time) and the fp32
    # SIMT tiles.  A non-Hopper CTA stores its C tile after its main loop (no overlap): the
    # epilogue, BM x BN x 4 B at the GEMV bandwidth's share of one SM, comes off before the rate
    three = json.load(open(os.path.join(DATA, "lecture_h200_kernels.json")))
    out["elementwise_bytes_per_s"] = {r["name"]: r["bytes_per_s_graph"] for r in three["elementwise"]
                                      if r.get("bytes_per_s_graph")}
    simt = {}
    for r in three["simt"]:
        bm, bn, bk = tile_of(r["kernels"])
        tiles = math.ceil(r["n"] / bm) * math.ceil(r["m"] / bn) * r["batch"]
        waves = math.ceil(tiles / SMS)
        kp = math.ceil(r["k"] / bk) * bk
        t_epi = bm * bn * 4 / (out["gemv_bytes_per_s"] / SMS)
        rate = SMS * 2.0 * bm * bn * kp / (r["seconds"] / waves - t_epi)
        simt.setdefault(f"{min(bm, bn)}x{max(bm, bn)}", []).append(
            {"shape": [r["m"], r["n"], r["k"], r["batch"]], "flops": rate, "measured_tflops": r["tflops"]})
    out["simt_tiles"] = simt
    # call 6: the SM clock a sustained GEMM loop settles to under the 700 W power limit, the
    # clock the rates above were measured at (back-to-back loops): the median of the clock probes
    # (torch.cuda._sleep, two lengths timed with events) read right after each timed sample of the
    # square sweeps at N >= 1536 (GPU-bound there); a reading above the card's 1980 MHz maximum
    # is a failed probe and left out
    six = json.load(open(os.path.join(DATA, "lecture_h200_call6.json")))
    probes = [r["probe_mhz"] for n, rs in six["sweep"].items() for r in rs
              if int(n) >= 1536 and r["probe_mhz"] and 0 < r["probe_mhz"] <= 1990]
    out["sustained_sm_clock_hz"] = statistics.median(probes) * 1e6
    out["sustained_sm_clock_probes"] = len(probes)
    with open(os.path.join(DATA, "lecture_h200_params.json"), "w") as f:
        json.dump(out, f, indent=1)
    for k, v in out.items():
        if k != "copy_curve":
            print(k, json.dumps(v) if isinstance(v, dict) else v)


if __name__ == "__main__":
    main()
