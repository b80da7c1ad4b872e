"""simgpu against the card on seqs.CASES (no GPU): the card's PTX (nan_seq.ptx) through the compiled
path's executor, bit for bit against nan_seq.npz.

    PYTHONPATH=. python validation/ptx_semantics/nan_seq/compare_nan_seq.py [DIR] [--sass-nan 0|1]

Prints per case: inputs, equal, and the first differing inputs (card, simgpu); writes
DIR/nan_seq_compare.json."""
import json
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import seqs  # noqa: E402


def one_per_line(ptx):
    """The PTX with each instruction of an inline-asm block (``{ a; b; }``, one line as nvcc writes
    it) on a line of its own: simgpu maps SASS to PTX by line (simgpu/sass/ptxlines.py) and reads
    nothing off a line holding several instructions; only whitespace changes, so ptxas' code is the
    same (the comparison with the card's cubin checks it)."""
    out = []
    for ln in ptx.splitlines():
        s = ln.strip()
        if s.startswith("{") and s.endswith("}") and ";" in s:
            out.append("\t{")
            for part in (p.strip() for p in s[1:-1].split(";")):
                while re.match(r"^[$\w]+:", part):       # a label: a line of its own
                    lab, part = part.split(":", 1)
                    out.append(lab + ":")
                    part = part.strip()
                if part:
                    out.append("\t" + part + ";")
            out.append("\t}")
        else:
            out.append(ln)
    return "\n".join(out) + "\n"


def run_case(ptx, case, ins):
    from simgpu.ptx import runner
    name, dst, srcs, _ = case
    n = len(ins[0])
    out = np.zeros(n, np.uint64)
    runner.run(ptx, name, ((n + 127) // 128,), (128,), (*[a.copy() for a in ins], out, np.int32(n)))
    return out


def main(argv):
    d = argv[0] if argv and not argv[0].startswith("--") else HERE
    if "--sass-nan" in argv:
        os.environ["SIMGPU_PTX_SASS_NAN"] = argv[argv.index("--sass-nan") + 1]
    with open(os.path.join(d, "nan_seq.ptx")) as f:
        ptx = one_per_line(f.read())
    z = np.load(os.path.join(d, "nan_seq.npz"))
    report = {}
    for case in seqs.CASES:
        name, dst = case[0], case[1]
        if f"{name}_out" not in z.files:        # a case added after this run
            continue
        ins = [z[f"{name}_in{k}"] for k in range(len(case[2]))]
        sim = run_case(ptx, case, ins)
        for suffix in ("", "_jit"):             # ptxas' cubin; numba-cuda's linker (where run)
            if f"{name}_out{suffix}" not in z.files:
                continue
            card, s = z[f"{name}_out{suffix}"], sim
            if dst == "f32":
                card, s = card & np.uint64(0xFFFFFFFF), s & np.uint64(0xFFFFFFFF)
            bad = np.flatnonzero(card != s)
            key = name + suffix
            report[key] = {"n": int(len(card)), "equal": int(len(card) - len(bad)),
                           "first": [{"in": [hex(int(a[i])) for a in ins], "card": hex(int(card[i])),
                                      "simgpu": hex(int(s[i]))} for i in bad[:6]]}
            print(f"{key:24s} {report[key]['equal']:4d}/{len(card):4d}", *(
                f"\n    in={e['in']} card={e['card']} sim={e['simgpu']}" for e in report[key]["first"][:3]))
    with open(os.path.join(d, "nan_seq_compare.json"), "w") as f:
        json.dump(report, f, indent=1)
    tot = sum(r["equal"] for r in report.values()), sum(r["n"] for r in report.values())
    print("total", *tot)


if __name__ == "__main__":
    main(sys.argv[1:])
