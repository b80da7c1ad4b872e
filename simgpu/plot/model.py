"""Figures for the analytic model (``simgpu.model``).

Each function returns a ``matplotlib.figure.Figure`` built without pyplot, so nothing here
touches a global backend or needs a display: ``fig.savefig("x.png")`` works headless (Agg),
and a notebook shows the returned figure.  matplotlib is imported inside the functions, so
importing this module costs nothing.
"""
from __future__ import annotations

import numpy as np

from ..hardware import get_gpu
from ..hardware.tpu import get_tpu
from ..model import tricks
from ..model.attention import flash_attention, naive_attention
from ..model.gemm import gemm
from ..model.matmul import mystery_curve
from ..model.roofline import compute_roof, memory_roof
from ..model.tpu import gpu_matrix_units, square_sweep, tpu_matrix_units


def _figure(width=8.0, height=5.0):
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height), layout="constrained")


def roofline_plot(points, gpu=None, compute=("fp32", "fp16_tensor"), memory=("dram", "l2"), title=None,
                  labels=None):
    """Log-log roofline of ``gpu`` with one marker per ``RooflinePoint``.

    Draws each available compute roof (horizontal) and memory slope, the attainable
    min(roof, AI x bandwidth) curves, and labels every point with its name and bound: the side
    of the ridge it lies on, or ``labels[i]`` where given (simgpu.plot.roofline gives the timing
    model's bottleneck).  Both legends sit outside the axes, so they never cover a point.
    """
    gpu = get_gpu(gpu)
    fig = _figure(11.0, 5.5)
    ax = fig.add_subplot()
    roofs = {c: compute_roof(gpu, c) for c in compute if _has(compute_roof, gpu, c)}
    slopes = {m: memory_roof(gpu, m) for m in memory if _has(memory_roof, gpu, m)}
    ais = [p.arithmetic_intensity for p in points] or [1.0]
    lo = min(min(ais) / 4, 0.05)
    hi = max(max(ais) * 4, max(r / b for r in roofs.values() for b in slopes.values()) * 4)
    x = np.logspace(np.log10(lo), np.log10(hi), 400)
    lines = []
    for (cname, peak), style in zip(roofs.items(), ("-", "--", ":")):
        for (mname, bw), color in zip(slopes.items(), ("0.2", "0.6")):
            lines += ax.plot(x, np.minimum(peak, x * bw) / 1e12, style, color=color, lw=1.5,
                             label=f"{cname} / {mname}: ridge {peak / bw:.1f} FLOP/B")
    marks = []
    for i, p in enumerate(points, 1):
        y = p.attainable_flops if p.achieved_flops is None else p.achieved_flops
        label = labels[i - 1] if labels is not None else f"{p.name} ({p.bound})"
        marks += ax.plot(p.arithmetic_intensity, y / 1e12, "o", ms=7, color=f"C{(i - 1) % 10}",
                         label=f"{i}. {label}")
        ax.annotate(str(i), (p.arithmetic_intensity, y / 1e12), textcoords="offset points",
                    xytext=(4, 4), fontsize=8)
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP/byte)",
           ylabel="attainable TFLOP/s", title=title or f"Roofline of {gpu.name}")
    ax.grid(True, which="both", alpha=0.3)
    fig.legend(handles=lines, fontsize=8, loc="outside lower center", ncols=min(len(lines), 4) or 1,
               title="roofs", title_fontsize=8)
    if marks:
        fig.legend(handles=marks, fontsize=8, loc="outside right center", title="kernels", title_fontsize=8)
    return fig


def _has(fn, gpu, name):
    try:
        fn(gpu, name)
        return True
    except ValueError:
        return False


def mystery_plot(gpu=None, sizes=None, dtype="fp16", tile=(128, 128, 32), curve=None, **kernel):
    """The matmul "mystery plot": predicted TFLOP/s against N, and the three factors under it.

    Top: TFLOP/s per size, coloured by what the size breaks (tile divisibility, alignment,
    or nothing), with the dtype's peak.  Bottom: tile, wave and sector efficiencies.
    """
    gpu = get_gpu(gpu)
    sizes = np.arange(256, 4097) if sizes is None else np.asarray(sizes)
    c = curve or mystery_curve(gpu, sizes, dtype, tile, **kernel)
    fig = _figure(9.0, 7.0)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    aligned = c.sector_efficiency > 0.999
    whole = c.tile_efficiency > 0.999
    for mask, color, label in ((~aligned, "tab:red", "rows not 32-byte aligned"),
                               (~whole & aligned, "tab:orange", "aligned, partial edge tiles"),
                               (whole & aligned, "tab:blue", "tiles divide N")):
        top.plot(c.sizes[mask], c.tflops[mask], ".", ms=2.5 if color != "tab:blue" else 5, color=color,
                 label=f"{label} ({mask.sum()} sizes)", zorder=2)
    top.axhline(c.peak_tflops, color="k", ls="--", lw=1, label=f"{dtype} tensor peak {c.peak_tflops:.0f}")
    top.set(ylabel="predicted TFLOP/s", title=f"Matmul N x N x N on {gpu.name}, {dtype}, tile {tile}")
    top.legend(fontsize=8, loc="lower right")
    top.grid(True, alpha=0.3)
    bottom.plot(c.sizes, c.sector_efficiency, ".", ms=1.5, color="tab:red", alpha=0.5,
                label="sector efficiency (alignment)", zorder=1)
    bottom.plot(c.sizes, c.tile_efficiency, lw=1, color="tab:orange", label="tile efficiency", zorder=2)
    bottom.plot(c.sizes, c.wave_efficiency, lw=1.5, color="tab:blue", label="wave efficiency", zorder=3)
    bottom.set(xlabel="N", ylabel="efficiency", ylim=(0, 1.05))
    bottom.legend(fontsize=8, loc="lower right", ncols=3)
    bottom.grid(True, alpha=0.3)
    return fig


def tpu_vs_gpu_plot(gpu=None, tpu=None, sizes=None, dtype="bf16"):
    """Utilisation of N x N x N matmuls on many small units (GPU) vs few big ones (TPU)."""
    gpu, tpu = get_gpu(gpu), get_tpu(tpu)
    sizes = np.arange(8, 1025, 8) if sizes is None else np.asarray(sizes)
    g, t = gpu_matrix_units(gpu), tpu_matrix_units(tpu)
    fig = _figure(9.0, 4.5)
    ax = fig.add_subplot()
    for units, color in ((g, "tab:green"), (t, "tab:purple")):
        u = [r.utilisation for r in square_sweep(units, sizes, dtype)]
        ax.plot(sizes, u, color=color, lw=1.2,
                label=f"{units.name}: {units.units} units of {units.unit_tile[0]}x{units.unit_tile[1]}x{units.unit_tile[2]}")
    ax.axvline(tpu.lecture_min_dim, color="0.5", ls=":", label=f"lecture: TPU refuses < {tpu.lecture_min_dim}")
    ax.set(xlabel="N (square matmul)", ylabel="utilisation of matrix units", ylim=(0, 1.05),
           title="Many small vs few big matrix units: padding and idle units")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, alpha=0.3)
    return fig


def attention_plot(gpu=None, sizes=None, d=64, heads=1, dtype="fp16"):
    """HBM traffic and predicted time of naive vs FlashAttention against sequence length."""
    gpu = get_gpu(gpu)
    sizes = 2 ** np.arange(9, 16) if sizes is None else np.asarray(sizes)
    fig = _figure(10.0, 4.5)
    left, right = fig.subplots(1, 2)
    for fn, color in ((naive_attention, "tab:red"), (flash_attention, "tab:blue")):
        for direction, style in (("forward", "-"), ("backward", "--")):
            rows = [fn(gpu, int(n), d, heads, dtype, direction) for n in sizes]
            label = f"{rows[0].algorithm} {direction}"
            left.plot(sizes, [r.hbm_bytes / 2**20 for r in rows], style, color=color, marker=".", label=label)
            right.plot(sizes, [r.time_s * 1e3 for r in rows], style, color=color, marker=".", label=label)
    left.set(xscale="log", yscale="log", xlabel="sequence length N", ylabel="HBM traffic (MiB)",
             title=f"HBM traffic, d = {d}, {heads} head(s)")
    right.set(xscale="log", yscale="log", xlabel="sequence length N", ylabel="roofline time (ms)",
              title=f"Predicted time on {gpu.name}")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def six_tricks_plot(gpu=None):
    """One small panel per trick, each showing the trick's number."""
    gpu = get_gpu(gpu)
    fig = _figure(12.0, 6.5)
    axes = fig.subplots(2, 3).ravel()
    p = np.linspace(0, 1, 101)
    axes[0].plot(p, [tricks.expected_simt_efficiency(v) for v in p])
    axes[0].set(title="1 divergence: if/else SIMT efficiency", xlabel="P(lane takes if)", ylim=(0, 1.05))
    dts = ("fp32", "fp16", "fp8")
    axes[1].bar(dts, [tricks.relu_bytes_per_flop(t) for t in dts], color="tab:orange")
    axes[1].set(title="2 low precision: ReLU bytes per FLOP")
    f = [tricks.fusion_cost(gpu, 1 << 24, fused) for fused in (False, True)]
    axes[2].bar(["5 kernels", "fused"], [c.accesses_per_element for c in f], color="tab:green")
    axes[2].set(title="3 fusion: sin²+cos² HBM accesses/element")
    store, rec = tricks.recomputation_ledgers()
    axes[3].bar(["store", "recompute"], [store.accesses, rec.accesses], color="tab:purple")
    axes[3].set(title=f"4 recomputation: accesses (ratio {rec.accesses}/{store.accesses})")
    s = np.arange(0, 17)
    axes[4].plot(s, [tricks.sectors_per_request(int(v)) for v in s], "o-")
    axes[4].set(title="5 coalescing: sectors per warp load (fp32)", xlabel="stride (elements)")
    t = np.array([1, 2, 4, 8, 16, 32, 64])
    axes[5].plot(t, [tricks.tiling_global_reads(1024, int(v))["tiled"] / 1e6 for v in t], "o-")
    axes[5].set(title="6 tiling: global reads, N = 1024", xlabel="tile T", ylabel="M elements",
                xscale="log", yscale="log")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return fig


__all__ = ["roofline_plot", "mystery_plot", "tpu_vs_gpu_plot", "attention_plot", "six_tricks_plot", "mystery",
           "mystery_cliffs", "cliff_cause", "CLIFF_CAUSES"]


CLIFF_CAUSES = ("alignment", "kernel switch", "wave", "tile")
CLIFF_COLORS = {"alignment": "C3", "kernel switch": "C4", "wave": "C1", "tile": "C2"}
DENSE_MARKERS = 80          # more predicted cliffs than this: a sweep of every N (see mystery)
DENSE_ALIGNMENT_SHARE = 0.25  # or alignment cliffs (at least DENSE_MARKERS / 4) at this share of the sizes


def cliff_cause(before, after) -> str:
    """Why ``after`` (a ``GemmEstimate``) runs fewer FLOP/s than ``before``: 'alignment' when its
    rows lost alignment (cuBLAS then runs a kernel for narrower loads), 'kernel switch' when the
    chosen kernel is of another family or split-K at the same alignment, 'wave' when the chosen
    kernel needs more waves of CTAs over the SMs, else 'tile' (another tile shape, or more padded
    tiles)."""
    if after.alignment_bytes < before.alignment_bytes:
        return "alignment"
    a, b = after.chosen, before.chosen
    if a.family != b.family or a.split_k != b.split_k:
        return "kernel switch"
    if a.waves > b.waves:
        return "wave"
    return "tile"


def mystery_cliffs(sizes, est, drop=0.05):
    """The predicted cliffs of a sweep: [(index of the size after the drop, cause, depth)] where
    depth = 1 - after / before.  A drop from one size to the next whose rows are less aligned is an
    alignment cliff; the others are found between neighbours of the same alignment, so in a sweep
    of every N an odd N's tile or wave cliff is found against the odd N before it."""
    out = []
    last = {}                   # alignment -> index of the last size with it
    for i in range(len(sizes)):
        if i and est[i].alignment_bytes < est[i - 1].alignment_bytes:
            d = 1.0 - est[i].tflops / est[i - 1].tflops
            if d > drop:
                out.append((i, "alignment", d))
        j = last.get(est[i].alignment_bytes)
        if j is not None:
            d = 1.0 - est[i].tflops / est[j].tflops
            if d > drop:
                out.append((i, cliff_cause(est[j], est[i]), d))
        last[est[i].alignment_bytes] = i
    return out


def mystery(sizes=None, measured=None, dtype="bf16", gpu="H200", drop=0.05, title=None, spread=None,
            reproducible=None, timing="loop"):
    """The lecture's mystery plot from ``simgpu.model.gemm``: predicted TFLOP/s of square
    N x N x N matmuls against N, the measured curve beside it when ``measured`` (a sequence of
    TFLOP/s for ``sizes``) is given, and every predicted cliff (a drop of more than ``drop``
    from one size to the next) labelled by its cause: alignment, kernel switch, wave or tile.
    ``spread`` = (low, high) sequences shades the range of repeated measurements;
    ``reproducible`` = sizes N whose drop to the next size is present in every repeat
    (validation/lecture/compare_repeats.py) marks those measured cliffs.

    A sweep of every N (odd N, N = 2 mod 4, ...: more than DENSE_MARKERS cliffs, or alignment
    cliffs at DENSE_ALIGNMENT_SHARE of its sizes or more and at least DENSE_MARKERS / 4 of them,
    as the 60 of a step-1 sweep of 121 sizes) is drawn as one curve per alignment of the rows,
    each cliff within a curve marked; the alignment cliffs
    between them are then the gaps between the curves, named in the legend rather than marked
    at each of thousands of sizes.  ``timing``: as ``simgpu.model.gemm`` ("loop" back-to-back,
    "dobench" as triton.testing.do_bench times it)."""
    sizes = list(range(64, 8193, 64)) if sizes is None else [int(s) for s in sizes]
    est = [gemm(n, n, n, dtype, gpu, timing=timing) for n in sizes]
    pred = np.array([e.tflops for e in est])
    align = np.array([e.alignment_bytes for e in est])
    fig = _figure(11.0, 5.5)
    ax = fig.add_subplot()
    classes = sorted(set(align.tolist()), reverse=True)
    xs = np.asarray(sizes)
    cliffs = mystery_cliffs(sizes, est, drop)
    n_align = sum(1 for _, c, _ in cliffs if c == "alignment")
    dense = len(cliffs) > DENSE_MARKERS or n_align >= max(DENSE_MARKERS // 4, DENSE_ALIGNMENT_SHARE * len(sizes))
    if len(classes) == 1 or not dense:
        ax.plot(sizes, pred, "-", color="C0", lw=1.5, label=f"simgpu.model.gemm ({dtype}, timing={timing})")
    else:
        for c, color in zip(classes, ("C0", "C9", "C5", "C8", "C7")):
            m = align == c
            ax.plot(xs[m], pred[m], "-", color=color, lw=1.0 if c < classes[0] else 1.5,
                    label=f"simgpu.model.gemm ({dtype}), rows {c}-byte aligned ({m.sum()} sizes)")
    if spread is not None:
        ax.fill_between(sizes, spread[0], spread[1], color="0.6", alpha=0.3, lw=0, label="measured: repeat range")
    if measured is not None:
        ax.plot(sizes, measured, "o-", color="0.4", ms=2.5 if len(sizes) <= 600 else 0, lw=0.8,
                label="measured (cuBLAS via torch)" + (": median" if spread is not None else ""))
        for n in reproducible or ():
            i = sizes.index(int(n)) + 1
            ax.plot(sizes[i], measured[i], "x", color="k", ms=8, mew=1.5,
                    label="reproducible measured cliff" if n == reproducible[0] else None)
    counts = {cause: sum(1 for _, c, _ in cliffs if c == cause) for cause in CLIFF_CAUSES}
    for cause in CLIFF_CAUSES:
        at = [i for i, c, _ in cliffs if c == cause]
        if not at:
            continue
        if cause == "alignment" and dense:      # the gaps between the curves; one legend entry
            ax.plot([], [], "v", color=CLIFF_COLORS[cause], ms=6,
                    label=f"cliff: alignment ({counts[cause]}: each less-aligned N; the gaps between curves)")
            continue
        ax.plot(xs[at], pred[at], "v", color=CLIFF_COLORS[cause], ms=4 if dense else 7, ls="none",
                label=f"cliff: {cause} ({counts[cause]})")
        if not dense:
            for i in at:
                ax.annotate(cause[0].upper() if cause != "kernel switch" else "K", (sizes[i], pred[i]),
                            textcoords="offset points", xytext=(0, -12), ha="center", fontsize=7,
                            color=CLIFF_COLORS[cause])
    ax.set(xlabel="N (N x N x N)", ylabel="TFLOP/s",
           title=title or f"Matmul throughput vs size on {gpu}: predicted cliffs by cause")
    ax.grid(True, alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=8, loc="outside lower center", ncols=2)
    return fig
