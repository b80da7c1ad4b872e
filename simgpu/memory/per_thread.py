"""Per-thread memory counts: how many global and shared reads and writes each thread made,
as max and mean over the launch's threads, in total and per source line.  These are the
scores GPU-Puzzles grades by ("6 global reads per thread").

One access = one executed load/store instruction of one thread (a vector load of 4 floats the
compiler merged is one access; an atomic is counted apart, as both a read and a write of the
same place).  An observer of either executor (exec/state.py's contract); each chunk's lanes are
reduced to max and sum at the chunk's end, so memory stays bounded for any grid.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..exec.state import Observer
from .lines import SourceLines

SPACES = ("global", "shared")
KINDS = {"ld": "reads", "st": "writes", "atom": "atomics"}


@dataclass
class Count:
    """One quantity over the threads: max and mean per thread, total over the launch."""
    max: int = 0
    total: int = 0
    threads: int = 0

    @property
    def mean(self):
        return self.total / self.threads if self.threads else 0.0

    def __str__(self):
        return f"max {self.max:,}, mean {self.mean:,.2f}"


@dataclass
class PerThread:
    """``report.per_thread``: ``counts[("global", "reads")]`` -> Count (every thread of the
    launch; threads that made none count as 0), and ``by_line[(file, line)][(space, kind)]``."""
    threads: int = 0
    counts: dict = field(default_factory=dict)
    by_line: dict = field(default_factory=dict)

    def get(self, space, kind):
        return self.counts.get((space, kind), Count(threads=self.threads))

    def summary(self):
        """{'global reads': (max, mean), ...} for the quantities the kernel has."""
        return {f"{s} {k}": (c.max, c.mean) for (s, k), c in self.counts.items() if c.total}

    def __str__(self):
        return section_text(self, {})


class PerThreadCounts(Observer):
    """The observer that fills ``report.per_thread``."""

    def __init__(self):
        self.result = PerThread()
        self._cur = {}              # (line key, space, kind) -> per-lane counts of this chunk
        self._all = {}              # (line key, space, kind) -> accesses by every valid lane
        self._chunk = None
        self._line_of = SourceLines()

    def launch_begin(self, launch):
        self._line_of = SourceLines(launch)

    def chunk_begin(self, chunk):
        self._chunk = chunk
        self._cur, self._all = {}, {}
        self.result.threads += int(np.count_nonzero(chunk.valid)) if hasattr(chunk, "valid") else 0

    def mem(self, ev):
        space = ev.space
        if space not in SPACES:
            return
        kind = KINDS.get(ev.kind)
        if kind is None:
            return
        line = self._line_of(ev.inst)
        key = (line, space, kind)
        if ev.mask.full:            # every thread of the chunk: one count, not an array add
            self._all[key] = self._all.get(key, 0) + 1
            return
        a = self._cur.get(key)
        if a is None:
            a = self._cur[key] = np.zeros(ev.chunk.n_lanes, np.int32)
        np.add(a, ev.mask.arr, out=a, casting="unsafe")

    def chunk_end(self, chunk):
        res = self.result
        valid = getattr(chunk, "valid", None)
        n_valid = int(np.count_nonzero(valid)) if valid is not None else chunk.n_lanes
        totals, totals_all = {}, defaultdict(int)
        for key in set(self._cur) | set(self._all):
            line, space, kind = key
            a, s = self._cur.get(key), self._all.get(key, 0)
            if a is not None:
                t = totals.get((space, kind))
                totals[(space, kind)] = a.astype(np.int64) if t is None else t + a
            totals_all[(space, kind)] += s
            if line is not None:
                c = res.by_line.setdefault(line, {}).setdefault((space, kind), Count())
                c.max = max(c.max, (int(a.max()) if a is not None else 0) + s)
                c.total += (int(a.sum()) if a is not None else 0) + s * n_valid
        for key in set(totals) | set(totals_all):
            a, s = totals.get(key), totals_all.get(key, 0)
            c = res.counts.setdefault(key, Count())
            c.max = max(c.max, (int(a.max()) if a is not None else 0) + s)
            c.total += (int(a.sum()) if a is not None else 0) + s * n_valid
        self._cur, self._all = {}, {}

    def launch_end(self, launch):
        n = self.result.threads
        for c in self.result.counts.values():
            c.threads = n
        for row in self.result.by_line.values():
            for c in row.values():
                c.threads = n

    def fill_report(self, rep):
        rep.per_thread = self.result


COLUMNS = [("global", "reads"), ("global", "writes"), ("shared", "reads"), ("shared", "writes"),
           ("global", "atomics"), ("shared", "atomics")]


def section_text(pt, source):
    """The "Per thread" section of print(report): totals, then one row per source line."""
    cols = [k for k in COLUMNS if pt.get(*k).total]
    if not cols:
        return "Per thread: no global or shared memory accesses"
    out = [f"Per thread (each thread's global and shared memory accesses: max and mean over the "
           f"{pt.threads:,} threads; GPU-Puzzles' scores)"]
    for k in cols:
        c = pt.get(*k)
        out.append(f"  {k[0] + ' ' + k[1]:<18}{c.max:>6,} max {c.mean:>10,.2f} mean")
    head = "".join(f"{s[0] + '.' + ('rd' if w == 'reads' else 'wr' if w == 'writes' else 'atom'):>11}"
                   for s, w in cols)
    out.append(f"  {'line':>5}{head}  source   (max per thread)")
    for (f, ln) in sorted(pt.by_line, key=lambda k: (k[0], k[1])):
        row = pt.by_line[(f, ln)]
        cells = "".join(f"{row[k].max:>11,}" if k in row else f"{'':>11}" for k in cols)
        src = source.get((f, ln), "").strip()
        src = src if len(src) <= 48 else src[:45] + "..."
        out.append(f"  {ln:>5}{cells}  {src}")
    return "\n".join(out)
