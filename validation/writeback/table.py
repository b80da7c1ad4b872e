#!/usr/bin/env python3
"""The write-back microbenchmarks' table (bench.py under ncu): per measured kernel, its DRAM
read and write bytes and time, and what the 512 MiB read after it wrote back (the dirty bytes it
left in the L2).  python3 validation/writeback/table.py DIR [none|all ...] (DIR: ncu_<c>.csv and
labels_<c>.json, as go.sh / go_h200.sh write them)."""
import csv
import json
import os
import sys


def table(d, c):
    labels = json.load(open(os.path.join(d, f"labels_{c}.json")))
    lines = list(csv.reader(open(os.path.join(d, f"ncu_{c}.csv"))))
    hdr = next(r for r in lines if r and r[0] == "ID")
    rows = [r for r in lines if r and r[0].isdigit()]
    iw, ir, it = (hdr.index(k) for k in ("dram__bytes_write.sum", "dram__bytes_read.sum", "gpu__time_duration.sum"))
    print("== cache-control", c, len(rows), len(labels))
    prev = None
    for lab, r in zip(labels, rows):
        w, rd, t = (float(r[i].replace(",", "")) for i in (iw, ir, it))
        if lab == "clean":
            if prev:
                print(f"  ... next clean writes back {w / 1e6:8.2f} MB")
            continue
        prev = lab
        print(f"{lab:12s} read {rd / 1e6:9.2f} MB  write {w / 1e6:9.2f} MB  {t / 1e3:8.1f} us", end="")


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for c in sys.argv[2:] or ["none", "all"]:
        if os.path.exists(os.path.join(d, f"ncu_{c}.csv")):
            table(d, c)
    print()
