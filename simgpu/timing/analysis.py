"""From a simulation to words and metrics: utilisation, warp stalls, bottleneck, roofline.

Bottleneck rule (docs/timing.md, "Bottleneck"):
  1. a partial last wave that leaves most SMs idle for more than TAIL_SHARE of the time -> tail
  2. else the busiest resource of the simulated SM, if its utilisation >= BUSY:
     DRAM bandwidth, L2 bandwidth, shared memory / L1, issue, a pipe (FP32, FP64, special
     functions, conversions, integer), atomics at one address or L2 atomic unit, or block starts
  3. else latency: too little parallelism to cover what the warps wait on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .sim import REPORTED_PIPES, STALLS
from ..model.roofline import roofline_point

BUSY = 0.6
TAIL_SHARE = 0.25
RESOURCE_WORDS = {
    "dram": "DRAM bandwidth", "l2": "L2 bandwidth", "l1": "shared memory / L1 data path",
    "issue": "issue / compute (schedulers issue nearly every cycle)", "fp32": "FP32 pipe (compute)",
    "fp64": "FP64 pipe (compute)", "sfu": "special-function pipe", "conv": "conversion pipe",
    "int": "integer pipe", "imad": "integer multiply-add pipe (FMA-heavy)", "shfl": "shuffle pipe",
    "adu": "address divergence unit (constant loads, block barriers)", "atomic": "atomics serialised at the L2 (one hot address or one slice's atomic unit)",
    "launch": "block starts (an SM starts one block at a time: small blocks are limited by it)",
}


@dataclass
class TimingResult:
    gpu: object
    params: object
    plan: object
    occupancy: object
    registers: int
    registers_estimated: bool
    cycles: float                 # the simulated SM's cycles (SM 0's or a busier one's), extrapolated over loops and waves
    time_s: float                 # cycles / clock + launch overhead
    totals: dict                  # sim.TOTALS of the simulated SM, extrapolated like the time
    rep_sm: object                # the representative simulation (per-line stalls, timeline)
    timeline: object
    flops: float
    dram_bytes: float | None
    n_sims: int
    waves_simulated: tuple
    tail_cycles: float            # of `cycles`, the partial last wave's
    loop_factors: list
    loop_k1: int | None
    detail: str
    kernel: str = ""
    sm: int = 0                   # the simulated SM (TimingModel.predict: SM 0, or a busier one)
    sms_recorded: int = 1         # the SMs whose blocks were recorded to choose it from
    utilisation: dict = field(default_factory=dict)
    stalls: dict = field(default_factory=dict)
    bottleneck: str = ""
    bound_label: str = ""         # the bottleneck in a few words (the roofline's labels)
    tail_share: float = 0.0
    settled_loops: object = None  # loops cut to model.PROBE_K1/K2 where settled: True, tried and given up: False, None
    discarded_sims: int = 0       # of n_sims, the simulations of a probe given up (model.settled)
    loop_k2: int | None = None    # long loops' iterations in the extrapolation's second simulation

    def __post_init__(self):
        self.utilisation = utilisation(self)
        self.stalls = stall_breakdown(self)
        self.tail_share = tail_share(self)
        self.bottleneck = bottleneck(self)
        self.bound_label = bound_label(self)

    @property
    def achieved_occupancy(self):
        t = self.totals
        return t["warp_cycles"] / (t["cycles"] * self.gpu.max_warps_per_sm) if t["cycles"] else 0.0

    @property
    def flops_per_s(self):
        return self.flops / self.time_s

    @property
    def dram_bytes_per_s(self):
        return (self.dram_bytes or 0.0) / self.time_s

    @property
    def arithmetic_intensity(self):
        return self.flops / self.dram_bytes if self.dram_bytes else float("inf")

    def roofline_point(self, name=None):
        return roofline_point(self.gpu, name or self.kernel, self.flops, max(self.dram_bytes or 0.0, 1.0),
                              measured_time_s=self.time_s)


def utilisation(r):
    """Busy fraction of each resource of the simulated SM (and its bandwidth share) over the launch."""
    t, P = r.totals, r.params
    T = t["cycles"]
    if T <= 0:
        return {}
    u = {"issue": t["issued"] / (P.schedulers * T)}
    for k in ("l1", "l2", "dram", "atomic", "launch"):
        u[k] = t[k] / T
    for p in REPORTED_PIPES:
        u[p] = t["pipe_" + p] / (P.schedulers * T)
    return {k: min(1.0, max(0.0, v)) for k, v in u.items()}


def stall_breakdown(r):
    """Fractions of warp time: issuing, or stalled on each reason (sums to 1)."""
    t = r.totals
    stalls = [max(0.0, t["stall_" + s]) for s in STALLS]
    total = max(0.0, t["issued"]) + sum(stalls)
    if total <= 0:
        return {}
    out = {"issued": max(0.0, t["issued"]) / total}
    out.update({name: v / total for name, v in zip(STALLS, stalls)})
    return out


def tail_share(r):
    """Share of the launch spent in the partial last wave while most SMs idle."""
    plan = r.plan
    if not plan.tail_blocks or r.cycles <= 0:
        return 0.0
    idle = 1.0 - plan.tail_active_sms / plan.sm_count
    return min(1.0, r.tail_cycles * idle / r.cycles)


SHORT_WORDS = {"dram": "DRAM", "l2": "L2", "l1": "L1 / shared", "issue": "issue", "fp32": "FP32", "fp64": "FP64",
               "sfu": "SFU", "conv": "conversion", "int": "integer", "imad": "IMAD", "shfl": "shuffle", "adu": "ADU", "atomic": "atomics",
               "launch": "block starts"}


def decide(r):
    """The bottleneck rule's decision: ("tail", None, share), ("resource", name, busy) or
    ("latency", busiest name, its busy fraction).  bottleneck() words it; bound_label() is its
    short form (the roofline's labels)."""
    if r.tail_share > TAIL_SHARE:
        return "tail", None, r.tail_share
    u = dict(r.utilisation)
    if not u:
        return "latency", None, 0.0
    name = max(u, key=u.get)
    return ("resource" if u[name] >= BUSY else "latency"), name, u[name]


def bottleneck(r):
    plan = r.plan
    kind, name, busy = decide(r)
    if kind == "tail":
        return (f"tail: the partial last wave ({plan.tail_blocks_total} blocks) keeps "
                f"{plan.tail_active_sms} of {plan.sm_count} SMs busy while the rest idle")
    if name is None:
        return "latency (nothing to simulate)"
    if kind == "resource":
        word = RESOURCE_WORDS.get(name, name)
        return f"{word} ({100 * busy:.0f} % busy)"
    why = max((k for k in r.stalls if k != "issued"), key=r.stalls.get, default="memory")
    idle = ""
    if plan.full_waves == 0 and plan.main_active_sms < plan.sm_count:
        idle = f"; only {plan.main_active_sms} of {plan.sm_count} SMs have blocks"
    return (f"latency (too little parallelism): warps mostly wait on {why.replace('_', ' ')}, "
            f"busiest resource {RESOURCE_WORDS.get(name, name)} at {100 * busy:.0f} %{idle}")


def bound_label(r):
    """bottleneck() in a few words: 'DRAM-bound (64 % busy)', 'latency-bound (busiest: DRAM 64 %)',
    'tail wave'."""
    kind, name, busy = decide(r)
    if kind == "tail":
        return f"tail wave ({100 * busy:.0f} % of the time)"
    if name is None:
        return "latency-bound"
    word = SHORT_WORDS.get(name, name)
    if kind == "resource":
        return f"{word}-bound ({100 * busy:.0f} % busy)"
    return f"latency-bound (busiest: {word} {100 * busy:.0f} %)"


# -- the Report -------------------------------------------------------------------------------
def fill_report(rep, r: TimingResult):
    m = rep.metrics
    occ = r.occupancy
    m["gpu__time_duration.sum"] = r.time_s * 1e9
    m["sm__cycles_elapsed.avg"] = r.time_s * r.params.clock_hz
    m["sm__warps_active.avg.pct_of_peak_sustained_active"] = 100.0 * r.achieved_occupancy
    m.update({k: float(v) for k, v in occ.metrics().items()})
    m["launch__waves_per_multiprocessor"] = r.plan.waves
    m["launch__registers_per_thread"] = float(r.registers)
    for k, v in r.stalls.items():
        m[f"simgpu__warp_{'issued' if k == 'issued' else 'stall_' + k}.pct"] = 100.0 * v
    for k, v in r.utilisation.items():
        m[f"simgpu__utilisation_{k}.pct"] = 100.0 * v
    m["simgpu__flop.sum"] = r.flops
    m["simgpu__achieved_flops_per_s"] = r.flops_per_s
    if r.dram_bytes is not None:
        m["simgpu__achieved_dram_bytes_per_s"] = r.dram_bytes_per_s
    rep.extras["timing"] = r
    rep.extras["bottleneck"] = r.bottleneck
    _lines(rep, r)
    rep.sections.insert(0, ("Timing", section))


def _lines(rep, r):
    c = r.rep_sm.counters
    total = c.issued + sum(c.stall)
    if total <= 0:
        return
    for line, cyc in c.issue_by_line.items():
        rep.lines.setdefault(line, {})["timing_issue_pct"] = 100.0 * cyc / total
    for line, st in c.stall_by_line.items():
        row = rep.lines.setdefault(line, {})
        row["timing_stall_pct"] = 100.0 * sum(st) / total
        top = max(range(len(STALLS)), key=st.__getitem__)
        row["timing_stall_reason"] = STALLS[top]


def _t(s):
    if s >= 1e-3:
        return f"{s * 1e3:,.3f} ms"
    return f"{s * 1e6:,.2f} us"


def section(rep):
    r = rep.extras["timing"]
    occ, plan = r.occupancy, r.plan
    est = "estimated from the IR" if r.registers_estimated else "given"
    rows = ["Timing (predicted; see docs/timing.md)",
            f"  predicted time (gpu__time_duration.sum)   {_t(r.time_s)}   [the metric is in ns: "
            f"{r.time_s * 1e9:,.0f}]   "
            f"({r.cycles:,.0f} cycles at {r.params.clock_hz / 1e9:.2f} GHz + {_t(r.params.launch_overhead_s)} launch)",
            f"  bottleneck                                {r.bottleneck}"]
    if r.dram_bytes:
        rows.append(f"  roofline point                            {r.flops_per_s / 1e12:,.3f} TFLOP/s, "
                    f"{r.dram_bytes_per_s / 1e9:,.1f} GB/s DRAM, AI {r.arithmetic_intensity:,.3g} FLOP/B "
                    f"(ridge {r.gpu.ridge_point():.1f})")
    else:
        rows.append(f"  roofline point                            {r.flops_per_s / 1e12:,.3f} TFLOP/s "
                    "(no DRAM bytes: run with the memory model for the intensity)")
    rows.append(f"  occupancy                                 {100 * r.achieved_occupancy:.1f} % achieved, "
                f"{100 * occ.theoretical_occupancy:.1f} % theoretical ({occ.blocks_per_sm} blocks/SM, "
                f"limited by {', '.join(occ.limiters)}; {r.registers} registers/thread {est})")
    rows.append(f"  waves                                     {plan.waves:.3f} "
                f"({plan.full_waves} full + {plan.tail_blocks_total} blocks; {plan.main_active_sms} SMs busy"
                + (f", {plan.tail_active_sms} in the last wave)" if plan.tail_blocks else ")"))
    st = r.stalls
    if st:
        parts = [f"{k.replace('_', ' ')} {100 * v:.0f}%" for k, v in sorted(st.items(), key=lambda kv: -kv[1])
                 if v >= 0.005]
        rows.append(f"  warp time                                 {', '.join(parts)}")
    u = r.utilisation
    if u:
        parts = [f"{k} {100 * v:.0f}%" for k, v in sorted(u.items(), key=lambda kv: -kv[1]) if v >= 0.01]
        rows.append(f"  busy (simulated SM)                       {', '.join(parts)}")
    how = f"simulated SM {r.sm} ({r.n_sims} runs"
    if r.sm:
        how += f"; the busiest of {r.sms_recorded} SMs recorded, SM 0's blocks issue less"
    if r.loop_factors:
        how += f"; long loops cut to {r.loop_k1}/{r.loop_k2 or 2 * r.loop_k1} iterations and extrapolated"
        if r.settled_loops:
            how += " (their iterations settled)"
    if len(r.waves_simulated) > 1:
        how += f"; waves {r.waves_simulated[0]} and {r.waves_simulated[1]} extrapolated to {plan.full_waves}"
    rows.append(f"  sampling                                  {how})")
    return "\n".join(rows)


__all__ = ["TimingResult", "fill_report", "section", "bottleneck", "bound_label", "decide", "utilisation", "stall_breakdown"]
