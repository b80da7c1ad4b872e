"""The source line an access is counted under.

On the compiled path NVVM marks some instructions ``.loc ... 0`` ("no source line"): code it
made itself, such as the store after an ``if``/``else`` that both assign ``sA[ty, tx]`` (the
two values merged, one ``st.shared`` at the join).  Counted as they come, such accesses made a
"line 0" row with no source in the per-line tables.  They are counted under the source line
of the nearest instruction above them in the PTX that has one: the line whose code they finish
(what a debugger's "previous line" shows).  IR instructions always have their line.
"""
from __future__ import annotations

import bisect


class SourceLines:
    """``lines(ins) -> (file, line)`` or None, for the instructions of one launch."""

    def __init__(self, launch=None):
        source = launch.facts.source_lines if launch is not None and launch.facts is not None else {}
        self._ptx_lines = sorted(k for k, s in source.items() if getattr(s, "line", 0))
        self._source = source
        self._memo = {}

    def __call__(self, ins):
        loc = getattr(ins, "loc", None)
        if loc is None:
            return None
        if getattr(loc, "line", 0):
            return (loc.file, loc.line)
        key = getattr(ins, "id", None)
        if key not in self._memo:
            self._memo[key] = self._above(key, loc)
        return self._memo[key]

    def _above(self, ptx_line, loc):
        if not isinstance(ptx_line, int):
            return None
        i = bisect.bisect_left(self._ptx_lines, ptx_line) - 1
        if i < 0:
            return None
        s = self._source[self._ptx_lines[i]]
        return (s.file, s.line)


__all__ = ["SourceLines"]
