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
from .ir_code import IrCode
from .ptx_trace import PtxCode
from .registers import estimate_registers
from .sass_stream import SassStream
from .sampling import candidate_sms, combine_loops, combine_waves, plan_waves, sm_blocks
from .sim import CYCLES, REPORTED_PIPES, STALLS, TOTAL_INDEX, TOTALS, simulate_sm, totals
from .timeline import Timeline
from .trace import GroupTrace, TraceRecorder

DEFAULT_MAX_ITERATIONS = 32
# Settled loops (issue 26): every loop longer than 2 PROBE_K2 iterations whose trips are the
# same for every sampled warp (`probed`) is first simulated cut to
# PROBE_K1 - (PROBE_K2 - PROBE_K1), PROBE_K1 and PROBE_K2 iterations (the "probe": 4, 6, 8); where
# the SM's cycles per iteration are the same over 4..6 and 6..8, within SETTLE_TOL (`settled`),
# the extrapolation from the K1 and K2 simulations is the prediction (as sampling.combine_loops
# and loop_factor extrapolate from 16 and 32), else the loops are simulated as before (cut to
# 16/32 where longer than 32, in full otherwise).  False: always as before (the differential
# test, tests/test_timing_settled_loops.py, runs both).
# Probed: loops with on-chip memory accesses only (shared, constant), in launches of at most
# EXACT_WAVES full waves (see _predict_groups).
SETTLED_LOOPS = True
PROBE_K1, PROBE_K2 = 6, 8
# a probe not settled is tried again this many iterations later (4, 6, 8 -> 6, 8, 10 -> 8, 10,
# 12): the loops' runs it shares with the one before are not simulated again (one more
# simulation per window for a single loop); the last still under the 16/32 it replaces
PROBE_SHIFTS = (0, 2, 4)
# ... only where the window was within this of settled (model.unsettled_by; a cost rule: the
# loops the check of docs/timing.md kept at a later window were 1.75 % off at the first, the
# given-up ones 2.2-4.8 %, and each window tried costs a simulation)
PROBE_RETRY_GAP = 0.02
ON_CHIP_SPACES = ("shared", "const")
SETTLE_TOL = 0.01
SASS_STREAM = True        # the default: issue what sass/flow.py says runs (sass_stream.py)
EXACT_WAVES = 3           # up to this many full waves are simulated as they are
Q1, Q2 = 2, 3             # beyond that: simulate 2 and 3 waves and extrapolate


class TimingModel(Observer):
    """Predicts kernel time with a discrete-event model of one SM and its memory share.

    registers_per_thread: override the IR estimate.  detail: "auto" (sample loops and
    waves, see sampling.py) or "full" (record every iteration, simulate every wave of SM 0).
    """

    # Its recorder (trace.py) reads only the records -- pc, lanes or mask, the memory record of
    # the instruction just recorded -- never the executor's state, so a straight-line run's
    # records may precede the run (ptx/blocks.py's numba segments run under it).  The memory
    # records keep their place: while an observer watches global memory (this one does), a
    # segment with a global load takes the interpreter's path (jitseg.Segment.compute).  The
    # suite and holdout predictions with and without (validation/tools/predictions_snapshot.py,
    # tiny sizes): 115 cases, 0 differences; full size, online softmax and n-body: the same.
    inst_order_free = True

    def __init__(self, gpu, launch=None, memory_model=None, registers_per_thread=None,
                 detail="auto", max_iterations=DEFAULT_MAX_ITERATIONS, sass_stream=None):
        if detail not in ("auto", "full"):
            raise ValueError(f"detail must be 'auto' or 'full', not {detail!r}")
        self.gpu = gpu
        self.params = TimingParams.from_gpu(gpu)
        self.memory_model = memory_model
        self.registers_override = registers_per_thread
        self.detail = detail
        # the compiled path issues the SASS flow's instructions per warp (sass_stream.py);
        # False: each PTX execution issues its line's SASS (the rule before, for comparison)
        self.use_sass_stream = SASS_STREAM if sass_stream is None else bool(sass_stream)
        self.sass_issue = None
        self.max_iterations = None if detail == "full" else max_iterations
        self.info = None
        self.result = None
        self.scale_counts = 1.0         # sampled execution: all blocks / executed blocks
        if launch is not None:
            self._setup(launch)

    # -- set-up: occupancy (refusing launches the driver refuses) and the sample ------------
    def _setup(self, info):
        self.info = info
        self.compiled = info.ptx is not None      # the compiled path
        if not self.compiled:
            contract(info.fn)
        regs = self.registers_override or info.registers_per_thread
        self.registers_estimated = regs is None
        if regs is None and self.compiled:
            raise LaunchError(f"kernel {info.kernel_name!r}: ptxas reported no register count; "
                              "pass registers_per_thread= to time it")
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
        # other SMs' blocks, recorded too: the busiest SM's are simulated (predict).  Only for a
        # grid of at most one wave: every block is resident from the start, so the kernel ends
        # with the SM whose blocks take longest.  With more waves the block scheduler gives each
        # freed slot the next block, so one wave's imbalance between SMs does not persist (the
        # H200's collatz_steps, 2 chunks of data-dependent work: 419.7 -> 515.9 us against the
        # card's 265.5 when the busiest first-wave SM stood for every wave); SM 0 stands for all.
        self.simulated_sm = 0
        self.candidates = []
        for sm in (candidate_sms(self.plan, info.grid) if self.plan.full_waves == 0 else ()):
            mb, tb = sm_blocks(self.plan, sm)
            self.candidates.append((sm, [GroupTrace(f"main@SM{sm}", mb, wpb)]
                                    + ([GroupTrace(f"tail@SM{sm}", tb, wpb)] if tb else [])))
        recorded = self.groups + [g for _, gs in self.candidates for g in gs]
        self.recorder = TraceRecorder(recorded, self.max_iterations, self._memory_info, self._code)

    def sass_stream(self):
        """The per-warp SASS issue of the compiled code (sass_stream.SassStream), or None: the
        IR path, a kernel without a SASS flow plan, or ``sass_stream=False`` (the per-line
        rule everywhere)."""
        if not self.compiled or not self.use_sass_stream:
            return None
        plan = getattr(self.info.ptx.facts, "plan", None)
        return SassStream(plan) if plan is not None else None

    def _code(self):
        """The program as the timing model costs it, the trace recorder's cost source: the
        compiled program (ptx_trace.PtxCode) or the IR kernel (ir_code.IrCode)."""
        st = self.info.ptx
        if st is None:
            return IrCode(self.info.fn)
        return PtxCode(st.image.linked, st.facts.sass, st.facts.source, tuple(self.gpu.compute_capability))

    def _memory_info(self, ev, lanes, act):
        """memfacts.memory_info of a memory event, its atomics' contention over one wave: the
        chunk's counts times the blocks resident with them over the chunk's blocks -- under 1
        for a chunk of several waves, over 1 for a sampled launch's slice of a full wave
        (sampling.sample_runs), 1 for the partial last wave or a grid under one wave."""
        c = ev.chunk
        resident = min(self.plan.wave_size, self.plan.n_blocks - c.first_block)
        return memory_info(ev, lanes, act, wave_fraction=resident / max(1, c.n_blocks),
                           unit_bytes=self.gpu.atomic_unit_bytes, line_cycles=self.gpu.l1_line_cycles,
                           tag_banks=self.gpu.l1_tag_banks)

    # -- the observer contract (exec/state.py): the trace recorder does the work -----------
    def attach(self, interp):
        if self.memory_model is None:
            self.memory_model = next((o for o in interp.observers if isinstance(o, MemoryModel)), None)

    def launch_begin(self, info):
        if self.info is None:
            self._setup(info)

    def launch_end(self, info):
        # nothing is recorded after the run: the recorder's two callbacks into this model were a
        # reference cycle that kept the model (and its memory model's caches) until a full collection
        self.recorder.memory_info = self.recorder.code_of = None

    def chunk_begin(self, chunk):
        self.recorder.chunk_begin(chunk)

    def chunk_end(self, chunk):
        self.recorder.chunk_end(chunk)

    def inst(self, ev):
        self.recorder.inst(ev)

    def inst_tail(self, recs, pcs, lanes, warps):
        return self.recorder.inst_tail(recs, pcs, lanes, warps)

    def mem(self, ev):
        self.recorder.mem(ev)

    def branch(self, ev):
        self.recorder.branch(ev)

    # -- sampled execution: the launch runs only these blocks and scales counts up ----------
    def set_count_scale(self, scale):
        """The warp-instruction scale of a sampled launch (all blocks / executed blocks, or per
        stratum: runtime/launch.make_report), when only the plan's runs ran."""
        self.scale_counts = float(scale)

    # -- prediction ---------------------------------------------------------------------------
    def predict(self) -> TimingResult:
        """The launch's time: the simulation of SM 0's blocks or, where a recorded SM's blocks
        issued more warp instructions (a grid whose blocks differ in work), of the busiest such
        SM if it takes longer -- the kernel ends with its last SM.  A grid whose recorded SMs
        all issue as much as SM 0 or less is SM 0's prediction, simulated once."""
        if self.result is not None:
            return self.result
        res = self._predict_groups()
        busiest = self.busiest_candidate()
        if busiest is not None:
            kept = (self.groups, self.tail_cycles, self.sass_issue, res)
            self.simulated_sm, self.groups = busiest
            self.result = None
            other = self._predict_groups()
            if other.cycles <= res.cycles:
                self.groups, self.tail_cycles, self.sass_issue, self.result = kept
                self.simulated_sm = 0
        return self.result

    def busiest_candidate(self):
        """(SM, its groups) of the recorded SM whose warps issued the most warp instructions,
        if more than SM 0's did; else None.  (With sample=True only the SMs whose blocks share
        a chunk with SM 0's ran: the others issued nothing.)"""
        work0 = sum(g.work for g in self.groups)
        best = max(self.candidates, key=lambda c: sum(g.work for g in c[1]), default=None)
        if best is None or sum(g.work for g in best[1]) <= work0:
            return None
        return best

    def _predict_groups(self) -> TimingResult:
        """predict() for the SM whose groups are self.groups: with its loops cut short where
        their iterations have settled (the probe, `settled`), else as recorded (loops longer
        than max_iterations cut to max_iterations / 2 and max_iterations).

        Not probed: loops with a global or local memory access -- each request's level (L1,
        L2, DRAM, a hit on data in flight) is drawn by error diffusion over the launch
        (sim.CacheDraw), so a few iterations need not be a sample of the rest even where their
        cycles agree (the suite's uncoalesced matmul n = 512: settled over 4..8, -4.3 % against
        16/32) -- launches of more than EXACT_WAVES full waves, whose 2- and 3-wave
        simulations overlap the waves differently with loops cut to 4..8 (both such probes in a
        first run of validation/tools/settled_loops_check.py given up) -- and the IR path
        (every probe of the 5 looped suite kernels checked there given up: its simulations
        are cheap, 0.01-0.1 s, and the probes tripled them)."""
        discarded = 0
        if (SETTLED_LOOPS and self.compiled and self.max_iterations is not None
                and PROBE_K2 < self.max_iterations and self.plan.full_waves <= EXACT_WAVES):
            off_chip, truncated = set(), set()  # loop instances with a global (or local) access; cut
            for g in self.groups:
                for e in g.entries:
                    if e.loops and e.mem is not None and e.mem["space"] not in ON_CHIP_SPACES:
                        off_chip.update(li for li, _ in e.loops)
                    truncated.update(li for li, _ in e.loops if li.truncated)
            shared = {}
            for shift in PROBE_SHIFTS:
                probe = self._loop_configs(PROBE_K2 + shift, lambda li: li not in off_chip and probed(li),
                                           PROBE_K1 + shift)
                # every loop recorded only in part must be one the probe cuts: another (a loop with
                # global loads beside, or nested in, a probed one) would keep only its recorded
                # iterations in the probe's simulations
                if not probe[1] or not truncated <= set(probe[0][0]):
                    break
                got = self._predict_with(*probe, probe=True, shared=shared, discarded=discarded)
                if not isinstance(got, int):
                    return got
                discarded += got      # the probe's simulations, given up
                if self.probe_gap > PROBE_RETRY_GAP:
                    break             # far from settled: a later window would not be
        return self._predict_with(*self._loop_configs(self.max_iterations, lambda li: li.truncated),
                                  discarded=discarded)

    def _predict_with(self, configs, factors, K1, K2, instances, probe=False, discarded=0, shared=None):
        """The prediction with loops cut as `configs` say (_loop_configs).  With ``probe``: each
        loop is also simulated cut to K1 - (K2 - K1), and where its time per iteration has not
        settled (`settled`) the number of simulations run is returned instead (``shared``: the
        probes' simulations by their cuts, so that a later window runs only what an earlier
        did not).  ``discarded``: simulations of probes given up, counted in the result's n_sims."""
        tl = Timeline()
        # a later probe window takes its runs at K1 from the windows before (run without the
        # timeline): it records the timeline only once kept, in one more simulation
        later = bool(shared and shared.get("runs"))
        sims = Simulations(self, configs, factors, timeline=(None, None) if later else (self._rep_key(factors), tl),
                           loops=(K1, K2, instances), settle_tol=SETTLE_TOL if probe else None, shared=shared)
        try:
            vec, rep_key, waves_simulated, exact = self._extrapolate(sims, factors)
        except Unsettled as e:
            self.tail_cycles = 0.0
            self.probe_gap = e.args[0]
            return sims.count
        assert later or rep_key == sims.timeline_key, (rep_key, sims.timeline_key)
        sims.run(*rep_key, timeline=tl)     # a new simulation only if _extrapolate did not run it
        self.sass_issue = sims.issue_summary()
        if exact and len(self.groups) > 1:
            nmain = rep_key[0] * len(self.groups[0].blocks)
            main_end = max((b.t1 for b in tl.blocks if b.index < nmain), default=0.0)
            self.tail_cycles = max(0.0, float(vec[CYCLES]) - main_end)
        res = self._finish(vec, sims.sm(rep_key), tl, sims.count + discarded, waves_simulated, factors, K1)
        res.loop_k2 = K2
        res.settled_loops = True if probe else (False if discarded else None)
        res.discarded_sims = discarded
        return res

    def _rep_key(self, factors):
        """The simulation that represents the launch (its timeline and SM are the report's):
        the key _extrapolate returns, known before any simulation runs.  Exact: the one
        simulation; extrapolated: the last full waves simulated, with loops cut at K1 (one
        the extrapolation runs: the partial last wave, simulated on its own there, is not
        simulated once more only for the timeline and the per-line view)."""
        F, has_tail = self.plan.full_waves, len(self.groups) > 1
        if self.detail == "full" or (not factors and F <= EXACT_WAVES):
            return (max(F, 1), has_tail, 0)
        return (max(F, 1) if F <= EXACT_WAVES else Q2, False, 0)

    def _extrapolate(self, sims, factors):
        """The launch's TOTALS vector from the simulations (exact, or extrapolated over loops
        and waves: sampling.py), the simulation that represents it (its key), the numbers of
        waves simulated, and whether it is exact.  Sets `tail_cycles` when extrapolated."""
        F = self.plan.full_waves
        has_tail = len(self.groups) > 1
        q_main = max(F, 1)               # F == 0: the main group is the (only, partial) wave
        self.tail_cycles = 0.0
        if self.detail == "full" or (not factors and F <= EXACT_WAVES):
            return sims.run(q_main, has_tail, 0), (q_main, has_tail, 0), (q_main,), True
        if F <= EXACT_WAVES:
            vec = sims.loops_extrapolated(q_main, False)
            waves_simulated = (q_main,)
        else:
            t1, t2 = sims.loops_extrapolated(Q1, False), sims.loops_extrapolated(Q2, False)
            vec = combine_waves(F, t1, t2, Q1, Q2)
            waves_simulated = (Q1, Q2)
        if has_tail:                     # the partial wave, after the full ones
            tv = sims.loops_extrapolated(0, True)
            vec = vec + tv
            self.tail_cycles = float(tv[CYCLES])
        return vec, (waves_simulated[-1], False, 0), waves_simulated, False

    def _loop_configs(self, K2, long, K1=None):
        """Loop-truncation configurations: [base, one per long loop] (a loop instance is long
        where ``long(instance)``; of nested long loops the outermost is cut), their factors,
        K1 (K2 / 2 unless given), K2 and each long loop's instances."""
        if K2 is None:
            return [None], [], None, None, []
        K1 = K1 or max(1, K2 // 2)
        outer = {}
        for g in self.groups:
            for e in g.entries:
                for li, _ in e.loops:
                    if long(li):
                        outer.setdefault(li.node_id, set()).add(li)
                        break
        if not outer:
            return [None], [], None, None, []
        base = {li: K1 for insts in outer.values() for li in insts}
        configs, factors, instances = [base], [], []
        for node, insts in outer.items():
            cfg = dict(base)
            for li in insts:
                cfg[li] = K2
            configs.append(cfg)
            factors.append(sum((li.count - K1) / (K2 - K1) for li in insts) / len(insts))
            instances.append(list(insts))
        return configs, factors, K1, K2, instances

    def _finish(self, vec, rep_sm, tl, n_sims, waves_simulated, factors, K1):
        P = self.params
        mm = self.memory_model
        dram = memstats.dram_bytes(mm, self.scale_counts, self.gpu.l2.size_bytes) if mm is not None else None
        named_totals = dict(zip(TOTALS, (float(v) for v in vec)))
        cycles = named_totals["cycles"]
        res = TimingResult(
            gpu=self.gpu, params=P, plan=self.plan, occupancy=self.occupancy, registers=self.registers,
            registers_estimated=self.registers_estimated, cycles=cycles,
            time_s=cycles / P.clock_hz + P.launch_overhead_s, totals=named_totals, rep_sm=rep_sm,
            timeline=tl, flops=self.recorder.flops * self.scale_counts, dram_bytes=dram, n_sims=n_sims,
            waves_simulated=waves_simulated, tail_cycles=self.tail_cycles, loop_factors=factors, loop_k1=K1, detail=self.detail,
            kernel=self.info.kernel_name, sm=self.simulated_sm, sms_recorded=1 + len(self.candidates))
        self.result = res
        return res

    def fill_report(self, rep):
        fill_report(rep, self.predict())
        if self.compiled and self.sass_issue is not None:
            rep.extras["timing_sass_issue"] = self.sass_issue
            if self.sass_issue["stream"]:
                # the simulated warps' SASS issued by the per-line rule (flow.py undecided, or
                # code no plan covers), in percent of all they issue
                rep.metrics["simgpu__timing_sass_issue_per_line.pct"] = 100.0 * self.sass_issue["fraction"]


class Simulations:
    """The SM simulations of one prediction, each run once: a key (q, with_tail, ci) is q
    waves of the main group's blocks, then the tail group's if with_tail, with loops cut as
    loop configuration ci says."""

    def __init__(self, model, configs, factors, timeline=None, loops=(None, None, ()), settle_tol=None,
                 shared=None):
        self.model, self.configs, self.factors = model, configs, factors
        # (K1, K2, each long loop's instances) of the cut loops; settle_tol: a probe (each loop
        # also simulated cut to K1 - (K2 - K1); Unsettled where its iterations have not settled)
        self.k1, self.k2, self.instances = loops
        self.settle_tol = settle_tol
        # (key, Timeline): the simulation whose timeline the report shows records it the first
        # time it runs, so it is not run a second time only to record it
        self.timeline_key, self.timeline = timeline if timeline is not None else (None, None)
        # shared: a dict the probes of one prediction share (their program builder, programs and
        # simulations by the loop cuts they have: a later window's runs reuse an earlier one's)
        self.shared = shared
        if shared is not None and "builder" in shared:
            self.builder = shared["builder"]
        else:
            P, mm = model.params, model.memory_model
            stats = memstats.from_memory_model(mm, model.scale_counts, model.gpu.l2.size_bytes,
                                               P.dram_write_cost) if mm is not None else {}
            self.builder = ProgramBuilder(P, stats, model.info.facts.var_types if model.info.facts is not None else None, model.sass_stream())
            if shared is not None:
                shared["builder"] = self.builder
        self.issue = {}                  # (group, loop configuration) -> (flow, per-line) SASS issued
        self.main = model.groups[0]
        self.tail = model.groups[1] if len(model.groups) > 1 else None
        self._programs = shared.setdefault("programs", {}) if shared is not None else {}
        self._cache = shared.setdefault("runs", {}) if shared is not None else None
        self._runs = {}                  # key -> (TOTALS vector, SM)
        self.count = 0                   # SM simulations run (not taken from `shared`)

    def sm(self, key):
        return self._runs[key][1]

    def _cut(self, ci):
        """Loop configuration ci as a key: its cuts, whatever its index."""
        cfg = self.config(ci)
        return None if cfg is None else frozenset(cfg.items())

    def programs(self, group, ci):
        key = (group.name, self._cut(ci) if self.shared is not None else ci)
        if key not in self._programs:
            b = self.builder
            f0, p0 = b.issued_flow, b.issued_per_line
            progs = b.programs(group, self.config(ci))
            self._programs[key] = (progs, (b.issued_flow - f0, b.issued_per_line - p0))
        progs, self.issue[(group.name, ci)] = self._programs[key]
        return progs

    def config(self, ci):
        """Loop configuration ci: configs[ci], or ("early", i): configs[i] with loop i's
        instances cut to K1 - (K2 - K1) (a probe's)."""
        if isinstance(ci, int):
            return self.configs[ci]
        cfg = dict(self.configs[ci[1]])
        for li in self.instances[ci[1] - 1]:
            cfg[li] = 2 * self.k1 - self.k2
        return cfg

    def issue_summary(self):
        """{"flow": SASS instructions the simulated warps issue from sass/flow.py's block
        counts, "per_line": by the per-line rule (flow.py undecided, or no plan), "fraction":
        per_line's share}, over the base loop configuration's programs."""
        f = sum(v[0] for (g, ci), v in self.issue.items() if ci == 0)
        p = sum(v[1] for (g, ci), v in self.issue.items() if ci == 0)
        return {"flow": f, "per_line": p, "fraction": p / (f + p) if f + p else 0.0,
                "stream": self.builder.stream is not None}

    def run(self, q, with_tail, ci, timeline=None):
        """The TOTALS vector of simulation (q, with_tail, ci); run again with a timeline."""
        key = (q, with_tail, ci)
        recorded = key == self.timeline_key and timeline in (None, self.timeline)
        if key in self._runs and (timeline is None or recorded):
            return self._runs[key][0]
        ckey = None
        if self._cache is not None:
            ckey = (q, with_tail, self._cut(ci))
            if ckey in self._cache and not recorded and timeline is None:
                self._runs[key] = self._cache[ckey]
                if q:                           # (its programs' SASS issue counted: issue_summary)
                    self.programs(self.main, ci)
                if with_tail and self.tail is not None:
                    self.programs(self.tail, ci)
                return self._runs[key][0]
        if recorded:
            timeline = self.timeline
        plan, wpb = self.model.plan, self.model.info.warps_per_block
        blocks = []
        if q:
            mp = self.programs(self.main, ci)
            for r in range(q):
                blocks += [(mp[i * wpb:(i + 1) * wpb], plan.main_active_sms, r) for i in range(len(self.main.blocks))]
        if with_tail and self.tail is not None:
            tp = self.programs(self.tail, ci)
            blocks += [(tp[i * wpb:(i + 1) * wpb], plan.tail_active_sms, q) for i in range(len(self.tail.blocks))]
        cyc, sm = simulate_sm(self.model.params, blocks, plan.blocks_per_sm, wpb, timeline=timeline)
        self.count += 1
        self._runs[key] = (totals(cyc, sm), sm)
        if ckey is not None:
            self._cache[ckey] = self._runs[key]
        return self._runs[key][0]

    def loops_extrapolated(self, q, with_tail):
        """Simulation (q, with_tail) with every loop at its full trip count (sampling.combine_loops),
        each long loop's factor from its instances' warps per iteration (loop_factor)."""
        base = self.run(q, with_tail, 0)
        runs = []
        for ci in range(1, len(self.configs)):
            runs.append(self.run(q, with_tail, ci))
            if self.settle_tol is not None:     # a probe: stop at the first loop not settled
                early = self.run(q, with_tail, ("early", ci))
                gap = unsettled_by(early, base, runs[-1], self.model.params.schedulers)
                if gap > self.settle_tol:
                    raise Unsettled(gap)
        insts = self.instances
        factors = self.factors
        if insts and len(insts) == len(runs):
            factors = [loop_factor(li, self.k1, self.k2, own_latency_share(t - base))
                       for li, t in zip(insts, runs)]
        return combine_loops(base, runs, factors)


def probed(li):
    """Whether a probe cuts loop instance `li`: longer than 2 PROBE_K2 iterations and run by
    the same sampled warps in every iteration.  A loop whose warps leave it at different
    iterations is cut as before: its iterations past the window cost loop_factor's estimate
    (the window's time scaled by the warps left, at least their own-latency share), which
    depends on the window's warps -- extrapolated from 6/8 it moved the holdout's Collatz by
    -1.1 % and its test size by -2.3 % against 16/32, and a loop of at most 32 iterations is
    simulated in full (hist_global_L2: its last iteration run by 8 of 64 warps at 3 % of a full
    one's cycles, +3.0 % extrapolated)."""
    a = li.active
    return li.count > 2 * PROBE_K2 and len(a) == li.count and min(a) == max(a)


class Unsettled(Exception):
    """A loop's time per iteration has not settled in a probe's simulations (`settled`)."""


_WORK = tuple((TOTAL_INDEX[k], per_scheduler) for k, per_scheduler in
              [("issued", True), ("l1", False), ("l2", False), ("dram", False), ("atomic", False),
               ("launch", False)] + [("pipe_" + p, True) for p in REPORTED_PIPES])


def settled(early, base, top, schedulers, tol):
    """Whether a loop's time per iteration has settled, from the TOTALS vectors of the
    simulations with the loop cut to K0, K1 and K2 iterations, equally spaced (``early``,
    ``base``, ``top``: 4, 6 and 8):

    * the SM's cycles per iteration over K0..K1 and K1..K2 are the same within `tol` of the
      larger.  Warps still speeding up or slowing down (a queue still filling) differ; so does
      a loop whose iterations differ by their memory outcomes (each request's level is drawn
      by error diffusion, sim.CacheDraw, whose pattern need not repeat with the iteration);
    * the work of iterations K1..K2 fits their cycles: no resource (issue ports, pipes, the
      L1, the L2 and DRAM shares, atomics, block starts) busier than the cycles K2 adds, within
      `tol`.  Where blocks start one at a time the first warps run their iterations K0..K2
      before the last have started, at the pace of the few warps running (32 one-warp blocks:
      50.9 cycles an iteration until all run, then 64.7, the issue ports' pace): the cycles K2
      adds then hold less than the work it adds (the late warps do theirs later).

    The other totals are extrapolated with the time (combine_loops)."""
    return unsettled_by(early, base, top, schedulers) <= tol


def unsettled_by(early, base, top, schedulers):
    """How far from `settled` a loop is: the larger of its cycles per iteration's relative
    change between the window's halves and the share by which the busiest resource's work in
    the second half exceeds its cycles (0 where both agree)."""
    a = float(base[CYCLES] - early[CYCLES])
    b = float(top[CYCLES] - base[CYCLES])
    big = max(abs(a), abs(b))
    gap = abs(b - a) / big if big > 0 else 0.0
    for i, per_scheduler in _WORK:
        w = float(top[i] - base[i])
        w = w / schedulers if per_scheduler else w
        if w > 0:
            gap = max(gap, w / b - 1.0 if b > 0 else float("inf"))
    return gap


_STALL_OWN = (TOTAL_INDEX["stall_dependency"], TOTAL_INDEX["stall_memory"])
_STALL_ALL = tuple(TOTAL_INDEX["stall_" + s] for s in STALLS)


def own_latency_share(delta):
    """Of the warps' time in a loop's extra iterations (the TOTALS difference of the K2 and K1
    simulations), the share a warp alone would still take: issuing and waiting for its own
    operands (dependencies, memory), not for pipes, the issue port or barriers.  1 where the
    difference holds no warp time."""
    issued = float(delta[TOTAL_INDEX["issued"]])
    own = issued + sum(float(delta[i]) for i in _STALL_OWN)
    total = issued + sum(float(delta[i]) for i in _STALL_ALL)
    if total <= 0 or own <= 0:
        return 1.0
    return min(1.0, own / total)


def loop_factor(instances, K1, K2, own_share):
    """How many times the time of a long loop's iterations K1+1..K2 (the K2 simulation less the
    K1 one) its iterations past K1 take, averaged over the loop's instances.  An iteration i
    run by a_i sampled warps takes the window's time per iteration scaled by a_i over the
    window's mean a, but no less than ``own_share`` of it (a warp's own latency: the few warps
    left in a data-dependent loop's late iterations are latency-bound, not throughput-bound).
    Every warp running every iteration (a uniform trip count): (N - K1) / (K2 - K1), as before.
    An instance without per-iteration warp counts (or none in the window) takes that too."""
    out = 0.0
    span = K2 - K1
    for li in instances:
        a = li.active
        mid = a[K1:K2]
        a_mid = sum(mid) / len(mid) if mid else 0.0
        if len(a) != li.count or a_mid <= 0:
            out += (li.count - K1) / span
            continue
        out += sum(max(own_share, x / a_mid) for x in a[K1:]) / span
    return out / len(instances) if instances else 0.0


__all__ = ["TimingModel", "Simulations", "loop_factor", "own_latency_share", "settled"]
