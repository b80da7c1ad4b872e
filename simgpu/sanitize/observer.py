"""The sanitizer as an observer of either executor.

IR path (exec/state.py's contract): ``attach``, ``chunk_begin``, ``mem(MemEvent)``,
``barrier(ins, mask)``, ``inst(ins, mask)`` (fences, warp collectives' member masks) and
``barrier_divergence`` (the interpreter's hook for a barrier that some live threads of a
block skipped and then reached another barrier).

PTX path: the same records (simgpu/ptx/emit.py builds them from the compiled code), with
``InstrEvent.pc``/``state`` where a check needs the executor (``attach`` is only called by the
IR interpreter).

Both feed one vectorised core: :meth:`Sanitizer.access` (shadow.py).
"""
from __future__ import annotations

import ast
import inspect
import re
import textwrap

import numpy as np

from ..exec.state import WARP, Observer
from . import overrun
from .findings import TOOLS, Finding, SanitizerReport
from .scratch import ScratchShadow, tracked_handles
from .shadow import MANY, NONE, BlockShadow, GlobalShadow, RowInit, expand, rep

_HAZARD = {"RAW": "read-after-write", "WAR": "write-after-read", "WAW": "write-after-write"}


def parse_tools(check):
    """check=True -> every tool; 'racecheck' or a list -> those; False/None -> none."""
    if check is None or check is False:
        return ()
    if check is True:
        return TOOLS
    names = [check] if isinstance(check, str) else list(check)
    out = []
    for n in names:
        n = str(n).strip().lower()
        if n in ("all", "true"):
            return TOOLS
        if n not in TOOLS:
            raise ValueError(f"unknown sanitizer tool {n!r}; known: {', '.join(TOOLS)} (or check=True)")
        out.append(n)
    return tuple(out)


class Sanitizer(Observer):
    """compute-sanitizer's racecheck, initcheck and synccheck on the modelled GPU, at the
    kernel's source lines (memcheck: the executors' own bounds checks, recorded by launch)."""

    def __init__(self, tools=TOOLS, kernel=""):
        self.tools = set(parse_tools(tools))
        self.report = SanitizerReport(kernel, [t for t in TOOLS if t in self.tools])
        self.race = "racecheck" in self.tools
        self.initc = "initcheck" in self.tools
        self.sync = "synccheck" in self.tools
        self.interp = None
        self._locs, self._loc_id = [""], {"": 0}
        self.launch = None
        self.globals = {}
        self._names = None
        self.scratch = {}               # id(handle) -> ScratchShadow: global scratch (initcheck)

    # -- locations ---------------------------------------------------------------------------
    def loc_id(self, loc):
        i = self._loc_id.get(loc)
        if i is None:
            i = self._loc_id[loc] = len(self._locs)
            self._locs.append(loc)
        return i

    def loc_of(self, i):
        return self._locs[int(i)] or None

    # -- observer contract -------------------------------------------------------------------
    def attach(self, interpreter):
        self.interp = interpreter

    def launch_begin(self, launch):
        self.launch = launch
        self.report.kernel = launch.kernel_name
        self.fenced = np.zeros(max(launch.n_blocks, 1), bool)
        self.globals = {}
        self.grid, self.block = launch.grid, launch.block
        self.unit = None                # bytes per shared shadow entry (_granularity)
        self.scratch = {id(h): ScratchShadow(h, dev, m) for h, dev, m in tracked_handles(launch.handles)} \
            if self.initc else {}

    def chunk_begin(self, chunk):
        self.chunk = chunk
        L = chunk.n_lanes
        self.bep = np.zeros(L, np.int32)
        self.wep = np.zeros(L, np.int32)
        self.tid = chunk.lane_tid.astype(np.int16)
        self.warp = (chunk.lane_tid // WARP).astype(np.int8)
        self.blk = (chunk.block_ids[chunk.lane_block]).astype(np.int32)
        smem = int(self.launch.smem_bytes or 0) if self.launch is not None else 0
        if self.unit is None:
            self.unit = self._granularity()
        self.shared = BlockShadow(chunk.n_blocks, -(-smem // self.unit)) if self.race or self.initc else None
        self.local = None

    def _granularity(self):
        """The narrowest access that can reach shared memory, in bytes: shadow entries of that
        size are exact (every access is aligned to its width and at least that wide) and 4x
        fewer than bytes for float32 kernels (the launch's ProgramFacts)."""
        facts = self.launch.facts if self.launch is not None else None
        return max(1, int(facts.shared_access_bytes)) if facts is not None else 1

    # the executors' events (both paths) --------------------------------------------------
    def mem(self, ev):
        m = ev.mask
        lanes = np.flatnonzero(m.arr)
        if not len(lanes) or ev.space not in ("shared", "local", "global"):
            return
        addr = np.broadcast_to(ev.addr, (self.chunk.n_lanes,))[lanes].astype(np.int64)
        self.access(ev.space, ev.kind, lanes, addr, int(ev.size), self.loc_id(_where(ev.inst)), ev.array)

    def barrier(self, ev):
        arr = ev.mask.arr
        if ev.scope == "block":
            self.bep[arr] += 1
        self.wep[arr] += 1              # syncwarp: its members are checked in inst() (IR path)

    def inst(self, ev):
        op = ev.ins.op
        if op in ("fence", "membar"):
            self.fenced[self.blk[ev.mask.arr]] = True
        elif op in ("shfl", "vote", "syncwarp") and self.sync and self.interp is not None:
            self._members_ir(ev.ins, ev.mask)     # the member mask's value: the IR's values

    def barrier_divergence(self, ins, lane, other_loc, other_lane=None):
        """`lane` reached barrier `ins` while live threads of its block wait at (IR path: skipped)
        the barrier at other_loc (Observer.barrier_divergence)."""
        if not self.sync:
            return False
        c = self.chunk
        if other_lane is None:
            message = ("Barrier error detected: divergent thread(s) in block -- a syncthreads() reached "
                       "by only some of the block's live threads; the others reach a different barrier")
            extra, label = {}, "the other threads of the block wait at"
        else:
            other = tuple(int(v) for v in c.thread_of(other_lane))
            message = ("Barrier error detected: divergent thread(s) in block -- threads of the block wait "
                       "at two different barriers")
            extra, label = {"other_thread": c.thread_of(other_lane)}, f"while thread {other} waits at"
        self.report.add(Finding(
            "synccheck", "divergent barrier", message, _where(ins), _strip_col(other_loc),
            block=c.block_of(lane), thread=c.thread_of(lane), details={"other_label": label}, **extra))
        return True

    def _members_ir(self, ins, mask):
        interp, c = self.interp, self.chunk
        member = np.broadcast_to(np.asarray(interp.value(ins.args[0])).astype(np.int64) & 0xFFFFFFFF,
                                 (c.n_lanes,))
        act = mask.arr.reshape(-1, WARP)
        live = (c.valid & ~interp.exited).reshape(-1, WARP)
        bit = np.int64(1) << np.arange(WARP, dtype=np.int64)
        first = np.argmax(act, axis=1)
        has = act.any(axis=1)
        mw = member.reshape(-1, WARP)[np.arange(act.shape[0]), first]
        named = ((mw[:, None] & bit[None, :]) != 0)
        missing = named & live & ~act & has[:, None]
        if missing.any():
            w = int(np.argmax(missing.any(axis=1)))
            lane = w * WARP + int(first[w])
            name = {"shfl": "shfl_*_sync", "vote": "vote (all/any/ballot)_sync", "syncwarp": "syncwarp"}[ins.op]
            self.report.add(Finding(
                "synccheck", "member mask",
                f"Invalid arguments: {name} member mask {int(mw[w]):#010x} names live lanes "
                f"{int((missing[w] * bit).sum()):#010x} that do not execute it here "
                "(inactive or diverged lanes)",
                _where(ins), block=c.block_of(lane), thread=c.thread_of(lane),
                count=int(missing.any(axis=1).sum())))

    # -- the core --------------------------------------------------------------------------------
    def access(self, space, kind, lanes, addr, w, loc, array):
        if space == "shared":
            if self.shared is None:
                return
            self._shared(kind, lanes, addr, w, loc, array)
        elif space == "local":
            if self.initc:
                self._local(kind, lanes, addr, w, loc, array)
        elif space == "global":
            if self.race or self.scratch:
                self._global(kind, lanes, addr, w, loc, array)

    def _shared(self, kind, lanes, off, w, loc, array):
        c, sh, g = self.chunk, self.shared, self.unit
        if w % g or int(np.bitwise_or.reduce(off)) % g:    # narrower than planned: bytes from now
            self._regrain()
            sh, g = self.shared, 1
        u = w // g                                          # shadow entries per lane
        uoff = off // g if g > 1 else off
        hi = int(uoff.max()) + u
        if hi > sh.size:
            sh.grow(hi)
        idx = expand(c.lane_block[lanes] * sh.size + uoff, u)
        tid = rep(self.tid[lanes], u)
        out = sh.access(kind, idx, tid, rep(self.warp[lanes], u), rep(self.bep[lanes], u),
                        rep(self.wep[lanes], u), loc)
        if self.initc and kind != "st":
            bad = out["uninit"]
            if bad.any():
                self._uninit("shared", lanes, off, w, loc, array, bad, u)
        if self.race:
            for hz in ("RAW", "WAR", "WAW"):
                h = out.get(hz)
                if h is not None and h.any():
                    who = out["r_tid"] if hz == "WAR" else out["w_tid"]
                    where = out["r_loc"] if hz == "WAR" else out["w_loc"]
                    self._hazard_shared(hz, lanes, u, loc, h, who, where)

    def _regrain(self):
        """An access narrower than the shadow's entries: re-make it per byte (each entry's
        state copied to its bytes)."""
        g, old = self.unit, self.shared
        new = BlockShadow(old.nblocks, old.size * g)
        for k, v in old.__dict__.items():
            if isinstance(v, np.ndarray):
                setattr(new, k, np.repeat(v, g))
        self.shared, self.unit = new, 1

    def _hazard_shared(self, hz, lanes, w, loc, h, who, where):
        c = self.chunk
        pos = np.flatnonzero(h)
        lane_pos = pos // w
        for other_loc in np.unique(where[pos]):
            sel = pos[where[pos] == other_loc]
            first = int(sel[0])
            lane = int(lanes[first // w])
            t_other = int(who[first])
            n = len(np.unique(lane_pos[where[pos] == other_loc]))
            other_thread = None if t_other < 0 else self._thread_tuple(t_other)
            self.report.add(Finding(
                "racecheck", hz,
                f"Race reported between {_HAZARD[hz]} accesses to __shared__ memory "
                "(no barrier between them)",
                self.loc_of(loc), self.loc_of(other_loc), space="shared",
                block=c.block_of(lane), thread=c.thread_of(lane),
                other_block=c.block_of(lane), other_thread=other_thread, count=n,
                details={"other_many": t_other < 0}))

    def _thread_tuple(self, t):
        bx, by, _ = self.block
        return (t % bx, (t // bx) % by, t // (bx * by))

    def _block_tuple(self, b):
        gx, gy, _ = self.grid
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def _uninit(self, space, lanes, off, w, loc, array, bad, units=None):
        c = self.chunk
        u = w if units is None else units
        lane_bad = bad.reshape(-1, u).any(axis=1) if u > 1 else bad
        k = int(np.argmax(lane_bad))
        lane = int(lanes[k])
        name, index = self._element(space, int(off[k]), array, w)
        what = f" of {name}{index}" if name else f" at byte offset {int(off[k])}"
        why = "no thread wrote it in this launch" if space != "global" else \
            "nothing wrote it since it was allocated (cuda.device_array: no initial contents)"
        self.report.add(Finding(
            "initcheck", "uninitialized read",
            f"Uninitialized __{space}__ memory read of size {w} bytes{what}: {why}", self.loc_of(loc), space=space, block=c.block_of(lane),
            thread=c.thread_of(lane), array=name, index=index, size=w,
            count=int(np.count_nonzero(lane_bad))))

    def _element(self, space, off, array, w=1):
        """(array name, '[index]') for a byte offset, where the array is known."""
        if array is not None and getattr(array, "shape", None):
            rel = off - (int(array.base_addr) if space != "global" else 0)
            i = rel // max(array.itemsize, 1)
            idx = _global_index(array, rel) if space == "global" else None
            if idx is None and 0 <= i < array.size:
                idx = np.unravel_index(i, array.shape)
            if idx is not None:
                shown = ", ".join(str(int(v)) for v in idx)
                return repr(self._user_name(array.name)), f"[{shown}]"
        offs = self.launch.facts.shared_symbols if self.launch is not None and self.launch.facts else {}
        if space == "shared" and offs:
            best = max(((o, n) for n, o in offs.items() if o <= off), default=None)
            if best is not None:
                user = self._ptx_shared_names(offs).get(best[1])
                name = repr(user) if user else f"shared array {best[1]!r}"
                return name, f"[{(off - best[0]) // max(w, 1)}]" + ("" if user else f" ({w}-byte elements)")
        return None, None

    def _ptx_shared_names(self, offs):
        """numba's PTX names the kernel's shared arrays _cudapy_smem_<n>, n increasing in
        source order: the kernel's `x = cuda.shared.array(...)` targets, where the counts
        agree (else none: the PTX symbol is shown)."""
        if self._names is None:
            self._names = {}
            syms = sorted((n for n in offs if re.fullmatch(r"_cudapy_smem_\d+", n)),
                          key=lambda n: int(n.rsplit("_", 1)[1]))
            program = self.launch.program if self.launch is not None else None
            targets = _shared_targets(getattr(program, "py_func", None))
            if syms and len(syms) == len(targets):
                self._names = dict(zip(syms, targets))
        return self._names

    def _user_name(self, key):
        """The kernel's variable for an IR array key ('shared@12:9' -> 'sh')."""
        if self._names is None:
            self._names = {}
            fn = getattr(self.interp, "fn", None)
            temp = {}
            for ins in _walk(getattr(fn, "body", ())):
                k = ins.attrs.get("key") if isinstance(getattr(ins, "attrs", None), dict) else None
                if k is not None and ins.op in ("shared_array", "local_array") and ins.dst:
                    temp[ins.dst] = k
                    self._names.setdefault(k, ins.dst.split(".")[0])
                elif ins.op == "copy" and ins.args and ins.args[0] in temp and ins.dst \
                        and not ins.dst.startswith("%"):
                    self._names[temp[ins.args[0]]] = ins.dst.split(".")[0]
        return self._names.get(key, key)

    def _local(self, kind, lanes, off, w, loc, array):
        c = self.chunk
        if self.local is None:
            self.local = RowInit(c.n_lanes, 64)
        hi = int(off.max()) + w
        if hi > self.local.size:
            self.local.grow(max(hi, 2 * self.local.size))
        idx = expand(lanes * self.local.size + off, w)
        if kind != "st":
            bad = ~self.local.init[idx]
            if bad.any():
                self._uninit("local", lanes, off, w, loc, array, bad)
        if kind != "ld":
            self.local.init[idx] = True

    def _global(self, kind, lanes, addr, w, loc, array):
        if kind == "atom" and not self.scratch:
            return                      # atomics are how blocks may share memory
        handles = self.launch.handles if self.launch is not None else ()
        base = int(array.base_addr) if array is not None else 0
        if array is not None and array.space == "global" and array.data.nbytes and \
                int(addr.min()) >= base and int(addr.max()) + w <= base + array.data.nbytes:
            groups = [(array, slice(None))]
        else:
            groups = self._by_handle(handles, addr)
        for h, pos in groups:
            off = addr[pos] - int(h.base_addr)
            ln = lanes[pos]
            ok = (off >= 0) & (off + w <= h.data.nbytes)
            if not ok.all():
                off, ln = off[ok], ln[ok]
            if not len(ln):
                continue
            s = self.scratch.get(id(h))
            if s is not None:                   # scratch memory (cuda.device_array): initcheck
                bad = s.access(kind, off, w)
                if bad is not None and bad.any():
                    self._uninit("global", ln, off, w, loc, h, bad, units=1)
            if not self.race or kind == "atom":     # atomics are how blocks may share memory
                continue
            g = self.globals.get(id(h))
            if g is None:
                g = self.globals[id(h)] = GlobalShadow(h.data.nbytes, h.name, max(h.data.itemsize, 1))
            if g.unit > 1 and (w % g.unit or int(np.bitwise_or.reduce(off)) % g.unit):
                g.regrain()
            u = w // g.unit
            idx = expand(off // g.unit if g.unit > 1 else off, u)
            blk = rep(self.blk[ln], u)
            out = g.access(kind, idx, blk, loc, self.fenced)
            for hz in ("RAW", "WAR", "WAW"):
                hm = out.get(hz)
                if hm is not None and hm.any():
                    who = out["r_blk"] if hz == "WAR" else out["w_blk"]
                    where = out["r_loc"] if hz == "WAR" else out["w_loc"]
                    self._hazard_global(hz, h, ln, off, u, loc, hm, who, where)

    def _by_handle(self, handles, addr):
        lo, hi = int(addr.min()), int(addr.max())
        for h in handles:
            b = int(h.base_addr)
            if b <= lo and hi < b + max(h.data.nbytes, 1):
                return [(h, slice(None))]
        out = []
        for h in handles:
            b = int(h.base_addr)
            pos = np.flatnonzero((addr >= b) & (addr < b + max(h.data.nbytes, 1)))
            if len(pos):
                out.append((h, pos))
        return out

    def _hazard_global(self, hz, h, lanes, off, w, loc, hm, who, where):
        c = self.chunk
        pos = np.flatnonzero(hm)
        for other_loc in np.unique(where[pos]):
            sel = pos[where[pos] == other_loc]
            first = int(sel[0])
            lane = int(lanes[first // w])
            b_other = int(who[first])
            name, index = self._element("global", int(off[first // w]), h)
            self.report.add(Finding(
                "racecheck", hz,
                f"Race reported between {_HAZARD[hz]} accesses to global memory"
                f"{' of ' + name + index if name else ''} by different blocks of one launch "
                "(only atomics order blocks)",
                self.loc_of(loc), self.loc_of(other_loc), space="global",
                block=c.block_of(lane), thread=c.thread_of(lane),
                other_block=None if b_other < 0 else self._block_tuple(b_other),
                array=name, index=index, count=len(np.unique(sel // w)),
                details={"other_many_blocks": b_other < 0}))

    # -- accesses past an end inside the driver's rounding (memcheck; sanitize/overrun.py) ----
    def add_overruns(self, records):
        if "memcheck" in self.tools:
            for f in overrun.findings(records):
                self.report.add(f)

    # -- faults the executors raise (memcheck; synccheck for .sync member masks) ---------------
    def add_fault(self, err):
        """Record a KernelError that stopped the launch as a finding (memcheck, or synccheck
        for a warp collective's member mask)."""
        text = str(err)
        msg = text
        prefix = f"in kernel {err.kernel!r}: " if err.kernel else ""
        if prefix and prefix in msg:
            msg = msg.split(prefix, 1)[1]
        cut = msg.rfind(" in block (")
        if cut > 0:
            msg = msg[:cut]
        tool = "synccheck" if ("member mask" in msg or "syncthreads" in msg or "barrier" in msg) \
            else "memcheck"
        loc = _strip_col(str(err.loc)) if err.loc is not None else "<unknown>"
        self.report.add(Finding(tool, "fault", msg, loc, block=err.block, thread=err.thread,
                                details={"text": text}))


def _global_index(h, off):
    """The index of the element of a global argument at byte offset `off` of its working
    buffer, from the memory layout of the array the launch works on (C, F or a strided view,
    in place or a copy: runtime/binding.py), or None."""
    work = h.work
    if not isinstance(work, np.ndarray) or work.shape != tuple(h.shape) or not work.ndim:
        return None
    r = h.data.__array_interface__["data"][0] + int(off) - work.__array_interface__["data"][0]
    idx = [0] * work.ndim
    for d in sorted(range(work.ndim), key=lambda d: -abs(work.strides[d])):
        st = work.strides[d]
        if st > 0 and work.shape[d] > 1:
            idx[d], r = divmod(r, st)
    if not (0 <= r < work.itemsize) or any(not 0 <= v < n for v, n in zip(idx, work.shape)):
        return None
    return tuple(idx)


def _shared_targets(py_func):
    """The variables a kernel assigns cuda.shared.array(...) to, in source order."""
    if py_func is None:
        return []
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(py_func)))
    except (OSError, TypeError, SyntaxError):
        return []
    out = []
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Assign)),
                       key=lambda n: (n.lineno, n.col_offset)):
        f = node.value.func if isinstance(node.value, ast.Call) else None
        if isinstance(f, ast.Attribute) and f.attr == "array" and isinstance(f.value, ast.Attribute) \
                and f.value.attr == "shared" and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.append(node.targets[0].id)
    return out


def _walk(stmts):
    """Every Instr of an IR body, nested regions included."""
    for st in stmts:
        if hasattr(st, "op"):
            yield st
        for attr in ("then", "orelse", "cond_body", "body"):
            sub = getattr(st, attr, None)
            if isinstance(sub, list):
                yield from _walk(sub)


def _strip_col(loc):
    """'file:line:col' -> 'file:line' (the pair used for deduplication)."""
    if not loc:
        return loc
    parts = loc.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return f"{parts[0]}:{parts[1]}"
    return loc


def _where(ins):
    """An instruction's place, 'file:line' (the compiled code's instructions with no source
    line: 'PTX line N')."""
    loc = getattr(ins, "loc", None)
    if loc is None:
        return "<unknown>"
    if not loc.line and "ptx" in getattr(ins, "attrs", {}):
        return f"PTX line {ins.id}"
    return f"{loc.file}:{loc.line}"
