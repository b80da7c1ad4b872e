#!/usr/bin/env python3
"""Assemble what came back from the GPU machine into validation/data/.

  python3 validation/collect_results.py RAWDIR[:TAG] [RAWDIR[:TAG] ...]

Each RAWDIR is an unpacked main.tgz (+ sass.tgz, reps.tgz) of validation/device_run.sh: it holds
suite/timing_*.json, suite/profile_order_*.json + suite/ncu_*.csv, micro*/micro_time.json,
micro*/micro_profile_order.json + micro*/ncu_micro.csv, env.txt, smi_clocks_*.csv, ncu_query_metrics.txt.
Later RAWDIRs override earlier ones for the same case or bench name.

Writes validation/data/: h200_timing.json, h200_ncu.json, h200_microbench.json, sass/{suite,micro}/*.sass
(instruction lines only), raw/ (ncu CSVs and reports, order files, logs, env), ncu_setup/.
"""
import csv
import glob
import gzip
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "microbench"))
import ncu_csv  # noqa: E402
import analyze  # noqa: E402

DATA = os.path.join(HERE, "data")
DROP_PREFIX = ("device__attribute", "nvlink__", "numa__", "c2clink__", "profiler__replayer_bytes")


def _load(p):
    with open(p) as f:
        return json.load(f)


def compact_sass(text):
    """Keep function headers and instruction lines (address + instruction), drop encodings and ELF noise."""
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+([@A-Z].*?;)", line)
        if m:
            out.append(f"/*{m.group(1)}*/ {m.group(2)}")
        elif re.match(r"\s*(\.text\.|Function :|\s*\.section\s+\.text)", line) or line.startswith(".text."):
            out.append(line.strip())
    return "\n".join(out) + "\n"


def smi_samples(raw):
    rows = []
    for p in sorted(glob.glob(os.path.join(raw, "smi_clocks_*.csv"))):
        with open(p) as f:
            for r in csv.reader(f):
                if len(r) < 7 or not r[1].strip().split()[0].isdigit():
                    continue
                try:
                    sm = float(r[1].split()[0])
                    mem = float(r[2].split()[0])
                    util = float(r[5].split()[0])
                    rows.append((sm, util, mem))
                except (ValueError, IndexError):
                    continue
    return rows


def env_summary(raw):
    p = os.path.join(raw, "env.txt")
    if not os.path.exists(p):
        return {}
    t = open(p).read()
    g = lambda rx: (re.search(rx, t, re.M).group(1).strip() if re.search(rx, t, re.M) else None)  # noqa: E731
    return {"card": g(r"\|\s+\d+\s+(NVIDIA [^|]*?)\s+(?:On|Off)\s+\|"), "driver": g(r"Driver Version:\s+([\d.]+)"),
            "cuda_version": g(r"CUDA Version:\s+([\d.]+)"), "python": g(r"^Python ([\d.]+)"),
            "numba": g(r"^numba\s+([\d.]+)"), "numba_cuda": g(r"^numba-cuda\s+([\d.]+)"),
            "numpy": g(r"^numpy\s+([\d.]+)"), "cupy": g(r"^cupy-cuda13x\s+([\d.]+)"),
            "ncu": g(r"^Version ([\d.]+ \(build \d+\).*)$") or g(r"(NVIDIA \(R\) Nsight Compute.*)"),
            "nvcc": g(r"(Cuda compilation tools, release [\d.]+, V[\d.]+)"), "kernel": g(r"^(Linux .*)$"),
            "ecc": g(r"ECC Mode\s+Current\s+:\s+(\w+)"), "power_limit": g(r"Current Power Limit\s+:\s+([\d.]+ W)"),
            "max_sm_clock": g(r"Max Clocks\s+Graphics\s+:\s+\d+ MHz\s+SM\s+:\s+(\d+ MHz)"),
            "memory_clock": g(r"Max Clocks\s+Graphics[\s\S]*?Memory\s+:\s+(\d+ MHz)"),
            "date_utc": g(r"== date\n(.*)")}


def main(raws):
    os.makedirs(DATA, exist_ok=True)
    timing = {"cases": {}}
    ncu_cases, ncu_problems, units = {}, {}, {}
    dev_attrs = {}
    mtime, mncu, mextra = {}, {}, {}
    smi = []
    envs = []
    raw_out = os.path.join(DATA, "raw")
    os.makedirs(raw_out, exist_ok=True)
    for ri, raw in enumerate(raws):
        raw, _, tag = raw.partition(":")
        tag = tag or f"set{ri + 1}"
        envs.append(env_summary(raw))
        smi += smi_samples(raw)
        for p in sorted(glob.glob(os.path.join(raw, "suite", "timing_*.json"))):
            d = _load(p)
            timing.setdefault("runner_provenance", d["provenance"])
            for n, c in d["cases"].items():
                timing["cases"][n] = c
        for p in sorted(glob.glob(os.path.join(raw, "suite", "profile_order_*.json"))):
            mod = p.split("profile_order_")[1][:-5]
            cp = os.path.join(raw, "suite", f"ncu_{mod}.csv")
            if not os.path.exists(cp):
                continue
            order = _load(p)
            text = open(cp).read()
            res, prob = ncu_csv.map_to_cases(text, order["launches"])
            if prob:
                ncu_problems[mod] = prob
            for n, r in res.items():
                for k in list(r["metrics"]):
                    if k.startswith("device__attribute"):
                        dev_attrs[k] = r["metrics"][k]
                    if k.startswith(DROP_PREFIX):
                        r["metrics"].pop(k)
                        r["units"].pop(k, None)
                units.update({k: u for k, u in r["units"].items() if u})
                r.pop("units")
                ncu_cases[n] = r
            shutil.copy(cp, os.path.join(raw_out, f"suite_ncu_{mod}.csv"))
            shutil.copy(p, os.path.join(raw_out, f"suite_profile_order_{mod}.json"))
            rep = os.path.join(raw, "suite", f"ncu_{mod}.ncu-rep")
            if os.path.exists(rep):
                shutil.copy(rep, os.path.join(raw_out, f"suite_{mod}.ncu-rep"))
        for md in sorted(glob.glob(os.path.join(raw, "micro*"))):
            mdn = os.path.basename(md)
            tp = os.path.join(md, "micro_time.json")
            if os.path.exists(tp):
                d = _load(tp)
                mtime.update(d["benches"])
                if d.get("memcpy_d2d"):
                    mextra.setdefault("memcpy_d2d_runs", []).append(d["memcpy_d2d"])
                mextra.setdefault("provenance", d["provenance"])
                for k in ("clocks_before", "clocks_after"):
                    mextra.setdefault(k, []).append(d.get(k))
            op, cp = os.path.join(md, "micro_profile_order.json"), os.path.join(md, "ncu_micro.csv")
            if os.path.exists(op) and os.path.exists(cp):
                res, prob = ncu_csv.map_to_cases(open(cp).read(), _load(op)["launches"])
                if prob:
                    ncu_problems[f"{tag}_{mdn}"] = prob
                for r in res.values():
                    for k in list(r["metrics"]):
                        if k.startswith(DROP_PREFIX):
                            r["metrics"].pop(k)
                            r["units"].pop(k, None)
                mncu.update(res)
                shutil.copy(cp, os.path.join(raw_out, f"{tag}_{mdn}_ncu.csv"))
                shutil.copy(op, os.path.join(raw_out, f"{tag}_{mdn}_profile_order.json"))
                rep = os.path.join(md, "ncu_micro.ncu-rep")
                if os.path.exists(rep):
                    shutil.copy(rep, os.path.join(raw_out, f"{tag}_{mdn}.ncu-rep"))
            for lg in ("time_log.txt", "ncu_micro.log"):
                if os.path.exists(os.path.join(md, lg)):
                    shutil.copy(os.path.join(md, lg), os.path.join(raw_out, f"{tag}_{mdn}_{lg}"))
            for s in glob.glob(os.path.join(md, "sass", "*.sass")):
                os.makedirs(os.path.join(DATA, "sass", "micro"), exist_ok=True)
                with open(os.path.join(DATA, "sass", "micro", os.path.basename(s)), "w") as f:
                    f.write(compact_sass(open(s).read()))
        for s in glob.glob(os.path.join(raw, "suite", "sass", "*.sass")):
            os.makedirs(os.path.join(DATA, "sass", "suite"), exist_ok=True)
            with open(os.path.join(DATA, "sass", "suite", os.path.basename(s)), "w") as f:
                f.write(compact_sass(open(s).read()))
        for s in glob.glob(os.path.join(raw, "suite", "sass", "*.ptx")):
            os.makedirs(os.path.join(DATA, "ptx", "suite"), exist_ok=True)
            shutil.copy(s, os.path.join(DATA, "ptx", "suite", os.path.basename(s)))
        for f in ("env.txt", "driver.log", "smoke.txt", "metrics_check.log", "ncu_query_metrics_suffix.txt",
                  "ncu_sections_list.txt", "ncu_WarpStateStats.section"):
            if os.path.exists(os.path.join(raw, f)):
                shutil.copy(os.path.join(raw, f), os.path.join(raw_out, f"{tag}_{f}"))
        for f in glob.glob(os.path.join(raw, "smi_clocks_*.csv")):
            shutil.copy(f, os.path.join(raw_out, f"{tag}_{os.path.basename(f)}"))
        for f in glob.glob(os.path.join(raw, "suite", "*.log")) + glob.glob(os.path.join(raw, "suite", "time_log.txt")):
            shutil.copy(f, os.path.join(raw_out, f"{tag}_suite_{os.path.basename(f)}"))
        q = os.path.join(raw, "ncu_query_metrics.txt")
        if os.path.exists(q):
            with open(q, "rb") as fi, gzip.open(os.path.join(raw_out, "ncu_query_metrics.txt.gz"), "wb") as fo:
                fo.write(fi.read())
        for f in ("metrics_suite.txt", "metrics_micro.txt", "metrics_check.json"):
            if os.path.exists(os.path.join(raw, f)):
                os.makedirs(os.path.join(DATA, "ncu_setup"), exist_ok=True)
                shutil.copy(os.path.join(raw, f), os.path.join(DATA, "ncu_setup", f))

    env = next((e for e in envs if e), {})
    chk = _load(os.path.join(DATA, "ncu_setup", "metrics_check.json")) \
        if os.path.exists(os.path.join(DATA, "ncu_setup", "metrics_check.json")) else {}
    prov = {
        "card": env.get("card"), "driver": env.get("driver"), "cuda_version": env.get("cuda_version"),
        "numba": env.get("numba"), "numba_cuda": env.get("numba_cuda"), "numpy": env.get("numpy"),
        "python": env.get("python"), "ncu": env.get("ncu"), "nvcc": env.get("nvcc"), "os_kernel": env.get("kernel"),
        "ecc": env.get("ecc"), "power_limit": env.get("power_limit"), "max_sm_clock": env.get("max_sm_clock"),
        "memory_clock": env.get("memory_clock"), "date": "2026-11-30", "date_utc_of_runs": [e.get("date_utc")
                                                                                             for e in envs],
        "machine": "device tool kind nvidia-h200 (one H200 SXM, Firecracker VM); card settings untouched",
        "runs": [
            "call 1: bash validation/device_run.sh \"env metrics micro_time micro_profile suite_time\" 555",
            "call 2 (same machine, warm): bash validation/device_run.sh \"suite_profile\" 555",
            "call 3 (fresh machine): MICRO_ONLY='chaseu_|bw8|read8' MICRO_DIR=micro3 bash validation/device_run.sh "
            "\"env micro_time micro_profile\" 400",
        ],
    }
    tprov = dict(prov)
    tprov["command"] = "python3 validation/run_suite.py --out /tmp/res/suite --mode time --modules MODULE " \
                       "(one process per module, see validation/device_run.sh stage suite_time)"
    tprov["timing_method"] = ("CUDA events around one launch; each launch preceded by (flushed) a read of a 512 MiB "
                              "buffer and always by a 1-warp ~80 us spin kernel so the start event does not wait "
                              "for host submission; median of up to 50 launches (fewer for launches > ~10 ms: "
                              "reps = min(50, max(5, 0.5 s / t))); 'warm' = same without the flush")
    timing["provenance"] = tprov
    with open(os.path.join(DATA, "h200_timing.json"), "w") as f:
        json.dump(timing, f, indent=1)

    nprov = dict(prov)
    nprov["command"] = ("ncu --clock-control none --metrics \"$(cat metrics_suite.txt)\" -f -o ncu_MODULE python3 "
                        "validation/run_suite.py --out /tmp/res/suite --mode profile --modules MODULE; then ncu -i "
                        "ncu_MODULE.ncu-rep --csv --page raw --print-units base (default replay mode kernel, default "
                        "--cache-control all: caches flushed before every replay pass)")
    ncu_out = {"provenance": nprov,
               "metrics_requested": chk.get("suite", {}).get("requested"),
               "metrics_refused": chk.get("suite", {}).get("refused"),
               "units": units, "device_attributes": dev_attrs,
               "mapping_problems": ncu_problems, "cases": ncu_cases,
               "notes": ["every metric comes with the rollups ncu prints in the raw page (.sum/.avg/.min/.max where "
                         "they exist); values converted to base units (byte, nsecond, cycle, %, counts)",
                         "hist_global_*: ncu's gpu__time_duration is ~2x the event-timed duration for the 256-bin "
                         "uniform case (atomics under profiling); prefer h200_timing.json for time",
                         "lts__t_sector_hit_rate.pct counts stores as hits and on H200 does not read as a plain "
                         "hit rate for re-read data (see h200_microbench.json l2.note); DRAM bytes are reliable"]}
    with open(os.path.join(DATA, "h200_ncu.json"), "w") as f:
        json.dump(ncu_out, f, indent=1)

    mextra["memcpy_d2d"] = (mextra.get("memcpy_d2d_runs") or [None])[0]
    summary = analyze.analyze(mtime, mncu, mextra, smi)
    mprov = dict(prov)
    mprov["command"] = ("python3 validation/microbench/run_micro.py --out DIR --mode time; ncu --clock-control none "
                        "--kernel-name-base mangled --kernel-name 'regex:.*mb_.*' --metrics \"$(cat metrics_micro.txt)\" "
                        "-o ncu_micro python3 validation/microbench/run_micro.py --out DIR --mode profile")
    micro = {"provenance": mprov, "summary": summary,
             "memcpy_d2d_runs": mextra.get("memcpy_d2d_runs"),
             "nvidia_smi_clocks_around_runs": {k: mextra.get(k) for k in ("clocks_before", "clocks_after")},
             "benches": {n: {"group": r.get("group"), "params": r.get("params"), "grid": r.get("grid"),
                             "block": r.get("block"), "jit": r.get("jit"), "resources": r.get("resources"),
                             "timing": {m: {k: v for k, v in r["timing"][m].items() if k != "all_us"}
                                        for m in ("flushed", "warm")} if "timing" in r else None,
                             "launch_overhead": r.get("launch_overhead"), "error": r.get("error"),
                             "sass_opcodes": r.get("sass_opcodes"),
                             "ncu": mncu.get(n, {}).get("metrics")}
                         for n, r in mtime.items()},
             "ncu_units": {k: u for r in mncu.values() for k, u in r["units"].items() if u},
             "mapping_problems": {k: v for k, v in ncu_problems.items() if "micro" in k}}
    with open(os.path.join(DATA, "h200_microbench.json"), "w") as f:
        json.dump(micro, f, indent=1)
    print("cases timed:", len(timing["cases"]), "profiled:", len(ncu_cases), "benches:", len(mtime),
          "profiled:", len(mncu), "problems:", ncu_problems)


if __name__ == "__main__":
    main(sys.argv[1:])
