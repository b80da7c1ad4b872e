import csv, json, sys
import os
d = os.path.dirname(os.path.abspath(__file__)) + "/"
for c in ("none", "all"):
    labels = json.load(open(d + f"labels_{c}.json"))
    rows = [r for r in csv.reader(open(d + f"ncu_{c}.csv")) if r and r[0].isdigit()]
    hdr = None
    for r in csv.reader(open(d + f"ncu_{c}.csv")):
        if r and r[0] == "ID": hdr = r; break
    iw = hdr.index("dram__bytes_write.sum"); ir = hdr.index("dram__bytes_read.sum"); it = hdr.index("gpu__time_duration.sum")
    print("== cache-control", c, len(rows), len(labels))
    prev = None
    for lab, r in zip(labels, rows):
        w, rd, t = float(r[iw].replace(",","")) / 1e6, float(r[ir].replace(",","")) / 1e6, float(r[it].replace(",","")) / 1e3
        if lab == "clean":
            if prev: print(f"{prev:12s}  ... next clean writes back {w:8.2f} MB")
            continue
        prev = lab
        print(f"{lab:12s} read {rd:9.2f} MB  write {w:9.2f} MB  {t:8.1f} us", end="  ")
