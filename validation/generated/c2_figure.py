"""Campaign c2's figure on the code the card ran (issue 25 item 3, session 33).

    python validation/generated/c2_figure.py LTO.json ASM.json ASM_NEW.json FRONTEND.json OUT.json

numba-cuda's default launch on the card linked every kernel with LTO, so what ran is nvJitLink's LTO
code; lto_ptx.py rebuilds its PTX here (the same NVVM and nvJitLink 13.0.88).  That rebuild is the
card's code only where this machine's front end makes the card's LLVM IR, i.e. where numba-cuda's
PTX here equals the card's ``inspect_asm()`` PTX (frontend_check.py).  Per kernel:

* LTO.json's class (compare.py --device-ptx on lto_ptx.py's PTX) where the front end is reproduced;
* where it is not, the class on the card's ``inspect_asm()`` PTX (the best stand-in left):
  ASM_NEW.json's (compare.py --only those kernels, this simgpu) else ASM.json's;
* kernels whose class is the same on both PTX (LTO.json and ASM.json) need no front-end check:
  FRONTEND.json may list only the others.

The choice depends on the PTX text only, never on the outputs."""
import json
import sys


def _kernels(p):
    return json.load(open(p))["paths"]["ptx"]["kernels"]


def main(argv):
    lto_p, asm_p, asm_new_p, fe_p, out_p = argv
    lto, asm, asm_new, fe = _kernels(lto_p), _kernels(asm_p), _kernels(asm_new_p), json.load(open(fe_p))
    rows, n_lto, unchecked = {}, 0, []
    for name in sorted(lto):
        if name not in fe:
            if lto[name]["class"] != asm[name]["class"]:
                unchecked.append(name)
            rec, src = dict(lto[name]), "lto_here (same class on both PTX)"
            n_lto += 1
        elif fe[name] is True:
            rec, src = dict(lto[name]), "lto_here"
            n_lto += 1
        else:
            rec, src = dict(asm_new.get(name, asm[name])), "card_asm"
        rec["ptx"] = src
        rows[name] = rec
    eq = sum(1 for r in rows.values() if r["class"] == "equal")
    diff = sorted(n for n, r in rows.items() if r["class"] != "equal")
    summary = {"kernels": len(rows), "equal": eq, "differ": len(diff), "ptx_lto_here": n_lto,
               "ptx_card_asm": len(rows) - n_lto, "front_end_checked": len(fe),
               "front_end_reproduced": sum(1 for v in fe.values() if v is True),
               "lto_here_all_equal": sum(1 for r in lto.values() if r["class"] == "equal"),
               "unchecked_with_other_class": unchecked}
    json.dump({"summary": summary, "differing": diff,
               "sources": {"lto": lto_p, "asm": asm_p, "asm_new": asm_new_p, "frontend": fe_p},
               "kernels": rows}, open(out_p, "w"), indent=1, sort_keys=True, default=str)
    print(json.dumps(summary))
    print("differing:", diff)


if __name__ == "__main__":
    main(sys.argv[1:])
