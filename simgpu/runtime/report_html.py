"""A Report as a self-contained, styled HTML page (`simgpu run --report DIR` writes one per
launch; ``rep.to_html()``), in the look of the stepper's replay page (stepper/html.py): the
same fonts, grey source blocks and bordered tables.  The per-line table names each source line
with what it executed, moved and waited on; units are in the column heads."""
from __future__ import annotations

import html

from ..units import human_bytes, metric_unit

CSS = """
body{font-family:system-ui,sans-serif;margin:1.2em;color:#222;max-width:80em}
h1{font-size:1.15em;margin:0 0 .4em}
h2{font-size:1em;margin:1.2em 0 .3em}
.k{color:#666;display:inline-block;width:6em}
pre.src{background:#f7f7f7;padding:.4em .6em;margin:.4em 0;font-size:.9em;line-height:1.35;overflow-x:auto}
table.vals{border-collapse:collapse;font-size:.8em}
table.vals th{border:1px solid #ddd;padding:2px 5px;background:#f3f3f3;font-weight:600;text-align:right}
table.vals td{border:1px solid #ddd;padding:1px 5px;text-align:right}
table.vals td.src,table.vals th.src{text-align:left;font-family:ui-monospace,monospace;white-space:pre}
table.vals td.off{color:#aaa;background:#f3f3f3}
table.vals tr.hot td{background:#fff3c4}
details{margin:.6em 0}
"""

# (key in a by_line row, column head with its unit, formatter)
_COUNT = "{:,.0f}".format


def _pct(v):
    return f"{v:.1f}"


LINE_COLUMNS = [
    ("inst_executed", "warp instructions", _COUNT),
    ("thread_inst_executed", "thread instructions", _COUNT),
    ("timing_issue_pct", "issue (% of warp time)", _pct),
    ("timing_stall_pct", "stalled (% of warp time)", _pct),
    ("timing_stall_reason", "mostly waiting on", lambda v: str(v).replace("_", " ")),
    ("global_requests", "global requests (warp instr.)", _COUNT),
    ("sectors_per_request", "sectors (32 B) / request", "{:.2f}".format),
    ("l2_bytes", "L2 (bytes)", human_bytes),
    ("dram_read_bytes", "HBM read (bytes)", human_bytes),
    ("dram_write_bytes", "HBM write* (bytes)", human_bytes),
    ("shared_requests", "shared requests (warp instr.)", _COUNT),
    ("wavefronts_per_request", "shared wavefronts / request", "{:.2f}".format),
    ("bank_conflicts", "bank conflicts (wavefronts)", _COUNT),
]


def line_rows(rep):
    """rep.by_line() with the global requests summed and HBM writes counting what is still dirty
    in the L2 at the end (as the text report's per-line table does)."""
    rows = []
    for r in rep.by_line():
        r = dict(r)
        req = sum(r.get(k, 0) for k in ("global_ld_requests", "global_st_requests", "global_atom_requests",
                                         "local_requests"))
        if req:
            r["global_requests"] = req
            r["dram_write_bytes"] = r.get("dram_write_bytes", 0) + r.get("l2_dirty_bytes_at_end", 0)
        rows.append(r)
    return rows


def line_table(rep):
    rows = line_rows(rep)
    if not rows:
        return "<p>No per-line counts (the kernel ran no instruction with a source line).</p>"
    cols = [c for c in LINE_COLUMNS if any(c[0] in r for r in rows)]
    total = max((r.get("timing_stall_pct", 0) + r.get("timing_issue_pct", 0) for r in rows), default=0)
    head = "".join(f"<th>{html.escape(name)}</th>" for _, name, _ in cols)
    body = []
    for r in rows:
        share = r.get("timing_stall_pct", 0) + r.get("timing_issue_pct", 0)
        hot = ' class="hot"' if total and share == total else ""
        cells = "".join(f"<td>{html.escape(fmt(r[key]))}</td>" if key in r else '<td class="off"></td>'
                        for key, _, fmt in cols)
        body.append(f"<tr{hot}><td>{r['line']}</td><td class=\"src\">{html.escape(r['source'])}</td>{cells}</tr>")
    return (f'<table class="vals" id="lines"><tr><th>line</th><th class="src">source</th>{head}</tr>'
            + "".join(body) + "</table>"
            + "<p><small>* HBM write includes the line's bytes still dirty in the L2 at the end (written back "
              "later). The yellow row is where the warps spent most time.</small></p>")


def per_thread_table(rep):
    pt = rep.per_thread
    if pt is None or not pt.by_line:
        return ""
    kinds = sorted({k for row in pt.by_line.values() for k in row})
    head = "".join(f"<th>{html.escape(space)} {html.escape(kind)} (max per thread)</th>" for space, kind in kinds)
    body = []
    for (f, ln) in sorted(pt.by_line, key=lambda k: (k[0], k[1])):
        row = pt.by_line[(f, ln)]
        cells = "".join(f"<td>{row[k].max:,}</td>" if k in row else '<td class="off"></td>' for k in kinds)
        src = rep.source.get((f, ln), "").strip()
        body.append(f"<tr><td>{ln}</td><td class=\"src\">{html.escape(src)}</td>{cells}</tr>")
    return ('<h2>Per thread, by source line (accesses)</h2><table class="vals" id="per-thread">'
            f'<tr><th>line</th><th class="src">source</th>{head}</tr>' + "".join(body) + "</table>")


def metrics_table(rep):
    rows = "".join(f"<tr><td class=\"src\">{html.escape(k)}</td><td>{v:,.6g}</td><td class=\"src\">"
                   f"{html.escape(metric_unit(k))}</td></tr>"
                   for k, v in sorted(rep.metrics.items()) if isinstance(v, (int, float)))
    return ('<details><summary>all metrics (Nsight Compute\'s names; docs/report.md)</summary>'
            f'<table class="vals" id="metrics"><tr><th class="src">metric</th><th>value</th>'
            f'<th class="src">unit</th></tr>{rows}</table></details>')


def page(rep):
    """The whole page: title, launch, the text sections, the per-line tables, every metric."""
    title = html.escape(f"{rep.title} on {rep.gpu.name}")
    text = str(rep).split("\n\n")
    header, sections = text[0], text[1:]
    blocks = []
    for s in sections:
        name, _, rest = s.partition("\n")
        if name.startswith(("Memory by source line", "Per thread")):
            continue            # tables below
        blocks.append(f"<h2>{html.escape(name)}</h2><pre class=\"src\">{html.escape(rest)}</pre>")
    launch = html.escape(header.split("\n", 1)[1].strip().removeprefix("launch:").strip() if "\n" in header else "")
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>simgpu report: {title}</title><style>{CSS}</style></head>
<body>
<h1>simgpu report - {title}</h1>
<div><span class="k">launch</span>{launch}</div>
<h2>By source line</h2>
{line_table(rep)}
{per_thread_table(rep)}
{"".join(blocks)}
{metrics_table(rep)}
</body></html>
"""


__all__ = ["page", "line_table", "line_rows", "per_thread_table", "metrics_table", "CSS"]
