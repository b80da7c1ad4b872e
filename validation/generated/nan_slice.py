"""Where a campaign c2 kernel's NaN goes a different way: the first differing output element of
each kernel, traced through the compiled path's executor one instruction at a time, and the
NaN-carrying instructions of the stored value's backward slice (simgpu's values) beside the
card's final bits (issue 25 item 3).  No GPU.

    PYTHONPATH=. python validation/generated/nan_slice.py k0038,k0044 [OUT.json]
    PYTHONPATH=. python validation/generated/nan_slice.py all OUT.json    # c2_compare.json's differing

``NAN_SLICE_PTX=FILE`` runs the kernels' PTX from FILE ({kernel: PTX}, e.g. lto_ptx.py's c2_lto_ptx.json.gz)
instead of c2_ptx.json.xz."""
import sys, os, importlib, json
import numpy as np
os.environ["SIMGPU_PTX_BLOCKS"] = "0"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation/generated"))
import gen
import compare as C
from simgpu.ptx import executor as E, runner

C._init(os.path.join(ROOT, "validation/generated/c2_outputs.npz"),
        os.path.join(ROOT, "validation/generated/c2_device.json"),
        os.environ.get("NAN_SLICE_PTX") or os.path.join(ROOT, "validation/generated/c2_ptx.json.xz"))

def regs_of(o, out):
    if isinstance(o, tuple):
        if o and o[0] == "reg":
            out.append(o[1])
        else:
            for x in o[1:]:
                if isinstance(x, (tuple, list)):
                    regs_of(x, out)
    elif isinstance(o, list):
        for x in o:
            regs_of(x, out)
    return out

STATE = {}
def _run(self, max_steps=None):
    code = self.im.compiled
    want = STATE["lane"]; trace = STATE["trace"]
    with np.errstate(all="ignore"):
        while True:
            if self.conv:
                pc, lanes = self.upc, self.run_lanes
                if pc is None:
                    if not self.release_barrier():
                        return
                    continue
            else:
                sel = self._pick()
                if sel is None:
                    if not self.release_barrier():
                        return
                    continue
                pc, lanes = sel
            ins = code[pc]
            active = lanes is None or want in set(np.asarray(lanes).tolist())
            p = ins.ptx
            def val(r):
                a = self.regs.get((ins.func, r))
                if a is None:
                    return None
                v = a if a.ndim == 0 else a[want]
                v = np.asarray(v)
                if v.dtype == np.bool_:
                    return int(v)
                return int(v.view(f"u{v.dtype.itemsize}"))
            srcs = None
            if active:
                st = p.opcode.startswith("st")
                ops = p.operands if st else p.operands[1:]
                srcs = [(r, val(r)) for r in regs_of(ops, [])]
            ins.exec(self, lanes, pc)
            if active:
                d = p.operands[0] if p.operands else None
                dst = d[1] if isinstance(d, tuple) and d[0] == "reg" and not p.opcode.startswith("st") else None
                trace.append((p, srcs, dst, val(dst) if dst else None))
E.Executor._run = _run

def isnan(bits, t):
    if bits is None: return False
    if t in ("f32",) or (t in ("b32", "u32") and False):
        return (bits & 0x7f800000) == 0x7f800000 and (bits & 0x7fffff) != 0
    if t == "f64":
        return (bits & 0x7ff0000000000000) == 0x7ff0000000000000 and (bits & 0xfffffffffffff) != 0
    return False

def nanish(bits):
    if bits is None: return False
    if bits < (1 << 32):
        return (bits & 0x7f800000) == 0x7f800000 and (bits & 0x7fffff) != 0
    return (bits & 0x7ff0000000000000) == 0x7ff0000000000000 and (bits & 0xfffffffffffff) != 0

def analyse(name):
    num = int(name[1:])
    mod = importlib.import_module(f"gen_c2.batch_{num // 100:02d}")
    spec = next(s for s in mod.KERNELS if s["name"] == name)
    n = spec["grid"] * spec["block"]
    inputs = {k: np.array(C._REF[f"inputs/{k}"]) for k in gen.INPUTS}
    def launch(lane):
        outs = [C.poisoned(n, dt) for dt in spec["out_dtypes"]]
        acc = np.zeros(4, np.int64)
        args = tuple(inputs[x] for x in gen.INPUTS) + (acc, *outs)
        STATE["lane"] = lane; STATE["trace"] = []
        runner.run(C._PTX[name], name, spec["grid"], spec["block"], args)
        return outs, acc
    outs, acc = launch(0)
    lines = C.expr_lines(spec)
    res = {"name": name, "diffs": []}
    first = None
    for k, o in enumerate(outs):
        h = C._REF[f"{name}/o{k}"]
        bad = np.nonzero(C.bits(h) != C.bits(o))[0]
        if len(bad):
            res["diffs"].append({"o": k, "n": int(len(bad)), "expr": lines.get(f"o{k}"),
                                 "i": int(bad[0]), "card": hex(int(C.bits(h)[bad[0]])), "sim": hex(int(C.bits(o)[bad[0]]))})
            if first is None:
                first = (k, int(bad[0]), int(C.bits(o)[bad[0]]))
    if not C.bits(C._REF[f"{name}/acc"]).tolist() == C.bits(acc).tolist():
        res["diffs"].append({"o": "acc", "card": C._REF[f"{name}/acc"].tolist(), "sim": acc.tolist()})
    if first is None:
        return res
    k, i, simv = first
    if spec["block"] % 32:
        res["note"] = "block not warp multiple"
    launch(i)
    tr = STATE["trace"]
    # the store of the value
    si = None
    for j in range(len(tr) - 1, -1, -1):
        p, srcs, dst, v = tr[j]
        if p.opcode.startswith("st") and srcs and srcs[-1][1] == simv:
            si = j; break
    if si is None:
        res["slice"] = "store not found"; return res
    need = {tr[si][1][-1][0]}
    sl = []
    for j in range(si - 1, -1, -1):
        p, srcs, dst, v = tr[j]
        if dst in need:
            need.discard(dst)
            sl.append(j)
            for r, sv in (srcs or []):
                if r.startswith("%p"):
                    continue
                need.add(r)
    out = []
    for j in reversed(sl):
        p, srcs, dst, v = tr[j]
        if any(nanish(sv) for _, sv in srcs or []) or nanish(v):
            if p.opcode in ("ld",):
                continue
            out.append("%d %s.%s.%s [%s] -> %s" % (p.line, p.opcode, ".".join(p.mods), ".".join(p.types),
                        ", ".join(f"{r}={sv:#x}" if sv is not None else r for r, sv in srcs or []), hex(v) if v is not None else None))
    res["slice"] = out
    return res

if __name__ == "__main__":
    names = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] != "all" else \
        json.load(open(os.path.join(ROOT, "validation/generated/c2_compare.json")))["paths"]["ptx"]["differing"]
    outp = sys.argv[2] if len(sys.argv) > 2 else None
    allres = []
    for nm in names:
        try:
            r = analyse(nm)
        except Exception as e:
            r = {"name": nm, "error": repr(e)}
        allres.append(r)
        if not outp:
            print(json.dumps(r, indent=1))
    if outp:
        json.dump(allres, open(outp, "w"), indent=1)
