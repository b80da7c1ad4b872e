"""SweepTable: the rows a sweep returns (one per case), as text, HTML, CSV or a pandas DataFrame."""
from __future__ import annotations

import csv
import html
import importlib
import math
import statistics


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:,.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    s = str(v)
    return s if len(s) <= 40 else s[:37] + "..."


class SweepTable:
    """One row (a dict) per case: the case's parameters, the chosen report metrics, ``error``
    (``None``, or ``"ExceptionType: message"`` when the case failed) and ``case_s`` (the wall
    time of the case on its worker, in seconds).

    ``rows`` keeps the order of the parameters given to `simgpu.sweep`, whatever order the
    workers finished in.
    """

    def __init__(self, rows, *, param_names=(), elapsed_s=None, workers=None, backend="", n_cached=0):
        self.rows = list(rows)
        self.param_names = list(param_names)
        self.elapsed_s = elapsed_s
        self.workers = workers
        self.backend = backend
        self.n_cached = n_cached

    # -- data views -------------------------------------------------------------
    @property
    def columns(self):
        cols = list(self.param_names)
        for r in self.rows:
            for k in r:
                if k not in cols:
                    cols.append(k)
        # error and case_s last
        return [c for c in cols if c not in ("error", "case_s")] + [c for c in ("error", "case_s") if c in cols]

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def column(self, name):
        """The values of one column, in row order (``None`` where a row lacks it)."""
        return [r.get(name) for r in self.rows]

    @property
    def ok(self):
        """The rows whose case ran without an error."""
        return [r for r in self.rows if not r.get("error")]

    @property
    def errors(self):
        """The rows whose case failed (their ``error`` says why)."""
        return [r for r in self.rows if r.get("error")]

    @property
    def per_case_s(self):
        """The median wall time of one case on one worker (seconds), from the rows' ``case_s``."""
        ts = [r["case_s"] for r in self.rows if isinstance(r.get("case_s"), (int, float))]
        return statistics.median(ts) if ts else None

    def cost_s(self, n_cases=None, workers=None):
        """The sweep's cost model: cases x per-case time / workers (seconds), with the per-case
        time measured on this sweep's rows. Scheduling overhead and worker start-up are not in it;
        ``bench_sweep.py`` measures how close a real run comes."""
        n = len(self.rows) if n_cases is None else n_cases
        w = workers or self.workers or 1
        pc = self.per_case_s
        return None if pc is None else n * pc / w

    # -- output -------------------------------------------------------------------
    def to_csv(self, path):
        """Write the table as CSV (one header line, one line per case); returns ``path``."""
        cols = self.columns
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow({c: ("" if r.get(c) is None else r.get(c)) for c in cols})
        return path

    def to_pandas(self):
        """The table as a ``pandas.DataFrame`` (needs pandas)."""
        try:
            pd = importlib.import_module("pandas")
        except ImportError as e:
            raise ImportError("SweepTable.to_pandas needs pandas: pip install pandas "
                              "(or use .rows, .to_csv)") from e
        return pd.DataFrame(self.rows, columns=self.columns)

    def summary(self):
        s = f"{len(self.rows)} case{'s' if len(self.rows) != 1 else ''}, {len(self.errors)} failed"
        if self.n_cached:
            s += f", {self.n_cached} from the cache"
        if self.elapsed_s is not None:
            s += f", {self.elapsed_s:.1f} s"
        if self.workers:
            s += f" on {self.workers} worker{'s' if self.workers != 1 else ''}"
        if self.backend:
            s += f" ({self.backend})"
        pc = self.per_case_s
        if pc is not None:
            s += f"; median case {pc * 1e3:.1f} ms"
        return s

    def _shown(self, limit):
        rows = self.rows
        if len(rows) <= limit:
            return rows, False
        return rows[: limit // 2] + rows[-(limit - limit // 2):], True

    def __repr__(self, limit=20):
        cols = self.columns
        rows, cut = self._shown(limit)
        cells = [[_cell(r.get(c)) for c in cols] for r in rows]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
        lines = ["SweepTable: " + self.summary(),
                 "  ".join(c.rjust(w) for c, w in zip(cols, widths))]
        for k, row in enumerate(cells):
            if cut and k == limit // 2:
                lines.append("  ".join("...".rjust(w) for w in widths))
            lines.append("  ".join(v.rjust(w) for v, w in zip(row, widths)))
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_html_(self, limit=40):
        cols = self.columns
        rows, cut = self._shown(limit)
        out = [f"<div><p><b>SweepTable</b>: {html.escape(self.summary())}</p>",
               "<table><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr></thead><tbody>"]
        for k, r in enumerate(rows):
            if cut and k == limit // 2:
                out.append("<tr>" + "<td>...</td>" * len(cols) + "</tr>")
            style = ' style="color:#b00"' if r.get("error") else ""
            out.append(f"<tr{style}>" + "".join(f"<td>{html.escape(_cell(r.get(c)))}</td>" for c in cols) + "</tr>")
        out.append("</tbody></table></div>")
        return "\n".join(out)


__all__ = ["SweepTable"]
