"""The Report: what a simulated launch did, with metrics named as Nsight Compute names them."""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field

from ..memory.per_thread import section_text as per_thread_text
from ..sanitize.hazards import describe as describe_race
from ..units import metric_unit
from . import report_html

NO_SOURCE = "(no source line: code the compiler added, such as the kernel's return)"


def _fmt(v):
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:,.3g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def kernel_title(qualname):
    """'map_test.<locals>.call' -> 'map_test'; 'Net.forward' -> 'Net.forward'; 'saxpy' -> 'saxpy'."""
    q = str(qualname)
    if ".<locals>." in q:
        return q.split(".<locals>.")[-2].split(".")[-1] if q.count(".<locals>.") > 1 else \
            q.split(".<locals>.")[0].split(".")[-1]
    return q


def _t(s):
    return f"{s * 1e3:,.3f} ms" if s >= 1e-3 else f"{s * 1e6:,.2f} us"


@dataclass
class Report:
    """What one simulated launch did (``simgpu.launch``, ``simgpu.jit``, ``kernel.last_report``):
    ``print(rep)`` is the text report, ``rep`` in Jupyter the HTML one."""

    kernel: str
    """The kernel's name."""
    gpu: object
    """The modelled GPU (a ``simgpu.hardware.GPU``)."""
    grid: tuple
    """Blocks per grid, (x, y, z)."""
    block: tuple
    """Threads per block, (x, y, z)."""
    metrics: dict = field(default_factory=dict)
    """The counters and predictions, named as Nsight Compute names them: ``"smsp__inst_executed.sum"``
    (warp instructions), ``"dram__bytes_read.sum"`` (bytes), ``"gpu__time_duration.sum"`` (the
    predicted time, in nanoseconds), ... (docs/report.md)."""
    lines: dict = field(default_factory=dict)
    """Per source line, ``(file, line) -> {counter: value}`` (``by_line()`` as rows)."""
    source: dict = field(default_factory=dict)
    """The text of each source line of ``lines``."""
    sections: list = field(default_factory=list)        # [(title, callable(report) -> str)]
    bytes_by_level: dict = field(default_factory=dict)
    """Bytes moved at each level of the memory hierarchy (shared, L1, L2, HBM)."""
    extras: dict = field(default_factory=dict)
    """What the models know beyond the metrics: ``extras["timing"]``, ``extras["memory"]``,
    ``extras["ptx"]`` (the compiled path: the PTX, ptxas' registers), ``extras["bottleneck"]``."""
    sanitizer: object = None
    """``launch(check=...)``: the sanitizer's findings, a ``simgpu.sanitize.SanitizerReport``."""
    races: list = field(default_factory=list)
    """The default launch's light shared-memory hazard check (sanitize/hazards.py): one dict per
    racing line pair (kind, loc, other_loc, block, count); empty when none was seen."""
    qualname: str = ""                                  # the Python function's __qualname__
    per_thread: object = None
    """Each thread's global and shared memory accesses, the GPU-Puzzles scores (a
    ``simgpu.memory.per_thread.PerThread``; None with ``memory=False``):
    ``rep.per_thread.get("global", "reads").max``, ``.summary()`` (max and mean per quantity),
    ``.by_line[(file, line)]``."""

    # -- data views ------------------------------------------------------------
    @property
    def threads(self):
        """Threads in the launch (grid x block)."""
        g, b = self.grid, self.block
        return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]

    @property
    def simt_efficiency(self):
        """Active lanes per executed warp instruction / 32, from 0 to 1 (1: no divergence):
        ``metrics["simgpu__simt_efficiency.pct"] / 100``."""
        return self.metrics.get("simgpu__simt_efficiency.pct", 0.0) / 100.0

    def by_line(self):
        """Per source line, like Nsight Compute's source view: a list of dict rows in line order."""
        rows = []
        for (f, ln), counters in sorted(self.lines.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            row = {"file": f, "line": ln,
                   "source": self.source.get((f, ln), "").strip() if ln else NO_SOURCE}
            row.update(counters)
            rows.append(row)
        return rows

    def to_dict(self):
        """The report as plain data: kernel, gpu, grid, block, the numeric metrics,
        bytes_by_level, by_line (and the sanitizer's findings with check=...)."""
        return {"kernel": self.kernel, "gpu": self.gpu.name, "grid": list(self.grid),
                "block": list(self.block),
                "metrics": {k: v for k, v in self.metrics.items() if isinstance(v, (int, float))},
                "bytes_by_level": self.bytes_by_level, "by_line": self.by_line(),
                **({"sanitizer": self.sanitizer.to_dict()} if self.sanitizer is not None else {})}

    def to_json(self, path=None):
        """``to_dict()`` as JSON text; written to `path` too when given."""
        s = json.dumps(self.to_dict(), indent=2, default=str)
        if path:
            with open(path, "w") as f:
                f.write(s)
        return s

    @property
    def title(self):
        """The kernel as the user wrote it: a closure kernel (``map_test.<locals>.call``) is
        titled by the function that makes it (``map_test``), a method by its class."""
        return kernel_title(self.qualname or self.kernel)

    @property
    def n_blocks(self):
        """Blocks in the launch."""
        g = self.grid
        return g[0] * g[1] * g[2]

    @property
    def warps(self):
        """Warps in the launch (each block's threads in warps of 32)."""
        b = self.block
        return self.n_blocks * -(-(b[0] * b[1] * b[2]) // 32)

    @property
    def small_launch(self):
        """True when the launch fills less than one wave (fewer blocks than the GPU holds at
        once): its time is latency, not throughput, and GPU-wide figures mislead."""
        t = self.extras.get("timing")
        if t is not None:
            return t.plan.full_waves == 0
        wave = self.extras.get("memory", {}).get("wave_blocks")      # the memory model's waves
        return self.n_blocks < (wave or getattr(self.gpu, "sm_count", 1))

    # -- text ------------------------------------------------------------------
    def header(self):
        g = "x".join(map(str, self.grid))
        b = "x".join(map(str, self.block))
        title = self.title
        made = ""
        if title != self.kernel:
            made = f"  (kernel {self.kernel!r}, defined in {title})"
        text = (f"simgpu report: {title}  on {self.gpu.name}{made}\n"
                f"  launch: grid {g} x block {b} = {self.threads:,} threads")
        if self.small_launch:
            text += f" in {self.warps:,} warp{'s' if self.warps != 1 else ''}: less than one wave"
        return text

    def small_timing_section(self):
        """The Timing section of a launch smaller than one wave: what matters at that size."""
        r = self.extras["timing"]
        plan, occ = r.plan, r.occupancy
        tpb = self.block[0] * self.block[1] * self.block[2]
        wpb = -(-tpb // 32)
        sms = plan.main_active_sms
        stalls = ", ".join(f"{k.replace('_', ' ')} {100 * v:.0f}%" for k, v in
                           sorted(r.stalls.items(), key=lambda kv: -kv[1]) if v >= 0.005)
        lanes = f"{tpb % 32} of 32 lanes busy in the last warp of each block; " if tpb % 32 else ""
        return "\n".join([
            "Timing (predicted; a launch smaller than one wave: its time is latency; see docs/timing.md)",
            f"  predicted time                            {_t(r.time_s)}   ({r.cycles:,.0f} cycles at "
            f"{r.params.clock_hz / 1e9:.2f} GHz + {_t(r.params.launch_overhead_s)} launch overhead; "
            f"gpu__time_duration.sum, in ns: {r.time_s * 1e9:,.0f})",
            f"  where the time goes                       {stalls or 'issuing'}"
            f"{'  (each warp waits; too few warps to hide it)' if stalls else ''}",
            f"  SMs busy                                  {sms} of {self.gpu.sm_count}"
            f" ({self.n_blocks:,} block{'s' if self.n_blocks != 1 else ''}; one SM holds up to "
            f"{occ.blocks_per_sm} such blocks)",
            f"  warps                                     {self.warps:,} ({wpb} per block; {lanes}"
            f"an SM runs up to {self.gpu.max_warps_per_sm} warps)",
            "  (a GPU-wide view -- throughput, occupancy, roofline, bottleneck -- says little at this "
            "size; it is in rep.metrics)",
        ])

    def per_thread_section(self):
        return per_thread_text(self.per_thread, self.source) if self.per_thread is not None else None

    def instruction_section(self):
        m = self.metrics
        return "\n".join([
            "Instructions",
            f"  warp instructions (smsp__inst_executed.sum)          {_fmt(m.get('smsp__inst_executed.sum', 0))}",
            f"  thread instructions (smsp__thread_inst_executed.sum) {_fmt(m.get('smsp__thread_inst_executed.sum', 0))}",
            f"  SIMT efficiency (active lanes / 32)                  {m.get('simgpu__simt_efficiency.pct', 0):.1f} %",
            f"  divergent branch executions (warps)                  {_fmt(m.get('simgpu__divergent_branch_warp_executions.sum', 0))}",
        ] + self._compiled_lines())

    def _compiled_lines(self):
        """The PTX path's extra lines: what the counts are made of (runtime/ptx_path.py)."""
        p = self.extras.get("ptx")
        if not p:
            return []
        m = self.metrics
        return [
            f"  registers per thread (launch__registers_per_thread)  {_fmt(m.get('launch__registers_per_thread', 0))}"
            f"   (ptxas {p['arch']}; spills {p['spill_stores']} B st / {p['spill_loads']} B ld,"
            f" stack {p['stack_frame']} B)",
            "  executed: the compiled PTX; warp instructions = executed warps x SASS per PTX line",
        ]

    def __str__(self):
        parts = [self.header()]
        if "fault" in self.extras:          # launch(check=...) stopped by a fault
            parts.append(f"Stopped by a fault (a finding below): {self.extras['fault']}\n"
                         "  the counts cover the work before it; no memory or timing model")
        small = self.small_launch
        for title, fn in self.sections:
            if small and title == "Timing" and "timing" in self.extras:
                parts.append(self.small_timing_section())
            else:
                parts.append(fn(self))
        pt = self.per_thread_section()
        if pt:
            parts.append(pt)
        parts.append(self.instruction_section())
        if self.races:
            parts.append("Possible shared-memory races (the GPU's answer may differ from simgpu's; "
                         "run check=True for the full analysis):\n" +
                         "\n".join(f"  {describe_race(r)}" for r in self.races))
        if self.sanitizer is not None:
            parts.append(str(self.sanitizer))
        return "\n\n".join(parts)

    def __repr__(self):
        return f"<simgpu.Report {self.title} grid={self.grid} block={self.block} on {self.gpu.name}>"

    def to_html(self, path=None):
        """The report as a self-contained styled page (runtime/report_html.py): the sections, the
        per-line tables with units, every metric.  Written to `path` when given; returned."""
        text = report_html.page(self)
        if path:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    def _per_thread_html(self):
        """The per-thread scores as a small table, first in a notebook."""
        pt = self.per_thread
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td style='text-align:right'>{mx:,}</td>"
                       f"<td style='text-align:right'>{mean:,.2f}</td></tr>"
                       for k, (mx, mean) in (pt.summary().items() if pt is not None else ()))
        return (f"<table><tr><th>per thread</th><th>max</th><th>mean</th></tr>{rows}</table>"
                if rows else "")

    def _repr_html_(self):
        rows = "".join(f"<tr><td><code>{html.escape(k)}</code></td><td style='text-align:right'>{_fmt(v)}</td>"
                       f"<td>{html.escape(metric_unit(k))}</td></tr>"
                       for k, v in self.metrics.items() if isinstance(v, (int, float)))
        return (f"<div><b>simgpu report: {html.escape(self.title)}</b> on {html.escape(self.gpu.name)}"
                f"{self._per_thread_html()}"
                f"<pre>{html.escape(str(self))}</pre>"
                f"<details><summary>all metrics</summary><table><tr><th>metric</th><th>value</th><th>unit</th></tr>"
                f"{rows}</table></details></div>")
