"""Lanes x time: one warp's record from the stepper as a picture.

Each column is one warp-instruction the warp executed, each row one of its 32 lanes; a
cell is coloured by the source line the instruction came from when the lane is active and
left pale grey when the lane idles, so divergence shows as grey: the two sides of an
`if` run one after the other, each with part of the warp switched off.

Built without pyplot (Agg-safe, no global backend); matplotlib is imported inside.
"""
from __future__ import annotations

import re

import numpy as np

IDLE = (0.90, 0.90, 0.90, 1.0)
NO_THREAD = (1.0, 1.0, 1.0, 1.0)


def lane_matrix(st):
    """(32, n_steps) int array: index of the step's source line for active lanes, -1 idle,
    -2 for lanes that hold no thread; and the list of (file, line) in order of first use."""
    order, cols = {}, []
    valid = np.array([(st.valid >> i) & 1 for i in range(32)], dtype=bool)
    for s in st.steps:
        k = order.setdefault((s.file, s.line), len(order))
        active = np.array([(s.mask >> i) & 1 for i in range(32)], dtype=bool)
        cols.append(np.where(active, k, np.where(valid, -1, -2)))
    m = np.stack(cols, axis=1) if cols else np.zeros((32, 0), dtype=np.int64)
    return m, list(order)


def _colors(n):
    from matplotlib import colormaps
    base = colormaps["tab10"].colors + colormaps["Dark2"].colors + colormaps["Set1"].colors
    return [tuple(base[i % len(base)]) + (1.0,) for i in range(n)]


def _short(text, width=40):
    """A source line for the legend: without its trailing comment, at most `width` chars."""
    text = re.sub(r"\s+#[^'\"]*$", "", text).strip()
    return text if len(text) <= width else text[:width - 3] + "..."


def warp_lanes(st, ax=None, path=None, title=None, max_legend=14):
    """Draw `st` (a simgpu Stepper) as lanes x warp-instructions; return the Figure.

    `ax`: draw into these axes; `path`: also save the figure there (PNG, SVG, ...)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    m, lines = lane_matrix(st)
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
    ax.set_xlabel("PTX instruction (step)" if getattr(st, "executor", "ir") == "ptx" else "warp instruction (step)")
    ax.set_ylabel("lane")
    ax.set_yticks([0, 8, 16, 24, 31])
    if 0 < st.pos < n:
        ax.axvline(st.pos + 0.5, color="black", lw=1.2, ls="--")
    eff = st.state_at(n).simt_efficiency if n else 1.0
    idle = int((m == -1).sum())
    b = st.block_idx
    # two lines, the kernel's name cut to what the axes' width holds: a long name is not clipped
    chars = max(20, int((fig.get_figwidth() * 72 - 60) / 5.5) - 26)    # ~5.5 pt per character at 10 pt
    ax.set_title(title or f"{_short(st.kernel_name, chars)}: block ({b[0]}, {b[1]}, {b[2]}) warp {st.warp}\n"
                 f"SIMT efficiency {100 * eff:.1f} %, {n} steps, {idle} idle lane-slots",
                 fontsize=10, x=0.0, ha="left")        # from the axes' left edge: room for both lines
    src = st.fn.source_lines
    handles = [Patch(color=c, label=f"line {ln}: {_short(src.get((f, ln), ''))}")
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
