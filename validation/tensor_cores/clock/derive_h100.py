"""The SM clock of launches outside a profiler on the H100, from run.sh's measurement there
(h100/clock.json: gen.py's kernels, %clock64 against %globaltimer in every block, 2026-12-07).

GPU.unprofiled_clock_hz of the H100 preset is the median of the dense-wgmma kernels' median
clocks launched as triton.testing.do_bench launches them (a 256 MB memset before each call:
mode "dobench_flush"), over the four lengths (10-300 us).  The other modes and the light FFMA
kernel are printed beside it; none of them is used.

    python derive_h100.py  -> derive_h100_output.txt"""
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
D = json.load(open(os.path.join(HERE, "h100", "clock.json")))


def h100_unprofiled_clock_hz(results=D["results"]):
    return 1e6 * statistics.median(r["sm_mhz_median"] for r in results
                                   if r["mode"] == "dobench_flush" and r["kernel"].startswith("wgmma_dense"))


if __name__ == "__main__":
    print(f"{D['device']}, {D['sms']} SMs")
    print(f"{'kernel':34s} {'mode':14s} {'blocks':>6s} {'span us':>8s} {'MHz p10 / median / p90':>24s}")
    for r in D["results"]:
        if r["bytes"]:
            continue
        print(f"{r['kernel']:34s} {r['mode']:14s} {r['blocks']:6d} {r['span_ns_median'] / 1e3:8.1f} "
              f"{r['sm_mhz_p10']:7.1f} / {r['sm_mhz_median']:7.1f} / {r['sm_mhz_p90']:7.1f}")
    f = h100_unprofiled_clock_hz()
    print(f"H100 unprofiled_clock_hz: median of the wgmma_dense dobench_flush medians = {f / 1e6:.1f} MHz")
