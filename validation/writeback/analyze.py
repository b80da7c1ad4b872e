#!/usr/bin/env python3
"""Before/after table of compare_dram.py's outputs (issue 22).

  python validation/writeback/analyze.py BEFORE_SUITE.json AFTER_SUITE.json BEFORE_HOLDOUT.json
      AFTER_HOLDOUT.json [--out validation/data/dram_writeback.json]

Per case: bytes the kernel dirtied in the model (written back + still dirty at the end),
the measured DRAM writes, the model's before and after, and the read+write error; per set,
the within-10 % counts and the cases that moved.
"""
import json
import sys


def load(p):
    with open(p) as f:
        return json.load(f)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    if out in args:
        args.remove(out)
    bs, as_, bh, ah = map(load, args[:4])
    res = {}
    for name, b, a in (("suite", bs, as_), ("holdout", bh, ah)):
        rows = []
        for k in b:
            if k not in a:
                continue
            x, y = b[k], a[k]
            stored = x["pred_write"] + x["dirty_end"]
            rows.append(dict(case=k, dirtied_MB=stored / 1e6, meas_write_MB=x["meas_write"] / 1e6,
                             meas_left_MB=(stored - x["meas_write"]) / 1e6,
                             before_write_MB=x["pred_write"] / 1e6, before_dirty_end_MB=x["dirty_end"] / 1e6,
                             after_write_MB=y["pred_write"] / 1e6, after_dirty_end_MB=y["dirty_end"] / 1e6,
                             before_read_MB=x["pred_read"] / 1e6, after_read_MB=y["pred_read"] / 1e6,
                             meas_read_MB=x["meas_read"] / 1e6,
                             before_error=x["error"], after_error=y["error"], before_ok=x["ok"], after_ok=y["ok"]))
        nb = sum(r["before_ok"] for r in rows)
        na = sum(r["after_ok"] for r in rows)
        moved = [r["case"] for r in rows if abs(r["after_error"] - r["before_error"]) > 1e-4]
        res[name] = dict(n=len(rows), within_10pct_before=nb, within_10pct_after=na, moved=moved, rows=rows)
        print(f"\n## {name}: {nb} -> {na} of {len(rows)} within 10 % (DRAM read+write)")
        print("| case | dirtied (model) MB | H200 write MB | model write before -> after MB | "
              "dirty at end before -> after MB | error before -> after |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            if r["dirtied_MB"] < 0.5 and r["case"] not in moved:
                continue
            flag = lambda ok: "" if ok else " **off**"
            print(f"| {r['case']} | {r['dirtied_MB']:.1f} | {r['meas_write_MB']:.1f} | {r['before_write_MB']:.1f} -> "
                  f"{r['after_write_MB']:.1f} | {r['before_dirty_end_MB']:.1f} -> {r['after_dirty_end_MB']:.1f} | "
                  f"{100 * r['before_error']:+.1f}{flag(r['before_ok'])} -> {100 * r['after_error']:+.1f}"
                  f"{flag(r['after_ok'])} |")
        print("moved:", ", ".join(moved) or "none")
    if out:
        with open(out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
