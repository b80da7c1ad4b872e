"""Lanes x time: one warp's record from the stepper as a picture.

Each column is one step of the warp -- one warp-instruction (instruction mode) or one visit
of a source line with the lanes that run it (line mode, the compiled path's default, as
the terminal and the HTML page step: stepper/lines.py) -- each row one of its 32 lanes; a
cell is coloured by the source line when the lane is active and left pale grey when the
lane idles, so divergence shows as grey: the two sides of an `if` run one after the other,
each with part of the warp switched off.  On the compiled path the kernel's entry and exit
(prologue, ret) have their own colours, and the title gives SIMT efficiency as compiled and
as written.

Built without pyplot (Agg-safe, no global backend); matplotlib is imported inside.
"""
from __future__ import annotations

import re

import numpy as np

IDLE = (0.90, 0.90, 0.90, 1.0)
NO_THREAD = (1.0, 1.0, 1.0, 1.0)


PLACES = {"exit": "the kernel's exit (ret, epilogue)", "entry": "the kernel's entry (prologue)"}


def _key(file, line, place):
    """A column's colour key: (file, line), or (file, 'exit' / 'entry') for the places that
    belong to no source line (compiled path: lines.py)."""
    return (file, place) if place in PLACES else (file, line)


def _columns(st, mode):
    """[(key, mask)] per column: one per step (instruction mode) or per visit of a line (line
    mode: the lanes that run the line on that visit, as the terminal shows them)."""
    if mode == "line":
        return [(_key(v.file, v.line, v.place), v.mask) for v in st.visits]
    return [(_key(s.file, s.line, getattr(s, "place", "body")), s.mask) for s in st.steps]


def lane_matrix(st, mode="inst"):
    """(32, n_columns) int array: index of the column's source line for active lanes, -1 idle,
    -2 for lanes that hold no thread; and the list of (file, line) in order of first use
    ((file, 'exit') / (file, 'entry') for the kernel's exit and entry on the compiled path).
    mode 'inst': a column per step; 'line': a column per visit of a line (Stepper.visits)."""
    order, cols = {}, []
    valid = np.array([(st.valid >> i) & 1 for i in range(32)], dtype=bool)
    for key, mask in _columns(st, mode):
        k = order.setdefault(key, len(order))
        active = np.array([(mask >> i) & 1 for i in range(32)], dtype=bool)
        cols.append(np.where(active, k, np.where(valid, -1, -2)))
    m = np.stack(cols, axis=1) if cols else np.zeros((32, 0), dtype=np.int64)
    return m, list(order)


def _efficiency_text(st, n):
    """SIMT efficiency of the whole record, both ways on the compiled path (as the terminal)."""
    eff = st.efficiency(n)
    if "as compiled" not in eff:
        return f"SIMT efficiency {100 * eff['as written']:.1f} %"
    text = f"SIMT efficiency as compiled {100 * eff['as compiled']:.1f} %"
    if eff.get("as written") is not None:
        text += f", as written {100 * eff['as written']:.1f} % (simgpu's IR)"
    return text


def _colors(n):
    from matplotlib import colormaps
    base = colormaps["tab10"].colors + colormaps["Dark2"].colors + colormaps["Set1"].colors
    return [tuple(base[i % len(base)]) + (1.0,) for i in range(n)]


def _short(text, width=40):
    """A source line for the legend: without its trailing comment, at most `width` chars."""
    text = re.sub(r"\s+#[^'\"]*$", "", text).strip()
    return text if len(text) <= width else text[:width - 3] + "..."


def warp_lanes(st, ax=None, path=None, title=None, max_legend=14, mode=None):
    """Draw `st` (a simgpu Stepper) as lanes x steps; return the Figure.

    mode: 'line' (a column per visit of a source line, the lanes that run it), 'inst' (a
    column per instruction) or None: the stepper's mode (`st.mode`, 'line' by default on the
    compiled path), as the terminal and the HTML page step.  The title gives SIMT efficiency
    as compiled and as written on the compiled path.
    `ax`: draw into these axes; `path`: also save the figure there (PNG, SVG, ...)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    mode = st.mode if mode is None else mode
    if mode not in ("line", "inst"):
        raise ValueError(f"mode {mode!r}: 'line' (a column per visit of a source line) or 'inst' "
                         "(a column per instruction)")
    m, lines = lane_matrix(st, mode)
    colors = _colors(len(lines))
    rgba = np.empty(m.shape + (4,))
    rgba[m == -1] = IDLE
    rgba[m == -2] = NO_THREAD
    for k, c in enumerate(colors):
        rgba[m == k] = c
    if ax is None:
        width = min(16.0, max(7.0, 4.0 + m.shape[1] * 0.06))
        fig = Figure(figsize=(width, 4.6), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    n = m.shape[1]
    ax.imshow(rgba, aspect="auto", interpolation="nearest", extent=(0.5, n + 0.5, 31.5, -0.5))
    ptx = getattr(st, "executor", "ir") == "ptx"
    ax.set_xlabel("visit of a source line (line step)" if mode == "line" else
                  "PTX instruction (step)" if ptx else "warp instruction (step)")
    ax.set_ylabel("lane")
    ax.set_yticks([0, 8, 16, 24, 31])
    here = (st.visit_at().index + 1 if st.pos else 0) if mode == "line" else st.pos
    if 0 < here < n:
        ax.axvline(here + 0.5, color="black", lw=1.2, ls="--")
    idle = int((m == -1).sum())
    b = st.block_idx
    what = f"{n} visits of lines ({len(st.steps)} instructions)" if mode == "line" else f"{n} steps"
    sep = "\n" if ptx else ", "      # both efficiencies: the counts on a third line
    # two lines (three), the kernel's name cut to what the axes' width holds: a long name is not clipped
    chars = max(20, int((fig.get_figwidth() * 72 - 60) / 5.5) - 26)    # ~5.5 pt per character at 10 pt
    ax.set_title(title or f"{_short(st.kernel_name, chars)}: block ({b[0]}, {b[1]}, {b[2]}) warp {st.warp}\n"
                 f"{_efficiency_text(st, len(st.steps))}{sep}{what}, {idle} idle lane-slots",
                 fontsize=10, x=0.0, ha="left")        # from the axes' left edge: room for both lines
    src = st.fn.source_lines
    handles = [Patch(color=c, label=PLACES[ln] if ln in PLACES else f"line {ln}: {_short(src.get((f, ln), ''))}")
               for (f, ln), c in zip(lines[:max_legend], colors)]
    if len(lines) > max_legend:
        handles.append(Patch(color="white", label=f"... {len(lines) - max_legend} more lines"))
    handles.append(Patch(facecolor=IDLE, edgecolor="0.6", label="idle lane (masked off)"))
    if (m == -2).any():
        handles.append(Patch(facecolor=NO_THREAD, edgecolor="0.6", label="no thread"))
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False)
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
