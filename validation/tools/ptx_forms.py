"""The PTX instruction forms simgpu is known to meet, for tests/test_ptx_table_coverage.py.

    python -m pytest --ptx-forms /tmp/forms -p no:randomly      # record what the tests compile
    python validation/tools/ptx_forms.py /tmp/forms              # merge into tests/data/ptx_forms.json

The stored PTX under validation/ is read by the test itself; this file holds what the tests'
kernels (numba.cuda, hand-written PTX) compile to, which is not stored as PTX.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "data", "ptx_forms.json")


def main(dirs):
    forms = set()
    if os.path.exists(OUT):
        with open(OUT) as f:
            forms |= {(x[0], tuple(x[1]), tuple(x[2]))
                      for x in json.load(f)["forms"]}
    for d in dirs:
        for p in glob.glob(os.path.join(d, "forms-*.json")):
            with open(p) as f:
                forms |= {(x[0], tuple(x[1]), tuple(x[2])) for x in json.load(f)}
    with open(OUT, "w") as f:
        json.dump({"about": "PTX instruction forms (opcode, modifiers, types) that the test suite's "
                            "kernels compile to; made by validation/tools/ptx_forms.py",
                   "forms": sorted([o, list(m), list(t)] for o, m, t in forms)}, f, indent=0)
    print(len(forms), "forms ->", os.path.relpath(OUT))


if __name__ == "__main__":
    main(sys.argv[1:])
