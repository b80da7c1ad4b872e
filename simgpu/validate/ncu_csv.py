#!/usr/bin/env python3
"""The one reader of Nsight Compute's `ncu --csv --page raw` output, for simgpu and for the
validation suite.

ncu's output may start with "==PROF==" / "==WARNING==" lines (and the profiled program's own
output); then a header row ("ID","Process ID",...,"Kernel Name",...,metrics...), a units row
and one row per profiled kernel launch. Values are converted to plain numbers in base units
(bytes, ns, cycles, %, counts); the unit ncu printed is kept in `units`.

Launches are mapped to case names by order, using the order file the runner wrote
(profile_order*.json / micro_profile_order.json: launches[i].name), and cross-checked against
the Python function name that numba mangles into the kernel name.

  python3 validation/ncu_csv.py --pair suite_copies.csv:profile_order_copies.json [--pair ...] --out x.json

One implementation, two users: simgpu.validate.ncu imports it (parse_ncu_csv, load_ncu_csv),
and validation/ncu_csv.py loads THIS FILE by its path, because the suite runs where simgpu is
not installed.  So this module imports nothing but the standard library and nothing relative
(tests/test_validate.py checks that it works with simgpu unimportable).
"""
import argparse
import csv
import io
import json
import re

# ncu uses SI (1000-based) prefixes
_SCALE = {
    "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
    "nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9,          # -> ns
    "byte/second": 1.0, "kbyte/second": 1e3, "mbyte/second": 1e6, "gbyte/second": 1e9, "tbyte/second": 1e12,
    "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9,
    "cycle/nsecond": 1.0, "cycle/usecond": 1e-3, "cycle/second": 1e-9,      # -> cycles per ns (GHz)
}
_BASE_UNIT = {"kbyte": "byte", "mbyte": "byte", "gbyte": "byte", "tbyte": "byte",
              "usecond": "nsecond", "msecond": "nsecond", "second": "nsecond",
              "kbyte/second": "byte/second", "mbyte/second": "byte/second", "gbyte/second": "byte/second",
              "tbyte/second": "byte/second", "khz": "hz", "mhz": "hz", "ghz": "hz",
              "cycle/usecond": "cycle/nsecond", "cycle/second": "cycle/nsecond"}
# counts with a K/M/G prefix, e.g. "Kinst", "Msector", "Gcycle" (ncu's auto-scaled units)
_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_COUNT_UNITS = ("inst", "sector", "request", "cycle", "warp", "block", "thread", "wavefront")

ID_COLS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
           "Grid Size", "Device", "CC", "Function Name", "Demangled Name", "Block Size", "Grid Size")


def convert(value, unit):
    """Return (float or None, base unit)."""
    v = (value or "").strip()
    if v in ("", "n/a", "N/A", "-", "nan"):
        return None, unit
    v2 = v.replace(",", "") if re.fullmatch(r"-?[\d,]+(\.\d+)?([eE][-+]?\d+)?", v) else v
    try:
        x = float(v2)
    except ValueError:
        return None, unit
    u = (unit or "").strip()
    ul = u.lower()
    if ul in _SCALE:
        return x * _SCALE[ul], _BASE_UNIT.get(ul, u)
    if len(u) > 1 and u[0] in _PREFIX and u[1:] in _COUNT_UNITS:
        return x * _PREFIX[u[0]], u[1:]
    return x, u


def parse_csv(text):
    """Returns (header, units, rows) where rows are lists of strings (one per kernel launch)."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    hi = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if hi is None:
        return [], [], []
    header = rows[hi]
    rest = rows[hi + 1:]
    units = [""] * len(header)
    if rest and (rest[0][0] == "" or not re.fullmatch(r"\d+", rest[0][0])):
        units = rest[0]
        rest = rest[1:]
    data = [r for r in rest if r and re.fullmatch(r"\d+", r[0]) and len(r) == len(header)]
    data.sort(key=lambda r: int(r[0]))
    return header, units, data


def rows_to_dicts(header, units, data):
    out = []
    for r in data:
        d = {"_meta": {}, "metrics": {}, "units": {}}
        for h, u, v in zip(header, units, r):
            if h in ID_COLS:
                d["_meta"][h] = v
                continue
            x, bu = convert(v, u)
            d["metrics"][h] = x
            d["units"][h] = bu
            if x is None and v.strip() not in ("", "n/a"):
                d["_meta"].setdefault("unparsed", {})[h] = v
        out.append(d)
    return out


def map_to_cases(csv_text, order):
    """order: list of {'index', 'name', 'kernel'} in launch order. Returns {name: record}."""
    header, units, data = parse_csv(csv_text)
    recs = rows_to_dicts(header, units, data)
    res = {}
    problems = []
    if len(recs) != len(order):
        problems.append(f"{len(recs)} profiled rows vs {len(order)} launches in the order file")
    for i, (rec, o) in enumerate(zip(recs, order)):
        kname = rec["_meta"].get("Kernel Name", "")
        k = o.get("kernel", "")
        # ncu prints the demangled name, e.g. 'copy[v1,cw51...]'; the mangled one has '<len><name>'
        ok = (kname == k) or kname.startswith(k + "[") or kname.startswith(k + "(") or (f"{len(k)}{k}" in kname)
        if not ok:
            problems.append(f"row {i}: kernel name {kname[:80]!r} does not contain {o.get('kernel')!r}")
        res[o["name"]] = {"metrics": rec["metrics"], "units": rec["units"],
                          "kernel_name": kname, "ncu_id": rec["_meta"].get("ID"),
                          "block": rec["_meta"].get("Block Size"), "grid": rec["_meta"].get("Grid Size"),
                          "name_check": ok, **({"unparsed": rec["_meta"]["unparsed"]}
                                               if "unparsed" in rec["_meta"] else {})}
    return res, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pair", action="append", required=True, help="CSV:ORDER_JSON")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    allres, allprob = {}, {}
    for p in a.pair:
        c, o = p.split(":")
        order = json.load(open(o))["launches"]
        res, prob = map_to_cases(open(c).read(), order)
        allres.update(res)
        if prob:
            allprob[c] = prob
    json.dump({"cases": allres, "problems": allprob}, open(a.out, "w"), indent=1)
    print(f"{len(allres)} cases, problems: {allprob}")


if __name__ == "__main__":
    main()
