"""Compare simgpu.ptx.semantics with the H200 bits measured by device_run.py.

    PYTHONPATH=. python validation/ptx_semantics/compare.py RESULTS_DIR [--fake] [--reduce OUT.npz]

RESULTS_DIR holds h200_ptx_semantics_meta.json and h200_ptx_semantics_part*.npz (device_run.py's
output) or a single h200_ptx_semantics.npz (the reduced, committed copy, whose meta is inside it).
Writes validation/data/h200_ptx_semantics.json: per case the number of inputs, bit-exact matches,
the first mismatches (inputs, GPU bits, table bits); for .approx/.full cases the GPU's and the
table's max error against the exact value (ulp of the destination format, relative, absolute),
whether the GPU is inside the bound the semantics docstring quotes, and how non-finite / zero /
flushed results compare bit for bit.  ``--fake`` makes GPU data from the table itself (a test of
this script).  ``--reduce`` writes a smaller npz (specials plus a sample of each case) for the repo.
"""
from __future__ import annotations

import glob
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
JSON_OUT = os.path.join(DATA, "h200_ptx_semantics.json")

# (metric, bound, domain) per approx instruction family, as the semantics docstring quotes them.
DOC_BOUNDS = {
    "rcp.approx.f32": ("ulp", 1.0, "all"), "div.approx.f32": ("ulp", 2.0, "b_2^-126..2^126"),
    "div.full.f32": ("ulp", 2.0, "all"), "sqrt.approx.f32": ("rel", 2.0 ** -23, "all"),
    "rsqrt.approx.f32": ("rel", 2.0 ** -22.9, "all"), "ex2.approx.f32": ("ulp", 2.0, "all"),
    "lg2.approx.f32": ("abs", 2.0 ** -22.6, "x_0.5..2"), "sin.approx.f32": ("abs", 2.0 ** -20.9, "pi"),
    "cos.approx.f32": ("abs", 2.0 ** -20.9, "pi"), "tanh.approx.f32": ("rel", 2.0 ** -10.987, "all"),
    "ex2.approx.f16": ("rel", 2.0 ** -9.9, "all"), "tanh.approx.f16": ("rel", 2.0 ** -9.9, "all"),
    "ex2.approx.bf16": ("rel", 2.0 ** -7, "all"), "tanh.approx.bf16": ("rel", 2.0 ** -7, "all"),
    "rcp.approx.f64": (None, None, "all"), "rsqrt.approx.f64": (None, None, "all"),
}
FMTS = {"f32": (np.float32, np.uint32, 23, -126), "f64": (np.float64, np.uint64, 52, -1022),
        "f16": (np.float16, np.uint16, 10, -14), "bf16": (None, np.uint16, 7, -126)}


def family(case):
    t = case["types"][-1]
    t = {"f16x2": "f16", "bf16x2": "bf16"}.get(t, t)
    return f"{case['op']}.{'full' if 'full' in case['mods'] else 'approx'}.{t}"


# ----------------------------------------------------------------- loading
def load(results_dir):
    """(meta, {case name: (inputs tuple, gpu bits)}) from a device_run output dir or the reduced npz."""
    if results_dir.endswith(".npz"):
        z = np.load(results_dir)
        meta = json.loads(bytes(z["meta"]).decode())
        files = {None: z}
    else:
        with open(os.path.join(results_dir, "h200_ptx_semantics_meta.json")) as f:
            meta = json.load(f)
        files = {int(p.rsplit("part", 1)[1][:-4]): np.load(p)
                 for p in glob.glob(os.path.join(results_dir, "h200_ptx_semantics_part*.npz"))}
    data = {}
    for e in meta["cases"]:
        if e.get("status") != "ok":
            continue
        z = files[None] if None in files else files[e["part"]]
        i = e["i"]
        ins = tuple(z[f"{i}_in{k}"] for k in range(len(e["srcs"])))
        data[e["name"]] = (ins, z[f"{i}_out"])
    return meta, data


# ----------------------------------------------------------------- the table
def table_bits(case, ins):
    """Evaluate simgpu.ptx.semantics on raw input bits; the result as raw bits of the destination."""
    from simgpu.ptx.semantics import lookup, np_dtype
    fn = lookup(case["op"], tuple(case["mods"]), tuple(case["types"]))
    if fn is None:
        return None
    args = []
    for x, t in zip(ins, case["srcs"]):
        args.append(x.astype(bool) if t == "pred" else x.view(np_dtype(t)))
    if case["imm"] is not None:
        args.append(np.uint32(case["imm"]))
    r = np.asarray(fn(*args))
    r = np.broadcast_to(r, ins[0].shape)
    if case["dst"] == "pred":
        return r.astype(np.uint8)
    return np.ascontiguousarray(r).view(C.bits_dtype(case["dst"]))


# ----------------------------------------------------------------- float helpers
def to_f64(t, u):
    if t == "bf16":
        return (u.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return u.view(FMTS[t][0]).astype(np.float64)


def lanes(t, arrays):
    """Split packed x2 bit arrays into one lane array (lo then hi); scalar types unchanged."""
    if t not in ("f16x2", "bf16x2"):
        return t, arrays
    out = [np.concatenate([(a & np.uint32(0xFFFF)).astype(np.uint16), (a >> np.uint32(16)).astype(np.uint16)])
           for a in arrays]
    return t[:-2], out


def ulp_of(t, v):
    _, _, man, emin = FMTS[t]
    e = np.floor(np.log2(np.maximum(np.abs(v), 2.0 ** emin)))
    return np.exp2(np.maximum(e, emin) - man)


def flush64(t, x, ftz):
    if not ftz:
        return x
    emin = FMTS[t][3]
    return np.where(np.abs(x) < 2.0 ** emin, np.copysign(0.0, x), x)


_EXACT = {"rcp": lambda a: 1.0 / a, "sqrt": np.sqrt, "rsqrt": lambda a: 1.0 / np.sqrt(a), "ex2": np.exp2,
          "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh}


def exact_value(case, t, xs):
    ftz = "ftz" in case["mods"]
    vals = [flush64(t, to_f64(t, x), ftz) for x in xs]
    with np.errstate(all="ignore"):
        if case["op"] == "div":
            return vals[0] / vals[1], vals
        return _EXACT[case["op"]](vals[0]), vals


def error_stats(case, t, ref, got, ftz, mask):
    """max ulp / rel / abs error of got (float64 values) vs ref over mask; also the arg of the max ulp."""
    with np.errstate(all="ignore"):
        err = np.abs(got - ref)
        ulp = err / ulp_of(t, ref)
        rel = err / np.abs(ref)
        mant = err - 0.5 * ulp_of(t, ref)       # lg2: error beyond the final rounding of e + lg2(m)
    if not mask.any():
        return {"n": 0}
    k = int(np.argmax(np.where(mask, ulp, -1)))
    return {"n": int(mask.sum()), "max_ulp": float(ulp[mask].max()), "max_rel": float(rel[mask].max()),
            "max_abs": float(err[mask].max()), "max_abs_beyond_half_ulp": float(mant[mask].max()),
            "log2_max_rel": float(np.log2(max(rel[mask].max(), 2.0 ** -200))),
            "log2_max_abs": float(np.log2(max(err[mask].max(), 2.0 ** -1100))), "argmax_ulp_index": k}


def approx_report(case, ins, gpu, tab):
    t, ins_l = lanes(case["types"][-1], list(ins))
    _, (gpu_l, tab_l) = lanes(case["types"][-1], [gpu, tab])
    ftz = "ftz" in case["mods"]
    ref, vals = exact_value(case, t, ins_l)
    g, tb = to_f64(t, gpu_l), to_f64(t, tab_l)
    emin = FMTS[t][3]
    maxf = {"f32": float(np.finfo(np.float32).max), "f64": float(np.finfo(np.float64).max), "f16": 65504.0,
            "bf16": float.fromhex("0x1.fep127")}[t]
    with np.errstate(all="ignore"):
        fin = np.isfinite(ref) & np.isfinite(g) & (np.abs(ref) <= maxf)
        regular = fin & (np.abs(ref) >= 2.0 ** emin)
        subn = fin & (ref != 0) & (np.abs(ref) < 2.0 ** emin) & (not ftz) & (t != "f64")
    fam = family(case)
    metric, bound, dom = DOC_BOUNDS.get(fam, (None, None, "all"))
    in_dom = np.ones(ref.shape, bool)
    if dom == "b_2^-126..2^126":
        b = np.abs(vals[1])
        in_dom = (b >= 2.0 ** -126) & (b <= 2.0 ** 126)
    elif dom == "x_0.5..2":
        in_dom = (vals[0] >= 0.5) & (vals[0] < 2.0)
    elif dom == "pi":
        in_dom = np.abs(vals[0]) <= np.pi
    rep = {"gpu": error_stats(case, t, ref, g, ftz, regular), "table": error_stats(case, t, ref, tb, ftz, regular)}
    if case["op"] in ("sin", "cos"):
        big = regular & (np.abs(vals[0]) <= 100 * np.pi)
        rep["gpu_100pi"] = error_stats(case, t, ref, g, ftz, big)
    rep["gpu_in_doc_domain"] = error_stats(case, t, ref, g, ftz, regular & in_dom)
    if metric is not None:
        key = {"ulp": "max_ulp", "rel": "max_rel", "abs": "max_abs", "abs_mant": "max_abs_beyond_half_ulp"}[metric]
        got = rep["gpu_in_doc_domain"].get(key)
        rep["doc_bound"] = {"metric": metric, "bound": bound, "domain": dom, "gpu_max": got,
                            "gpu_within": None if got is None else bool(got <= bound)}
    # the rest (non-finite, zero, flushed, out-of-range): bit-exact between GPU and table
    rep["subnormal_range"] = {"gpu": error_stats(case, t, ref, g, ftz, subn),
                              "table": error_stats(case, t, ref, tb, ftz, subn)}
    other = ~regular & ~subn
    gb, tbb = gpu_l[other], tab_l[other]
    eq = (gb == tbb)
    idx = np.flatnonzero(other)[~eq][:8]
    rep["special"] = {"n": int(other.sum()), "bit_equal": int(eq.sum()),
                      "mismatches": [_row(case, ins_l, gpu_l, tab_l, j, t) for j in idx]}
    # outside the doc domain for div.approx: show what the GPU does
    if dom == "b_2^-126..2^126":
        od = regular & ~in_dom
        rep["outside_doc_domain"] = {"n": int(od.sum()), "gpu_bit_equal_table": int((gpu_l[od] == tab_l[od]).sum()),
                                     "examples": [_row(case, ins_l, gpu_l, tab_l, j, t)
                                                  for j in np.flatnonzero(od & (gpu_l != tab_l))[:4]]}
    k = rep["gpu"].get("argmax_ulp_index")
    if k is not None:
        rep["gpu"]["worst"] = _row(case, ins_l, gpu_l, tab_l, k, t)
        rep["gpu"]["worst"]["exact"] = float(ref[k])
    rep["exact_bit_matches"] = int((gpu_l == tab_l).sum())
    return rep


def _hex(x, w):
    return f"{int(x):#0{w // 4 + 2}x}"


def _row(case, ins, gpu, tab, j, t=None):
    wi = [x.dtype.itemsize * 8 for x in ins]
    wo = gpu.dtype.itemsize * 8
    return {"in": [_hex(x[j], w) for x, w in zip(ins, wi)], "gpu": _hex(gpu[j], wo), "table": _hex(tab[j], wo)}


# ----------------------------------------------------------------- main comparison
def compare(meta, data, max_rows=8):
    with np.errstate(all="ignore"):
        return _compare(meta, data, max_rows)


def _compare(meta, data, max_rows):
    cases = {c["name"]: c for c in C.CASES}
    out = {"versions": meta.get("versions"), "cases": {}}
    for e in meta["cases"]:
        name = e["name"]
        if e.get("status") != "ok":
            out["cases"][name] = {"status": e.get("status"), "error": e.get("error", "")[:500]}
            continue
        case = cases[name]
        ins, gpu = data[name]
        tab = table_bits(case, ins)
        rec = {"status": "ok", "instr": case["instr"], "imm": case["imm"], "n": int(len(gpu)),
               "approx": case["approx"]}
        if tab is None:
            rec["status"] = "table_unsupported"
        elif case["approx"]:
            rec.update(approx_report(case, ins, gpu, tab))
        else:
            bad = np.flatnonzero(gpu != tab)
            rec["match"] = int(len(gpu) - len(bad))
            rec["mismatch"] = int(len(bad))
            rec["mismatches"] = [_row(case, ins, gpu, tab, j) for j in bad[:max_rows]]
        out["cases"][name] = rec
    return out


def fake_results(outdir, n_rand=200, perturb=True):
    """Device-shaped output made from the table itself (GPU := table), a few bits flipped."""
    os.makedirs(outdir, exist_ok=True)
    meta = {"versions": {"fake": True}, "cases": []}
    arrays = {}
    for i, case in enumerate(C.CASES):
        ins = C.make_inputs(case, n_rand)
        out = table_bits(case, ins).copy()
        if perturb and case["name"] in ("div.s32", "ex2.approx.f32"):
            out[5] ^= 1
        for k, x in enumerate(ins):
            arrays[f"{i}_in{k}"] = x
        arrays[f"{i}_out"] = out
        meta["cases"].append({"i": i, "name": case["name"], "srcs": case["srcs"], "status": "ok", "part": 0,
                              "n": len(out)})
    np.savez_compressed(os.path.join(outdir, "h200_ptx_semantics_part0.npz"), **arrays)
    with open(os.path.join(outdir, "h200_ptx_semantics_meta.json"), "w") as f:
        json.dump(meta, f)


def reduce_npz(meta, data, path, keep=400, keep_approx=3000, seed=1):
    """A smaller copy for the repository: each case's leading specials, a seeded sample, and (up to 2000)
    inputs where the GPU and the table differ."""
    rng = np.random.default_rng(seed)
    arrays, cases_meta = {}, []
    byname = {c["name"]: c for c in C.CASES}
    for e in meta["cases"]:
        if e.get("status") != "ok":
            cases_meta.append(e)
            continue
        ins, gpu = data[e["name"]]
        n = len(gpu)
        n_spec = C.n_special(byname[e["name"]])
        n_spec = 0 if n_spec > 6000 else n_spec
        lim = keep_approx if byname[e["name"]]["approx"] else keep
        head = np.arange(min(n_spec, n))
        rest = np.arange(len(head), n)
        tab = table_bits(byname[e["name"]], ins)
        differ = np.zeros(0, np.int64)
        if tab is not None:
            dif = tab != gpu
            if byname[e["name"]]["approx"]:     # only differences beyond a few ulp (flushes, NaN bits, ...)
                dif &= np.abs(tab.astype(np.int64) - gpu.astype(np.int64)) > 4
            differ = np.flatnonzero(dif)[:2000]
        pick = np.unique(np.concatenate([head, rng.choice(rest, min(len(rest), lim), replace=False), differ]))
        i = e["i"]
        for k, x in enumerate(ins):
            arrays[f"{i}_in{k}"] = x[pick]
        arrays[f"{i}_out"] = gpu[pick]
        cases_meta.append({**e, "n": int(len(pick)), "part": None})
    m = {**meta, "cases": cases_meta, "reduced": {"keep": keep, "keep_approx": keep_approx, "seed": seed}}
    arrays["meta"] = np.frombuffer(json.dumps(m).encode(), np.uint8)
    np.savez_compressed(path, **arrays)


def summary(rep):
    lines = []
    for name, r in rep["cases"].items():
        if r["status"] != "ok":
            lines.append(f"{name:32s} {r['status']}")
        elif r["approx"]:
            g = r["gpu"]
            db = r.get("doc_bound", {})
            lines.append(f"{name:32s} approx n={r['n']} gpu max {g.get('max_ulp', float('nan')):.3g} ulp "
                         f"rel 2^{g.get('log2_max_rel', float('nan')):.2f} abs 2^{g.get('log2_max_abs', float('nan')):.2f}"
                         f" | table {r['table'].get('max_ulp', float('nan')):.3g} ulp | doc {db.get('gpu_within')}"
                         f" | special {r['special']['bit_equal']}/{r['special']['n']}")
        elif r["mismatch"]:
            lines.append(f"{name:32s} MISMATCH {r['mismatch']}/{r['n']} e.g. {r['mismatches'][:2]}")
    n_ok = sum(1 for r in rep["cases"].values() if r["status"] == "ok" and not r["approx"] and not r["mismatch"])
    n_exact = sum(1 for r in rep["cases"].values() if r["status"] == "ok" and not r["approx"])
    lines.append(f"exact cases bit-identical: {n_ok}/{n_exact}")
    return "\n".join(lines)


def main(argv):
    src = argv[1]
    if "--fake" in argv:
        fake_results(src)
    meta, data = load(src)
    rep = compare(meta, data)
    out = argv[argv.index("--json") + 1] if "--json" in argv else JSON_OUT
    with open(out, "w") as f:
        json.dump(rep, f, indent=1, default=float)
    if "--reduce" in argv:
        with np.errstate(all="ignore"):
            reduce_npz(meta, data, argv[argv.index("--reduce") + 1])
    print(summary(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
