"""How much of a tile's power-limit clock penalty a kernel shows against its duration, from
tile_rates_durations.json (tile_rates.py at five bf16 shapes in no sweep, 2048 x 2560 x 4096 ..
16384 x 16384 x 4096, kernels of 60 us .. 3.5 ms, 3 s warm-up; every algorithm cuBLASLt's heuristic
offers, each timed under do_bench twice and once alone under the profiler; H100 SXM, 2026-12-07).

At each shape and for each pass, per algorithm (tile in the model's orientation, BM along torch's M):

    slowdown = do_bench time / the profiler's time of the same kernel alone
    clock    = median slowdown of the reference tiles / the tile's slowdown

The profiler times one call on its own (the card not held at its limit), so the slowdown is what
do_bench's back-to-back flush + call cycle costs that kernel (its clock under the power limit, plus
the cold operands and the events, which are the same for every algorithm of one shape); over the
reference tiles' slowdown it is the tile's own clock factor.  No model enters it.  Reference tiles:
those ``simgpu.model.gemm._SM90_TILE_RATES`` (derive_tiles.py, 3-4 ms kernels at the limit) gives a
clock of at least 0.98, and the tiles it does not list.  NVML's SM clock read after each point gives
the same ratio a second way (printed, not used: one read, taken after the point).

    per clock = (model time / profiler time) of the tile over the reference tiles' median

(the model without the per-tile rates, costing that kernel with its grid and cluster: the lone
kernel's work per SM per clock against the reference's, at each duration).

The power controller's lag.  A tile that draws more power than the reference is clocked lower at
the limit only once the controller has seen it: the model (``simgpu.model.gemm._power_lag``) lets
its clock fall from the reference kernel's clock towards its own limit clock as a first-order lag
of time constant tau from the kernel's start, so the penalty averaged over a kernel of duration d is

    penalty(d) = P x w(d / tau),   w(x) = 1 - (1 - exp(-x)) / x

(0 for d << tau, P for d >> tau).  tau and P are fitted here on the penalised 5-stage coopB tiles
(192x128 and 128x192, the two with a clear penalty at the limit) over the five durations and both
passes (least squares in the clock factor; P linear for each tau on a log grid).  The model keeps
its measured clock column (derive_tiles.py, kernels of d_col = 3.1-3.8 ms) as the penalty at d_col and
takes only tau from here: penalty(d) = (1 - clock) w(d / tau) / w(d_col / tau).  Also fitted, as a
check of the form: a pure delay (the penalty starts tau after the kernel does), P max(0, 1 - tau / d).

    PYTHONPATH=. python validation/gemm_dobench/derive_durations.py -> derived_durations.json,
                                                                        derive_durations_output.txt
"""
from __future__ import annotations

import importlib
import json
import math
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

G = importlib.import_module("simgpu.model.gemm")   # the module (simgpu.model.gemm is also the function)
from derive_tiles import main_kernel   # noqa: E402  (same folder)

PENALISED = ((128, 192), (192, 128))    # the 5-stage coopB tiles, both orientations (model's BM x BN)


def lag_w(x):
    return 1.0 - (1.0 - math.exp(-x)) / x if x > 1e-9 else 0.0


def delay_w(x):
    return max(0.0, 1.0 - 1.0 / x) if x > 0 else 0.0


def tile_of(name):
    tn, tm = re.search(r"nvjet_sm90_[a-z]+_(\d+)x(\d+)_", name).groups()
    return int(tm), int(tn)


def is_reference(tile, rates):
    """A tile the model's clock column (``rates``: _SM90_TILE_RATES as committed) puts within 2 % of
    the reference, or does not list."""
    clock = rates.get(tile, rates.get(tile[::-1], (1.0, 1.0)))[1]
    return clock >= 0.98


def points(d, rates):
    """[{shape, tile, kernel, pass, d_s, clock, clock_nvml, per_clock}] for every nvjet algorithm."""
    out = []
    for key, s in d["shapes"].items():
        m, n, k = s["m"], s["n"], s["k"]
        rows = []
        for a in s["algos"]:
            kn = main_kernel(a.get("kernels"))
            if kn is None or "ms" not in a or not kn["name"].startswith("nvjet_sm90"):
                continue
            model = G.gemm(m, n, k, timing="dobench", kernel=(kn["name"], kn["grid"])).seconds
            rows.append({"tile": tile_of(kn["name"]), "kernel": kn["name"], "ms": a["ms"], "nvml": a["nvml"],
                         "prof_s": kn["dur_us"] * 1e-6, "model_s": model})
        refs = [r for r in rows if is_reference(r["tile"], rates)]
        pc_ref = statistics.median(r["model_s"] / r["prof_s"] for r in refs)
        for p in range(min(len(r["ms"]) for r in rows)):
            sl_ref = statistics.median(r["ms"][p] * 1e-3 / r["prof_s"] for r in refs)
            ck_ref = statistics.median(r["nvml"][p][0] for r in refs)
            for r in rows:
                t = r["ms"][p] * 1e-3
                out.append({"shape": key, "tile": r["tile"], "kernel": r["kernel"], "pass": p, "d_s": t,
                            "clock": sl_ref / (t / r["prof_s"]), "clock_nvml": r["nvml"][p][0] / ck_ref,
                            "nvml_w": r["nvml"][p][1], "per_clock": (r["model_s"] / r["prof_s"]) / pc_ref,
                            "reference": r in refs})
    return out


def fit(pts, w, band=None):
    """(tau, P, rms) minimising sum (1 - clock - P w(d / tau))^2 over pts; tau on a log grid.
    ``band``: also return the (lowest, highest) tau whose rms is within that factor of the best."""
    best, grid = None, []
    for i in range(301):
        tau = 1e-5 * 10 ** (i / 100.0)              # 10 us .. 10 ms
        ws = [w(p["d_s"] / tau) for p in pts]
        ys = [1.0 - p["clock"] for p in pts]
        sww = sum(x * x for x in ws)
        if sww == 0:
            continue
        pen = sum(x * y for x, y in zip(ws, ys)) / sww
        rms = math.sqrt(sum((y - pen * x) ** 2 for x, y in zip(ws, ys)) / len(pts))
        grid.append((tau, rms))
        if best is None or rms < best[2]:
            best = (tau, pen, rms)
    if band is None:
        return best
    inside = [t for t, r in grid if r <= band * best[2]]
    return best, (min(inside), max(inside))


def col_duration(d0):
    """Median kernel duration (do_bench) of the derive_tiles run's 5-stage points: where the model's
    clock column was measured."""
    ts = []
    for s in d0["shapes"].values():
        for a in s["algos"]:
            kn = main_kernel(a.get("kernels"))
            if kn and kn["name"].startswith("nvjet_sm90") and tile_of(kn["name"]) in PENALISED:
                ts += [t * 1e-3 for t in a["ms"]]
    return statistics.median(ts)


def main():
    d = json.loads((HERE / "tile_rates_durations.json").read_text())
    rates = dict(G._SM90_TILE_RATES)
    saved, G._SM90_TILE_RATES = G._SM90_TILE_RATES, {}
    try:
        pts = points(d, rates)          # model times without the per-tile rates (per clock is against them)
    finally:
        G._SM90_TILE_RATES = saved
    lines = [f"card {d['env'].get('gpu')}, {d['env'].get('date_utc')}, torch {d['env'].get('torch')}, "
             f"cuBLASLt {d['env'].get('cublaslt_version')}, warm-up {d.get('warm_s')} s "
             f"(NVML after it: {d.get('warm_nvml')})",
             "clock = reference tiles' (do_bench / alone) over the tile's; nvml = the same ratio from NVML's SM "
             "clock; per clock = lone kernel's (model / measured) over the reference's"]
    by_shape = {}
    for p in pts:
        by_shape.setdefault(p["shape"], []).append(p)
    summary = {}
    for key, ps in by_shape.items():
        d_ref = statistics.median(p["d_s"] for p in ps if p["reference"])
        w_ref = statistics.median(p["nvml_w"] for p in ps if p["pass"] == 1)
        lines.append(f"{key}: reference kernels {d_ref * 1e6:.0f} us, NVML {w_ref:.0f} W after the second pass")
        for tile in sorted({p["tile"] for p in ps}, key=lambda t: (t not in PENALISED, t)):
            q = [p for p in ps if p["tile"] == tile]
            c = [p["clock"] for p in q]
            cn = [p["clock_nvml"] for p in q]
            lines.append(f"   {tile[0]:3d}x{tile[1]:<3d} {'ref' if q[0]['reference'] else '   '} "
                         f"{statistics.median(p['d_s'] for p in q) * 1e6:7.0f} us  clock "
                         + " / ".join(f"{x:.3f}" for x in c) + "  nvml " + " / ".join(f"{x:.3f}" for x in cn)
                         + f"  per clock {q[0]['per_clock']:.3f}  {q[0]['kernel'][15:48]}")
            summary.setdefault(f"{tile[0]}x{tile[1]}", {})[key] = {
                "d_s": statistics.median(p["d_s"] for p in q), "clock": statistics.median(c),
                "clock_nvml": statistics.median(cn), "per_clock": q[0]["per_clock"]}
    pen = [p for p in pts if p["tile"] in PENALISED]
    (tau, pinf, rms), (tau_lo, tau_hi) = fit(pen, lag_w, band=1.05)
    tau_d, pinf_d, rms_d = fit(pen, delay_w)
    d0 = json.loads((HERE / "tile_rates.json").read_text())
    d_col = col_duration(d0)
    none_rms = math.sqrt(sum((1 - p["clock"]) ** 2 for p in pen) / len(pen))
    flat = statistics.mean(1 - p["clock"] for p in pen)
    flat_rms = math.sqrt(sum((1 - p["clock"] - flat) ** 2 for p in pen) / len(pen))
    lines.append(f"fit on the 5-stage coopB tiles ({len(pen)} points: 2 tiles x 5 shapes x 2 passes), 1 - clock:")
    lines.append(f"   first-order lag  P w(d / tau): tau {tau * 1e6:.0f} us, P {pinf:.3f}, rms {rms:.4f} "
                 f"(rms within 5 % of it for tau {tau_lo * 1e6:.0f} .. {tau_hi * 1e6:.0f} us)")
    lines.append(f"   delay  P max(0, 1 - tau / d):  tau {tau_d * 1e6:.0f} us, P {pinf_d:.3f}, rms {rms_d:.4f}")
    lines.append(f"   a constant penalty {flat:.3f} at every duration: rms {flat_rms:.4f}; none: rms {none_rms:.4f}")
    for key, ps in by_shape.items():
        q = [p for p in ps if p["tile"] in PENALISED]
        dd = statistics.median(p["d_s"] for p in q)
        lines.append(f"   {key:18s} {dd * 1e6:6.0f} us: measured 1 - clock {statistics.median(1 - p['clock'] for p in q):+.3f}"
                     f"  lag {pinf * lag_w(dd / tau):.3f}  delay {pinf_d * delay_w(dd / tau_d):.3f}")
    lines.append(f"the model's clock column was measured on kernels of {d_col * 1e6:.0f} us (tile_rates.json, the "
                 f"5-stage points' median): w(d_col / tau) = {lag_w(d_col / tau):.3f}, so its penalties are "
                 f"{lag_w(d_col / tau):.3f} of the asymptote")
    lines.append(f"   the 5-stage penalty at d_col by this run's fit: {pinf * lag_w(d_col / tau):.3f} (the column: "
                 + ", ".join(f"{t[0]}x{t[1]} {1 - rates[t][1]:.3f}" for t in PENALISED) + ")")
    saved, G._SM90_TILE_RATES = G._SM90_TILE_RATES, {}
    try:
        pts0 = points(d0, rates)
    finally:
        G._SM90_TILE_RATES = saved
    for key in d0["shapes"]:
        q = [p for p in pts0 if p["shape"] == key and p["tile"] in PENALISED]
        lines.append(f"   the same measure on tile_rates.json (not fitted), {key}: 5-stage 1 - clock "
                     + " / ".join(f"{1 - p['clock']:+.3f}" for p in q)
                     + f" at {statistics.median(p['d_s'] for p in q) * 1e6:.0f} us (pass 1 at the first shape ramped up)")
    lines.append(f"as simgpu.model.gemm: _POWER_LAG_S = {tau:.3g}, _SM90_TILE_RATES_KERNEL_S = {d_col:.3g}")
    print("\n".join(lines))
    (HERE / "derived_durations.json").write_text(json.dumps(
        {"tau_s": tau, "tau_band_s": [tau_lo, tau_hi], "penalty_inf": pinf, "rms": rms, "delay": {"tau_s": tau_d, "penalty_inf": pinf_d, "rms": rms_d},
         "column_kernel_s": d_col, "per_tile": summary, "points": [{**p, "tile": list(p["tile"])} for p in pts]},
        indent=1))
    (HERE / "derive_durations_output.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
