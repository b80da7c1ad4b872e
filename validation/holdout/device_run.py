#!/usr/bin/env python3
"""Measure the HOLDOUT kernels (validation/holdout/kernels.py) on a real GPU: numba.cuda run
checked against numpy, CUDA-event times, resources, SASS, and Nsight Compute counters.

On the GPU machine, from the repository root (one command does everything):

  python3 validation/holdout/device_run.py all --out /tmp/holdout --export "$OUT" [--budget 480] [--only REGEX]

writes /tmp/holdout/h200_holdout.json (provenance, per case: check, resources, event timing, ncu
metrics) and h200_holdout_sass.json (SASS and PTX per case), plus logs, ncu reports and CSVs;
--export copies the two JSON files and an archive of the rest (holdout_raw.tgz) to $OUT.  Stages (each a
subprocess, each bounded by a timeout, so that one crash or hang loses only its part):

  time     per case: args from np.random.default_rng(0) (outputs poisoned), jit, launch once,
           check against the case's numpy reference, then time with CUDA events (median of up to
           --reps launches, each after an L2 flush, and warm) -- validation/_common.py's Timer.
           A case that raises a sticky CUDA error ends the process; the stage restarts after it.
  profile  run under `ncu --clock-control none --metrics <list>`: per case, build args, compile,
           launch exactly once; the order file maps ncu's rows back to cases.  Cases are
           profiled in chunks (one ncu process each).
  merge    ncu CSV (simgpu/validate/ncu_csv.py, loaded by path) + timing -> h200_holdout.json.

Metrics: validation/data/ncu_setup/metrics_suite.txt (the list the calibration suite used,
already checked against this ncu on an H200) if present, else the core list below.
Locally, without a GPU:  NUMBA_ENABLE_CUDASIM=1 VALIDATION_TINY=1 python3 \
  validation/holdout/device_run.py time --out /tmp/h  (checks the harness and references).
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VAL = os.path.dirname(HERE)
ROOT = os.path.dirname(VAL)
sys.path.insert(0, VAL)
import _common as C  # noqa: E402  (patches np.row_stack before numba.cuda is imported)
import numpy as np  # noqa: E402

CORE_METRICS = [
    "gpu__time_duration.sum", "smsp__inst_executed.sum", "launch__registers_per_thread",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "sm__cycles_elapsed.avg", "smsp__thread_inst_executed.sum",
]


def load_kernels():
    spec = importlib.util.spec_from_file_location("holdout_kernels", os.path.join(HERE, "kernels.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def select(cases, only=None, names=None):
    out = [c for c in cases if (not only or re.search(only, c["name"])) and (names is None or c["name"] in names)]
    return out


def meta(c):
    return {"grid": list(c["grid"]), "block": list(c["block"]), "tags": list(c["tags"]), "outputs": list(c["outputs"]),
            "tol": c.get("tol"), "source": c.get("source"), "notes": c.get("notes"),
            "kernel": c["kernel"].__name__}


# ------------------------------------------------------------------------------------------------
def stage_time(a):
    from numba import cuda
    K = load_kernels()
    path = os.path.join(a.out, "timing.json")
    res = json.load(open(path)) if os.path.exists(path) else {"provenance": C.provenance(), "cases": {}}
    sass_path = os.path.join(a.out, "sass.json")
    sass = json.load(open(sass_path)) if os.path.exists(sass_path) else {}
    timer = C.Timer()
    todo = [c for c in select(K.CASES, a.only) if c["name"] not in res["cases"]]
    for c in todo:
        name = c["name"]
        rec = meta(c)
        res["cases"][name] = rec | {"error": "started, not finished (process died?)"}
        C.write_json(path, res)
        t0 = time.time()
        try:
            disp = cuda.jit(c["kernel"])
            host = c["args"](np.random.default_rng(0))
            dargs = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in host]
            ker, at = C.compile_for(disp, dargs)
            rec["argtypes"] = [str(t) for t in at]
            rec["resources"] = C.resources(ker)
            launch_cfg = disp[tuple(c["grid"]), tuple(c["block"])]

            def launch():
                launch_cfg(*dargs)
            launch()
            cuda.synchronize()
            rec["check"] = C.check_case(c, host, dargs)
            if not a.no_sass:
                s, how = C.get_sass(ker)
                sass[name] = {"sass": s, "sass_method": how, "ptx": C.get_ptx(ker)}
                rec["sass_opcodes"] = C.sass_opcodes(s)
                C.write_json(sass_path, sass)
            rec["timing"] = C.Timer.measure(timer, launch, reps=a.reps, budget_s=a.budget)
            for m in ("flushed", "warm"):
                rec["timing"][m].pop("all_us", None) if a.short else None
            rec.pop("error", None)
            chk = rec["check"]["ok"] if rec.get("check") else "n/a"
            C.log(f"{name}: flushed {rec['timing']['flushed']['median_us']:.1f} us, warm "
                  f"{rec['timing']['warm']['median_us']:.1f} us, regs {rec['resources'].get('regs_per_thread')}, "
                  f"check {chk} ({rec['check'] and {k: v.get('msg') for k, v in rec['check'].items() if k != 'ok'}}), "
                  f"{time.time() - t0:.1f}s")
        except Exception as e:  # noqa: BLE001
            rec["error"] = C.fmt_exc(e)
            C.log(f"!! {name} FAILED: {e!r}")
            res["cases"][name] = rec
            C.write_json(path, res)
            if any(s in repr(e) for s in ("CUDA_ERROR_ILLEGAL", "LAUNCH_FAILED", "UNKNOWN", "MISALIGNED")):
                C.log("!! sticky CUDA error: this process stops, the next one continues after this case")
                sys.exit(3)
        finally:
            dargs = host = launch_cfg = None
        res["cases"][name] = rec
        C.write_json(path, res)
    C.log(f"time stage: {len(res['cases'])} cases recorded -> {path}")


def stage_profile(a):
    from numba import cuda
    K = load_kernels()
    names = set(a.names.split(",")) if a.names else None
    order = {"provenance_date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "launches": [], "errors": {}}
    path = os.path.join(a.out, f"profile_order_{a.tag}.json")
    for c in select(K.CASES, a.only, names):
        name = c["name"]
        try:
            disp = cuda.jit(c["kernel"])
            host = c["args"](np.random.default_rng(0))
            dargs = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in host]
            C.compile_for(disp, dargs)
            disp[tuple(c["grid"]), tuple(c["block"])](*dargs)
            cuda.synchronize()
            order["launches"].append({"index": len(order["launches"]), "name": name, "kernel": c["kernel"].__name__})
            C.log(f"PROFILED {name}")
        except Exception as e:  # noqa: BLE001
            order["errors"][name] = C.fmt_exc(e)
            C.log(f"!! {name} FAILED under ncu: {e!r}")
        finally:
            dargs = host = None
        C.write_json(path, order)


# ------------------------------------------------------------------------------------------------
def _bounded(cmd, timeout, log, env=None):
    C.log(f"$ {' '.join(cmd)[:300]}  (timeout {timeout:.0f}s)")
    t0 = time.time()
    with open(log, "a") as f:
        try:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=max(timeout, 5), env=env)
            rc = r.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    C.log(f"  -> rc={rc} in {time.time() - t0:.0f}s")
    return rc


def metrics_list():
    p = os.path.join(VAL, "data", "ncu_setup", "metrics_suite.txt")
    if os.path.exists(p):
        ms = [m for m in open(p).read().strip().split(",") if m]
        return list(dict.fromkeys(CORE_METRICS + ms)), p
    return CORE_METRICS, "CORE_METRICS"


def stage_all(a):
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()
    left = lambda: a.budget - (time.time() - t_start)  # noqa: E731
    me = [sys.executable, os.path.abspath(__file__)]
    only = ["--only", a.only] if a.only else []
    env_txt = {}
    for k, cmd in (("nvidia_smi", "nvidia-smi"), ("nvidia_smi_q", "nvidia-smi -q -d CLOCK,POWER,PERFORMANCE"),
                   ("uname", "uname -a")):
        env_txt[k] = C._run(cmd)
    # 1. time (restart after a sticky error, at most 4 times)
    for attempt in range(5):
        rc = _bounded(me + ["time", "--out", a.out, "--reps", str(a.reps)] + only,
                      min(left() * 0.45, 300), os.path.join(a.out, "time_log.txt"))
        if rc != 3:
            break
    timing = json.load(open(os.path.join(a.out, "timing.json"))) if os.path.exists(
        os.path.join(a.out, "timing.json")) else {"cases": {}}
    # 2. profile in chunks; cases whose time stage died with a sticky error are left out
    K = load_kernels()
    ok_names = [c["name"] for c in select(K.CASES, a.only)
                if "started, not finished" not in str(timing["cases"].get(c["name"], {}).get("error", ""))]
    ncu = C.find_ncu()
    metrics, msrc = metrics_list()
    # 2a. the core metrics for every case in one ncu process (few replay passes: cheap, and it
    #     guarantees the essentials even if the full list runs out of time)
    runs = []   # (tag, kind, rc)

    def profile(tag, kind, names, mlist, timeout):
        rep = os.path.join(a.out, f"ncu_{tag}")
        rc = _bounded([ncu, "--clock-control", "none", "--metrics", ",".join(mlist), "-f", "-o", rep]
                      + me + ["profile", "--out", a.out, "--tag", tag, "--names", ",".join(names)],
                      timeout, os.path.join(a.out, f"ncu_{tag}.log"))
        if os.path.exists(rep + ".ncu-rep"):
            with open(os.path.join(a.out, f"ncu_{tag}.csv"), "w") as f:
                subprocess.run([ncu, "-i", rep + ".ncu-rep", "--csv", "--page", "raw", "--print-units", "base"],
                               stdout=f, stderr=subprocess.DEVNULL, timeout=120)
            runs.append((tag, kind, rc))

    profile("core", "core", ok_names, CORE_METRICS, min(left() * 0.4, 150))
    # 2b. the full list (the calibration suite's) in chunks, with what time is left
    chunks = [ok_names[i:i + a.chunk] for i in range(0, len(ok_names), a.chunk)]
    for ci, ch in enumerate(chunks):
        t = left() - 25
        if t < 20:
            C.log(f"!! no time left for full-metric chunk {ci}: {ch}")
            break
        profile(f"full{ci}", "full", ch, metrics, min(t / max(1, len(chunks) - ci) * 1.6, t))
    # 3. merge
    spec = importlib.util.spec_from_file_location("ncu_csv", os.path.join(ROOT, "simgpu", "validate", "ncu_csv.py"))
    ncsv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ncsv)
    out = {"description": "HOLDOUT kernels (validation/holdout/kernels.py) measured on the H200: numba.cuda "
                          "result check, CUDA-event times (us), resources, Nsight Compute metrics (base units).",
           "provenance": timing.get("provenance", C.provenance()), "environment": env_txt,
           "ncu_metrics_requested": metrics, "ncu_metrics_source": os.path.relpath(msrc, ROOT) if os.sep in msrc else msrc,
           "ncu_command": "ncu --clock-control none --metrics <list> (one launch per case): once with ncu_core_metrics for all cases (ncu_core), then with ncu_metrics_requested in chunks; ncu.metrics merges both (full run wins)",
           "ncu_core_metrics": CORE_METRICS,
           "timing_method": "validation/_common.py Timer: CUDA events around one launch; 'flushed' = after a "
                            "512 MiB read (L2 flush), 'warm' = back to back; both after a spin kernel",
           "cases": {}, "problems": {}}
    for c in select(K.CASES, a.only):
        out["cases"][c["name"]] = meta(c) | timing["cases"].get(c["name"], {"error": "not run (time stage)"})
    for tag, kind, rc in runs:
        order = json.load(open(os.path.join(a.out, f"profile_order_{tag}.json")))
        res, prob = ncsv.map_to_cases(open(os.path.join(a.out, f"ncu_{tag}.csv")).read(), order["launches"])
        if prob or rc != 0:
            out["problems"][tag] = {"ncu_rc": rc, "mapping": prob}
        for name, r in res.items():
            rec = out["cases"].setdefault(name, {})
            if kind == "core":
                rec["ncu_core"] = {"metrics": r["metrics"], "name_check": r["name_check"]}
            cur = rec.setdefault("ncu", {"metrics": {}, "units": {}, "runs": []})
            for k, v in r["metrics"].items():
                if kind == "full" or k not in cur["metrics"]:
                    cur["metrics"][k] = v
                    cur["units"][k] = r["units"].get(k)
            cur["runs"].append(tag)
            cur["kernel_name"] = r["kernel_name"]
            cur["name_check"] = cur.get("name_check", True) and r["name_check"]
            cur["ncu_grid"], cur["ncu_block"] = r["grid"], r["block"]
        for name, err in order.get("errors", {}).items():
            out["cases"].setdefault(name, {})[f"ncu_error_{tag}"] = err
    tidy(out)
    n_ok = sum(1 for r in out["cases"].values() if (r.get("check") or {}).get("ok"))
    n_ncu = sum(1 for r in out["cases"].values() if "ncu" in r)
    out["summary"] = {"cases": len(out["cases"]), "check_ok": n_ok, "with_ncu": n_ncu,
                      "elapsed_s": round(time.time() - t_start, 1)}
    C.write_json(os.path.join(a.out, "h200_holdout.json"), out)
    if os.path.exists(os.path.join(a.out, "sass.json")):
        os.replace(os.path.join(a.out, "sass.json"), os.path.join(a.out, "h200_holdout_sass.json"))
    # table
    C.log(f"{'case':44s} {'check':>6s} {'event_us':>9s} {'ncu_us':>9s} {'regs':>4s} {'inst':>12s}")
    for name, r in out["cases"].items():
        m = (r.get("ncu") or {}).get("metrics", {})
        ev = ((r.get("timing") or {}).get("flushed") or {}).get("median_us")
        d = m.get("gpu__time_duration.sum")
        C.log(f"{name[:44]:44s} {str((r.get('check') or {}).get('ok', 'ERR' if 'error' in r else '-')):>6s} "
              f"{ev if ev is None else round(ev, 1)!s:>9s} {d if d is None else round(d / 1e3, 1)!s:>9s} "
              f"{m.get('launch__registers_per_thread')!s:>4s} {m.get('smsp__inst_executed.sum')!s:>12s}")
    C.log(f"summary: {out['summary']}, problems: {out['problems']}")
    if a.export:
        export(a.out, a.export)


def tidy(out):
    """In place: (1) ncu_csv's name check wants the kernel's name at the start of ncu's; kernels
    made by a factory are named 'factory::kernel[...]', so accept a '::'-qualified name too (the
    mapping itself is by launch order); (2) the ~170 device__attribute_* values ncu prints for
    every launch are the same for all cases: keep one copy, top-level, as device_attributes."""
    attrs = None
    for name, r in out["cases"].items():
        for key in ("ncu", "ncu_core"):
            n = r.get(key)
            if not n:
                continue
            k = r.get("kernel", "")
            kn = n.get("kernel_name") or r.get("ncu", {}).get("kernel_name", "")
            if not n.get("name_check") and re.search(rf"(^|::){re.escape(k)}[\[(]", kn):
                n["name_check"] = True
                n["name_check_note"] = "factory-made kernel: ncu names it 'factory::kernel'"
            dev = {m: v for m, v in n["metrics"].items() if m.startswith("device__attribute")}
            if dev:
                if attrs is None:
                    attrs = dev
                if dev == attrs:
                    for m in dev:
                        n["metrics"].pop(m)
                        n.get("units", {}).pop(m, None)
    if attrs is not None:
        out["device_attributes"] = attrs
    out["tidy"] = ("device_run.py tidy: device__attribute_* moved to device_attributes; name_check accepts "
                   "'factory::kernel' names")
    for tag, p in list(out["problems"].items()):
        p["mapping"] = [m for m in p.get("mapping", []) if not re.search(r"kernel name '\w+::", m)]
        if not p["mapping"] and p.get("ncu_rc") == 0:
            out["problems"].pop(tag)


def export(src, dst):
    """The device tool brings back at most 8 files from $OUT: the two JSON files and one archive
    of everything else (logs, ncu CSVs and reports, order files)."""
    import shutil
    import tarfile
    os.makedirs(dst, exist_ok=True)
    for f in ("h200_holdout.json", "h200_holdout_sass.json"):
        if os.path.exists(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), os.path.join(dst, f))
    with tarfile.open(os.path.join(dst, "holdout_raw.tgz"), "w:gz") as t:
        for f in sorted(os.listdir(src)):
            if f not in ("h200_holdout.json", "h200_holdout_sass.json"):
                t.add(os.path.join(src, f), arcname=f)
    if os.path.getsize(os.path.join(dst, "holdout_raw.tgz")) > 15 << 20:   # keep it under the 16 MiB limit
        with tarfile.open(os.path.join(dst, "holdout_raw.tgz"), "w:gz") as t:
            for f in sorted(os.listdir(src)):
                if f not in ("h200_holdout.json", "h200_holdout_sass.json") and not f.endswith(".ncu-rep"):
                    t.add(os.path.join(src, f), arcname=f)
    C.log(f"exported to {dst}: {sorted(os.listdir(dst))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage", choices=("all", "time", "profile", "list", "tidy"))
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/holdout_out"))
    ap.add_argument("--only", default=None)
    ap.add_argument("--names", default=None, help="comma-separated case names (profile stage)")
    ap.add_argument("--tag", default="c0")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--budget", type=float, default=480.0,
                    help="all: seconds for all stages; time: seconds of timed launches per case")
    ap.add_argument("--chunk", type=int, default=9, help="cases per ncu process")
    ap.add_argument("--no-sass", action="store_true")
    ap.add_argument("--export", default=None, help="all: copy the results (3 files) to this folder, e.g. $OUT")
    ap.add_argument("--short", action="store_true", help="drop the per-launch time lists")
    a = ap.parse_args()
    if a.stage != "tidy":
        os.makedirs(a.out, exist_ok=True)
    if a.stage == "list":
        for c in load_kernels().CASES:
            C.log(c["name"], c["grid"], c["block"], c["tags"])
        return
    if a.stage == "tidy":     # re-tidy a fetched file: device_run.py tidy --out FILE
        d = json.load(open(a.out))
        tidy(d)
        C.write_json(a.out, d)
        return
    if a.stage == "time":
        a.budget = 0.5 if a.budget > 60 else a.budget
    {"all": stage_all, "time": stage_time, "profile": stage_profile}[a.stage](a)


if __name__ == "__main__":
    main()
