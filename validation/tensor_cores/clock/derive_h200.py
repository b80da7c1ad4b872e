"""The SM clock of launches outside a profiler on the H200, from the tensor-pipe microbenchmarks
already measured there (../pipe/h200/h200_pipe.json, 2026-12-02: each kernel timed once with CUDA
events around the launch, its blocks' %clock64 spans inside): span_cycles = f (ms - x), with x the
events' own overhead.  Pairs of the same kernel shape at two lengths give f and x; every kernel
(one warp of dependent HMMAs to two warpgroups of dense wgmma) is then at f within 3 %.

    python derive_h200.py  -> derive_h200_output.txt"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
R = json.load(open(os.path.join(HERE, "..", "pipe", "h200", "h200_pipe.json")))["results"]
pairs = [("wgmma_n128_p4_1wg_sm", "wgmma_n256_p4_1wg_sm"), ("wgmma_n128_p4_2wg_sm", "wgmma_n256_p4_2wg_sm")]
fits = []
for a, b in pairs:
    (c1, t1), (c2, t2) = [(R[k]["span_cycles_max"], R[k]["ms"] * 1e3) for k in (a, b)]
    f = (c2 - c1) / (t2 - t1)                    # cycles per us = MHz
    x = t1 - c1 / f
    fits.append((f, x))
    print(f"{a} / {b}: clock {f:.0f} MHz, event overhead {x:.2f} us")
x = sum(v[1] for v in fits) / len(fits)
f = sum(v[0] for v in fits) / len(fits)
print(f"mean: {f:.0f} MHz, overhead {x:.2f} us")
print("every kernel with that overhead taken off:")
for k, v in R.items():
    print(f"  {k:28s} {v['ms'] * 1e3:8.1f} us  {v['span_cycles_max'] / (v['ms'] * 1e3 - x):7.0f} MHz")
