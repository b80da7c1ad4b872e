"""The Report: what a simulated launch did, with metrics named as Nsight Compute names them."""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field



def _fmt(v):
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:,.3g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


@dataclass
class Report:
    kernel: str
    gpu: object
    grid: tuple
    block: tuple
    metrics: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)           # (file, line) -> {counter: value}
    source: dict = field(default_factory=dict)          # (file, line) -> text
    sections: list = field(default_factory=list)        # [(title, callable(report) -> str)]
    bytes_by_level: dict = field(default_factory=dict)
    extras: dict = field(default_factory=dict)
    sanitizer: object = None            # launch(check=...): simgpu.sanitize.SanitizerReport

    # -- data views ------------------------------------------------------------
    @property
    def threads(self):
        g, b = self.grid, self.block
        return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]

    @property
    def simt_efficiency(self):
        return self.metrics.get("simgpu__simt_efficiency.pct", 0.0) / 100.0

    def by_line(self):
        """Per source line, like Nsight Compute's source view: a list of dict rows in line order."""
        rows = []
        for (f, ln), counters in sorted(self.lines.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            row = {"file": f, "line": ln, "source": self.source.get((f, ln), "").strip()}
            row.update(counters)
            rows.append(row)
        return rows

    def to_dict(self):
        return {"kernel": self.kernel, "gpu": self.gpu.name, "grid": list(self.grid),
                "block": list(self.block),
                "metrics": {k: v for k, v in self.metrics.items() if isinstance(v, (int, float))},
                "bytes_by_level": self.bytes_by_level, "by_line": self.by_line(),
                **({"sanitizer": self.sanitizer.to_dict()} if self.sanitizer is not None else {})}

    def to_json(self, path=None):
        s = json.dumps(self.to_dict(), indent=2, default=str)
        if path:
            with open(path, "w") as f:
                f.write(s)
        return s

    # -- text ------------------------------------------------------------------
    def header(self):
        g = "x".join(map(str, self.grid))
        b = "x".join(map(str, self.block))
        return (f"simgpu report: {self.kernel}  on {self.gpu.name}\n"
                f"  launch: grid {g} x block {b} = {self.threads:,} threads")

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
        for title, fn in self.sections:
            parts.append(fn(self))
        parts.append(self.instruction_section())
        if self.sanitizer is not None:
            parts.append(str(self.sanitizer))
        return "\n\n".join(parts)

    def __repr__(self):
        return f"<simgpu.Report {self.kernel} grid={self.grid} block={self.block} on {self.gpu.name}>"

    def _repr_html_(self):
        rows = "".join(f"<tr><td><code>{html.escape(k)}</code></td><td style='text-align:right'>{_fmt(v)}</td></tr>"
                       for k, v in self.metrics.items() if isinstance(v, (int, float)))
        return (f"<div><b>simgpu report: {html.escape(self.kernel)}</b> on {html.escape(self.gpu.name)}"
                f"<pre>{html.escape(str(self))}</pre>"
                f"<details><summary>all metrics</summary><table>{rows}</table></details></div>")
