"""TimingModel: the executor observer that predicts a launch's time and its bottleneck.

kernel.launch() builds one per launch (after the memory model), lets it record the sampled
blocks while the grid runs, and calls `fill_report` at the end.  The work is in:
    trace.py     recording sampled warps        program.py   per-warp programs
    sim.py       the simpy SM and memory        sampling.py  which blocks, extrapolation
    analysis.py  stalls, utilisation, bottleneck, roofline -> the Report
"""
from __future__ import annotations

from ..errors import LaunchError
from ..exec.state import Observer
from ..ir.passes import contract
from ..memory import MemoryModel
from ..model.occupancy import OccupancyError, occupancy
from . import memstats
from .analysis import TimingResult, fill_report
from .memfacts import memory_info
from .params import TimingParams
from .program import ProgramBuilder
from .registers import estimate_registers
from .sampling import combine_loops, combine_waves, plan_waves
from .sim import TOTALS, simulate_sm, totals
from .timeline import Timeline
from .trace import GroupTrace, TraceRecorder

DEFAULT_MAX_ITERATIONS = 32
EXACT_WAVES = 3           # up to this many full waves are simulated as they are
Q1, Q2 = 2, 3             # beyond that: simulate 2 and 3 waves and extrapolate


class TimingModel(Observer):
    """Predicts kernel time with a discrete-event model of one SM and its memory share.

    registers_per_thread: override the IR estimate.  detail: "auto" (sample loops and
    waves, see sampling.py) or "full" (record every iteration, simulate every wave of SM 0).
    """

    def __init__(self, gpu, launch=None, memory_model=None, registers_per_thread=None,
                 detail="auto", max_iterations=DEFAULT_MAX_ITERATIONS):
        if detail not in ("auto", "full"):
            raise ValueError(f"detail must be 'auto' or 'full', not {detail!r}")
        self.gpu = gpu
        self.params = TimingParams.from_gpu(gpu)
        self.memory_model = memory_model
        self.registers_override = registers_per_thread
        self.detail = detail
        self.max_iterations = None if detail == "full" else max_iterations
        self.info = None
        self.result = None
        self.scale_counts = 1.0         # sampled execution: all blocks / executed blocks
        if launch is not None:
            self._setup(launch)

    # -- set-up: occupancy (refusing launches the driver refuses) and the sample ------------
    def _setup(self, info):
        self.info = info
        contract(info.fn)
        regs = self.registers_override or getattr(info, "registers_per_thread", None)
        self.registers_estimated = regs is None
        self.registers = int(regs) if regs is not None else estimate_registers(info.fn, self.gpu)
        try:
            self.occupancy = occupancy(self.gpu, info.threads_per_block, self.registers, info.smem_bytes)
        except OccupancyError as e:
            raise LaunchError(f"kernel {info.kernel_name!r} cannot launch on the {self.gpu.name}: {e}") from None
        self.plan = plan_waves(info.n_blocks, self.occupancy.blocks_per_sm, self.gpu.sm_count)
        wpb = info.warps_per_block
        self.groups = [GroupTrace("main", self.plan.main_blocks, wpb)]
        if self.plan.tail_blocks:
            self.groups.append(GroupTrace("tail", self.plan.tail_blocks, wpb))
        wave = self.plan.wave_size

        def facts(ev, lanes, act):
            return memory_info(ev, lanes, act, wave_fraction=min(1.0, wave / max(1, ev.chunk.n_blocks)),
                               unit_bytes=self.gpu.atomic_unit_bytes)

        self.recorder = TraceRecorder(self.groups, self.max_iterations, facts)

    # -- the observer contract (exec/state.py): the trace recorder does the work -----------
    def attach(self, interp):
        if self.memory_model is None:
            self.memory_model = next((o for o in interp.observers if isinstance(o, MemoryModel)), None)
        self.recorder.attach(interp)

    def launch_begin(self, info):
        if self.info is None:
            self._setup(info)

    def chunk_begin(self, chunk):
        self.recorder.chunk_begin(chunk)

    def chunk_end(self, chunk):
        self.recorder.chunk_end(chunk)

    def inst(self, ins, mask):
        self.recorder.inst(ins, mask)

    def mem(self, ev):
        self.recorder.mem(ev)

    def branch(self, node, mask, taken, kind):
        self.recorder.branch(node, mask, taken, kind)

    # -- sampled execution: the launch runs only these blocks and scales counts up ----------
    def sampled_blocks(self):
        """The blocks the timing model simulates (the first wave and the partial last one)."""
        return sorted(set(self.plan.main_blocks) | set(self.plan.tail_blocks))

    def set_count_scale(self, scale):
        """All blocks / executed blocks, when only sampled_blocks() ran."""
        self.scale_counts = float(scale)

    # -- prediction ---------------------------------------------------------------------------
    def predict(self) -> TimingResult:
        if self.result is not None:
            return self.result
        P, plan, info = self.params, self.plan, self.info
        mm, l2 = self.memory_model, self.gpu.l2.size_bytes
        stats = memstats.from_memory_model(mm, self.scale_counts, l2, P.dram_write_cost) if mm is not None else {}
        builder = ProgramBuilder(P, stats, info.fn.var_types)
        configs, factors, K1 = self._loop_configs()
        progs = {}

        def programs(group, ci):
            key = (group.name, ci)
            if key not in progs:
                progs[key] = builder.programs(group, configs[ci])
            return progs[key]

        main, tail = self.groups[0], (self.groups[1] if len(self.groups) > 1 else None)
        sims = {}

        def sim(q, with_tail, ci, timeline=None):
            key = (q, with_tail, ci)
            if key in sims and timeline is None:
                return sims[key][0]
            blocks = []
            wpb = info.warps_per_block
            if q:
                mp = programs(main, ci)
                for r in range(q):
                    blocks += [(mp[i * wpb:(i + 1) * wpb], plan.main_active_sms, r) for i in range(len(main.blocks))]
            if with_tail and tail is not None:
                tp = programs(tail, ci)
                blocks += [(tp[i * wpb:(i + 1) * wpb], plan.tail_active_sms, q) for i in range(len(tail.blocks))]
            cyc, sm = simulate_sm(P, blocks, plan.blocks_per_sm, wpb, timeline=timeline)
            sims[key] = (totals(cyc, sm), sm)
            return sims[key][0]

        def loops_extrapolated(q, with_tail):
            base = sim(q, with_tail, 0)
            return combine_loops(base, [sim(q, with_tail, ci) for ci in range(1, len(configs))], factors)

        F = plan.full_waves
        has_tail = tail is not None
        q_main = max(F, 1)               # F == 0: the main group is the (only, partial) wave
        tail_cycles = 0.0
        if self.detail == "full" or (not factors and F <= EXACT_WAVES):
            vec = sim(q_main, has_tail, 0)
            rep_key = (q_main, has_tail, 0)
            waves_simulated = (q_main,)
            exact = True
        else:
            exact = False
            if F <= EXACT_WAVES:
                vec = loops_extrapolated(q_main, False)
                waves_simulated = (q_main,)
                rep_q = q_main
            else:
                t1, t2 = loops_extrapolated(Q1, False), loops_extrapolated(Q2, False)
                vec = combine_waves(F, t1, t2, Q1, Q2)
                waves_simulated = (Q1, Q2)
                rep_q = Q2
            if has_tail:                 # the partial wave, after the full ones
                tv = loops_extrapolated(0, True)
                vec = vec + tv
                tail_cycles = float(tv[0])
            rep_key = (rep_q, has_tail, 0)
        tl = Timeline()
        sim(*rep_key, timeline=tl)
        if exact and has_tail:
            nmain = q_main * len(main.blocks)
            main_end = max((b[3] for b in tl.blocks if b[1] < nmain), default=0.0)
            tail_cycles = max(0.0, float(vec[0]) - main_end)
        self.tail_cycles = tail_cycles
        return self._finish(vec, sims[rep_key][1], tl, len(sims), waves_simulated, factors, K1)

    def _loop_configs(self):
        """Loop-truncation configurations: [base, one per long loop], and their factors."""
        if self.max_iterations is None:
            return [None], [], None
        K2 = self.max_iterations
        K1 = max(1, K2 // 2)
        outer = {}
        for g in self.groups:
            for e in g.entries:
                for li, _ in e.loops:
                    if li.truncated:
                        outer.setdefault(li.node_id, set()).add(li)
                        break
        if not outer:
            return [None], [], None
        base = {li: K1 for insts in outer.values() for li in insts}
        configs, factors = [base], []
        for node, insts in outer.items():
            cfg = dict(base)
            for li in insts:
                cfg[li] = K2
            configs.append(cfg)
            factors.append(sum((li.count - K1) / (K2 - K1) for li in insts) / len(insts))
        return configs, factors, K1

    def _finish(self, vec, rep_sm, tl, n_sims, waves_simulated, factors, K1):
        P = self.params
        mm = self.memory_model
        dram = memstats.dram_bytes(mm, self.scale_counts, self.gpu.l2.size_bytes) if mm is not None else None
        totals = dict(zip(TOTALS, (float(v) for v in vec)))
        cycles = totals["cycles"]
        res = TimingResult(
            gpu=self.gpu, params=P, plan=self.plan, occupancy=self.occupancy, registers=self.registers,
            registers_estimated=self.registers_estimated, cycles=cycles,
            time_s=cycles / P.clock_hz + P.launch_overhead_s, totals=totals, rep_sm=rep_sm,
            timeline=tl, flops=self.recorder.flops * self.scale_counts, dram_bytes=dram, n_sims=n_sims,
            waves_simulated=waves_simulated, tail_cycles=self.tail_cycles, loop_factors=factors, loop_k1=K1, detail=self.detail,
            kernel=self.info.kernel_name)
        self.result = res
        return res

    def fill_report(self, rep):
        fill_report(rep, self.predict())


__all__ = ["TimingModel"]
