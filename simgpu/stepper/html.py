"""`Stepper.to_html`: one self-contained page that replays a warp's steps with buttons.

The page holds the record as JSON (values as per-step changes) and a small script; it needs
no network and no server.  A compiled-path record (PtxStepper) also shows each step's PTX
line, its SASS, where lanes rejoin, the registers the step wrote and the variables from the
side-by-side IR run, labelled.  Buttons: start, back, step, next line, end, mode; the arrow
keys step.  The page steps as the terminal does: in line mode (the compiled path's default;
`m` or the mode button switches) a step is one visit of a source line (lines.py), the lanes
shown are the lanes that run the line on that visit, and a step stops at the line's first
instruction; in instruction mode a step is one instruction.  On the compiled path the status
shows SIMT efficiency as compiled and as written.
"""
from __future__ import annotations

import html
import json

import numpy as np


def _num(v):
    v = np.asarray(v)
    if v.dtype == bool:
        return [bool(x) for x in v]
    if v.dtype.kind == "f":
        return [float(f"{x:.6g}") if np.isfinite(x) else str(x) for x in v]
    return [int(x) for x in v]


def _cells(v, assigned):
    return [x if (assigned >> k) & 1 else "-" for k, x in enumerate(_num(v))]


def _ir_changes(st, keep):
    """changes[n]: the variables whose values change after n steps (IR record)."""
    changes = [dict() for _ in range(len(st.steps) + 1)]
    for name, (idx, vals, assigned) in st._hist.items():
        if "%" in name or (keep is not None and name not in keep):
            continue
        for i, v, a in zip(idx, vals, assigned):
            changes[i + 1 if i >= 0 else 0][name] = _cells(v, a)
    return changes


def _ptx_changes(st, keep):
    """changes[n] on the compiled path: the side-by-side IR run's variables, wherever the IR
    position that goes with the PTX state changes (none without that run)."""
    changes = [dict() for _ in range(len(st.steps) + 1)]
    if st.ir is None:
        return changes
    prev = None
    for n in range(len(st.steps) + 1):
        p = st.ir_pos(n)
        if p != prev:
            s = st.ir.state_at(p)
            changes[n] = {k: _cells(v, s.assigned.get(k, -1)) for k, v in s.values.items()
                          if keep is None or k in keep}
            prev = p
    return changes


def _ptx_step(s):
    """The compiled path's extra fields of one step."""
    rejoin = ""
    if s.reconverged:
        rejoin = (f"{bin(s.reconverged).count('1')} lane(s) rejoin the warp here (reconvergence" +
                  (" after the branch at line " + ", ".join(map(str, s.rejoin_of)) if s.rejoin_of else "") + ")")
    return {"ptx_line": s.ptx_line, "sass": list(s.sass), "target": s.target, "rejoin": rejoin,
            "no_loc": s.no_loc,
            "regs": {k: _cells(v, s.mask if s.guard is None else s.guard) for k, v in s.regs.items()}}


def page_data(st, variables=None):
    keep = set(variables) if variables else None
    ptx = getattr(st, "executor", "ir") == "ptx"
    changes = _ptx_changes(st, keep) if ptx else _ir_changes(st, keep)   # changes[n]: after n steps
    steps = []
    for s in st.steps:
        steps.append({"line": s.line, "file": s.file, "mask": s.mask, "text": s.text, "kind": s.kind,
                      "taken": s.taken, "w": s.weight,
                      "stack": [[k, n.loc.line, m, st.rejoin_line(n)] for k, n, m in s.stack],
                      "mem": str(s.memory) if s.memory is not None else "-"})
        if ptx:
            steps[-1].update(_ptx_step(s))
    for s, step_ in zip(st.steps, steps):
        step_["place"] = getattr(s, "place", "body")
    n = len(st.steps)
    vs = st.visits
    b = st.block_idx
    return {"kernel": st.kernel_name, "block": list(b), "warp": st.warp, "valid": st.valid,
            "mode": st.mode,
            # line mode (lines.py): the visits [first step, end, lanes that run the line, place,
            # line] and, per step, the visit it belongs to
            "visits": [[v.start, v.end, v.mask, v.place, v.line] for v in vs],
            "visit_of": [st.visit_at(k).index for k in range(1, n + 1)],
            # SIMT efficiency so far of the same warp as written (the IR run), after k steps
            "as_written": ([st.efficiency(k).get("as written") for k in range(n + 1)] if ptx else None),
            "file": st.fn.loc.file, "executor": "ptx" if ptx else "ir",
            "values_from": st.values_from if ptx else "",
            "source": {f"{f}:{ln}": t for (f, ln), t in st.fn.source_lines.items()},
            "steps": steps, "changes": changes,
            "error": str(st.error) if st.error else None}


CSS = """
body{font-family:system-ui,sans-serif;margin:1.2em;color:#222}
h1{font-size:1.15em;margin:0 0 .4em}
#bar button{font-size:1em;margin-right:.3em;padding:.2em .7em}
#status{margin:.5em 0;font-weight:bold}
pre.src{background:#f7f7f7;padding:.4em 0;margin:.4em 0;font-size:.9em;line-height:1.35}
pre.src span{display:block;padding:0 .6em}
pre.src span.cur{background:#ffe08a}
#lanes{display:flex;gap:2px;margin:.3em 0}
#lanes div{width:16px;height:22px;background:#ddd;font-size:9px;text-align:center;line-height:22px;color:#555}
#lanes div.on{background:#2a9d4a;color:#fff}
#lanes div.none{background:#fff;border:1px dashed #ccc}
table.vals{border-collapse:collapse;font-size:.8em}
table.vals td{border:1px solid #ddd;padding:1px 4px;text-align:right}
table.vals td.off{color:#aaa;background:#f3f3f3}
.k{color:#666;display:inline-block;width:6em}
"""

JS = r"""
const D = JSON.parse(document.getElementById('data').textContent);
const N = D.steps.length;
const PTX = D.executor === 'ptx';
const vals = [{}];
for (let n = 0; n <= N; n++) {
  const prev = n ? vals[n - 1] : {};
  vals[n] = Object.assign({}, prev, D.changes[n]);
}
let cw = [0], ct = [0];
D.steps.forEach((s, i) => { cw.push(cw[i] + s.w); ct.push(ct[i] + s.w * popc(s.mask)); });
function popc(m) { let c = 0; for (let i = 0; i < 32; i++) if ((m >>> i) & 1) c++; return c; }
function hex(m) { return '0x' + (m >>> 0).toString(16).padStart(8, '0'); }
const E = id => document.getElementById(id);
let pos = 0;
let mode = D.mode === 'line' ? 'line' : 'inst';
const stops = D.visits.map(v => v[0]);          // line mode stops at each visit's first instruction
function where(n) { if (n <= 0) return null; const s = D.steps[n - 1]; return s.file + ':' + s.line; }
function visitAt(n) { return n > 0 && D.visit_of.length ? D.visits[D.visit_of[Math.min(n, N) - 1]] : null; }
function pct(x) { return (100 * x).toFixed(1) + ' %'; }
function efficiency() {
  const c = cw[pos] ? ct[pos] / (32 * cw[pos]) : 1;
  if (!PTX) return `SIMT efficiency so far ${pct(c)}`;
  const w = D.as_written ? D.as_written[pos] : null;
  return `SIMT efficiency so far: as compiled ${pct(c)}` + (w === null || w === undefined ? '' : `, as written ${pct(w)} (simgpu's IR)`);
}
function render() {
  const s = pos ? D.steps[pos - 1] : null;
  const file = s ? s.file : D.file, line = s ? s.line : (N ? D.steps[0].line : 0);
  const v = mode === 'line' ? visitAt(pos) : null;
  const mask = v ? v[2] : (s ? s.mask : D.valid);
  E('status').textContent = (pos ? `step ${pos} of ${N}` : `start (nothing executed yet; ${N} steps)`) +
    ` - line ${line} - ` + efficiency() +
    (pos === N ? ' - the warp has finished' : '') + (pos === N && D.error ? ' - ' + D.error : '') +
    ` [${mode === 'line' ? 'line' : 'instruction'} stepping]`;
  E('mode').textContent = mode === 'line' ? 'mode: line' : 'mode: instruction';
  const rows = Object.keys(D.source).filter(k => k.startsWith(file + ':'))
    .map(k => [parseInt(k.slice(file.length + 1)), D.source[k]]).sort((a, b) => a[0] - b[0]);
  E('src').innerHTML = '';
  rows.forEach(([ln, t]) => {
    const sp = document.createElement('span');
    sp.textContent = String(ln).padStart(4) + ' | ' + t;
    if (ln === line) { sp.className = 'cur'; sp.id = 'curline'; }
    E('src').appendChild(sp);
  });
  E('lanes').innerHTML = '';
  for (let i = 0; i < 32; i++) {
    const d = document.createElement('div');
    d.textContent = i;
    d.className = ((mask >>> i) & 1) ? 'on' : (((D.valid >>> i) & 1) ? 'off' : 'none');
    E('lanes').appendChild(d);
  }
  const what = v ? ({exit: "the kernel's exit", entry: "the kernel's entry"}[v[3]] || `line ${v[4]}`) : '';
  E('active').textContent = v ? `${popc(mask)}/32 run ${what} on this visit (${hex(mask)})` :
    `${popc(mask)}/32 active (${hex(mask)})`;
  E('visit').textContent = v ? `steps ${v[0] + 1}-${v[1]} (${v[1] - v[0]} instruction(s)); ` +
    `the instruction mode steps them one by one` : (mode === 'line' ? '-' : '(instruction stepping: one instruction a step)');
  const first = v && v[3] === 'body' && v[0] === pos - 1;
  const place = s && s.place === 'exit' ? " (the kernel's exit: ret and epilogue belong to no source line; shown at the def line)" :
    (s && s.place === 'entry' ? " (the kernel's entry: the prologue, at the def line)" : '');
  E('ilabel').textContent = first ? 'first of line' : 'executed';
  E('inst').textContent = s ? (PTX ? `PTX line ${s.ptx_line}: ` : '') + s.text + (s.kind === 'if' && s.taken !== null ?
      `: ${popc(s.taken)} lanes take the if-side, ${popc(s.mask) - popc(s.taken)} the else-side` : '') +
      (s.kind === 'bra' && s.taken !== null ? `: ${popc(s.taken)} lanes jump to ${s.target}, ` +
       `${popc(s.mask) - popc(s.taken)} fall through` : '') +
      (PTX && s.no_loc ? ' (no source line from the compiler: shown under the previous line)' : '') + place : '(next to run)';
  if (PTX) {
    E('sass').textContent = s ? (s.sass.length ? s.sass.join(' ; ') : '(no SASS from this PTX line)') : '-';
    E('rejoin').textContent = s && s.rejoin ? s.rejoin : '-';
  }
  E('stack').innerHTML = '';
  (s ? s.stack.slice().reverse() : []).forEach(([k, ln, m, rj]) => {
    const li = document.createElement('li');
    li.textContent = `${k} at line ${ln}: mask ${hex(m)} (${popc(m)} lanes), rejoin at ` +
      (rj === null ? 'the end of the kernel' : 'line ' + rj);
    E('stack').appendChild(li);
  });
  if (!s || !s.stack.length) E('stack').innerHTML = '<li>(empty)</li>';
  E('mem').textContent = s ? s.mem : '-';
  const t = E('vals'); t.innerHTML = '';
  const hr = document.createElement('tr');
  hr.innerHTML = '<td>lane</td>' + [...Array(32).keys()].map(i => `<td>${i}</td>`).join('');
  t.appendChild(hr);
  const vrows = Object.keys(vals[pos]).sort().map(name => [name, vals[pos][name]]);
  if (PTX && s) Object.keys(s.regs).reverse().forEach(r => vrows.unshift([r, s.regs[r]]));
  vrows.forEach(([name, v]) => {
    const tr = document.createElement('tr');
    tr.innerHTML = (name[0] === "%" ? `<td><code>${name}</code></td>` : `<td><b>${name}</b></td>`) + v.map((x, i) =>
      `<td class="${((mask >>> i) & 1) ? '' : 'off'}">${x === true ? 'T' : x === false ? 'F' : x}</td>`).join('');
    t.appendChild(tr);
  });
  E('slider').value = pos;
}
function go(n) { pos = Math.max(0, Math.min(N, n)); render(); }
function step() {                      // line mode: to the next visit's first instruction (or the end)
  if (mode === 'inst' || pos >= N) return go(pos + 1);
  const a = stops.find(a => a > pos - 1);
  go(a === undefined ? N : a + 1);
}
function back() {                      // line mode: to the previous visit's first instruction (or the start)
  if (mode === 'inst' || pos <= 0) return go(pos - 1);
  const prev = stops.filter(a => a < pos - 1);
  go(prev.length ? prev[prev.length - 1] + 1 : 0);
}
function setMode(m) { mode = m || (mode === 'line' ? 'inst' : 'line'); render(); return mode; }
function nextLine() {
  if (mode === 'line') return step();
  if (pos >= N) return;
  const here = where(pos);
  while (pos < N && where(pos + 1) === here) pos++;
  if (pos < N) { pos++; const nx = where(pos); while (pos < N && where(pos + 1) === nx) pos++; }
  render();
}
E('start').onclick = () => go(0);
E('back').onclick = back;
E('step').onclick = step;
E('next').onclick = nextLine;
E('mode').onclick = () => setMode();
E('end').onclick = () => go(N);
E('slider').max = N;
E('slider').oninput = e => go(parseInt(e.target.value));
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') step();
  else if (e.key === 'ArrowLeft') back();
  else if (e.key === 'ArrowDown') nextLine();
  else if (e.key === 'm') setMode();
});
window.simgpuStep = {go, step, back, nextLine, setMode, get pos() { return pos; }, get mode() { return mode; }, N};
render();
"""


def _ptx_rows(st):
    if getattr(st, "executor", "ir") != "ptx":
        return ""
    return ('<div><span class="k">sass</span><code id="sass"></code></div>\n'
            '<div><span class="k">rejoin</span><span id="rejoin"></span></div>\n')


def _values_note(st):
    if getattr(st, "executor", "ir") != "ptx":
        return ""
    return (": first the PTX registers this step wrote (%...: the compiled code's values), then the "
            f"kernel's variables {html.escape(st.values_from)}")


def render(st, variables=None):
    data = json.dumps(page_data(st, variables)).replace("</", "<\\/")
    b = st.block_idx
    title = html.escape(f"{st.kernel_name}: block ({b[0]}, {b[1]}, {b[2]}) warp {st.warp}" +
                        (" (compiled PTX)" if getattr(st, "executor", "ir") == "ptx" else ""))
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>simgpu step: {title}</title><style>{CSS}</style></head>
<body>
<h1>simgpu warp stepper - {title}</h1>
<div id="bar"><button id="start">&laquo; start</button><button id="back">&#x25C0; back</button>
<button id="step">step &#x25B6;</button><button id="next">next line &raquo;</button>
<button id="end">end &raquo;|</button><button id="mode" title="m: line stepping (a step is one visit of a source line) or instruction stepping"></button>
<input id="slider" type="range" min="0" value="0" style="width:18em;vertical-align:middle"></div>
<div id="status"></div>
<pre class="src" id="src"></pre>
<div><span class="k" id="ilabel">executed</span><code id="inst"></code></div>
<div><span class="k">lanes</span><span id="active"></span></div>
<div id="lanes"></div>
<div><span class="k">visit</span><span id="visit"></span></div>
<div><span class="k">stack</span></div><ul id="stack"></ul>
<div><span class="k">memory</span><code id="mem"></code></div>
{_ptx_rows(st)}<div><span class="k">values</span> (grey: lane idle at this step){_values_note(st)}</div>
<table class="vals" id="vals"></table>
<script type="application/json" id="data">{data}</script>
<script>{JS}</script>
</body></html>
"""
