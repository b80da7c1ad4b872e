"""Parameters of gemm(timing="dobench")'s small-M / unaligned families from the *calibration* halves
only (call 3 gemm_small_m.json for fp16 / bf16, call 5 gemm_fp32.json for fp32; rows with heldout
false), and the plain-stream
figures of the decode floor (parts stream and dirty: no GEMM in them).

    PYTHONPATH=. python validation/gemm_small_m/derive.py      -> derived_params.json, derive_output.txt

Families, as torch.profiler names cuBLAS's kernel (the longest kernel of the call that is not the
split-K reduction): "gemv" internal::gemvx (M = 1 on rows that are not 16-byte aligned), "gemmSN"
gemmSN_NN_kernel, "align1" cutlass_75_*_align1 (s1688 and wmma), "align2" cutlass_80_*_align2.
Each family and dtype:  seconds = t0 + bytes / bw  (bytes = (M K + K N + M N) x 2, one pass over
every operand), fitted by least squares on the relative error; gemmSN streams through one CTA per
64 columns of the wide operand, so its rate is min(bw_max, ctas x per_cta) with
ctas = ceil(max(M, N) / 64) (grid.x in the profile) and (t0, bw_max, per_cta) fitted by a grid
search on the median |log error|.  Shapes with min(M, N) > 64 and the aligned nvjet kernels are
left out (the model keeps its tile costing there).
"""
import collections
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
D = json.loads((HERE / "gemm_small_m.json").read_text())
AUX = ("splitKreduce", "Memset", "scal_kernel", "FillFunctor")


def family(name):
    if "gemvx" in name:
        return "gemv"
    if "gemmSN" in name:
        return "gemmSN"
    if "cutlass_75" in name:
        return "align1"
    if "cutlass_80" in name:
        return "align2"
    return "other"


def main_kernel(m, n, k, dt, prof):
    ks = [x for x in prof[(m, n, k, dt)] if x["cat"] == "kernel" and not any(a in x["name"] for a in AUX)]
    return max(ks, key=lambda x: x["dur_us"] or 0)


def rows():
    prof = {(p["m"], p["n"], p["k"], p["dtype"]): p["kernels"] for p in D["profile"]}
    out = []
    for r in D["grid"]:
        kn = main_kernel(r["m"], r["n"], r["k"], r["dtype"], prof)
        out.append(dict(r, fam=family(kn["name"]), kernel=kn["name"], grid=kn["grid"],
                        bytes=2 * (r["m"] * r["k"] + r["k"] * r["n"] + r["m"] * r["n"]), t=r["ms"] * 1e-3))
    return out


def fit_linear(v):
    a = np.array([[1 / r["t"], r["bytes"] / r["t"]] for r in v])
    (t0, inv), *_ = np.linalg.lstsq(a, np.ones(len(v)), rcond=None)
    return float(t0), float(1 / inv)


def fit_gemmsn(v):
    t = np.array([r["t"] for r in v])
    by = np.array([r["bytes"] for r in v], float)
    ctas = np.array([-(-max(r["m"], r["n"]) // 64) for r in v], float)
    best = None
    for pc in np.geomspace(1e9, 3e10, 60):
        for bw in np.geomspace(1e12, 5e12, 40):
            s = by / np.minimum(bw, pc * ctas)
            t0 = max(0.0, float(np.dot(1 / t, 1 - s / t) / np.dot(1 / t, 1 / t)))
            err = float(np.median(np.abs(np.log((t0 + s) / t))))
            if best is None or err < best[0]:
                best = (err, t0, float(bw), float(pc))
    return best[1:]


def fp32_rows():
    """Call 5 (gemm_fp32.json): fp32, M <= 64 (x @ W); family as in ``family``, plus "largek"
    (sgemm_largek_lds64) and "simt" (sm80_xmma ffma and cutlass simt sgemm); gemmSN's grid has
    ceil(M / 4) slices along M (grid.y in the profile), each reading all of B."""
    d = json.loads((HERE / "gemm_fp32.json").read_text())
    prof = {(p["m"], p["n"], p["k"], p["dtype"]): p["kernels"] for p in d["profile"]}
    out = []
    for r in d["small"]:
        if r["m"] > 64:
            continue
        kn = main_kernel(r["m"], r["n"], r["k"], r["dtype"], prof)
        f = "gemv" if ("gemvx" in kn["name"] or "gemv2" in kn["name"]) else \
            "gemmSN" if "gemmSN" in kn["name"] else "largek" if "largek" in kn["name"] else "simt"
        y = -(-r["m"] // 4)
        out.append(dict(r, fam=f, kernel=kn["name"], grid=kn["grid"], t=r["ms"] * 1e-3, y=y,
                        bytes=4 * (r["m"] * r["k"] + r["k"] * r["n"] + r["m"] * r["n"]),
                        ybytes=4 * (r["m"] * r["k"] + y * r["k"] * r["n"] + r["m"] * r["n"])))
    return out


def derive_fp32(simt_flops):
    """fp32 families from call 5's calibration half; simt is fitted on the rows whose FFMA time at
    ``simt_flops`` is under half the measured time (the model takes the max of the two)."""
    rs = [r for r in fp32_rows() if not r["heldout"]]
    out = {}
    for f in ("gemv", "gemmSN", "largek", "simt"):
        v = [r for r in rs if r["fam"] == f]
        if f == "gemmSN":
            t0, bw, pc = fit_gemmsn([dict(r, bytes=r["ybytes"], n=r["n"] * r["y"]) for r in v])
            out[f"{f}/fp32"] = {"t0_s": t0, "bytes_per_s": bw, "per_cta_bytes_per_s": pc, "n": len(v)}
        elif f == "largek":
            t0, bw, pc = fit_gemmsn(v)
            out[f"{f}/fp32"] = {"t0_s": t0, "bytes_per_s": bw, "per_cta_bytes_per_s": pc, "n": len(v)}
        else:
            if f == "simt":
                v = [r for r in v if 2.0 * r["m"] * r["n"] * r["k"] / simt_flops < 0.5 * r["t"]]
            t0, bw = fit_linear(v)
            out[f"{f}/fp32"] = {"t0_s": t0, "bytes_per_s": bw, "n": len(v)}
    return out, len(rs)


def stream():
    """Plain streams under do_bench: torch.sum over 128 MiB..1 GiB fitted t = a + bytes / bw; the
    dirty-L2 penalty = time after do_bench's zero_ flush minus time after a clean 256 MB read."""
    s = [r for r in D["stream"] if r["op"] == "torch_sum" and r["bytes"] >= 128 * 2**20]
    a = np.array([[1.0, r["bytes"]] for r in s])
    (c, inv), *_ = np.linalg.lstsq(a, np.array([r["ms"] * 1e-3 for r in s]), rcond=None)
    dirty = {}
    for r in D["dirty"]:
        dirty.setdefault(r["op"], {})[r["before"]] = r["ms"] * 1e3
    pen = {op: v["zero_256MB"] - v["read_256MB"] for op, v in dirty.items()}
    tri = {f"{r['op']}_{r['bytes'] >> 20}MiB_align{r['align']}_grid{r['grid']}_w{r['warps']}":
           r["bytes"] / (r["ms"] * 1e-3) for r in D["stream"] if r["op"].startswith("triton")}
    return {"torch_sum_intercept_s": float(c), "torch_sum_bytes_per_s": float(1 / inv),
            "dirty_us": dirty, "dirty_penalty_us": pen, "triton_read_bytes_per_s": tri}


def derive():
    rs = [r for r in rows() if not r["heldout"] and min(r["m"], r["n"]) <= 64]
    groups = collections.defaultdict(list)
    for r in rs:
        groups[(r["fam"], r["dtype"])].append(r)
    out = {}
    for (f, dt), v in sorted(groups.items()):
        if f == "other" or (f == "gemv" and len(v) < 3):
            continue
        if f == "gemmSN":
            t0, bw, pc = fit_gemmsn(v)
            out[f"{f}/{dt}"] = {"t0_s": t0, "bytes_per_s": bw, "per_cta_bytes_per_s": pc, "n": len(v)}
        else:
            t0, bw = fit_linear(v)
            out[f"{f}/{dt}"] = {"t0_s": t0, "bytes_per_s": bw, "n": len(v)}
    from simgpu.hardware import H200
    from simgpu.hardware.presets import LIBRARY_PARAMS
    p = LIBRARY_PARAMS["H200"]
    f32, n32 = derive_fp32(p["simt_fp32_flops"] * H200.clock_hz / p["sustained_sm_clock_hz"])
    out.update(f32)
    return {"families": out, "stream": stream(), "calibration_rows": len(rs), "calibration_rows_fp32": n32}


if __name__ == "__main__":
    res = derive()
    lines = [f"calibration rows (min(M, N) <= 64): {res['calibration_rows']} fp16 / bf16 (call 3), "
             f"{res['calibration_rows_fp32']} fp32 (call 5, M <= 64)"]
    for k, v in res["families"].items():
        s = f"{k:14s} t0 {v['t0_s'] * 1e6:5.1f} us  bw {v['bytes_per_s'] / 1e12:4.2f} TB/s"
        if "per_cta_bytes_per_s" in v:
            s += f"  per CTA {v['per_cta_bytes_per_s'] / 1e9:.1f} GB/s"
        lines.append(s + f"  ({v['n']} shapes)")
    st = res["stream"]
    lines.append(f"torch.sum 128 MiB..1 GiB under do_bench: {st['torch_sum_intercept_s'] * 1e6:.1f} us + bytes / "
                 f"{st['torch_sum_bytes_per_s'] / 1e12:.2f} TB/s")
    for op, v in st["dirty_us"].items():
        lines.append(f"  {op:20s} after zero_ 256 MB {v['zero_256MB']:6.1f} us, after a clean 256 MB read "
                     f"{v['read_256MB']:6.1f} us (dirty penalty {st['dirty_penalty_us'][op]:4.1f} us), back-to-back {v['none']:6.1f} us")
    for k, v in st["triton_read_bytes_per_s"].items():
        lines.append(f"  {k:48s} {v / 1e12:.2f} TB/s")
    txt = "\n".join(lines)
    print(txt)
    (HERE / "derived_params.json").write_text(json.dumps(res, indent=1))
    (HERE / "derive_output.txt").write_text(txt + "\n")
