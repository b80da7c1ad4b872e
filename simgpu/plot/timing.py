"""Figures of the timing model: what each SM and warp did over time, and kernels on the roofline.

Each function returns a ``matplotlib.figure.Figure`` built without pyplot (headless, Agg),
and imports matplotlib only when called.  simgpu.plot re-exports them.
"""
from __future__ import annotations

from .model import roofline_plot

STATE_COLORS = {"issue": "tab:green", "memory": "tab:red", "dependency": "tab:orange",
                "barrier": "tab:purple", "pipe": "tab:brown", "not_selected": "0.8"}


def _figure(width, height):
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height), layout="constrained")


def _timing(rep):
    r = rep.extras.get("timing") if hasattr(rep, "extras") else None
    if r is None:
        raise ValueError("this Report has no timing (launch with timing=True)")
    return r


def sm_schedule(r, max_sms=16):
    """Block residency per SM for the whole launch, in microseconds: [(sm, slot, t0, t1, tail)].

    The model simulates one SM (SM 0, or the busiest recorded one: ``r.sm``) and draws every
    SM's full waves alike (each wave lasting the
    launch's full-wave time / full waves) and SMs 0..k-1 run the k blocks of the partial wave."""
    plan, clk = r.plan, r.params.clock_hz
    total = r.cycles
    n_sms = min(plan.sm_count, max_sms)
    rows = []
    full = plan.full_waves
    tail_cycles = r.tail_cycles if plan.tail_blocks and full else 0.0
    per_wave = (total - tail_cycles) / max(full, 1)
    for sm in range(n_sms):
        if full == 0:
            blocks_here = [q for q in range(sm, plan.n_blocks, plan.sm_count)]
            for slot, _ in enumerate(blocks_here):
                rows.append((sm, slot, 0.0, total / clk * 1e6, False))
            continue
        for w in range(full):
            for slot in range(plan.blocks_per_sm):
                rows.append((sm, slot, w * per_wave / clk * 1e6, (w + 1) * per_wave / clk * 1e6, False))
        k = len(range(sm, plan.tail_blocks_total, plan.sm_count))
        for slot in range(k):
            rows.append((sm, slot, full * per_wave / clk * 1e6, total / clk * 1e6, True))
    return rows


def timeline(rep, sm_rows=16, warps=32):
    """Top: blocks resident on the first `sm_rows` SMs over the launch.  Bottom: the simulated
    SM's warps (up to `warps`), coloured by what each was doing (issuing, or stalled on memory,
    a dependency, a barrier, a pipe, or not selected)."""
    from matplotlib.patches import Patch
    r = _timing(rep)
    fig = _figure(11.0, 7.0)
    top, bottom = fig.subplots(2, 1, height_ratios=(2, 3))
    bps = max(r.plan.blocks_per_sm, 1)
    spans = {}                      # (sm, t0, t1, tail) -> blocks resident together: one bar
    for sm, slot, t0, t1, tail in sm_schedule(r, sm_rows):
        key = (sm, round(t0, 9), round(t1, 9), tail)
        spans[key] = spans.get(key, 0) + 1
    waves = sorted({t0 for (_, t0, _, tail) in spans if not tail})
    for (sm, t0, t1, tail), k in spans.items():
        top.broken_barh([(t0, t1 - t0)], (0.0 + sm, 0.8), edgecolor="white", linewidth=0.8,
                        facecolors="tab:red" if tail else ("tab:blue", "tab:cyan")[waves.index(t0) % 2])
        if tail or not waves.index(t0):
            top.annotate(f"{k}", (t0 + (t1 - t0) / 2, sm + 0.4), ha="center", va="center", fontsize=6,
                         color="white")
    n_sms = min(r.plan.sm_count, sm_rows)
    step = max(1, n_sms // 16)
    top.set_yticks([sm + 0.4 for sm in range(0, n_sms, step)], [str(sm) for sm in range(0, n_sms, step)])
    top.set(xlabel="time (us)", ylabel=f"SM (first {n_sms} of {r.plan.sm_count})", ylim=(n_sms, -0.2),
            title=f"{r.kernel}: blocks on SMs, {r.plan.waves:.3f} waves, predicted {r.time_s * 1e6:,.1f} us "
                  f"(a bar: the blocks an SM runs at once, up to {bps}, their number written in it; "
                  f"red: the partial last wave)")
    top.title.set_fontsize(9)
    tl = r.timeline
    clk = r.params.clock_hz
    keys = sorted(tl.warps)[:warps]
    for y, key in enumerate(keys):
        by_state = {}
        for state, t0, t1 in tl.warps[key]:
            by_state.setdefault(state, []).append((t0 / clk * 1e6, (t1 - t0) / clk * 1e6))
        for state, spans in by_state.items():
            bottom.broken_barh(spans, (y, 0.8), facecolors=STATE_COLORS.get(state, "k"), edgecolor="none")
    bottom.set(xlabel=f"simulated time on SM {getattr(r, 'sm', 0)} (us; long loops cut, see the sampling line of print(rep))",
               ylabel="warp (slot, index)", yticks=[k + 0.4 for k in range(len(keys))],
               yticklabels=[f"{a},{b}" for a, b in keys])
    bottom.tick_params(axis="y", labelsize=6)
    bottom.invert_yaxis()
    bottom.legend(handles=[Patch(color=c, label=s.replace("_", " ")) for s, c in STATE_COLORS.items()],
                  fontsize=8, loc="upper right", ncols=3)
    return fig


def roofline(reports, gpu=None, title=None):
    """Kernels (Reports with timing) on the roofline of `gpu`: achieved FLOP/s against
    arithmetic intensity (FLOPs per DRAM byte).  Each point is labelled by the timing model's
    bottleneck, the one print(rep) shows (not by which side of the ridge it lies), and the
    fraction of the roof it reaches."""
    pts, labels = [], []
    for rep in reports:
        r = _timing(rep)
        if r.dram_bytes and r.flops > 0:          # a log axis has no place for 0 FLOP/B
            p = r.roofline_point(rep.kernel)
            pts.append(p)
            labels.append(f"{rep.title}: {r.bound_label}; {100 * p.fraction_of_roof:.2g} % of the roof")
    g = gpu or (reports[0].gpu if reports else None)
    return roofline_plot(pts, g, title=title or "Kernels on the roofline (predicted)", labels=labels)


__all__ = ["timeline", "roofline", "sm_schedule"]
