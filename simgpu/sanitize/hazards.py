"""The default launch's light shared-memory hazard check (issue 25 item 2).

Not racecheck: per barrier interval, which warp last wrote and which warp(s) read each shared
word (one int16 writer, one int16 reader and one int32 epoch per word per block; -2: several
warps), updated per executed shared access with a few vectorised numpy operations.  A read of a
word another warp wrote in the same barrier interval (RAW), a write of a word another warp read
(WAR) or wrote (WAW) is a hazard.  Only hazards between different warps of a block are seen,
accesses in one instruction are not compared with each other, atomics are not checked, and a
barrier a lane passes starts its new interval (named barriers included).  It observes the
compiled path's memory records (``mem``) and barrier records like any observer; the IR path is
not checked.  ``settings.race_check`` (SIMGPU_RACE_CHECK=0) turns it off; ``check=True`` runs the
full racecheck instead.  Cost: benchmarks/bench_race_check.py."""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import SimGPUWarning
from ..exec.state import Observer

NONE, MANY = -1, -2


class HazardCheck(Observer):
    def __init__(self, unit=4):
        self.unit = unit
        self.found = {}         # (kind, loc, other_loc) -> [block, count]
        self._src = {}

    def chunk_begin(self, chunk):
        self.c = chunk
        self.bep = np.zeros(chunk.n_lanes, np.int32)
        self.warp = (chunk.lane_tid // 32).astype(np.int16)
        self.size = 0
        self.nb = chunk.n_blocks
        self._alloc(256)

    def _alloc(self, size):
        old = (self.size, getattr(self, "wr", None), getattr(self, "rd", None), getattr(self, "ep", None),
               getattr(self, "wl", None), getattr(self, "rl", None))
        n = self.nb * size
        self.wr = np.full(n, NONE, np.int16)
        self.rd = np.full(n, NONE, np.int16)
        self.ep = np.full(n, -1, np.int32)
        self.wl = np.zeros(n, np.int32)
        self.rl = np.zeros(n, np.int32)
        if old[0]:
            for new, o in zip((self.wr, self.rd, self.ep, self.wl, self.rl), old[1:]):
                new.reshape(self.nb, size)[:, :old[0]] = o.reshape(self.nb, old[0])
        self.size = size

    def barrier(self, ev):
        if ev.scope == "block":
            self.bep[ev.mask.arr] += 1

    mem_spaces = ("shared",)        # (the PTX executor's compiled loads may skip the others)

    def mem(self, ev):
        if ev.space != "shared" or ev.kind not in ("ld", "st"):
            return
        m = ev.mask
        lanes = np.arange(len(m.arr), dtype=np.int64) if m.full else np.flatnonzero(m.arr)
        if not len(lanes):
            return
        w, g = int(ev.size), self.unit
        off = ev.addr if m.full else ev.addr[lanes]
        if w < g or int(np.bitwise_or.reduce(off)) % g:
            return                      # narrower than a word: not checked
        u = w // g
        hi = int(off.max()) // g + u
        if hi > self.size:
            self._alloc(max(hi, 2 * self.size))
        base = self.c.lane_block[lanes].astype(np.int64) * self.size + off // g
        if u > 1:
            base = (base[:, None] + np.arange(u)).ravel()
            lanes = np.repeat(lanes, u)
        e = self.bep[lanes]
        wp = self.warp[lanes]
        valid = self.ep[base] == e
        line = int(ev.inst.id)          # the PTX line
        if ev.kind == "ld":
            wr = self.wr[base]
            hz = valid & (wr != NONE) & (wr != wp)
            if hz.any():
                self._add("RAW", line, self.wl[base[hz]], lanes[hz])
            rd = np.where(valid, self.rd[base], NONE)
            new = np.where((rd == NONE) | (rd == wp), wp, MANY)
            self.rd[base] = new
            self.rl[base] = line
            self.wr[base] = np.where(valid, wr, NONE)
        else:
            rd, wr = self.rd[base], self.wr[base]
            war = valid & (rd != NONE) & (rd != wp)
            waw = valid & (wr != NONE) & (wr != wp)
            if war.any():
                self._add("WAR", line, self.rl[base[war]], lanes[war])
            if waw.any():
                self._add("WAW", line, self.wl[base[waw]], lanes[waw])
            self.wr[base] = wp
            self.wl[base] = line
            self.rd[base] = np.where(valid, rd, NONE)
        self.ep[base] = e
        src = self._src
        if line not in src:
            loc = ev.inst.loc
            src[line] = f"{loc.file}:{loc.line}" if loc.line else ""

    def _add(self, kind, line, others, lanes):
        for o in np.unique(others):
            key = (kind, line, int(o))
            f = self.found.get(key)
            if f is None:
                self.found[key] = [self.c.block_of(int(lanes[0])), int(np.count_nonzero(others == o))]
            else:
                f[1] += int(np.count_nonzero(others == o))

    def _where(self, line):
        return self._src.get(line) or f"PTX line {line}"

    def races(self):
        """[{kind, loc, other_loc, block, count}] merged per source-line pair."""
        out = {}
        for (kind, line, other), (blk, n) in self.found.items():
            key = (kind, self._where(line), self._where(other))
            r = out.setdefault(key, {"kind": kind, "loc": key[1], "other_loc": key[2],
                                     "block": tuple(int(v) for v in blk), "count": 0})
            r["count"] += n
        return list(out.values())


_WORDS = {"RAW": ("written at", "read at"), "WAR": ("read at", "written at"),
          "WAW": ("written at", "written again at")}


def describe(r):
    a, b = _WORDS[r["kind"]]
    return (f"shared memory {a} {r['other_loc']} and {b} {r['loc']} by other warps of block "
            f"{r['block']} with no barrier between ({r['kind']}, {r['count']} words)")


def warn(races, kernel):
    for r in races:
        warnings.warn(f"kernel {kernel!r}: possible race: {describe(r)}. The GPU's answer may differ "
                      "from simgpu's, which ran the warps in one order; run check=True (racecheck) for "
                      "the full analysis.", SimGPUWarning, stacklevel=4)
