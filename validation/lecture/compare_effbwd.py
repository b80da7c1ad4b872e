"""The efficient backend's backward (simgpu.model.attention._mem_eff_bwd_time, the fmha_cutlassB
step model) against call 6 (measure6.py, data/lecture_h200_call6.json "attn" and "attn_kernels").

The model was committed (branch effbwd, 23be386) before this file was opened; call 6 is a
hold-out for it except B 1 H 16 T 2048 d 64 non-causal, the shape whose kernel call 5 named (its
launch record gave the 162 registers used for the CTAs per SM).  Printed per efficient row:
forward + backward (events around back-to-back calls, median sample) against
``attention(..., backward=True).seconds``, and the backward kernel alone (CUPTI duration of the
fmha_cutlassB kernel in the one profiled call) against the model's "efficient backward".

    python validation/lecture/compare_effbwd.py    -> data/lecture_compare_effbwd.json
"""
from __future__ import annotations

import json
import os
import statistics

from simgpu.model.attention import _mem_eff_bwd_config, attention
from simgpu.hardware import get_gpu

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def main():
    with open(os.path.join(DATA, "lecture_h200_call6.json")) as f:
        c6 = json.load(f)
    gpu = get_gpu("H200")
    rows = []
    for r in c6["attn"]:
        if r["backend"] != "efficient" or "fwd_bwd_s" not in r:
            continue
        b, h, t, d, causal = r["B"], r["H"], r["T"], r["d"], bool(r["causal"])
        est = attention(b, h, t, d, r["dtype"], backend="efficient", causal=causal, backward=True)
        k = dict(est.kernels)
        key = f"B={b} H={h} T={t} d={d} causal={int(causal)}"
        kern = [x for x in c6["attn_kernels"].get(key, []) if "cutlassB" in x["name"]]
        row = dict(B=b, H=h, T=t, d=d, causal=causal,
                   seen=(b, h, t, d, causal) == (1, 16, 2048, 64, False),
                   measured_fwdbwd_us=r["fwd_bwd_s"] * 1e6, predicted_fwdbwd_us=est.seconds * 1e6,
                   predicted_bwd_kernel_us=k["efficient backward"] * 1e6,
                   model_kernel=_mem_eff_bwd_config(b, h, t, d, gpu)["name"])
        if kern:
            row.update(measured_bwd_kernel_us=kern[0]["dur_us"], measured_kernel=kern[0]["name"].split("(")[0],
                       grid=kern[0]["grid"], block=kern[0]["block"],
                       registers=kern[0]["registers per thread"], smem=kern[0]["shared memory"])
        row["err_fwdbwd"] = row["predicted_fwdbwd_us"] / row["measured_fwdbwd_us"] - 1
        if kern:
            row["err_bwd_kernel"] = row["predicted_bwd_kernel_us"] / row["measured_bwd_kernel_us"] - 1
        rows.append(row)
    hold = [x for x in rows if not x["seen"]]
    summary = {}
    for name, sel in (("all", rows), ("holdout", hold),
                      ("holdout T>=2048", [x for x in hold if x["T"] >= 2048])):
        for key in ("err_fwdbwd", "err_bwd_kernel"):
            v = [abs(x[key]) for x in sel if key in x]
            if v:
                summary[f"{name} median |{key}|"] = statistics.median(v)
                summary[f"{name} worst {key}"] = max((x[key] for x in sel if key in x), key=abs)
    with open(os.path.join(DATA, "lecture_compare_effbwd.json"), "w") as f:
        json.dump({"rows": rows, "summary": summary}, f, indent=1)
    for x in rows:
        kb = (f"kernel {x['measured_bwd_kernel_us']:8.1f} us vs {x['predicted_bwd_kernel_us']:8.1f} "
              f"({x['err_bwd_kernel']:+.2f}) {x['measured_kernel']} grid {x['grid']} block {x['block'][0]} "
              f"regs {x['registers']}" if "measured_bwd_kernel_us" in x else "kernel not profiled")
        print(f"B{x['B']} H{x['H']:2d} T{x['T']:5d} d{x['d']:3d} c={int(x['causal'])}{' (seen)' if x['seen'] else ''}: "
              f"fwd+bwd {x['measured_fwdbwd_us']:8.1f} us vs {x['predicted_fwdbwd_us']:8.1f} "
              f"({x['err_fwdbwd']:+.2f}); {kb}")
    for k, v in summary.items():
        print(f"{k}: {v:+.3f}")


if __name__ == "__main__":
    main()
